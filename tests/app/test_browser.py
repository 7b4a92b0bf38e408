"""A real Chromium drives the running app: paste a corpus, step and play the animation, check that
pasted HTML stays text, and save a screenshot of every page (into the ignored ``tests/.screenshots/``;
``pytest --update-screenshots`` refreshes the README's images in ``tests/screenshots/``).

Uses Debian's ``/usr/bin/chromium`` (never ``playwright install``); skips without it, except under
``CI=true``, where a missing browser is a failure.
"""

import os
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import shared_path
from core.room.runs import SERVER, list_runs, stop_run
from ui.plumbing.state import STEP_PARAM
from ui.serving.supervisor import free_port

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
NAVIGATION_MS = 120_000
SCRIPT_RUNS_JS = Path(__file__).with_name("script_runs.js")
EVIL = "<script>alert(1)</script> <img src=x onerror=alert(1)>"

pytestmark = pytest.mark.browser


@contextmanager
def serve(runs_dir: Path, env: dict | None = None):
    """A fresh ``streamlit run streamlit_app.py`` on a free loopback port (with ``env`` added to
    its environment); yields its URL."""
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is missing: install Debian's chromium to run the browser test"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "BPE_EXPLORER_RUNS_DIR": str(runs_dir), **(env or {})})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"streamlit did not start: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.3)
        yield url
    finally:
        for run in list_runs(runs_dir):  # never leave a training process behind
            if run.active:
                stop_run(run.path, SERVER, timeout=10)
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def chromium_context():
    """Yields ``new_context()``: each call opens a browser context of its own (its own cookies and
    storage: another person in the room), whose pages record any dialog in ``page.dialogs``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)

        def new_context():
            context = browser.new_context(viewport={"width": 1400, "height": 2200})
            context.add_init_script(path=str(SCRIPT_RUNS_JS))  # what idle() waits on
            # a first load has no progress to wait on, only a bound, wide for two CPU hogs beside
            # two runs (why: docs/benchmarks.md, "Pages while runs fill the cores")
            context.set_default_navigation_timeout(NAVIGATION_MS)
            context.on("page", _record_dialogs)
            return context

        try:
            yield new_context
        finally:
            browser.close()


def _record_dialogs(pg) -> None:
    pg.dialogs = []
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))


@contextmanager
def chromium_page(url: str):
    with chromium_context() as new_context:
        pg = new_context().new_page()
        pg.goto(url)
        pg.wait_for_selector('[data-testid="stApp"]', timeout=60_000)
        yield pg


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serve(tmp_path_factory.mktemp("runs")) as url:
        yield url


@pytest.fixture(scope="module")
def new_context():
    """This module's one Chromium (a second Playwright in the same thread, while the first is open,
    fails: "Sync API inside the asyncio loop")."""
    with chromium_context() as new:
        yield new


@pytest.fixture(scope="module")
def app_page(server, new_context):
    pg = new_context().new_page()
    pg.goto(f"{server}/learn_bpe")  # the root opens Start here
    pg.wait_for_selector('[data-testid="stApp"]', timeout=60_000)
    return pg


def paste_corpus(pg, text: str) -> None:
    box = pg.get_by_role("textbox", name="Or paste your own text")
    box.fill(text)
    box.press("Control+Enter")


def choose_settings(pg, variant: str, merges: int) -> None:
    """Learn BPE's BPE variant and number of merges, set as a person sets them (both go in the URL)."""
    pg.locator("[data-testid=stRadio] label").filter(has=pg.get_by_text(variant, exact=True)).first.click()
    idle(pg)
    box = pg.get_by_label("Merges", exact=True)
    box.fill(str(merges))
    box.press("Enter")
    idle(pg)


def idle(pg) -> None:
    """Wait until every run the page asked for has finished, as the server reported it (followed in
    the page by ``script_runs.js``), the app shows no run in progress, and the step view is
    settled: it has changed the lines far from its box's view too (it does when the browser is
    idle) and the link holds the step it shows (at once after a click, within 300 ms during a
    play); then two frames, so what the last messages changed is drawn."""
    pg.wait_for_function(
        "window.__scriptRuns && !window.__scriptRuns.pending"
        " && document.querySelector('[data-testid=\"stApp\"]')?.dataset.testScriptState === 'notRunning'"
        " && !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " && !document.querySelector('.bpe-step[data-later=\"1\"]')"
        " && [...document.querySelectorAll('.bpe-step[data-step]')].every(view =>"
        f" (new URL(location.href).searchParams.get('{STEP_PARAM}') ?? '0') === view.dataset.step)",
        timeout=60_000)
    two_frames(pg)


def drawn(pg) -> None:
    """:func:`idle`, and no element still a grey placeholder: Streamlit draws a widget whose code the
    browser is still loading as a skeleton, so a page measured before then measures no widget."""
    idle(pg)
    pg.wait_for_function("!document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=NAVIGATION_MS)


def two_frames(pg) -> None:
    """Two animation frames: whatever the page changed before them has been laid out and painted."""
    pg.evaluate("new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")


def page_fits(pg) -> bool:
    """Whether the main area fits its width: a page that scrolls sideways slides its headings under
    the open sidebar (a wide table scrolls in a box of its own instead)."""
    return pg.locator("[data-testid=stMain]").evaluate("m => m.scrollWidth <= m.clientWidth + 1")


def charts_drawn(pg) -> None:
    """Wait until every Vega chart on the page has drawn (vega-embed's canvas or SVG has a size)."""
    pg.wait_for_function(
        "[...document.querySelectorAll('[data-testid=\"stVegaLiteChart\"]')].every(chart =>"
        " [...chart.querySelectorAll('canvas.marks, svg.marks')]"
        " .some(marks => marks.getBoundingClientRect().width > 0))",
        timeout=60_000)
    two_frames(pg)


def wait_for_progress(progress, done: str, stall_s: float = 300.0) -> None:
    """Wait until ``progress`` reads ``done``, for as long as the step it shows keeps rising:
    the bound is on a stall (no new step for ``stall_s``, far above any step time measured
    here, even with both cores busy), not on the whole run, so a slow machine only waits longer."""
    import re

    last, last_change = -1, time.monotonic()
    while True:
        text = progress.inner_text(timeout=stall_s * 1000)
        if done in text:
            return
        step = int(re.search(r"step ([\d,]+)", text).group(1).replace(",", ""))
        if step > last:
            last, last_change = step, time.monotonic()
        assert time.monotonic() - last_change < stall_s, f"no progress for {stall_s:.0f} s: {text!r}"
        time.sleep(1.0)


def test_step_and_play_the_animation(app_page, shots_dir):
    from playwright.sync_api import expect

    pg = app_page
    expect(pg.get_by_role("heading", name="Learn BPE")).to_be_visible(timeout=60_000)
    expect(pg.get_by_text("Merge 1:", exact=False).first).to_be_visible(timeout=30_000)
    paste_corpus(pg, "the cat sat on the mat the cat ran the cat sat")
    expect(pg.get_by_text("Pasted text")).to_be_visible(timeout=30_000)
    idle(pg)
    pg.get_by_role("button", name="Next ▶").click()
    expect(pg.get_by_text("Merge 2:", exact=False).first).to_be_visible(timeout=30_000)
    hits = pg.locator(".bpe-hit")
    expect(hits.first).to_be_visible()
    assert hits.count() >= 1
    idle(pg)
    pg.screenshot(path=str(shots_dir / "learn_bpe.png"))
    pg.get_by_role("button", name="▶ Play").click()
    expect(pg.get_by_role("button", name="⏸ Pause")).to_be_visible(timeout=15_000)
    expect(pg.get_by_text("All 10 merges done", exact=False)).to_be_visible(timeout=30_000)
    expect(pg.get_by_role("button", name="▶ Play")).to_be_visible(timeout=15_000)
    assert pg.dialogs == []


def test_the_tree_as_text_is_built_when_its_expander_opens(app_page):
    """A fresh tab sends no code block (Streamlit's syntax highlighter is a third of a first load's
    scripts); opening the expander shows the tree, its first line the token chosen."""
    from playwright.sync_api import expect

    pg = app_page
    idle(pg)
    code = pg.get_by_test_id("stCode")
    expect(code).to_have_count(0)
    pg.get_by_text("The same tree as text", exact=True).click()
    expect(code).to_have_count(1, timeout=30_000)
    chosen = pg.get_by_label("Token (or click a token in the text above)").input_value()
    first_line = code.inner_text().splitlines()[0]
    assert first_line.endswith(")") and "(id " in first_line
    assert first_line.split("  (id ")[0] in chosen


def test_pasted_html_stays_text(app_page):
    from playwright.sync_api import expect

    pg = app_page
    paste_corpus(pg, EVIL + " " + EVIL)
    expect(pg.get_by_text("Pasted text")).to_be_visible(timeout=30_000)
    idle(pg)
    expect(pg.locator(".bpe-text").first).to_contain_text("onerror", timeout=30_000)
    shown = pg.locator(".bpe-text").first.inner_text().replace("\n", "")
    assert "<script>alert(1)</script>" in shown and "onerror=alert(1)>" in shown
    assert pg.locator("img[src='x']").count() == 0
    assert pg.evaluate("[...document.scripts].filter(s => s.textContent.includes('alert(1)')).length") == 0
    assert pg.dialogs == []


def test_screenshot_every_page(app_page, shots_dir):
    from playwright.sync_api import expect

    pg = app_page
    paste_corpus(pg, (ROOT / "sample_corpora" / "sennrich.txt").read_text(encoding="utf-8"))
    idle(pg)
    pg.get_by_role("link", name="Char vs BPE").click()
    expect(pg.get_by_role("heading", name="Char vs BPE")).to_be_visible(timeout=60_000)
    box = pg.get_by_role("textbox", name="Test text")
    box.fill("the lowest newer wider " + EVIL + " ünïcode 👋")
    box.press("Control+Enter")
    expect(pg.get_by_text("The corpus never contains", exact=False)).to_be_visible(timeout=30_000)
    idle(pg)
    assert pg.locator("img[src='x']").count() == 0
    # GPT-2's bytes of 👋 sit under it inside one purple outline, small (the stylesheet's rules)
    wave = pg.locator(".bpe-text .bpe-char", has=pg.locator(".bpe-glyph", has_text="👋"))
    expect(wave).to_have_count(1)
    expect(wave).to_have_css("border-top-color", "rgb(124, 58, 237)")
    expect(wave.locator(".tok.in-group").first).to_have_css("font-size", "10px")
    pg.screenshot(path=str(shots_dir / "char_vs_bpe.png"))
    assert pg.dialogs == []


def test_char_vs_bpe_downloads_the_tokenizer_it_trained_on_the_pasted_text(server, new_context):
    """What arrives (its JSON made only when the button is clicked, not at every run) is the
    page's tokenizer: core loads it back, and it is the one core trains on the same text."""
    import re

    from playwright.sync_api import expect

    from core import BPETokenizer, loads_tokenizer

    text = "the lowest newer wider tokens were lower than the newest widest ones. " * 20
    pg = new_context().new_page()
    pg.goto(f"{server}/char_vs_bpe")
    expect(pg.get_by_role("heading", name="Char vs BPE")).to_be_visible(timeout=60_000)
    paste_corpus(pg, text)
    expect(pg.get_by_text("Pasted text")).to_be_visible(timeout=30_000)
    idle(pg)
    with pg.expect_download(timeout=60_000) as download:
        pg.get_by_role("button", name="Download our tokenizer (JSON)").click()
    variant, merges = re.fullmatch(r"bpe-(\w+)-(\d+)\.json", download.value.suggested_filename).groups()
    got = loads_tokenizer(Path(download.value.path()).read_bytes())
    assert got.to_dict() == BPETokenizer.from_text(text, int(merges), variant=variant).to_dict()
    assert pg.dialogs == []


def test_train_a_gpt_and_watch_it_learn(app_page, shots_dir):
    """A workshop attendee's path: the short sample is too short, one click loads Tiny
    Shakespeare, a char run and a BPE run train while the page updates by itself, then both are
    compared in bits per character and the model writes text."""
    import re

    from playwright.sync_api import expect

    shared_path("corpora", "tinyshakespeare.txt")  # what the button loads here, offline
    pg = app_page
    pg.get_by_role("link", name="Train a GPT").click()
    expect(pg.get_by_role("heading", name="Train a GPT")).to_be_visible(timeout=60_000)
    paste_corpus(pg, "low lower newest widest")
    expect(pg.get_by_text("This corpus is too short", exact=False)).to_be_visible(timeout=30_000)
    pg.get_by_role("button", name="Load Tiny Shakespeare").click()
    expect(pg.get_by_text("1,115,394 characters", exact=False)).to_be_visible(timeout=60_000)
    idle(pg)
    steps = pg.get_by_label("Steps")
    steps.fill("200")
    steps.press("Enter")
    idle(pg)

    progress = pg.get_by_text(re.compile(r"^step \d+ / 200 · "))
    for tokenizer in ("characters", "BPE"):
        choice = pg.locator('[data-testid="stRadio"]').filter(has_text="Tokenizer")
        choice.get_by_text(tokenizer, exact=False).click()
        idle(pg)
        pg.get_by_role("button", name="Launch").click()
        # nobody touches the page from here: the steps, then the end, arrive by themselves
        wait_for_progress(progress, "step 200 / 200 · finished")
        expect(pg.get_by_role("button", name="Generate")).to_be_visible(timeout=30_000)
        expect(pg.get_by_text(re.compile(r"^Step 200 · \d\.\d{3} bits/char$"))).to_be_visible()  # the newest

    runs = pg.get_by_text("Compare runs", exact=False)
    expect(runs).to_be_visible()
    for name in ("char-quick", "bpe-quick"):  # the page's first preset on a CPU
        expect(pg.get_by_text(name, exact=True).last).to_be_visible()
    charts = pg.locator('[data-testid="stVegaLiteChart"]')
    expect(charts.nth(1)).to_be_visible(timeout=60_000)  # losses, and bits per char of both runs
    prompt = pg.get_by_role("textbox", name="Prompt")
    prompt.fill("ROMEO:")
    prompt.press("Enter")
    idle(pg)
    pg.get_by_role("button", name="Generate").click()
    expect(pg.locator("code").last).to_contain_text("ROMEO:", timeout=30_000)
    idle(pg)
    pg.screenshot(path=str(shots_dir / "train_gpt.png"))
    assert pg.dialogs == []


@pytest.mark.parametrize("page_name, title", [("train_gpt", "Train a GPT"), ("char_vs_bpe", "Char vs BPE")])
def test_a_fresh_server_opened_at_a_page_url(page_name, title, tmp_path, new_context):
    """A tab left open on a page reconnects to a restarted server: the page comes with the app's
    navigation and the corpus sidebar, not Streamlit's bare pages-folder view."""
    from playwright.sync_api import expect

    with serve(tmp_path) as url:
        pg = new_context().new_page()
        pg.goto(f"{url}/{page_name}")
        expect(pg.get_by_role("heading", name=title)).to_be_visible(timeout=60_000)
        expect(pg.get_by_role("heading", name="Corpus")).to_be_visible(timeout=30_000)
        nav = pg.locator('[data-testid="stSidebarNav"]')
        expect(nav).to_contain_text("Learn BPE")
        expect(nav).not_to_contain_text("streamlit app")
        pg.context.close()
