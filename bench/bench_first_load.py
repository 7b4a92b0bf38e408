"""What a new attendee's first page load costs: the bytes their browser fetches over the network,
the time until Learn BPE's step view shows its first step, and the CPU of the server (the app
processes and, behind ``python -m ui.serve``, the proxy), against one ``streamlit run`` and one app
process behind HAProxy.

    python bench/bench_first_load.py [--tabs 5] [--page learn_bpe]

Each tab is a fresh browser context (no cache: a new attendee) in Debian's Chromium, opened one
after another on an otherwise idle server warmed by one tab.  Bytes are Chromium's own count of
what came over the connection (``Network.loadingFinished``'s ``encodedDataLength``: headers and
bodies as sent, compressed where the server compressed).  Loopback has no bandwidth limit, so the
times here leave out the network; on a venue's Wi-Fi shared by a room, the bytes are what decides.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "app"), str(ROOT / "tests")]

from bench_page_cpu import cpu_s  # noqa: E402
from bench_room import Server  # noqa: E402
from bench_server import machine  # noqa: E402
from test_browser import ARGS, CHROMIUM  # noqa: E402

SHOWN_MS = 120_000  # a first load on a busy 2-core machine, far above any measured here


def cpu_seconds(pids: list[int]) -> float:
    return sum(cpu_s(Path(f"/proc/{pid}/stat")) for pid in pids)


def first_load(browser, url: str, page: str, pids: list[int]) -> tuple[int, float, float]:
    """One new attendee: (bytes over the wire, seconds to the step view's first step, server CPU s)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1600})
    tab = context.new_page()
    devtools = context.new_cdp_session(tab)
    received = [0]

    def finished(event: dict) -> None:
        received[0] += event["encodedDataLength"]
    devtools.on("Network.loadingFinished", finished)
    devtools.send("Network.enable")
    cpu_before, began = cpu_seconds(pids), time.monotonic()
    tab.goto(f"{url}/{page}", timeout=SHOWN_MS)
    tab.wait_for_selector(".bpe-step[data-step]", timeout=SHOWN_MS)
    shown = time.monotonic() - began
    tab.wait_for_load_state("load")
    context.close()
    return received[0], shown, cpu_seconds(pids) - cpu_before


def measure(proxied: bool, tabs: int, page: str, browser) -> str:
    with tempfile.TemporaryDirectory() as folder, Server(1, Path(folder), proxied=proxied) as server:
        pids = server.pids() + ([server.proxy_pid()] if proxied else [])
        first_load(browser, server.url, page, pids)  # warms the server: its first session imports
        loads = [first_load(browser, server.url, page, pids) for _ in range(tabs)]
    sent, shown, cpu = (statistics.median(column) for column in zip(*loads))
    name = "`python -m ui.serve --processes 1` (HAProxy)" if proxied else "`streamlit run`"
    return f"| {name} | {tabs} | {sent / 1e6:.2f} MB | {shown:.2f} s | {cpu * 1000:.0f} ms |"


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tabs", type=int, default=5, help="new attendees per server, one after another")
    parser.add_argument("--page", default="learn_bpe", help="the page they open (its step view is awaited)")
    args = parser.parse_args()
    print(f"# {machine()}\n")
    print("| server | tabs | over the wire (median) | to the first step (median) "
          "| server CPU a tab (median) |")
    print("|---|---|---|---|---|")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            for proxied in (False, True):
                print(measure(proxied, args.tabs, args.page, browser), flush=True)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
