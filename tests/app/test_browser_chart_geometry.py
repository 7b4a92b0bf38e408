"""Every chart of Learn BPE, Char vs BPE, Compare tokenizers and Train a GPT can be read whatever the
corpus: the default one, a paragraph in one script (French), a text in many scripts; 1400 and 800 px
wide, light and dark.  Read from Vega's own scene graph (``chart_geometry.js``): no two labels of an
axis overlap, each band of a bar chart is at least 12 px tall, and every legend and axis label lies
inside the chart's box.  A French paragraph once drew Compare's "Cost per script" as one hairline
under six tokenizer names on top of each other, its legend cut.

One page load a corpus: the pages are reached by the sidebar's links (the session keeps the paste),
and each is measured at the four sizes and themes without loading it again.
"""

from itertools import combinations
from pathlib import Path

import pytest

from core.samples import load_sample
from test_app_char_vs_bpe import FRENCH
from test_app_counts_and_labels import ALICE, the_room_and_alice
from test_browser import NAVIGATION_MS, chromium_context, idle, paste_corpus, serve
from test_browser_charts_legible import scrolled_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GEOMETRY_JS = Path(__file__).with_name("chart_geometry.js").read_text(encoding="utf-8")
CORPORA = {"default": None, "French": FRENCH, "many scripts": load_sample("multilingual and emoji")}
PAGES = {"Learn BPE": 3, "Char vs BPE": 1, "Compare tokenizers": 1, "Tokenizer questions": 5,
         "Chat templates": 3, "Train a GPT": 3}  # -> its charts
LAYOUTS = ((1400, "light"), (1400, "dark"), (800, "light"), (800, "dark"))  # the screenshots: the last
CHARTS = '[data-testid="stVegaLiteChart"], .bpe-pairs-chart, .bpe-curve'
BAND = 12  # px: the least height of a row of bars, or of one bar in a row
SLACK = 1  # px: what Vega's text bounds may round
# the page's ``count`` charts each have their Vega view, and Vega has done laying them out at the
# window's size and theme: their geometry is what it was at the last look, and is returned from this
# look (a later one could find a chart that is being drawn again)
LAID_OUT = f"""(count) => {{ {GEOMETRY_JS}
  const charts = window.__chartGeometry(), seen = JSON.stringify(charts), same = seen === window.__seen;
  window.__seen = seen;
  return same && charts.length === count && charts.every((c) => !c.missing && c.box.x2 - c.box.x1 > 0)
    ? charts : null;
}}"""


def overlap(a: dict, b: dict) -> bool:
    return (min(a["x2"], b["x2"]) - max(a["x1"], b["x1"]) > SLACK
            and min(a["y2"], b["y2"]) - max(a["y1"], b["y1"]) > SLACK)


def inside(box: dict, frame: dict) -> bool:
    return (box["x1"] >= frame["x1"] - SLACK and box["y1"] >= frame["y1"] - SLACK
            and box["x2"] <= frame["x2"] + SLACK and box["y2"] <= frame["y2"] + SLACK)


def unreadable(chart: dict) -> list[str]:
    """What a person could not read in one chart's geometry."""
    found = []
    for a, b in combinations(chart["labels"], 2):
        if a["axis"] == b["axis"] and overlap(a["box"], b["box"]):
            found.append(f"labels {a['text']!r} and {b['text']!r} overlap")
    found += [f"bands of {b['scale']} {b['size']:.1f} px tall" for b in chart["bands"] if b["size"] < BAND]
    found += [f"a legend {box} out of the chart's box {chart['box']}"
              for box in chart["legends"] if not inside(box, chart["box"])]
    found += [f"label {label['text']!r} out of the chart's box"
              for label in chart["labels"] if not inside(label["box"], chart["box"])]
    return [f"{chart['chart']}: {problem}" for problem in found]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    the_room_and_alice(runs)  # Train a GPT draws its charts of runs
    with serve(runs) as url, chromium_context() as new_context:
        yield url, new_context


def measured(pg, count: int, where: str) -> list[dict]:
    """The geometry of the page's ``count`` charts, once each is drawn at the window's present size
    and theme; a page that does not draw them in two minutes fails the test, naming what it drew."""
    idle(pg)
    try:
        return scrolled_until(pg, LAID_OUT, count)
    except TimeoutError:
        drawn = pg.evaluate(f"() => {{ {GEOMETRY_JS}; return window.__chartGeometry(); }}")
        pytest.fail(f"{where}: {count} charts wanted, drawn: {[c['chart'] for c in drawn]}")


@pytest.mark.parametrize("corpus", CORPORA)
def test_every_chart_is_readable_on_any_corpus(site, corpus, shots_dir):
    from playwright.sync_api import expect

    url, new_context = site
    pg = new_context().new_page()
    pg.goto(f"{url}/learn_bpe?u={ALICE}")
    expect(pg.get_by_role("heading", name="Learn BPE").first).to_be_visible(timeout=NAVIGATION_MS)
    idle(pg)
    if CORPORA[corpus]:
        paste_corpus(pg, CORPORA[corpus])
        idle(pg)
    problems = []
    for name in PAGES:
        pg.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=name).click()
        expect(pg.get_by_role("heading", name=name).first).to_be_visible(timeout=NAVIGATION_MS)
        idle(pg)
        for width, theme in LAYOUTS:
            pg.set_viewport_size({"width": width, "height": 2400})
            pg.emulate_media(color_scheme=theme)
            charts = measured(pg, PAGES[name], f"{name}, {corpus}, {width} px {theme}")
            problems += [f"{name}, {corpus}, {width} px {theme}: {p}" for c in charts for p in unreadable(c)]
        for n, chart in enumerate(pg.locator(CHARTS).all()):
            shot = f"chart_{name}_{corpus}_{n}_800_dark.png".replace(" ", "_")
            chart.screenshot(path=str(shots_dir / shot))
    pg.close()
    assert not problems, "\n".join(problems)


# the fill of the first axis label of each of Learn BPE's canvas charts (the step view's, drawn by
# vega-embed), read from Vega's scene
LABEL_FILLS = """() => [...document.querySelectorAll('.bpe-pairs-chart, .bpe-curve')].map((el) => {
  const find = (mark) => {
    if (mark.role === "axis-label" && mark.items?.length) return mark.items[0].fill;
    for (const item of mark.items || []) for (const child of item.items || []) {
      const found = find(child);
      if (found) return found;
    }
    return null;
  };
  return el.vegaView ? find(el.vegaView.scenegraph().root) : null;
})"""


def test_learn_bpe_s_charts_follow_a_theme_switched_on_the_open_page(site):
    """Streamlit follows the system's theme without a rerun: the step view's canvas charts, which
    Vega paints with the colours it was given, are drawn again in the new theme's text colour
    (they kept dark grey labels on a dark page)."""
    from playwright.sync_api import expect

    url, new_context = site
    pg = new_context().new_page()
    pg.emulate_media(color_scheme="light")
    pg.goto(f"{url}/learn_bpe?u={ALICE}")
    expect(pg.get_by_role("heading", name="Learn BPE").first).to_be_visible(timeout=NAVIGATION_MS)
    drawn = f"() => {{ const f = ({LABEL_FILLS})(); return f.length === 3 && f.every(Boolean) ? f : null; }}"
    scrolled_until(pg, drawn)
    light = pg.wait_for_function(drawn, timeout=30_000).json_value()
    pg.emulate_media(color_scheme="dark")
    dark = pg.wait_for_function(f"""() => {{ const f = ({LABEL_FILLS})();
        return f.length === 3 && f.every((c) => c && !{light!r}.includes(c)) ? f : null; }}""",
                                timeout=30_000).json_value()
    assert len(set(light)) == 1 and len(set(dark)) == 1 and light[0] != dark[0], (light, dark)
    pg.close()
