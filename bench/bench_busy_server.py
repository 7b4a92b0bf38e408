"""How quickly a page opens while the queue's runs fill every core: idle, then with runs training at
the priority the app gives them (``core.room.cpu_policy.BACKGROUND_NICENESS``), then with the same
runs put back at the server's own priority (what happened before), all in one server and one run.

    python bench/bench_busy_server.py [--runs 2] [--opens 8]

A tab is a websocket session (``streamlit_client.py``) that opens Learn BPE (its first view, on
the built-in sample), pastes a corpus of its own (BPE learns on it in the server: CPU work that
competes with the runs), then switches to Train a GPT; each time is from the request to the
server's ``script_finished``.  The runs are the tiny preset launched through ``core.room.runs``
into the server's own runs folder, as an attendee's Launch does; they train on the engine's
GPT workers, whose priority is what changes.  Putting a niced process back
to priority 0 needs root (or CAP_SYS_NICE); without it that row is left out.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench_server import PASTE_LABEL, owner_id, start_server
from streamlit_client import Session
from core.gpt.config import make_config
from core.room.runs import SERVER, launch_run, list_runs, stop_run
from core.runfolder.status import RunStatus
from core.settings import ServerSettings
from core.samples import python_docs_corpus


async def open_tab(url: str, owner: str, text: str) -> tuple[float, float, float]:
    """Seconds to open Learn BPE, to learn on a pasted ``text``, to switch to Train a GPT."""
    s = Session(url, query=f"u={owner}")
    start = time.perf_counter()
    await s.connect()
    await s.rerun()
    opened = time.perf_counter() - start
    s.keep(PASTE_LABEL, string_value=text)
    learned = await s.rerun()
    train = await s.rerun(page="train_gpt")
    await s.close()
    return opened, learned, train


def measure(url: str, opens: int, tag: int, chars: int, together: int = 1) -> dict:
    """``opens`` tabs, ``together`` at a time (a room whose attendees click at once)."""
    text = python_docs_corpus(chars)

    async def wave(first: int):
        return await asyncio.gather(*(open_tab(url, owner_id(i), f"tab {i}\n" + text)
                                      for i in range(first, first + together)))

    times = [t for first in range(tag, tag + opens, together) for t in asyncio.run(wave(first))]
    columns = [sorted(column) for column in zip(*times)]
    return {name: (statistics.median(c), c[-1]) for name, c in zip(("open", "learn", "train"), columns)}


def start_runs(runs_dir: Path, n: int) -> list[int]:
    """``n`` long tiny-preset runs, each from its own owner (seeds differ: the same run twice would
    train once); the pids of the ``n`` GPT workers that train them, once all are training."""
    settings = ServerSettings(max_running=n, max_runs_per_owner=1)
    text = python_docs_corpus(50_000)
    for i in range(n):
        launch_run(make_config("tiny", max_steps=20_000, device="cpu", seed=i), f"busy-{i}", runs_dir,
                   owner=owner_id(5000 + i), text=text, settings=settings)
    deadline = time.monotonic() + 600
    gpt_workers = set()
    while time.monotonic() < deadline:
        runs = list_runs(runs_dir)
        gpt_workers |= {r.pid for r in runs if r.pid}
        if sum(r.status == RunStatus.RUNNING and r.step > 0 for r in runs) == n and len(gpt_workers) >= n:
            return sorted(gpt_workers)
        time.sleep(0.5)
    raise SystemExit("the runs did not start training")


def row(label: str, r: dict) -> str:
    return f"| {label} | " + " | ".join(f"{p50:.2f} s / {top:.2f} s" for p50, top in r.values()) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--opens", type=int, default=8)
    parser.add_argument("--together", type=int, default=1, help="tabs opened at the same moment")
    parser.add_argument("--chars", type=int, default=300_000, help="the corpus each tab pastes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs_dir = Path(tmp) / "runs"
        proc, url = start_server(runs_dir, {"BPE_EXPLORER_MAX_RUNNING": str(args.runs)})
        try:
            measure(url, 1, 0, args.chars)  # imports and compiled kernels, in the server
            print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} before\n")
            print(f"p50 / max of {args.opens} tabs, {args.together} at a time; each pastes "
                  f"{args.chars:,} characters\n")
            print("| runs training | Learn BPE opens | learns on the paste | Train a GPT opens |")
            print("|---|---|---|---|")
            print(row("none", measure(url, args.opens, 100, args.chars, args.together)), flush=True)
            pids = start_runs(runs_dir, args.runs)
            nice = os.getpriority(os.PRIO_PROCESS, pids[0])
            print(row(f"{args.runs}, at niceness {nice} (the app's)",
                      measure(url, args.opens, 200, args.chars, args.together)), flush=True)
            try:
                for pid in pids:
                    os.setpriority(os.PRIO_PROCESS, pid, os.getpriority(os.PRIO_PROCESS, proc.pid))
                print(row(f"{args.runs}, at the server's priority (before)",
                          measure(url, args.opens, 300, args.chars, args.together)), flush=True)
            except PermissionError:
                print("(no permission to raise the runs' priority: the 'before' row is left out)")
            for run in list_runs(runs_dir):
                stop_run(run.path, SERVER, timeout=60)
        finally:
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
