"""Tokenizer questions' "Why are language models weird?" in a real Chromium, at 1400 and 800 px:
every section drawn, its charts drawn, the addition laid out by token, and a screenshot of each
section (into the ignored ``tests/.screenshots/``)."""

import pytest

from test_browser import (NAVIGATION_MS, charts_drawn, chromium_context, drawn, idle, page_fits, paste_corpus,
                          serve, two_frames)
from test_browser_800 import CUT

pytestmark = pytest.mark.browser

# each table of the questions (Markdown: its cells wrap), its first header and whether it scrolls sideways
TABLES = """main => [...main.querySelectorAll('[data-testid="stMarkdownContainer"] table')].map(t => ({
    head: t.querySelector('th').innerText,
    scrolls: t.parentElement.scrollWidth > t.parentElement.clientWidth + 1
}))"""
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
        drawn(pg)  # no widget still a placeholder: what is measured below is what a person sees
        charts_drawn(pg)
        main = pg.locator("[data-testid=stMain]")
        expect(main.get_by_text("1 2 3|4 5", exact=False).first).to_be_visible()  # the sum, by token
        for i, title in enumerate(SECTIONS):
            pg.get_by_role("heading", name=title).evaluate("h => h.scrollIntoView({block: 'start'})")
            two_frames(pg)
            pg.screenshot(path=str(shots_dir / f"questions_{i + 1}_{width}px.png"))
        assert "Traceback" not in main.inner_text()
        assert main.evaluate(CUT) == []  # no label cut short with an ellipsis
        tables = main.evaluate(TABLES)
        assert len(tables) >= 5, tables  # a word's forms, numbers, whitespace, special tokens, a prompt
        if width == 1400:  # each whole, every column in sight (at 800 the widest scroll in their box)
            assert [t for t in tables if t["scrolls"]] == [], tables
        assert page_fits(pg)


PASTE = ("Dear team, the meeting moved to 14:30 in room 2024.<|endoftext|>Next story: 3 apples.\n"
         "Another line here, with words.\n") * 40


@pytest.mark.parametrize("width, theme", [(1400, "light"), (800, "dark")])
def test_after_a_paste_every_box_shows_the_paste_or_says_it_is_built_in(width, theme, tmp_path, shots_dir):
    """Paste with the page open: the special-token box holds the paste's own text around
    <|endoftext|>, the prompt box the paste's first line cut after a space; nothing the last corpus
    put there is left, and each section's caption says where its text came from."""
    from playwright.sync_api import expect

    from core.insights.boundary import trailing_space_prompt

    with serve(tmp_path / "runs") as url, chromium_context() as new_context:
        pg = new_context().new_page()
        pg.set_viewport_size({"width": width, "height": 2200})
        pg.emulate_media(color_scheme=theme)
        pg.goto(f"{url}/insights")
        box = pg.get_by_role("textbox", name="Text", exact=True)
        expect(box).to_have_value("The first story ends here.<|endoftext|>The next one begins.",
                                  timeout=NAVIGATION_MS)  # the opening sample has none: built in
        paste_corpus(pg, PASTE)
        around = "the meeting moved to 14:30 in room 2024.<|endoftext|>Next story: 3 apples."
        expect(box).to_have_value(around, timeout=NAVIGATION_MS)  # the paste's line, nothing stale
        prompt, rest = trailing_space_prompt(PASTE)
        expect(pg.get_by_role("textbox", name="Prompt", exact=True)).to_have_value(prompt)
        expect(pg.get_by_role("textbox", name="Continuation", exact=True)).to_have_value(rest)
        main = pg.locator("[data-testid=stMain]")
        for said in ("From your corpus: its first special token's text",
                     "From your corpus: its first line's start"):
            expect(main.get_by_text(said, exact=False)).to_be_visible()
        expect(main.get_by_text("a built-in example instead", exact=False)).to_have_count(0)
        idle(pg)
        charts_drawn(pg)
        for i, title in enumerate(SECTIONS):
            pg.get_by_role("heading", name=title).evaluate("h => h.scrollIntoView({block: 'start'})")
            two_frames(pg)
            pg.screenshot(path=str(shots_dir / f"questions_pasted_{i + 1}_{width}px_{theme}.png"))
        assert "Traceback" not in main.inner_text()
