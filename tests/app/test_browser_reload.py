"""In a real browser: a reload keeps the corpus and every setting (Learn BPE and Train a GPT), and
at 800 px wide no button label or metric label is cut."""

import pytest

from test_browser import choose_settings, chromium_context, idle, paste_corpus, serve

pytestmark = pytest.mark.browser

CORPUS = ("the lowest newer wider tokens were lower than the newest widest ones, and the low "
          "ones were newer still.\n") * 30
CUT = """() => [...document.querySelectorAll(
    '[data-testid="stButton"] button, [data-testid="stMetricLabel"], [data-testid="stMetricValue"], ' +
    '.bpe-step button, .bpe-metric-label, .bpe-metric-value')]
  .flatMap(el => [el, ...el.querySelectorAll('*')])
  .filter(el => el.offsetParent !== null && el.scrollWidth > el.clientWidth + 1)
  .map(el => (el.closest('button, [data-testid="stMetric"], .bpe-metric') || el).innerText.trim())"""


@pytest.fixture
def browser(tmp_path):
    with serve(tmp_path / "runs") as url, chromium_context() as new_context:
        yield url, new_context


def _open(pg, url: str) -> None:
    pg.goto(url)
    pg.wait_for_selector('[data-testid="stApp"]', timeout=60_000)


def _reload(pg) -> None:
    pg.reload()
    pg.wait_for_selector('[data-testid="stApp"]', timeout=60_000)


def test_reload_keeps_corpus_and_settings(browser):
    from playwright.sync_api import expect

    url, new_context = browser
    pg = new_context().new_page()
    _open(pg, f"{url}/learn_bpe")
    expect(pg.get_by_role("heading", name="Learn BPE")).to_be_visible(timeout=60_000)
    paste_corpus(pg, CORPUS)
    expect(pg.get_by_text("Pasted text")).to_be_visible(timeout=30_000)
    idle(pg)
    choose_settings(pg, "word", 12)
    slider = pg.locator("input[type=range][aria-label=\"Merges done\"]")
    for k in (1, 2):
        pg.get_by_role("button", name="Next ▶", exact=True).first.click()
        expect(slider).to_have_value(str(k), timeout=30_000)
    idle(pg)

    _reload(pg)
    expect(pg.get_by_text("Pasted text", exact=True)).to_be_visible(timeout=60_000)
    expect(pg.get_by_role("radio", name="word")).to_be_checked(timeout=30_000)
    expect(pg.get_by_label("Merges", exact=True)).to_have_value("12", timeout=30_000)
    expect(slider).to_have_value("2", timeout=30_000)
    idle(pg)
    # a reload the moment after a click, or a key press, keeps that step too
    pg.get_by_role("button", name="Next ▶", exact=True).click()
    expect(slider).to_have_value("3")
    _reload(pg)
    expect(slider).to_have_value("3", timeout=30_000)
    idle(pg)
    pg.locator(".bpe-step").focus()
    pg.keyboard.press("ArrowLeft")
    expect(slider).to_have_value("2")
    _reload(pg)
    expect(slider).to_have_value("2", timeout=30_000)

    pg.get_by_role("link", name="Train a GPT").click()
    expect(pg.get_by_role("heading", name="Train a GPT")).to_be_visible(timeout=60_000)
    idle(pg)
    steps = pg.get_by_label("Steps", exact=True)
    steps.fill("300")
    steps.press("Enter")
    idle(pg)
    pg.get_by_text("BPE (word, 12 merges)").click()
    idle(pg)
    _reload(pg)
    expect(pg.get_by_role("heading", name="Train a GPT")).to_be_visible(timeout=60_000)
    expect(pg.get_by_text("Pasted text", exact=True)).to_be_visible(timeout=60_000)
    expect(pg.get_by_label("Steps", exact=True)).to_have_value("300", timeout=30_000)
    expect(pg.get_by_role("radio", name="BPE (word, 12 merges)")).to_be_checked(timeout=30_000)
    expect(pg.get_by_text("too short")).to_have_count(0)
    assert pg.dialogs == []


PAGES = [("learn_bpe", "Learn BPE"), ("char_vs_bpe", "Char vs BPE"), ("train_gpt", "Train a GPT")]


@pytest.mark.parametrize("path, title", PAGES)
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_800_px_wide_nothing_is_cut(browser, shots_dir, theme, path, title):
    from playwright.sync_api import expect

    url, new_context = browser
    pg = new_context().new_page()
    pg.set_viewport_size({"width": 800, "height": 1600})
    pg.emulate_media(color_scheme=theme)
    _open(pg, f"{url}/{path}")
    expect(pg.get_by_role("heading", name=title)).to_be_visible(timeout=60_000)
    idle(pg)
    if path == "learn_bpe":  # the step view's charts, drawn once Vega has loaded
        pg.wait_for_function("document.querySelector('.bpe-pairs-chart')?.dataset.rows", timeout=60_000)
    cut = pg.evaluate(CUT)
    pg.screenshot(path=str(shots_dir / f"narrow_{theme}_{path or 'learn_bpe'}.png"))
    assert cut == [], f"{title} at 800 px: labels cut {cut}"
