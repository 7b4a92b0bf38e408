"""Real browser: how tokens are shown.  Whitespace as faint ␣ ↵ ⇥, Greek / Hindi / emoji readable
at step 0 of the byte variant (the characters are in the DOM, over their byte tokens), and a click
on a token drawing its merge graph."""

import pytest

from test_browser import chromium_page, idle, paste_corpus, serve

pytestmark = pytest.mark.browser

MULTI = "Γειά σου κόσμε. नमस्ते दुनिया. 🙂👍 Γειά नमस्ते 🙂👍"
PROSE = "the cat  sat\n\ton the mat  the cat  ran\n\ton the mat"


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("runs")) as url, chromium_page(f"{url}/learn_bpe") as pg:
        yield pg


def test_whitespace_is_visible_and_a_click_draws_the_tree(page, shots_dir):
    from playwright.sync_api import expect

    pg = page
    expect(pg.get_by_role("heading", name="Learn BPE")).to_be_visible(timeout=60_000)
    # pasted once the page has shown the sample: a paste during a fresh server's first run once left
    # the step view on the sample (seen once in CI, not reproduced since)
    idle(pg)
    paste_corpus(pg, PROSE)
    expect(pg.get_by_text("Pasted text")).to_be_visible(timeout=30_000)
    idle(pg)
    text = pg.locator('.bpe-text[data-view="learn"]')
    # all three, waited for: the sample shown before the paste has spaces and line breaks but no tab
    for glyph in "␣↵⇥":
        expect(text.locator(".ws", has_text=glyph).first).to_be_visible(timeout=30_000)
    expect(pg.locator(".bpe-legend").first).to_contain_text("␣ space")
    pg.get_by_role("button", name="All merges ⏭").click()
    expect(pg.get_by_text("merges done", exact=False).first).to_be_visible(timeout=30_000)
    idle(pg)
    longest = max(text.locator(".tok").all(), key=lambda t: len(t.inner_text()))
    shown = longest.inner_text()
    token_id = longest.get_attribute("data-id")
    longest.click()
    expect(pg.get_by_text(f"Token {token_id}, clicked in the text:")).to_be_visible(timeout=30_000)
    tree = pg.locator("svg.bpe-tree").first
    expect(tree).to_be_visible()
    expect(tree.locator(f'.bpe-node[data-id="{token_id}"]')).to_contain_text(shown)
    ids = [n.get_attribute("data-id") for n in tree.locator(".bpe-node").all()]
    # the token once, down to base characters; a part used in two places may be drawn at each
    # where one box would make edges cross (tests/app/test_token_view.py checks the layout)
    assert ids.count(token_id) == 1 and len(set(ids)) >= 3
    expect(tree).to_contain_text("merge ")
    idle(pg)
    tree.screenshot(path=str(shots_dir / "token_tree.png"))
    pg.screenshot(path=str(shots_dir / "learn_whitespace.png"))
    assert pg.dialogs == []


def test_multibyte_text_reads_as_characters_at_step_0(page, shots_dir):
    from playwright.sync_api import expect

    pg = page
    pg.get_by_role("radio", name="byte", exact=True).check(force=True)
    paste_corpus(pg, MULTI)
    idle(pg)
    # a new corpus opens at step 0
    expect(pg.get_by_text("Merge 1:", exact=False).first).to_be_visible(timeout=30_000)
    idle(pg)
    text = pg.locator('.bpe-text[data-view="learn"]')
    expect(text.locator(".bpe-char").first).to_be_visible(timeout=30_000)
    glyphs = "".join(g.inner_text() for g in text.locator(".bpe-glyph").all())
    for ch in "Γειάσουκόσμε" + "नमस्ते" + "🙂👍":
        assert ch in glyphs, ch
    first = text.locator(".bpe-char").first
    assert "bytes ce 93" in first.get_attribute("title")  # Γ, its two bytes on hover
    assert first.locator(".tok").count() == 2
    text.screenshot(path=str(shots_dir / "learn_multibyte.png"))
    assert pg.dialogs == []
