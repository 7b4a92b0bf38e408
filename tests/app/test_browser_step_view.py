"""A real Chromium steps through Learn BPE's step view (``ui/views/step_view.py``, computed in the
browser): at every step of a held sample, forwards and backwards, what the page shows equals what
``core`` computes (the token ids, the lines they stand on, the highlighted pair's positions, the
sentence, the pairs chart's rows, the merge table, the counts), and no two neighbours on a line share
a colour; stepping and playing send nothing to the server; a reload opens
at the step shown.
"""

from urllib.parse import quote

import pytest

from core import BPETokenizer
from core.bpe.explain import explain_step, occurrence_indices, segment
from test_browser import chromium_context, idle, serve
from ui.plumbing.charts import pair_rows
from core.bpe.markup import token_face
from core.samples import load_sample

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# what the page shows, read from the view (its data-step and data-hits are set for tests)
SHOWN = """() => {
  const r = document.querySelector('.bpe-step');
  const chart = r.querySelector('.bpe-pairs-chart');
  return {
    step: Number(r.dataset.step),
    hits: r.dataset.hits ? r.dataset.hits.split(',').map(Number) : [],
    ids: [...r.querySelectorAll('.bpe-text .tok')].map((t) => Number(t.dataset.id)),
    lines: [...r.querySelectorAll('.bpe-text .ln')].map((l) => [...l.querySelectorAll('.tok')].length),
    same_colour_neighbours: [...r.querySelectorAll('.bpe-text .ln')].flatMap((l) => {
      const colour = (t) => ['c0', 'c1'].find((c) => t.classList.contains(c));
      const toks = [...l.querySelectorAll('.tok')];
      const clash = (t, i) => colour(t) && colour(t) === colour(toks[i]);
      return toks.slice(1).flatMap((t, i) => clash(t, i) ? [t.dataset.id] : []);
    }),
    yellow: [...r.querySelectorAll('.bpe-text .tok')]
      .flatMap((t, i) => t.classList.contains('tok-hit') ? [i] : []),
    head: r.querySelector('.bpe-head').innerText,
    rows: chart.dataset.rows ? JSON.parse(chart.dataset.rows) : null,
    table: [...r.querySelectorAll('.bpe-table tbody tr:not([hidden])')].map((tr) => Number(tr.dataset.step)),
    current: r.querySelector('.bpe-table tr.current')?.dataset.step ?? null,
    metrics: [...r.querySelectorAll('.bpe-metric-value')].map((m) => m.innerText),
    slider: r.querySelector('input[type=range]').value,
  };
}"""
# samples held for the check: characters, and bytes (emoji and accents split into byte tokens)
CASES = {
    "char": ("sennrich", "variant=char&merges=12", dict(variant="char"), 12),
    "byte": ("multilingual and emoji", "variant=byte&split=gpt4&merges=40",
             dict(variant="byte", pattern="gpt4"), 40),
    "gpt4": ("python source", "start=cl100k_base&merges=15", "cl100k_base", 15),  # GPT-4's new merges
    # merges join a line break and the next line's indent: the two lines become one, and back
    "char across lines": ("python source", "variant=char&merges=40", dict(variant="char"), 40),
    # words: the line breaks are in the text between tokens
    "word": ("python source", "variant=word&merges=20", dict(variant="word"), 20),
}


def trained(text: str, settings, merges: int) -> BPETokenizer:
    """The tokenizer the page learns for ``settings`` (a real tokenizer's name: its extension)."""
    if isinstance(settings, str):
        return BPETokenizer.from_pretrained(settings).extended(text, merges)
    return BPETokenizer.from_text(text, merges, **settings)


def expected(tok: BPETokenizer, text: str, k: int) -> dict:
    """What the step view must show at step ``k``, from ``core`` alone."""
    n = len(tok.trace)
    tokens = segment(tok, text, k)
    hits = occurrence_indices(tok, tokens, k) if k < n else []
    if k < n:
        head = explain_step(tok, k)
    else:
        head = (f"All {n} merges done: the vocabulary has {tok.vocab_size} tokens and the corpus is "
                f"{tok.trace[-1].length_after:,} tokens long (from {tok.initial_length:,}).")
    corpus = tok.trace[k - 1].length_after if k else tok.initial_length
    return {
        "step": k,
        "hits": hits,
        "ids": [t.id for t in tokens],
        "lines": line_lengths(tok, text, tokens),
        "same_colour_neighbours": [],
        "yellow": sorted({i for h in hits for i in (h, h + 1)}),
        "head": head,
        "rows": pair_rows(tok, k) if k < n else None,
        "table": list(range(1, k + 1)),
        "current": str(k) if k else None,
        "metrics": [f"{tok.vocab_size - n + k:,}", f"{corpus:,}", f"{len(tokens):,}"],
        "slider": str(k),
    }


def line_lengths(tok: BPETokenizer, text: str, tokens) -> list[int]:
    """How many tokens each line of the box holds: a line ends after a token that ends with a line
    break, and at each line break in the text between tokens."""
    lines, pos = [0], 0
    for t in tokens:
        lines.extend([0] * text.count("\n", pos, t.start))
        lines[-1] += 1
        if token_face(tok, t.id)[2]:
            lines.append(0)
        pos = max(pos, t.end)
    lines.extend([0] * text.count("\n", pos))
    return lines


def shown(pg, k: int, n: int) -> dict:
    """What the view shows once it shows step ``k`` of ``n``, the lines far from the box's view
    changed too (they change once the browser is idle)."""
    pg.wait_for_function(f"(r => r?.dataset.step === '{k}' && r.dataset.later !== '1')"
                         "(document.querySelector('.bpe-step'))", timeout=30_000)
    got = pg.evaluate(SHOWN)
    if got["rows"] is None and k < n:  # Vega draws the chart once it has loaded
        pg.wait_for_function("document.querySelector('.bpe-pairs-chart')?.dataset.rows", timeout=30_000)
        got = pg.evaluate(SHOWN)
    return got


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("runs")) as url, chromium_context() as new_context:
        yield url, new_context


def open_learn(browser, query: str, sent: list):
    """A tab on Learn BPE at ``?query``, recording every websocket frame it sends in ``sent``."""
    url, new_context = browser
    pg = new_context().new_page()
    pg.on("websocket", lambda ws: ws.on("framesent", lambda frame: sent.append(frame)))
    pg.goto(f"{url}/learn_bpe?{query}")
    pg.get_by_role("button", name="Next ▶").wait_for(timeout=120_000)
    idle(pg)
    return pg


@pytest.mark.parametrize("case", CASES)
def test_every_step_shows_what_core_computes(browser, case):
    sample, query, settings, merges = CASES[case]
    text = load_sample(sample)
    tok = trained(text, settings, merges)
    n = len(tok.trace)
    sent: list = []
    pg = open_learn(browser, f"corpus=sample:{quote(sample)}&{query}", sent)
    assert shown(pg, 0, n) == expected(tok, text, 0)
    before = len(sent)
    assert before > 0, "the recorder saw none of the page's own messages"
    for k in range(1, n + 1):
        pg.get_by_role("button", name="Next ▶").click()
        assert shown(pg, k, n) == expected(tok, text, k), f"step {k}"
    for k in range(n - 1, -1, -1):
        pg.get_by_role("button", name="◀ Previous").click()
        assert shown(pg, k, n) == expected(tok, text, k), f"back to step {k}"
    slider = pg.get_by_role("slider", name="Merges done")
    slider.fill(str(n // 2))
    assert shown(pg, n // 2, n) == expected(tok, text, n // 2)
    pg.get_by_role("button", name="All merges ⏭").click()
    assert shown(pg, n, n) == expected(tok, text, n)
    pg.get_by_role("button", name="⏮ Reset").click()
    assert shown(pg, 0, n) == expected(tok, text, 0)
    assert len(sent) == before, "stepping sent messages to the server"
    assert pg.dialogs == []


def test_play_and_pause_send_nothing_and_a_reload_opens_at_the_step_shown(browser):
    text = load_sample("sennrich")
    tok = BPETokenizer.from_text(text, 12, variant="char")
    n = len(tok.trace)
    sent: list = []
    pg = open_learn(browser, "corpus=sample:sennrich&merges=12", sent)
    before = len(sent)
    assert before > 0, "the recorder saw none of the page's own messages"
    pg.get_by_role("button", name="▶ Play").click()
    pg.wait_for_function("Number(document.querySelector('.bpe-step').dataset.step) >= 3", timeout=30_000)
    pg.get_by_role("button", name="⏸ Pause").click()
    k = int(pg.locator(".bpe-step").get_attribute("data-step"))
    assert 3 <= k <= 12 and len(sent) == before
    assert shown(pg, k, n) == expected(tok, text, k)
    pg.wait_for_function(f"new URL(location.href).searchParams.get('step') === '{k}'", timeout=30_000)
    pg.reload()
    assert shown(pg, k, n) == expected(tok, text, k)


def test_the_keys_step_from_anywhere_on_the_page_but_a_text_box(browser):
    """After a click on the page's heading, the keys the view names step it; typed into a text box,
    they are the box's."""
    from playwright.sync_api import expect

    text = load_sample("sennrich")
    tok = BPETokenizer.from_text(text, 12, variant="char")
    n = len(tok.trace)
    pg = open_learn(browser, "corpus=sample:sennrich&merges=12", [])
    expect(pg.locator(".bpe-keys")).to_contain_text("→, n or j next merge")
    pg.get_by_role("heading", name="Learn BPE").first.click()
    keys = (("ArrowRight", 1), ("n", 2), ("j", 3), ("p", 2), ("k", 1), ("ArrowLeft", 0), ("ArrowRight", 1))
    for key, k in keys:
        pg.keyboard.press(key)
        assert shown(pg, k, n) == expected(tok, text, k), f"{key} to step {k}"
    box = pg.get_by_role("textbox", name="Or paste your own text")
    held = box.input_value()
    box.press("n")
    expect(box).not_to_have_value(held)  # the n went into the box
    box.fill(held)  # the box as it was: nothing sent as a paste when it loses the focus
    pg.get_by_role("heading", name="Learn BPE").first.click()
    pg.keyboard.press("ArrowRight")
    assert shown(pg, 2, n) == expected(tok, text, 2), "a key typed into the box stepped the view"


def test_the_caption_says_why_a_pair_occurs_more_often_than_it_merges(browser):
    """'a' + 'a' occurs 7 times in "aaa aaa aaaa", counted with overlaps, and merges 4 times: the
    caption under the sentence says both, and why."""
    from playwright.sync_api import expect

    from test_browser import paste_corpus

    text = "aaa aaa aaaa"
    tok = BPETokenizer.from_text(text, 1, variant="char")
    step = tok.trace[0]
    merged = tok.initial_length - step.length_after
    assert (step.count, merged) == (7, 4)
    pg = open_learn(browser, "variant=char&merges=1", [])
    paste_corpus(pg, text)
    caption = pg.locator(".bpe-step .bpe-caption")
    expect(caption).to_contain_text("4 occurrence(s) in the text below are highlighted", timeout=60_000)
    expect(caption).to_contain_text(
        "The pair occurs 7 times in the corpus counting overlapping occurrences, but only 4 of them do not "
        "overlap, and only those merge: in 'a' 'a' 'a' the pair occurs twice, but once the first two merge "
        "the third stands alone.")
    assert pg.locator(".bpe-step").get_attribute("data-hits").count(",") == merged - 1


def test_the_curves_cursors_stand_at_the_step_shown(browser):
    """Each curve's red cursor is laid over its chart: it moves with the step, in proportion, and
    stays inside the chart, from the first step to the last."""
    pg = open_learn(browser, "corpus=sample:sennrich&merges=12", [])
    pg.wait_for_function("document.querySelectorAll('.bpe-cursor').length === 2", timeout=30_000)
    slider = pg.get_by_role("slider", name="Merges done")
    where = {}
    for k in (0, 6, 12):
        slider.fill(str(k))
        pg.wait_for_function(f"document.querySelector('.bpe-step').dataset.step === '{k}'", timeout=30_000)
        where[k] = pg.evaluate("""() => [...document.querySelectorAll('.bpe-curve')].map((curve) => {
          const line = curve.querySelector('.bpe-cursor').getBoundingClientRect();
          const chart = curve.querySelector('canvas').getBoundingClientRect();
          return {x: line.left + line.width / 2, top: line.top, bottom: line.bottom,
                  left: chart.left, right: chart.right, chartTop: chart.top, chartBottom: chart.bottom};
        })""")
    for curve in range(2):
        x = {k: where[k][curve]["x"] for k in where}
        assert x[0] < x[6] < x[12] and abs((x[6] - x[0]) - (x[12] - x[6])) <= 1, x
        for k in where:
            c = where[k][curve]
            assert c["left"] < c["x"] < c["right"], c
            assert c["chartTop"] <= c["top"] < c["bottom"] <= c["chartBottom"], c


# every label the step view's charts draw on their canvases from now on (Vega draws its text so)
CANVAS_LABELS = """() => {
  window.__labels = [];
  const fillText = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (label, ...rest) {
    if (this.canvas.closest?.('.bpe-pairs-chart, .bpe-curve')) window.__labels.push(String(label));
    return fillText.call(this, label, ...rest);
  };
}"""


def test_small_counts_and_merges_are_labelled_in_whole_numbers(browser):
    """Wikipedia's "aaabdaaabac": before merge 2 the top pair occurs twice, and the pairs chart's
    axis reads 0, 1, 2 (it read 0.0, 0.5, 1.0, 1.5, 2.0: half an occurrence)."""
    from test_browser import paste_corpus

    pg = open_learn(browser, "variant=char&merges=5", [])
    paste_corpus(pg, "aaabdaaabac")
    pg.wait_for_function("document.querySelector('.bpe-step input[type=range]')?.max === '5'", timeout=60_000)
    idle(pg)
    pg.evaluate(CANVAS_LABELS)
    pg.get_by_role("button", name="Next ▶", exact=True).click()
    shown(pg, 1, 5)
    pg.wait_for_function("window.__labels.includes('occurrences in the corpus')", timeout=30_000)
    numbers = [label for label in pg.evaluate("window.__labels") if label.replace(".", "").isdigit()]
    assert {"0", "1", "2"} <= set(numbers) and not [n for n in numbers if "." in n], numbers


# a click on Next, and what the view holds right after it (the click's own task) and once idle
NEXT_NOW = """() => {
  const r = document.querySelector('.bpe-step'), box = r.querySelector('.bpe-text');
  const view = box.getBoundingClientRect();
  const lines = () => [...box.querySelectorAll('.ln')].map((l) => {
    const at = l.getBoundingClientRect();
    return {ids: [...l.querySelectorAll('.tok')].map((t) => Number(t.dataset.id)),
            seen: at.bottom > view.top && at.top < view.bottom};
  });
  r.querySelector('button[data-do="next"]').click();
  return {lines: lines(), later: r.dataset.later};
}"""


def test_a_step_changes_the_lines_in_view_at_once_and_the_far_ones_when_idle(browser):
    """The box shows ten-odd of the window's lines: a step changes those in its click (what the
    box shows is the new step at once), and leaves the lines far below to the browser's idle time;
    then every line holds the step's tokens."""
    text = load_sample("python source")
    tok = trained(text, dict(variant="char"), 3)
    pg = open_learn(browser, f"corpus=sample:{quote('python source')}&variant=char&merges=3", [])
    assert shown(pg, 0, 3)["ids"] == [t.id for t in segment(tok, text, 0)]
    # which lines are near is reported after a frame is drawn: one more frame, then the click
    pg.evaluate("() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)))")
    now = pg.evaluate(NEXT_NOW)
    want = expected(tok, text, 1)
    seen = [line["ids"] for line in now["lines"] if line["seen"]]
    ids = [t.id for t in segment(tok, text, 1)]
    flat = [i for line in now["lines"] for i in line["ids"]]
    assert len(seen) >= 5 and flat[:sum(map(len, seen))] == ids[:sum(map(len, seen))], "the lines in view"
    assert now["later"] == "1" and flat != ids, "no line was left for later: the test shows nothing"
    assert shown(pg, 1, 3)["ids"] == want["ids"]
