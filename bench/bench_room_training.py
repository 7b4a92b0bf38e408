"""A workshop room training GPTs (issue 21): attendees click Launch on Train a GPT within a minute,
each in a tab of their own, and watch; how soon does each see a first logged step, how fast does
Launch reply, and when has everyone a finished run?

    python bench/bench_room_training.py [--attendees 30] [--own 10] [--spread 60] [--limit 900]

``--own`` of the attendees paste a 40 KB corpus of their own; the others keep the page's defaults
(its built-in English sample, characters, the device's default preset), so they launch the same
run, which trains once.  Each attendee is a websocket session (``streamlit_client.py``) with its
own owner id; tabs are opened first, then each clicks Launch at its moment, evenly spread over
``--spread`` seconds (open loop: a slow reply delays nobody else's click).  After its click a
tab does what the browser does: reruns the page's live fragment every 2 s and its comparison
fragment every 5 s, and reads the progress line ("step N / M · ...").  The server is a fresh
``streamlit run`` on loopback with the app's default caps (``bench_server.start_server``).

Reported, per attendee and in percentiles: Launch's reply (the click's rerun, request to
``script_finished``); the first logged step, from the click, as the page showed it and as the
run folder had it; and the time from the first click until every attendee's run had finished.
With the machine, its load average before and after, and the figures of every attendee.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import tempfile
import threading
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's core, not an installed copy

from bench_server import PASTE_LABEL, machine, owner_id, start_server  # noqa: E402
from streamlit_client import Session  # noqa: E402
from core.room.runs import list_runs, run_info  # noqa: E402
from core.samples import python_docs_corpus  # noqa: E402

PAGE = "train_gpt"
LIVE_S = 2.0      # the live run fragment's run_every (app_pages/train_gpt.py)
COMPARE_S = 5.0   # the bits-per-character comparison's
STEP = re.compile(r"^step ([\d,]+) / ([\d,]+) · (.*)$")


class Tab(Session):
    """An attendee's tab on Train a GPT: a Streamlit session that reads the live run's progress
    (its fragments rerun on their timers: ``Session.rerun(fragment=...)``)."""

    def fragment_of(self, kind: str, label: str | None = None) -> str | None:
        """The fragment id of the newest element of ``kind`` (with ``label``), if any."""
        for e in reversed(self.elements):
            if e.kind == kind and e.fragment_id and (label is None or getattr(e.proto, "label", "") == label):
                return e.fragment_id
        return None

    def progress(self) -> tuple[int, str] | None:
        """(step, state) from the newest progress line the page drew."""
        for e in reversed(self.elements):
            if e.kind == "progress":
                found = STEP.match(e.proto.text)
                if found:
                    return int(found.group(1).replace(",", "")), found.group(3)
        return None


def say(line: str) -> None:
    """Progress on stderr, so a long run shows where it is."""
    print(f"[{time.strftime('%H:%M:%S')}] {line}", file=sys.stderr, flush=True)


def own_corpus(i: int, chars: int = 40_000) -> str:
    """Attendee ``i``'s own text: a 40 KB window of English prose no one else pastes."""
    prose = python_docs_corpus(400_000)
    start = (i * 37_000) % (len(prose) - chars)
    return f"attendee {i}'s notes\n" + prose[start:start + chars]


async def open_tab(url: str, i: int, own: bool) -> Tab:
    tab = Tab(url, query=f"u={owner_id(2000 + i)}")
    await tab.connect()
    await tab.rerun()  # the app's first run names its pages
    await tab.rerun(page=PAGE)
    if own:
        tab.keep(PASTE_LABEL, string_value=own_corpus(i))
        await tab.rerun(page=PAGE)
    return tab


async def attend(tab: Tab, at: float, owner: str, limit: float) -> dict:
    """Click Launch at ``at`` (a ``time.monotonic()`` moment), then watch as the browser would."""
    await asyncio.sleep(max(0.0, at - time.monotonic()))
    clicked = time.monotonic()
    reply = await tab.rerun(page=PAGE, trigger=tab.button("🚀 Launch"))
    say(f"{owner} clicked Launch: reply in {reply:.2f} s")
    result = {"owner": owner, "clicked": clicked, "reply_s": reply, "page_first_s": None,
              "folder_first_s": None, "finished_s": None}
    last_compare = clicked
    while time.monotonic() - clicked < limit:
        seen = tab.progress()
        now = time.monotonic()
        if seen and seen[0] > 0 and result["page_first_s"] is None:
            result["page_first_s"] = now - clicked
            say(f"{owner} sees step {seen[0]} after {now - clicked:.1f} s")
        if seen and seen[1].startswith("finished"):
            result["finished_s"] = now - clicked
            say(f"{owner} sees it finished after {now - clicked:.1f} s")
            break
        await asyncio.sleep(LIVE_S)
        live = tab.fragment_of("progress")
        compare = tab.fragment_of("multiselect", "Runs")
        if live:
            await tab.rerun(fragment=live)
        else:  # no fragment drawn yet (the first view): a whole rerun, as a reload would
            await tab.rerun(page=PAGE)
        if compare and time.monotonic() - last_compare >= COMPARE_S:
            await tab.rerun(fragment=compare)
            last_compare = time.monotonic()
    return result


def watch_folders(runs_dir: Path, stop: threading.Event) -> dict[str, float]:
    """In a thread: when each attendee's run (or the run it joined) logged its first step."""
    firsts: dict[str, float] = {}
    while not stop.is_set():
        for folder in (runs_dir.glob("*/*") if runs_dir.is_dir() else []):
            owner = folder.parent.name
            if owner not in firsts and run_info(folder).step > 0:
                firsts[owner] = time.monotonic()
        time.sleep(0.25)
    return firsts


def percentiles(values: list[float]) -> str:
    values = sorted(v for v in values if v is not None)
    if not values:
        return "none"
    p95 = values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]
    return f"p50 {statistics.median(values):.1f} s, p95 {p95:.1f} s, max {values[-1]:.1f} s"


async def room(url: str, runs_dir: Path, args) -> tuple[list[dict], dict[str, float]]:
    owners = [owner_id(2000 + i) for i in range(args.attendees)]
    own = set(range(args.attendees - args.own, args.attendees))
    tabs = []
    for i in range(args.attendees):  # tabs open before the clicks: a room that has the page up
        tabs.append(await open_tab(url, i, i in own))
        say(f"tab {i + 1} of {args.attendees} open")
    start = time.monotonic() + 1.0
    gap = args.spread / max(1, args.attendees - 1)
    order = list(range(args.attendees))
    order = order[0::2] + order[1::2]  # own corpora and defaults interleaved in time
    stop = threading.Event()
    watcher = asyncio.create_task(asyncio.to_thread(watch_folders, runs_dir, stop))
    try:
        results = await asyncio.gather(*(attend(tabs[i], start + k * gap, owners[i], args.limit)
                                         for k, i in enumerate(order)))
    finally:
        stop.set()
    firsts = await watcher
    for i, r in enumerate(results):
        r["own_corpus"] = order[i] in own
    await asyncio.gather(*(tab.close() for tab in tabs))
    return results, firsts


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--attendees", type=int, default=30)
    p.add_argument("--own", type=int, default=None, help="attendees with a corpus of their own "
                   "(default: a third)")
    p.add_argument("--spread", type=float, default=60.0, help="seconds over which the clicks fall")
    p.add_argument("--limit", type=float, default=900.0, help="seconds an attendee watches at most")
    p.add_argument("--max-running", type=int, default=0,
                   help="the server's BPE_EXPLORER_MAX_RUNNING (0: the app's default for the device)")
    p.add_argument("--no-post-script-gc", action="store_true",
                   help="start the server with runner.postScriptGC off (Streamlit collects garbage "
                        "after every script run by default)")
    p.add_argument("--json", help="write every attendee's figures here")
    args = p.parse_args()
    args.own = args.attendees // 3 if args.own is None else args.own
    with tempfile.TemporaryDirectory() as tmp:
        runs_dir = Path(tmp) / "runs"
        env = {"BPE_EXPLORER_MAX_RUNNING": str(args.max_running)} if args.max_running else {}
        if args.no_post_script_gc:
            env["STREAMLIT_RUNNER_POST_SCRIPT_GC"] = "false"
        proc, url = start_server(runs_dir, env)
        load_before = os.getloadavg()
        try:
            results, firsts = asyncio.run(room(url, runs_dir, args))
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        runs = list_runs(runs_dir)
    load_after = os.getloadavg()
    for r in results:
        r["folder_first_s"] = firsts[r["owner"]] - r["clicked"] if r["owner"] in firsts else None
    first_click = min(r["clicked"] for r in results)
    done = [r["clicked"] + r["finished_s"] - first_click for r in results if r["finished_s"] is not None]
    trained = {r.path for r in runs}
    print(f"machine: {machine()}; load "
          f"average {load_before[0]:.1f} before, {load_after[0]:.1f} after ({load_after[1]:.1f} over 5 min)")
    print(f"{args.attendees} attendees ({args.own} with a 40 KB corpus of their own), clicks spread "
          f"over {args.spread:.0f} s: {len(trained)} distinct runs trained")
    print(f"- Launch reply: {percentiles([r['reply_s'] for r in results])}")
    print(f"- first logged step on the page, from the click: "
          f"{percentiles([r['page_first_s'] for r in results])}")
    print(f"- first logged step in the run folder, from the click: "
          f"{percentiles([r['folder_first_s'] for r in results])}")
    for own in (False, True):
        group = [r for r in results if r["own_corpus"] == own]
        firsts_seen = percentiles([r["page_first_s"] for r in group])
        print(f"  {'own corpora' if own else 'defaults'}: on the page {firsts_seen}")
    print(f"- finished: {len(done)} of {len(results)} attendees; the last "
          f"{max(done) if done else float('nan'):.0f} s after the first click")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
