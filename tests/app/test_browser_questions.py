"""Tokenizer questions' "Why are language models weird?" in a real Chromium, at 1400 and 800 px:
every section drawn, its charts drawn, the addition laid out by token, and a screenshot of each
section (into the ignored ``tests/.screenshots/``)."""

import pytest

from test_browser import NAVIGATION_MS, charts_drawn, chromium_context, idle, serve, two_frames

pytestmark = pytest.mark.browser

SECTIONS = ["Why can't a model spell, or count the r's in a word?", "Why is a model bad at arithmetic?",
            "Why did GPT-2 struggle with Python?", "Why does a model stop at the text",
            "Why the warning about a trailing space?", "Why prefer YAML to JSON?"]


@pytest.mark.parametrize("width", [1400, 800])
def test_the_six_questions_at_two_widths(width, tmp_path, shots_dir):
    from playwright.sync_api import expect

    with serve(tmp_path / "runs") as url, chromium_context() as new_context:
        pg = new_context().new_page()
        pg.set_viewport_size({"width": width, "height": 2200})
        pg.goto(f"{url}/insights")
        expect(pg.get_by_role("heading", name="Why are language models weird?")).to_be_visible(
            timeout=NAVIGATION_MS)
        for title in SECTIONS:
            expect(pg.get_by_role("heading", name=title)).to_be_visible(timeout=NAVIGATION_MS)
        idle(pg)
        charts_drawn(pg)
        main = pg.locator("[data-testid=stMain]")
        expect(main.get_by_text("1 2 3|4 5", exact=False).first).to_be_visible()  # the sum, by token
        for i, title in enumerate(SECTIONS):
            pg.get_by_role("heading", name=title).evaluate("h => h.scrollIntoView({block: 'start'})")
            two_frames(pg)
            pg.screenshot(path=str(shots_dir / f"questions_{i + 1}_{width}px.png"))
        assert "Traceback" not in main.inner_text()
