"""Charts and tables are seen whole, and so is what comes before them (a real Chromium, 800 px, dark).

Text drawn inside charts is legible in the dark theme: every label of every chart on the pages that
draw them (axis labels and titles, legends, words on bars and points), SVG or canvas, stands at
4.5:1 or more against what is under it, in a real Chromium.  axe-core never reads it: a chart's
text is SVG (Streamlit's charts) or pixels (the step view's), so ``chart_text.js`` measures the
colours a person sees.  The runs folder holds an evaluated sweep and a GPT checkpoint of this
test's owner, so Tokenizer questions and Train a GPT draw every chart they have.

A chart's or a table's toolbar (Streamlit's hover menu) covers nothing of the element before it:
it hid a chart's title and a select box's arrow.

Not the light theme: Streamlit draws every chart's axis and legend text in its own grey there
(gray70 on white, below 4.5:1), which no theme setting changes.
"""

import json
import time
from pathlib import Path

import pytest

from core import BPETokenizer, samples
from test_browser import charts_drawn, chromium_context, idle, serve, two_frames

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHART_TEXT_JS = Path(__file__).with_name("chart_text.js")
OWNER = "chartcontrastowner1"  # a personal link's owner id (``?u=``), 16 characters or more
CORPUS = "python source"
SWEEP = {320: 3.1, 512: 2.9, 1024: 3.0}  # vocabulary size -> validation bits per character
N_EMBD, BODY = 64, 200_000  # the sweep's model: embedding width, parameters besides the embedding
PAGES = {
    "Learn BPE": "learn_bpe?variant=byte&merges=30",
    "Char vs BPE": "char_vs_bpe",
    "Compare tokenizers": "compare_tokenizers",
    "Tokenizer questions": "insights",
    "Train a GPT": "train_gpt",
}
LEGIBLE = 4.5  # WCAG's ratio for text
# a hovered element's toolbar against the element just before it, where the two share columns
TOOLBAR = """(element) => {
  const box = element.closest('[data-testid="stElementContainer"]'), before = box.previousElementSibling;
  const bar = box.querySelector('[data-testid="stElementToolbar"]').getBoundingClientRect();
  if (!before) return null;
  const b = before.getBoundingClientRect();
  const text = before.innerText.split("\\n")[0].slice(0, 50);
  return {text, covers: bar.top < b.bottom - 0.5 && bar.left < b.right && b.left < bar.right,
          bar: [bar.top, bar.bottom], before: [b.top, b.bottom]};
}"""
# down the page a window at a time: Streamlit draws a chart once it comes near the window
SCROLL_THROUGH = """async () => {
  const main = document.querySelector('[data-testid="stMain"]');
  for (let y = 0; y <= main.scrollHeight; y += main.clientHeight / 2) {
    main.scrollTop = y;
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  }
}"""
# every chart on the page has drawn text, ``wanted`` among it
DRAWN = """(wanted) => {
  const labels = window.__chartTexts(), charts = document.querySelectorAll(
    '[data-testid="stVegaLiteChart"], .bpe-pairs-chart, .bpe-curve');
  const shown = labels.map((t) => t.text).join(" ");
  return charts.length > 0 && new Set(labels.map((t) => t.chart)).size === charts.length
    && wanted.every((w) => shown.includes(w));
}"""


def share(size: int) -> str:
    """The embedding share the page shows for a sweep run of ``size`` tokens."""
    return f"{size * N_EMBD / (BODY + size * N_EMBD):.0%}"


def owned_runs(runs_dir: Path) -> None:
    """The sweep's runs of ``CORPUS`` as evaluated, and a byte-level GPT's checkpoint, all ``OWNER``'s."""
    import torch

    from core.gpt.checkpoint import checkpoint_path, save_checkpoint
    from core.gpt.model import GPT, GPTConfig
    from core.insights.sweep import run_name
    from core.runfolder.layout import CONFIG_FILE, CORPUS_FILE, METRICS_FILE, write_text
    from core.runfolder.status import write_status

    text = samples.load_sample(CORPUS)
    for size, bpc in SWEEP.items():
        run = runs_dir / OWNER / run_name(text, size, "quick")
        run.mkdir(parents=True)
        write_text(run / CORPUS_FILE, text)
        write_status(run, "finished", max_steps=100)
        records = [{"step": step, "train_loss": 3.0, "lr": 1e-3, "tokens_per_s": 1000.0,
                    "elapsed_s": step / 10, "val_loss": 3.0, "train_loss_est": 3.0,
                    "val_bpc": bpc + (100 - step) / 100, "val_bpb": bpc} for step in (50, 100)]
        write_text(run / METRICS_FILE, "".join(json.dumps(r) + "\n" for r in records))
        write_text(run / CONFIG_FILE, json.dumps({"n_params": BODY + size * N_EMBD,
                                                  "model_config": {"n_embd": N_EMBD}}))
    run = runs_dir / OWNER / "byte-gpt"
    run.mkdir(parents=True)
    tok = BPETokenizer.from_text(text, 20, variant="byte")
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=16, n_layer=1, n_head=2, n_embd=16))
    write_text(run / CORPUS_FILE, text)
    save_checkpoint(checkpoint_path(run), model, tok, step=7)
    write_status(run, "finished", max_steps=7)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    runs_dir = tmp_path_factory.mktemp("runs")
    owned_runs(runs_dir)
    with serve(runs_dir) as url, chromium_context() as new_context:
        yield url, new_context


def scrolled_until(pg, check: str, arg=None, timeout_s: float = 120):
    """Scroll down the page again and again, a second apart, until the JS function ``check(arg)``
    returns something true; returns that.  (Playwright's ``wait_for_function`` takes an async
    function's promise for true at once: the scrolling must be awaited here.)"""
    deadline = time.monotonic() + timeout_s
    look = f"async (arg) => {{ await ({SCROLL_THROUGH})(); return ({check})(arg); }}"
    while not (found := pg.evaluate(look, arg)):
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {timeout_s} s: {check}")
        pg.wait_for_timeout(1000)
    return found


def open_page(context, url: str, name: str):
    """``name`` on the owner's personal link and the test's corpus, 800 px wide, dark, drawn."""
    from playwright.sync_api import expect

    path = PAGES[name]
    pg = context.new_page()
    pg.set_viewport_size({"width": 800, "height": 2400})
    pg.emulate_media(color_scheme="dark")
    sep = "&" if "?" in path else "?"
    pg.goto(f"{url}/{path}{sep}corpus=sample:{CORPUS.replace(' ', '%20')}&u={OWNER}")
    expect(pg.get_by_role("heading", name=name).first).to_be_visible(timeout=120_000)
    idle(pg)
    return pg


def test_every_chart_label_is_legible_in_the_dark_theme(browser, shots_dir):
    url, new_context = browser
    context = new_context()
    context.add_init_script(path=str(CHART_TEXT_JS))
    illegible = []
    for name in PAGES:
        pg = open_page(context, url, name)
        # every chart drawn: the page's own labels (the sweep's shares on Tokenizer questions) among them
        wanted = [share(size) for size in SWEEP] if name == "Tokenizer questions" else []
        scrolled_until(pg, DRAWN, wanted)
        idle(pg)
        charts_drawn(pg)
        labels = pg.evaluate("window.__chartTexts()")
        illegible += [f"{name}: {t['text']!r} in {t['chart']}, {t['fg']} on {t['bg']}: {t['ratio']:.2f}:1"
                      for t in labels if t["ratio"] < LEGIBLE]
        if name == "Tokenizer questions":  # the sweep's chart, its shares under its sizes
            sweep = pg.locator('[data-testid="stVegaLiteChart"]').filter(has_text="embedding share under it")
            sweep.screenshot(path=str(shots_dir / "chart_labels_sweep_800_dark.png"))
        pg.close()
    assert not illegible, "chart text below 4.5:1:\n" + "\n".join(illegible)


@pytest.mark.parametrize("name", ["Tokenizer questions", "Train a GPT"])
def test_a_toolbar_covers_nothing_before_its_chart_or_table(browser, name, shots_dir):
    """Each chart and table of the page hovered in turn: its toolbar lies in the space above it."""
    url, new_context = browser
    context = new_context()
    pg = open_page(context, url, name)
    pg.set_viewport_size({"width": 800, "height": 1000})
    framed = ('[data-testid="stMain"] [data-testid="stElementContainer"]'
              ':has([data-testid="stElementToolbar"]) [data-testid="stFullScreenFrame"]')
    scrolled_until(pg, f"() => document.querySelectorAll('{framed}').length >= 2")
    idle(pg)
    elements = pg.locator(framed)
    covered = []
    for n in range(elements.count()):
        element = elements.nth(n)
        element.evaluate("(e) => e.scrollIntoView({block: 'center'})")
        element.hover()
        # shown once it has faded in (it moves up to its place as it fades in)
        pg.wait_for_function("(e) => getComputedStyle(e.querySelector('[data-testid=\"stElementToolbar\"]'))"
                             ".opacity === '1'", arg=element.element_handle())
        two_frames(pg)
        place = element.evaluate(TOOLBAR)
        if place and place["covers"]:
            covered.append(place)
            pg.screenshot(path=str(shots_dir / f"toolbar_covers_{name.lower().replace(' ', '_')}_{n}.png"))
    assert not covered, f"a toolbar covers the element before it: {covered}"
