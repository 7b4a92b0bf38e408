"""Learn BPE's step view in a real Chromium, on a 100 KB corpus (300 merges): a click on Next,
Previous or the slider to the step drawn (the browser computes every step), merges shown per
second at each Play speed; and the size and build time of what the server sends once per
tokenizer and window.

    python bench/bench_step_view.py [--chars 100000] [--seconds 4] [--clicks 60]
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "app"), str(ROOT / "tests")]

from bench_server import start_server  # noqa: E402
from core import BPETokenizer  # noqa: E402
from core.bpe.explain import text_window  # noqa: E402
from test_browser import ARGS, CHROMIUM, idle  # noqa: E402
from test_browser_animation import PAUSE, RECORDER, SLIDER, choose_speed, paste_long  # noqa: E402
from core.samples import python_docs_corpus  # noqa: E402
from ui.views.step_view import encoded_payload, payload  # noqa: E402

SPEEDS = [1, 2, 5, 10, 20]
# click a button of the step view, then wait for the frame that shows the new step: the time a
# person waits, the browser's layout and paint included
CLICKS = """async ([what, n]) => {
  const root = document.querySelector('.bpe-step'), times = [];
  for (let i = 0; i < n; i++) {
    const before = root.dataset.step, began = performance.now();
    root.querySelector(`button[data-do="${what}"]`).click();
    await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
    if (root.dataset.step === before) throw new Error(`${what} did not move the step`);
    times.push(performance.now() - began);
  }
  return times;
}"""


def payload_sizes(text: str) -> None:
    window = text_window(text, 0, 2000)
    for variant in ("char", "byte"):
        for merges in (300, 5000):
            tok = BPETokenizer.from_text(text, merges, variant=variant)
            start = time.perf_counter()
            payload(tok, window, len(text))
            built = time.perf_counter() - start
            size = len(encoded_payload(tok, window, len(text)))
            print(f"payload, {variant}, {len(tok.trace)} merges: {size / 1024:.0f} KiB, built in "
                  f"{built * 1000:.0f} ms (once per tokenizer and window)")


def clicks(pg, what: str, n: int) -> str:
    times = sorted(pg.evaluate(CLICKS, [what, n]))
    return f"p50 {statistics.median(times):.0f} ms, p95 {times[int(0.95 * (len(times) - 1))]:.0f} ms"


def played(pg, speed: int, seconds: float) -> float:
    """Merges shown per second from the first merge after Play, over ``seconds`` of play."""
    choose_speed(pg, speed)
    before = int(pg.locator(SLIDER).input_value())
    pg.evaluate(RECORDER, before)
    pg.get_by_role("button", name="▶ Play").click()
    pg.wait_for_function(f"window.__steps.length > {int(speed * seconds)}", timeout=120_000)
    pg.locator(PAUSE).click()
    steps = pg.evaluate("window.__steps")[:int(speed * seconds) + 1]
    pg.get_by_role("button", name="⏮ Reset").click()
    return (steps[-1][1] - steps[0][1]) / ((steps[-1][0] - steps[0][0]) / 1000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--clicks", type=int, default=60)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    text = python_docs_corpus(args.chars)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    payload_sizes(text)
    proc, url = start_server(Path(tempfile.mkdtemp()), {})
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            pg = browser.new_page(viewport={"width": 1400, "height": 2200})
            pg.goto(url + "/learn_bpe")
            pg.get_by_role("heading", name="Learn BPE").wait_for(timeout=60_000)
            paste_long(pg, text)
            pg.wait_for_function(f"document.querySelector('{SLIDER}')?.max === '300'", timeout=120_000)
            idle(pg)
            pg.wait_for_function("document.querySelector('.bpe-pairs-chart')?.dataset.rows", timeout=60_000)
            print(f"Next, click to step drawn: {clicks(pg, 'next', args.clicks)}")
            print(f"Previous, click to step drawn: {clicks(pg, 'previous', args.clicks)}")
            print(f"All merges (0 to 300), click to step drawn: {clicks(pg, 'all', 1)}")
            print(f"Reset (300 to 0), click to step drawn: {clicks(pg, 'reset', 1)}")
            for speed in SPEEDS:
                print(f"Play at {speed:>2} merges/s: {played(pg, speed, args.seconds):.2f} merges shown/s")
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
