"""Every page in a real Chromium 800 px wide, the sidebar open, light and dark: what a person reads
is whole.  No text of the page is cut short with an ellipsis (a metric's "4‥", a run's name in a
picker), no button or metric label runs past its box, no data grid hides a column out of sight (a
Markdown table wraps its text instead: Tokenizer questions' comparisons of six tokenizers, wider than
the column beside the open sidebar, scroll sideways in a box of their own, which the keyboard
reaches), the page itself never scrolls sideways (its headings would slide under the sidebar), and
every chart names every group it draws: the labels Vega shows (not those it hides where they would
overlap) hold each tokenizer, variant and run in full.  Screenshots of each page in both themes go
to ``shots_dir`` (``800_<page>_<theme>.png``).

Train a GPT opens on runs written by hand (no training): the room's two on one corpus, the
attendee's two on another.
"""

import pytest

from test_app_compare_tokenizers import available
from test_app_counts_and_labels import ALICE, the_room_and_alice
from test_browser import NAVIGATION_MS, chromium_context, drawn, page_fits, serve
from ui.plumbing.cache import PRETRAINED_LABELS
from ui.plumbing.navigation import PAGES as NAVIGATION

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 800, 2400
THEMES = ("light", "dark")
PANEL_MIN = 280  # a Compare panel narrower than this wraps its tokens a few characters a line

# elements whose text the browser cut short (text-overflow: ellipsis, and more text than room)
CUT = """root => [...root.querySelectorAll('*')]
    .filter(e => getComputedStyle(e).textOverflow === 'ellipsis' && e.scrollWidth > e.clientWidth + 1)
    .map(e => e.textContent.trim()).filter(t => t)"""
# buttons and metrics whose text runs past their box, ellipsis or not (a label cut off, or spilling over)
OVERFLOW = """root => [...root.querySelectorAll(
    '[data-testid="stButton"] button, [data-testid="stMetricLabel"], [data-testid="stMetricValue"], ' +
    '.bpe-step button, .bpe-metric-label, .bpe-metric-value')]
  .flatMap(el => [el, ...el.querySelectorAll('*')])
  .filter(el => el.offsetParent !== null && el.scrollWidth > el.clientWidth + 1)
  .map(el => (el.closest('button, [data-testid="stMetric"], .bpe-metric') || el).innerText.trim())"""
# per table, whether it scrolls sideways (a column out of sight): its grid's scroller, one a table
TABLES_SCROLL = """root => [...root.querySelectorAll('[data-testid="stDataFrame"]')].map(t => {
    const s = t.querySelector('.dvn-scroller');
    return s ? s.scrollWidth > s.clientWidth + 1 : null;
})"""
# per Markdown table wider than its box: whether the box scrolls and takes the keyboard's focus
WIDE_TABLES = """root => [...root.querySelectorAll('[data-testid="stMarkdownContainer"] table')]
  .map(t => t.parentElement).filter(box => box.scrollWidth > box.clientWidth + 1)
  .map(box => getComputedStyle(box).overflowX === 'auto' && box.tabIndex === 0)"""
# per chart, the text of every label Vega draws (it keeps a label it hides at opacity 0)
CHART_LABELS = """root => [...root.querySelectorAll('.vega-embed svg')].map(svg =>
    [...svg.querySelectorAll('text')].filter(t => {
        for (let e = t; e && e !== svg; e = e.parentElement) {
            if (getComputedStyle(e).opacity === '0' || e.getAttribute('opacity') === '0') return false;
        }
        return t.textContent.trim() !== '';
    }).map(t => t.textContent))"""


def main(pg):
    return pg.locator('[data-testid="stMainBlockContainer"]')


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    the_room_and_alice(runs)
    with serve(runs) as url, chromium_context() as new_context:
        yield url, new_context


def at_800(site, path: str, theme: str, heading: str):
    """A new page (a browser context of its own) 800 px wide in ``theme``, at ``path``, its heading
    shown and no script running."""
    from playwright.sync_api import expect

    url, new_context = site
    pg = new_context().new_page()
    pg.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    pg.emulate_media(color_scheme=theme)
    pg.goto(url + path)
    expect(main(pg).get_by_role("heading", name=heading)).to_be_visible(timeout=NAVIGATION_MS)
    drawn(pg)
    return pg


def whole(pg, shots_dir, name: str, theme: str) -> list[list[str]]:
    """Assert no text of the page is cut; save its screenshot; the labels each chart shows."""
    pg.screenshot(path=str(shots_dir / f"800_{name}_{theme}.png"))
    assert pg.locator('[data-testid="stSidebar"]').is_visible()  # the narrow case: sidebar open
    cut = main(pg).evaluate(CUT)
    assert cut == [], f"cut short on {name} ({theme}): {cut}"
    spilled = pg.locator("body").evaluate(OVERFLOW)  # the sidebar's buttons too
    assert spilled == [], f"labels past their box on {name} ({theme}): {spilled}"
    scrolls = main(pg).evaluate(TABLES_SCROLL)
    assert True not in scrolls and None not in scrolls, f"a table of {name} hides a column: {scrolls}"
    assert page_fits(pg), f"{name} ({theme}) scrolls sideways"
    assert False not in main(pg).evaluate(WIDE_TABLES), f"a wide table of {name} past its column"
    charts = main(pg).evaluate(CHART_LABELS)
    for labels in charts:
        assert not [t for t in labels if t.endswith("…")], labels
    return charts


@pytest.mark.parametrize("theme", THEMES)
def test_compare_tokenizers_at_800(site, shots_dir, theme):
    """Each tokenizer's figures whole, its panel wide enough to read, and the cost chart naming
    every tokenizer it draws (GPT-4 and GPT-4o told apart)."""
    from playwright.sync_api import expect

    pg = at_800(site, "/compare_tokenizers", theme, "Compare tokenizers")
    names = available()
    panels = pg.locator(".bpe-compare")
    expect(panels).to_have_count(len(names), timeout=NAVIGATION_MS)  # yours cannot encode the emoji
    chart = main(pg).locator(".vega-embed svg")
    expect(chart).to_have_count(1, timeout=NAVIGATION_MS)
    drawn(pg)
    for box in panels.all():
        assert box.bounding_box()["width"] >= PANEL_MIN
    figures = main(pg).get_by_text(" chars/token · ")
    expect(figures).to_have_count(len(names))
    for line in figures.all():  # the figures wrap inside the panel, never past it
        assert line.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
    [labels] = whole(pg, shots_dir, "compare_tokenizers", theme)
    for name in names:
        assert PRETRAINED_LABELS[name] in labels, (name, labels)


@pytest.mark.parametrize("theme", THEMES)
def test_train_a_gpt_at_800(site, shots_dir, theme):
    """The run's figures whole, one bits-per-character chart per corpus with every run's name in
    full in its legend, Generate on the attendee's own run."""
    from playwright.sync_api import expect

    pg = at_800(site, f"/train_gpt?u={ALICE}", theme, "Train a GPT")
    expect(main(pg).get_by_text("trained on 2 different corpora", exact=False)).to_be_visible(
        timeout=NAVIGATION_MS)
    expect(main(pg).locator(".vega-embed svg")).to_have_count(3, timeout=NAVIGATION_MS)  # loss + 2 corpora
    expect(main(pg).get_by_role("button", name="Generate", exact=True)).to_be_visible(timeout=NAVIGATION_MS)
    drawn(pg)
    loss, *bpc = whole(pg, shots_dir, "train_gpt", theme)
    legends = sorted(sorted(t for t in labels if "quick" in t or "gpt-" in t) for labels in bpc)
    assert legends == [
        ["07_char_vs_bpe_gpt-bpe · the room (shared)", "07_char_vs_bpe_gpt-char · the room (shared)"],
        ["bpe-quick", "char-quick"]]
    # Alice's own run, though trained on another corpus than the sidebar's: no run is on that one
    checkpoint = main(pg).get_by_role("combobox", name="Checkpoint of run")
    expect(checkpoint).to_have_value("bpe-quick · another corpus")


@pytest.mark.parametrize("theme", THEMES)
def test_char_vs_bpe_at_800(site, shots_dir, theme):
    from playwright.sync_api import expect

    pg = at_800(site, "/char_vs_bpe", theme, "Char vs BPE")
    expect(main(pg).locator(".vega-embed svg")).to_have_count(1, timeout=NAVIGATION_MS)
    drawn(pg)
    [labels] = whole(pg, shots_dir, "char_vs_bpe", theme)
    assert {"char", "word", "byte"} <= set(labels)


# every page without a test of its own above, a new one too: its path and its title
OTHER_PAGES = [("/" if name == NAVIGATION[0][0] else f"/{name}", title) for name, title, _ in NAVIGATION
               if name not in ("compare_tokenizers", "train_gpt", "char_vs_bpe")]


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("path, heading", OTHER_PAGES)
def test_the_other_pages_at_800(site, shots_dir, theme, path, heading):
    from playwright.sync_api import expect

    pg = at_800(site, path, theme, heading)
    if path == "/learn_bpe":
        expect(main(pg).get_by_text("Merge 1:", exact=False).first).to_be_visible(timeout=NAVIGATION_MS)
    elif path == "/":
        expect(main(pg).get_by_role("button", name="Open Compare tokenizers ▶")).to_be_visible(
            timeout=NAVIGATION_MS)
    drawn(pg)
    whole(pg, shots_dir, path.strip("/") or "start_here", theme)
