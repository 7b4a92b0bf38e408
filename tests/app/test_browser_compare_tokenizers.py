"""A real Chromium on the Compare tokenizers page: paste the multilingual sample, see it under every
tokenizer, click a token for its merge tree, and save a screenshot (``compare_tokenizers.png`` in
the ``shots_dir`` folder)."""

import pytest

from core import BPETokenizer
from test_app_compare_tokenizers import MULTILINGUAL, available
from test_browser import charts_drawn, chromium_context, idle, serve
from ui.plumbing.controls import OWN_CHOICE

pytestmark = pytest.mark.browser


def test_compare_tokenizers_in_a_browser(tmp_path, shots_dir):
    from playwright.sync_api import expect

    names = available()
    with serve(tmp_path) as url, chromium_context() as new_context:
        pg = new_context().new_page()
        pg.goto(url + "/compare_tokenizers")
        pg.wait_for_selector('[data-testid="stApp"]', timeout=60_000)
        expect(pg.get_by_role("heading", name="Compare tokenizers")).to_be_visible(timeout=60_000)
        box = pg.get_by_role("textbox", name="Text to compare (pick one above or paste your own)", exact=True)
        expect(box).to_be_visible(timeout=60_000)
        expect(pg.locator(".bpe-compare").first).to_be_visible(timeout=120_000)  # first load done
        idle(pg)
        box.fill(MULTILINGUAL + "\nThe court found it unconstitutional.")
        box.press("Control+Enter")
        for name in names:  # every real tokenizer draws the pasted text
            tokens = pg.locator(f'.bpe-compare[data-tokenizer="{name}"] .tok')
            expect(tokens.first).to_be_visible(timeout=90_000)
        gpt4o = pg.locator('.bpe-compare[data-tokenizer="o200k_base"]')
        expect(gpt4o).to_contain_text("unconstitutional", timeout=60_000)
        idle(pg)
        for name in names:
            tok = BPETokenizer.from_pretrained(name)
            expected = len(tok.encode(MULTILINGUAL + "\nThe court found it unconstitutional."))
            assert pg.locator(f'.bpe-compare[data-tokenizer="{name}"] .tok').count() == expected
        assert pg.locator(".tok-diff").count() > 0  # cuts unlike GPT-4o's are marked
        word = pg.locator('.bpe-compare[data-tokenizer="o200k_base"] .tok', has_text="unconstitutional").first
        word.click()
        built = pg.get_by_text("How GPT-4o (o200k_base) built", exact=False)
        expect(built).to_contain_text("unconstitutional", timeout=60_000)
        idle(pg)
        expect(pg.locator('[data-testid="stVegaLiteChart"], .vega-embed').first).to_be_visible(timeout=60_000)
        charts_drawn(pg)
        pg.screenshot(path=str(shots_dir / "compare_tokenizers.png"))
        pg.locator('[data-testid="stVegaLiteChart"], .vega-embed').first.scroll_into_view_if_needed()
        charts_drawn(pg)
        pg.screenshot(path=str(shots_dir / "compare_tokenizers_cost.png"))
        assert pg.dialogs == []


def test_yours_stays_the_reference_after_a_paste_retrains_it(tmp_path):
    """The browser holds a select box's choice by its name: a paste retrained "Yours (char, 10
    merges)" to 50 merges, and the next rerun sent back a name no option had (GPT-4o was marked
    against instead)."""
    from playwright.sync_api import expect

    from test_browser import paste_corpus

    with serve(tmp_path) as url, chromium_context() as new_context:
        pg = new_context().new_page()
        pg.set_viewport_size({"width": 1400, "height": 2000})
        pg.goto(url + "/compare_tokenizers")
        reference = pg.get_by_role("combobox", name="Mark (red underline) the tokens cut differently from")
        expect(reference).to_be_visible(timeout=120_000)
        idle(pg)
        pg.get_by_role("combobox", name="Pick a text").click()  # the opening example: yours reads it
        pg.get_by_role("option", name="The corpus in the sidebar").click()
        idle(pg)
        reference.click()
        pg.get_by_role("option", name="Yours").click()
        idle(pg)
        expect(reference).to_have_value(OWN_CHOICE)
        paste_corpus(pg, "the quick brown fox jumps over the lazy dog, again and again. " * 40)
        expect(pg.get_by_text("Yours (char, 50 merges)").first).to_be_visible(timeout=60_000)  # retrained
        idle(pg)
        box = pg.get_by_role("textbox", name="Text to compare (pick one above or paste your own)")
        box.fill("the lazy dog")
        box.press("Control+Enter")
        idle(pg)
        expect(reference).to_have_value(OWN_CHOICE)
