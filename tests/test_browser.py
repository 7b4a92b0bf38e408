"""A real Chromium drives the running app: paste a corpus, step and play the animation, check that
pasted HTML stays text, and save a screenshot of every page into ``tests/screenshots/``.

Uses Debian's ``/usr/bin/chromium`` (never ``playwright install``); skips without it, except under
``CI=true``, where a missing browser is a failure.
"""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "tests" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
EVIL = "<script>alert(1)</script> <img src=x onerror=alert(1)>"

pytestmark = pytest.mark.browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is missing: install Debian's chromium to run the browser test"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
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
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def app_page(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 2200})
        pg = context.new_page()
        pg.dialogs = []
        pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
        pg.goto(server)
        pg.wait_for_selector('[data-testid="stApp"]', timeout=60_000)
        yield pg
        context.close()
        browser.close()


def _paste_corpus(pg, text: str) -> None:
    box = pg.get_by_role("textbox", name="Or paste your own text")
    box.fill(text)
    box.press("Control+Enter")


def _idle(pg) -> None:
    """Wait until the app is not running a script (the status widget goes away)."""
    pg.wait_for_timeout(300)
    pg.wait_for_function(
        "!document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=30_000)


def test_step_and_play_the_animation(app_page):
    from playwright.sync_api import expect

    pg = app_page
    expect(pg.get_by_role("heading", name="Learn BPE")).to_be_visible(timeout=60_000)
    expect(pg.get_by_text("Merge 1:", exact=False).first).to_be_visible(timeout=30_000)
    _paste_corpus(pg, "the cat sat on the mat the cat ran the cat sat")
    expect(pg.get_by_text("Pasted text")).to_be_visible(timeout=30_000)
    _idle(pg)
    pg.get_by_role("button", name="Next ▶").click()
    expect(pg.get_by_text("Merge 2:", exact=False).first).to_be_visible(timeout=30_000)
    hits = pg.locator(".bpe-hit")
    expect(hits.first).to_be_visible()
    assert hits.count() >= 1
    SHOTS.mkdir(parents=True, exist_ok=True)
    _idle(pg)
    pg.screenshot(path=str(SHOTS / "learn_bpe.png"))
    pg.get_by_role("button", name="▶ Play").click()
    expect(pg.get_by_role("button", name="⏸ Pause")).to_be_visible(timeout=15_000)
    expect(pg.get_by_text("All 10 merges done", exact=False)).to_be_visible(timeout=30_000)
    expect(pg.get_by_role("button", name="▶ Play")).to_be_visible(timeout=15_000)
    assert pg.dialogs == []


def test_pasted_html_stays_text(app_page):
    from playwright.sync_api import expect

    pg = app_page
    _paste_corpus(pg, EVIL + " " + EVIL)
    expect(pg.get_by_text("Pasted text")).to_be_visible(timeout=30_000)
    _idle(pg)
    expect(pg.locator(".bpe-text").first).to_contain_text("onerror", timeout=30_000)
    shown = pg.locator(".bpe-text").first.inner_text().replace("\n", "")
    assert "<script>alert(1)</script>" in shown and "onerror=alert(1)>" in shown
    assert pg.locator("img[src='x']").count() == 0
    assert pg.evaluate("[...document.scripts].filter(s => s.textContent.includes('alert(1)')).length") == 0
    pg.wait_for_timeout(500)
    assert pg.dialogs == []


def test_screenshot_every_page(app_page):
    from playwright.sync_api import expect

    pg = app_page
    _paste_corpus(pg, (ROOT / "sample_corpora" / "sennrich.txt").read_text(encoding="utf-8"))
    _idle(pg)
    pg.get_by_role("link", name="Char vs BPE").click()
    expect(pg.get_by_role("heading", name="Char vs BPE")).to_be_visible(timeout=60_000)
    box = pg.get_by_role("textbox", name="Test text")
    box.fill("the lowest newer wider " + EVIL + " ünïcode 👋")
    box.press("Control+Enter")
    expect(pg.get_by_text("Not in the corpus alphabet", exact=False)).to_be_visible(timeout=30_000)
    _idle(pg)
    assert pg.locator("img[src='x']").count() == 0
    pg.screenshot(path=str(SHOTS / "char_vs_bpe.png"))
    gpt = pg.get_by_role("link", name="Train a GPT")
    if gpt.count():
        gpt.click()
        expect(pg.get_by_role("heading", name="Train a GPT")).to_be_visible(timeout=60_000)
        expect(pg.get_by_text("Launch", exact=False).first).to_be_visible(timeout=60_000)
        _idle(pg)
        pg.screenshot(path=str(SHOTS / "train_gpt.png"))
    assert pg.dialogs == []
