"""Accessibility in a real Chromium: axe-core finds no serious or critical violation on any page,
in the light and the dark theme, 1400 and 800 px wide, before and after a multilingual text is
pasted (Hebrew and Arabic among its scripts); Learn BPE's step view steps from the keyboard alone,
its focus visible; tokens of a right-to-left script stay in the order of the encoding, left to
right, in the step view and in Compare's panels.  Screenshots (800 px dark, the highlighted pair
and ties as a person with deuteranopia sees them) go to the ignored ``tests/.screenshots/``.
"""

import re

import pytest

from core import BPETokenizer
from core.bpe.explain import occurrence_indices, segment
from test_browser import ROOT, chromium_context, drawn, idle, paste_corpus, serve
from ui.plumbing.navigation import PAGES as NAVIGATION

pytestmark = [pytest.mark.browser, pytest.mark.slow]


PAGES = [title for _, title, _ in NAVIGATION]  # every page, a new one too
RTL = "שלום עולם! עברית נכתבת מימין לשמאל. שלום שלום.\nمرحبا بالعالم! اللغة العربية جميلة. مرحبا مرحبا.\n"
MULTILINGUAL = (ROOT / "sample_corpora" / "multilingual_and_emoji.txt").read_text(encoding="utf-8") + RTL
BAD = ("serious", "critical")
LINE_SLACK = 6  # pixels: two boxes whose bottoms are this close are on one line (a line is ~28 px)
# the focused element's outline, as a person sees it
FOCUS_RING = """() => {
  const e = document.activeElement, s = getComputedStyle(e);
  return {do: e.dataset.do || null, tag: e.tagName, cls: e.className, style: s.outlineStyle,
          width: parseFloat(s.outlineWidth)};
}"""
# where the focused element is drawn, against Streamlit's header laid over the top of the page
IN_SIGHT = """() => {
  const e = document.activeElement, r = e.getBoundingClientRect();
  const header = document.querySelector('[data-testid="stHeader"]').getBoundingClientRect();
  const main = e.closest('[data-testid="stMain"]');  // a control in it, not the container itself
  return {do: e.dataset.do || e.tagName, main: !!main && !e.contains(main), top: r.top,
          header: header.bottom, height: innerHeight};
}"""
RING = 5  # pixels the focus ring reaches outside a control (3 px wide, 2 px away)
# each token's left edge, in the order of the DOM (the encoding's), with its line's top
# a box's line is where its bottom sits: a byte token drawn under its character (``.bpe-char``) is on
# that character's box's line, though it sits lower than a whole token beside it
BOXES = """(box) => [...box.querySelectorAll('.tok')].map((t) => {
  const r = t.getBoundingClientRect(), line = (t.closest('.bpe-char') || t).getBoundingClientRect();
  return {id: Number(t.dataset.id), left: r.left, right: r.right, line: Math.round(line.bottom),
          text: t.innerText};
})"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("runs")) as url, chromium_context() as new_context:
        yield url, new_context


def open_page(browser, path: str, width: int = 1400, theme: str = "light"):
    from playwright.sync_api import expect

    url, new_context = browser
    pg = new_context().new_page()
    pg.set_viewport_size({"width": width, "height": 1600})
    pg.emulate_media(color_scheme=theme)
    pg.goto(f"{url}/{path}")
    expect(pg.locator('[data-testid="stSidebarNav"]')).to_be_visible(timeout=120_000)
    idle(pg)
    return pg


def visit(pg, name: str) -> None:
    """Open ``name`` from the navigation (the session, and its pasted text, stay) and wait until it
    has drawn what it draws by itself, no widget still a placeholder (axe-core checks what is
    there: a widget still loading its code would be left out)."""
    from playwright.sync_api import expect

    pg.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=name).click()
    expect(pg.get_by_role("heading", name=name).first).to_be_visible(timeout=120_000)
    idle(pg)
    if name == "Learn BPE":  # the step view, and its charts (Vega loads once)
        pg.wait_for_function("document.querySelectorAll('.bpe-step canvas').length >= 2", timeout=120_000)
    if name == "Compare tokenizers":
        expect(pg.locator(".bpe-compare").first).to_be_visible(timeout=120_000)
    drawn(pg)


def serious(pg) -> list[str]:
    """axe-core's serious and critical violations on the page, one line each with its elements."""
    from axe_playwright_python.sync_playwright import Axe

    found = []
    for v in Axe().run(pg).response["violations"]:
        if v["impact"] in BAD:
            nodes = "; ".join(f'{n["target"]}: {(n.get("failureSummary") or "").splitlines()[-1].strip()}'
                              for n in v["nodes"][:5])
            found.append(f'{v["id"]} ({v["impact"]}, {len(v["nodes"])} elements): {nodes}')
    return found


@pytest.mark.parametrize("width", [1400, 800])
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_no_serious_violation_on_any_page(browser, theme, width, shots_dir):
    pg = open_page(browser, "", width, theme)
    problems = []
    for pasted in (False, True):
        if pasted:
            paste_corpus(pg, MULTILINGUAL)
            pg.get_by_text("Pasted text").first.wait_for(timeout=60_000)
        for name in PAGES:
            visit(pg, name)
            problems += [f"{name} ({theme}, {width} px, {'pasted' if pasted else 'first view'}): {p}"
                         for p in serious(pg)]
            if pasted and width == 800 and theme == "dark":
                pg.screenshot(path=str(shots_dir / f"a11y_800_dark_{name.lower().replace(' ', '_')}.png"))
    assert not problems, "axe-core found:\n" + "\n".join(problems)


def test_the_step_view_steps_from_the_keyboard_alone(browser, shots_dir):
    from playwright.sync_api import expect

    pg = open_page(browser, "learn_bpe?corpus=sample:sennrich&variant=char&merges=12")
    view = pg.locator(".bpe-step")
    expect(view).to_have_attribute("data-step", "0", timeout=60_000)
    for _ in range(300):  # Tab through the page, as a person without a mouse, to Next
        pg.keyboard.press("Tab")
        if pg.evaluate("document.activeElement.dataset.do") == "next":
            break
    ring = pg.evaluate(FOCUS_RING)
    assert ring["do"] == "next", f"Tab never reached Next (stopped on {ring})"
    assert ring["style"] != "none" and ring["width"] >= 2, f"Next has no visible focus: {ring}"
    pg.keyboard.press("Enter")
    expect(view).to_have_attribute("data-step", "1")
    pg.keyboard.press("Space")
    expect(view).to_have_attribute("data-step", "2")
    expect(view.locator(".bpe-head")).to_contain_text("Merge 3:")
    pg.keyboard.press("ArrowRight")  # the arrow keys step wherever the focus is in the view
    expect(view).to_have_attribute("data-step", "3")
    pg.keyboard.press("ArrowLeft")
    expect(view).to_have_attribute("data-step", "2")
    view.locator(".bpe-speed select").select_option("1")  # one merge a second: time to press Pause
    pg.keyboard.press("Shift+Tab")  # back to Play, then Enter plays and the focus moves to Pause
    assert pg.evaluate("document.activeElement.dataset.do") == "play"
    pg.keyboard.press("Enter")
    pg.wait_for_function("document.activeElement.dataset.do === 'pause'", timeout=15_000)
    pg.keyboard.press("Enter")
    expect(view).to_have_attribute("data-playing", "false")
    assert pg.evaluate("document.activeElement.dataset.do") == "play"
    for _ in range(10):
        pg.keyboard.press("Tab")
        if pg.evaluate("document.activeElement.type") == "range":
            break
    ring = pg.evaluate(FOCUS_RING)
    assert ring["tag"] == "INPUT" and ring["style"] != "none" and ring["width"] >= 2, ring
    pg.keyboard.press("End")  # the slider's own keys: to the last merge
    expect(view).to_have_attribute("data-step", "12")
    pg.keyboard.press("Home")
    expect(view).to_have_attribute("data-step", "0")
    view.screenshot(path=str(shots_dir / "a11y_step_view_focus.png"))
    assert pg.dialogs == []


def test_a_control_the_keyboard_focuses_is_never_under_the_page_header(browser, shots_dir):
    """In a window shorter than the page, Tab down to Next and Shift+Tab back up from the bottom:
    every control of the page focused on the way is scrolled clear of the header, ring and all."""
    from playwright.sync_api import expect

    pg = open_page(browser, "learn_bpe?corpus=sample:sennrich&variant=char&merges=12", 800, "dark")
    pg.set_viewport_size({"width": 800, "height": 700})
    expect(pg.locator(".bpe-step")).to_have_attribute("data-step", "0", timeout=60_000)
    hidden, seen = [], []

    def check() -> dict:
        place = pg.evaluate(IN_SIGHT)
        if place["main"]:
            seen.append(place["do"])
            if not place["header"] + RING <= place["top"] < place["height"]:
                hidden.append(place)
        return place

    for _ in range(300):
        pg.keyboard.press("Tab")
        if check()["do"] == "next":
            break
    assert "next" in seen, f"Tab never reached Next: {seen}"
    pg.screenshot(path=str(shots_dir / "a11y_focus_next_800_dark.png"))
    for step in ("1", "2"):  # Reset and Previous can take the focus from step 1 on
        pg.keyboard.press("Enter")
        expect(pg.locator(".bpe-step")).to_have_attribute("data-step", step)
    pg.locator('[data-testid="stMain"]').evaluate("(main) => { main.scrollTop = main.scrollHeight; }")
    for _ in range(30):  # from the bottom of the page, back up to the view's first control
        pg.keyboard.press("Shift+Tab")
        if check()["do"] == "reset":
            break
    assert "reset" in seen, f"Shift+Tab never reached Reset: {seen}"
    assert not hidden, f"focused under the header or below the window: {hidden}"


def assert_left_to_right(boxes: list[dict], where: str) -> None:
    """Each token starts right of the one before it on its line (a new line starts lower)."""
    assert len(boxes) > 20, f"{where}: too few tokens ({len(boxes)})"
    for a, b in zip(boxes, boxes[1:]):
        if abs(b["line"] - a["line"]) <= LINE_SLACK:  # one line (Arabic glyphs sit a pixel higher)
            assert b["left"] >= a["right"] - 1, f"{where}: {b['text']!r} drawn left of {a['text']!r}"
        else:
            assert b["line"] > a["line"], f"{where}: {b['text']!r} drawn above {a['text']!r}"


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_right_to_left_tokens_stay_in_the_order_of_the_encoding(browser, theme, shots_dir):
    from playwright.sync_api import expect

    tok = BPETokenizer.from_text(RTL, 10, variant="char")
    pg = open_page(browser, "learn_bpe?variant=char&merges=10", theme=theme)
    paste_corpus(pg, RTL)
    pg.get_by_text("Pasted text").first.wait_for(timeout=60_000)
    idle(pg)
    text = pg.locator(".bpe-step .bpe-text")
    expect(pg.locator(".bpe-step .bpe-head")).to_contain_text("Merge 1:", timeout=60_000)
    boxes = text.evaluate(BOXES)
    assert [b["id"] for b in boxes] == [t.id for t in segment(tok, RTL, 0)]
    assert_left_to_right(boxes, "Learn BPE, step 0")
    pg.get_by_role("button", name="Next ▶").click()
    expect(pg.locator(".bpe-step")).to_have_attribute("data-step", "1")
    assert_left_to_right(text.evaluate(BOXES), "Learn BPE, step 1")
    # the sentence names the pair left to right too: "'ש' + 'ל'", its first token first
    names = pg.locator(".bpe-step .bpe-head bdi")
    left, right = (names.nth(i).bounding_box()["x"] for i in (0, 1))
    assert "ש" in names.nth(0).inner_text() and left < right
    pair = pg.locator(".bpe-step .bpe-pairs")
    expect(pair.locator(".bpe-pairs-chart canvas")).to_be_visible(timeout=60_000)
    hits = occurrence_indices(tok, segment(tok, RTL, 1), 1)
    assert hits and pg.locator(".bpe-step").get_attribute("data-hits") == ",".join(map(str, hits))
    pg.screenshot(path=str(shots_dir / f"a11y_rtl_learn_{theme}.png"))
    pg.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Compare tokenizers").click()
    panels = pg.locator(".bpe-compare")
    expect(panels.first).to_be_visible(timeout=120_000)
    idle(pg)
    for n in range(panels.count()):
        panel = panels.nth(n)
        assert_left_to_right(panel.evaluate(BOXES), f"Compare, {panel.get_attribute('data-tokenizer')}")
    assert pg.dialogs == []


def test_the_pair_and_its_ties_differ_without_colour(browser, shots_dir):
    """Deuteranopia, emulated: the pair is bold, underlined and outlined, the chart says which bar
    won and which tied; the screenshots show what such a person sees."""
    from playwright.sync_api import expect

    pg = open_page(browser, "learn_bpe?corpus=sample:sennrich&variant=char&merges=12")
    view = pg.locator(".bpe-step")
    expect(view.locator(".bpe-pairs-chart canvas")).to_be_visible(timeout=60_000)
    hit = view.locator(".bpe-text .tok-hit").first
    style = hit.evaluate("(t) => { const s = getComputedStyle(t); return [s.fontWeight, s.textDecorationLine,"
                         " parseFloat(s.borderTopWidth)]; }")
    plain = view.locator(".bpe-text .tok:not(.tok-hit)").first.evaluate(
        "(t) => { const s = getComputedStyle(t); return [s.fontWeight, s.textDecorationLine,"
        " parseFloat(s.borderTopWidth)]; }")
    assert int(style[0]) >= 700 and style[1] == "underline" and style[2] > plain[2], (style, plain)
    assert int(plain[0]) < 700 and plain[1] == "none"
    expect(view.locator(".bpe-pairs")).to_contain_text("marked “= tie”")
    pg.emulate_media(color_scheme="light")
    cdp = pg.context.new_cdp_session(pg)
    cdp.send("Emulation.setEmulatedVisionDeficiency", {"type": "deuteranopia"})
    view.screenshot(path=str(shots_dir / "a11y_deuteranopia_step_view.png"))
    cdp.send("Emulation.setEmulatedVisionDeficiency", {"type": "none"})


def test_a_merge_tree_wider_than_its_column_says_it_scrolls(browser, shots_dir):
    from playwright.sync_api import expect

    pg = open_page(browser, "learn_bpe?variant=word&merges=16", width=800, theme="dark")
    paste_corpus(pg, "abcdefghijklmnop " * 40)
    pg.get_by_text("Pasted text").first.wait_for(timeout=60_000)
    idle(pg)
    pg.get_by_role("button", name="All merges ⏭").click()
    expect(pg.locator(".bpe-step")).to_have_attribute("data-step", "16", timeout=60_000)
    pg.locator(".bpe-step .bpe-text .tok").first.click()  # "abcdefghijklmnop</w>": 17 boxes wide
    graph = pg.locator(".bpe-graph").first
    expect(graph.locator("svg.bpe-tree")).to_be_visible(timeout=60_000)
    idle(pg)
    box = graph.locator(".bpe-tree-box")
    assert box.evaluate("(b) => b.scrollWidth > b.clientWidth"), "the tree fits: nothing to check"
    # it opens on the token asked about (its top box), with more to see at the side
    expect(graph).to_have_attribute("data-overflow", re.compile("both|left"))
    assert box.evaluate("""(b) => {
        const r = b.querySelector(`.bpe-node[data-id="${b.dataset.root}"] rect`).getBoundingClientRect();
        const v = b.getBoundingClientRect();
        return r.left >= v.left - 1 && r.right <= v.right + 1;
    }"""), "the token asked about is scrolled out of sight"
    expect(graph.get_by_text("Wider than this column: scroll ← →")).to_be_visible()
    graph.screenshot(path=str(shots_dir / "a11y_tree_scroll_800_dark.png"))
    for _ in range(60):  # reachable with Tab from the text clicked: the arrow keys scroll it
        pg.keyboard.press("Tab")
        if pg.evaluate("document.activeElement.classList.contains('bpe-tree-box')"):
            break
    ring = pg.evaluate(FOCUS_RING)
    assert ring["cls"] == "bpe-tree-box" and ring["style"] != "none" and ring["width"] >= 2, ring
    opened_at = box.evaluate("(b) => b.scrollLeft")
    pg.keyboard.press("ArrowLeft")
    pg.wait_for_function(f"document.activeElement.scrollLeft < {opened_at}", timeout=10_000)
    expect(graph).to_have_attribute("data-overflow", re.compile("both|right"))


FOCUSED = """() => { const e = document.activeElement;
  return {sidebar: !!e.closest('[data-testid="stSidebar"]'), radio: e.type === 'radio',
          name: e.tagName + ' ' + (e.getAttribute('aria-label') || ''),
          outline: getComputedStyle(e.closest('label') || e).outlineStyle}; }"""


def test_a_collapsed_sidebar_takes_no_tab_and_a_focused_choice_is_outlined(browser, shots_dir):
    """700 px wide (a projector's zoom), the sidebar collapsed: Tab goes from the skip link to the
    page, where it went through a dozen sidebar controls slid out of sight; the sidebar opened,
    they are reached again.  A radio button the keyboard reaches is outlined, not only greyed."""
    from playwright.sync_api import expect

    url, new_context = browser
    pg = new_context().new_page()
    pg.set_viewport_size({"width": 700, "height": 1000})
    pg.goto(f"{url}/learn_bpe")
    expect(pg.get_by_role("heading", name="Learn BPE")).to_be_visible(timeout=120_000)
    idle(pg)
    seen = []
    for _ in range(40):  # to the page's first radio button ("Start from", then the variant)
        pg.keyboard.press("Tab")
        seen.append(pg.evaluate(FOCUSED))
        if seen[-1]["radio"]:
            break
    assert not [f for f in seen if f["sidebar"]], seen
    assert seen[-1]["radio"] and seen[-1]["outline"] == "solid", seen[-1]
    pg.screenshot(path=str(shots_dir / "a11y_700_radio_focus.png"))
    pg.get_by_role("button", name="Expand sidebar").click()
    paste = pg.get_by_role("textbox", name="Or paste your own text")
    expect(paste).to_be_visible()
    paste.focus()
    expect(paste).to_be_focused()
