"""A real Chromium on Learn BPE starting from GPT-4: the corpus as GPT-4 cuts it, the merges GPT-4
would add for it with their pair highlighted, a new token's tree clicked open, and screenshots
(``learn_bpe_gpt4.png``, ``learn_bpe_gpt4_tree.png`` in the ``shots_dir`` folder)."""

import pytest

from core import BPETokenizer
from test_app_learn_start import MERGES, TEXT
from test_browser import charts_drawn, chromium_context, idle, paste_corpus, serve

pytestmark = pytest.mark.browser


def test_learn_bpe_from_gpt4_in_a_browser(tmp_path, shots_dir):
    from playwright.sync_api import expect

    try:
        more = BPETokenizer.from_pretrained("cl100k_base").extended(TEXT, MERGES)
    except (ImportError, OSError) as exc:
        pytest.skip(f"GPT-4's vocabulary is not available here: {exc}")
    # bounds: a cold server compiles its kernels, several times slower with both cores busy
    with serve(tmp_path) as url, chromium_context() as new_context:
        pg = new_context().new_page()
        pg.goto(f"{url}/learn_bpe")
        pg.wait_for_selector('[data-testid="stApp"]', timeout=60_000)
        expect(pg.get_by_role("heading", name="Learn BPE")).to_be_visible(timeout=60_000)
        expect(pg.get_by_text("Merge 1:", exact=False).first).to_be_visible(timeout=60_000)
        paste_corpus(pg, TEXT)
        expect(pg.get_by_text("Pasted text")).to_be_visible(timeout=120_000)
        idle(pg)
        merges = pg.get_by_label("Merges", exact=True)
        merges.fill(str(MERGES))
        merges.press("Enter")
        idle(pg)
        pg.get_by_text("GPT-4", exact=True).click()  # the "Start from" radio
        expect(pg.get_by_text("GPT-4 already has 100,256 tokens", exact=False)).to_be_visible(timeout=120_000)
        expect(pg.get_by_text("BPE variant")).to_have_count(0)
        idle(pg)
        pg.get_by_role("button", name="Next ▶").click()
        expect(pg.get_by_text("Merge 2:", exact=False).first).to_be_visible(timeout=120_000)
        idle(pg)
        expect(pg.locator(".bpe-hit").first).to_be_visible()
        new = more.trace[0]  # one merge done
        assert pg.locator(f'.bpe-text .tok[data-id="{new.new_id}"]').count() >= 1  # merge 1 made it
        pg.locator(f'.bpe-text .tok[data-id="{new.new_id}"]').first.click()
        clicked = pg.get_by_text(f"Token {new.new_id}, clicked in the text", exact=False)
        expect(clicked).to_be_visible(timeout=120_000)
        idle(pg)
        charts_drawn(pg)
        pg.screenshot(path=str(shots_dir / "learn_bpe_gpt4.png"))
        tree = pg.locator(".bpe-tree").first  # down through GPT-4's own merges to single bytes
        expect(tree).to_be_visible(timeout=120_000)
        tree.scroll_into_view_if_needed()
        assert tree.locator(".bpe-node").count() > 3
        tree.screenshot(path=str(shots_dir / "learn_bpe_gpt4_tree.png"))
        assert pg.dialogs == []
