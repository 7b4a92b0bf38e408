"""In a real browser: a reload keeps the corpus and every setting (Learn BPE and Train a GPT), and the
browser's Back button never takes the step out of the address; a paste keeps Train a GPT's tokenizer.
Nothing cut at 800 px wide, on every page: ``test_browser_800``."""

import pytest

from test_browser import choose_settings, chromium_context, idle, paste_corpus, serve

pytestmark = pytest.mark.browser

CORPUS = ("the lowest newer wider tokens were lower than the newest widest ones, and the low "
          "ones were newer still.\n") * 30


@pytest.fixture
def browser(tmp_path):
    with serve(tmp_path / "runs") as url, chromium_context() as new_context:
        yield url, new_context


def _page_at(browser, path: str, heading: str):
    """A new tab at ``path``, its ``heading`` shown."""
    from playwright.sync_api import expect

    url, new_context = browser
    pg = new_context().new_page()
    pg.goto(f"{url}/{path}")
    pg.wait_for_selector('[data-testid="stApp"]', timeout=60_000)
    expect(pg.get_by_role("heading", name=heading)).to_be_visible(timeout=60_000)
    return pg


def _learn_bpe_on_a_paste(browser):
    """A new tab on Learn BPE, ``CORPUS`` pasted and its merges shown; and the step slider."""
    from playwright.sync_api import expect

    pg = _page_at(browser, "learn_bpe", "Learn BPE")
    paste_corpus(pg, CORPUS)
    expect(pg.get_by_text("Pasted text")).to_be_visible(timeout=30_000)
    idle(pg)
    return pg, pg.locator("input[type=range][aria-label=\"Merges done\"]")


def _reload(pg) -> None:
    pg.reload()
    pg.wait_for_selector('[data-testid="stApp"]', timeout=60_000)


def test_reload_keeps_corpus_and_settings(browser):
    from playwright.sync_api import expect

    pg, slider = _learn_bpe_on_a_paste(browser)
    choose_settings(pg, "word", 12)
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


def test_the_browser_back_button_never_loses_the_step(browser):
    """Back after stepping returns to the address before the last paste or setting (the page keeps
    its session's corpus), and the address keeps the step shown, so a reload then still opens
    on that step, where it opened on none."""
    from playwright.sync_api import expect

    pg, slider = _learn_bpe_on_a_paste(browser)
    for k in (1, 2, 3):
        pg.get_by_role("button", name="Next ▶", exact=True).first.click()
        expect(slider).to_have_value(str(k), timeout=30_000)
    pg.go_back()
    idle(pg)
    expect(slider).to_have_value("3", timeout=30_000)
    pg.wait_for_function("new URL(location.href).searchParams.get('step') === '3'", timeout=30_000)
    _reload(pg)
    expect(pg.get_by_text("Pasted text", exact=True)).to_be_visible(timeout=60_000)
    expect(slider).to_have_value("3", timeout=30_000)


def test_a_paste_keeps_the_tokenizer_chosen_on_train_a_gpt(browser):
    """BPE's choice is named by its merges, which a paste changes ("BPE (char, 300 merges)" on the
    Python docs, 200 after this paste): the next click left neither choice checked."""
    from playwright.sync_api import expect

    pg = _page_at(browser, "train_gpt", "Train a GPT")
    idle(pg)
    bpe = pg.get_by_role("radiogroup", name="Tokenizer").get_by_role("radio").nth(1)
    bpe.check(force=True)  # Streamlit draws its own circle over the input
    idle(pg)
    paste_corpus(pg, "the quick brown fox jumps over the lazy dog, again and again. " * 400)
    expect(pg.get_by_text("BPE (char, 200 merges)")).to_be_visible(timeout=60_000)
    idle(pg)
    steps = pg.get_by_label("Steps", exact=True)
    steps.fill("400")
    steps.press("Enter")  # any rerun
    idle(pg)
    expect(bpe).to_be_checked()
