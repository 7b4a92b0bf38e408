"""Learn BPE's Play in a real Chromium: merges shown per second at each speed on a 100 KB corpus,
against the server's own step (a "Next" click: a rerun that redraws the step, as Play did before
the browser played the merges itself), timed in the same run; and the size of what Play sends.

    python bench/bench_animation.py [--chars 100000] [--seconds 4]
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "app"), str(ROOT / "tests")]

from bench_server import start_server  # noqa: E402
from core import BPETokenizer  # noqa: E402
from core.bpe.explain import text_window  # noqa: E402
from test_browser import ARGS, CHROMIUM, idle  # noqa: E402
from test_browser_animation import PAUSE, RECORDER, SLIDER, choose_speed, paste_long  # noqa: E402
from ui.animation import play_payload  # noqa: E402
from ui.samples import python_docs_corpus  # noqa: E402

SPEEDS = [1, 2, 5, 10, 20]


def payload_sizes(text: str) -> None:
    for merges in (300, 5000):
        tok = BPETokenizer.from_text(text, merges, variant="byte")
        start = time.perf_counter()
        size = len(json.dumps(play_payload(tok, text_window(text, 0, 2000), 0, 20.0, 1)))
        print(f"payload, byte variant, {merges} merges: {size / 1024:.0f} KiB, built in "
              f"{(time.perf_counter() - start) * 1000:.0f} ms")


def played(pg, speed: int, seconds: float) -> float:
    """Merges shown per second from the first merge after Play, over ``seconds`` of play."""
    choose_speed(pg, speed)
    before = int(pg.locator(SLIDER).input_value())
    pg.evaluate(RECORDER, before)
    pg.get_by_role("button", name="▶ Play").click()
    pg.wait_for_function(f"window.__steps.length > {int(speed * seconds)}", timeout=120_000)
    pg.locator(PAUSE).click()
    steps = pg.evaluate("window.__steps")[:int(speed * seconds) + 1]
    idle(pg)
    pg.get_by_role("button", name="⏮ Reset").click()
    idle(pg)
    return (steps[-1][1] - steps[0][1]) / ((steps[-1][0] - steps[0][0]) / 1000)


def server_steps(pg, clicks: int) -> float:
    """Steps per second drawn by the server: "Next" clicked as soon as the last step is shown."""
    start = time.perf_counter()
    for k in range(1, clicks + 1):
        pg.get_by_role("button", name="Next ▶").click()
        pg.get_by_text(f"Merge {k + 1}:", exact=False).first.wait_for(timeout=60_000)
    return clicks / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=4.0)
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
            pg.goto(url)
            pg.get_by_role("heading", name="Learn BPE").wait_for(timeout=60_000)
            paste_long(pg, text)
            pg.wait_for_function(f"document.querySelector('{SLIDER}')?.max === '300'", timeout=120_000)
            idle(pg)
            print(f"server step (Next, the step redrawn): {server_steps(pg, 10):.1f} steps/s")
            pg.get_by_role("button", name="⏮ Reset").click()
            idle(pg)
            for speed in SPEEDS:
                print(f"Play at {speed:>2} merges/s: {played(pg, speed, args.seconds):.2f} merges shown/s")
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
