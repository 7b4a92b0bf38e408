"""A real Chromium, 800 px wide, on Tokenizer questions with Tiny Shakespeare: the vocabulary
curve, GPT-4o's unreachable tokens and the premium per language drawn, with screenshots
(``insights_*.png`` in the ``shots_dir`` folder)."""

import pytest

from test_browser import charts_drawn, chromium_context, idle, serve

pytestmark = pytest.mark.browser


def test_tokenizer_questions_at_800_px(tmp_path, shots_dir):
    from playwright.sync_api import expect

    with serve(tmp_path) as url, chromium_context() as new_context:
        pg = new_context().new_page()
        pg.set_viewport_size({"width": 800, "height": 1400})
        pg.goto(url + "/insights?corpus=shakespeare")
        pg.wait_for_selector('[data-testid="stApp"]', timeout=60_000)
        expect(pg.get_by_role("heading", name="Tokenizer questions")).to_be_visible(timeout=60_000)
        charts = pg.locator('[data-testid="stVegaLiteChart"]')
        expect(charts.nth(1)).to_be_visible(timeout=180_000)  # the curve and the languages
        expect(pg.get_by_text("Unreachable")).to_be_visible(timeout=120_000)
        idle(pg)
        sections = {"vocabulary": "What vocabulary size should I pick?",
                    "never": "Which tokens never appear?", "languages": "What does a language pay?"}
        for name, heading in sections.items():
            title = pg.get_by_role("heading", name=heading)
            title.evaluate("e => e.scrollIntoView({block: 'start'})")
            charts_drawn(pg)
            pg.screenshot(path=str(shots_dir / f"insights_{name}.png"))
        for k, name in enumerate(("curve", "premiums")):  # each chart whole, however tall
            charts.nth(k).screenshot(path=str(shots_dir / f"insights_{name}_chart.png"))
        assert pg.get_by_text("GPT-4o (o200k_base)").count() > 0
        assert pg.dialogs == []


def test_your_tokenizer_stays_chosen_after_a_paste_retrains_it(tmp_path):
    """The browser holds a multiselect's choices by their names: "Yours (char, 10 merges)" on the
    opening example, a paste retrained it to 50 merges, and the next click anywhere sent the old
    name back, which no option had, so your tokenizer left the languages' chart and table."""
    from playwright.sync_api import expect

    from test_browser import paste_corpus

    with serve(tmp_path) as url, chromium_context() as new_context:
        pg = new_context().new_page()
        pg.set_viewport_size({"width": 1400, "height": 2000})
        pg.goto(url + "/insights")
        table = pg.get_by_role("region", name="Each language's premium, by tokenizer")
        expect(table).to_contain_text("Yours (char, 10 merges)", timeout=180_000)
        paste_corpus(pg, "the quick brown fox jumps over the lazy dog, again and again. " * 40)
        expect(table).to_contain_text("Yours (char, 50 merges)", timeout=180_000)
        idle(pg)
        b = pg.get_by_role("spinbutton", name="b", exact=True)  # any other widget: a rerun
        b.fill("679")
        b.press("Enter")
        idle(pg)
        expect(b).to_have_value("679")
        expect(table).to_contain_text("Yours (char, 50 merges)")
