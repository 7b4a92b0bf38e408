"""A workshop room against one server, as fast as it can go: N sessions run Learn BPE's whole page
again and again at once (a closed loop), then N sessions launch GPT runs at once.  Reports the
page runs' latency (p50/p95), the server's memory before, during and after, and how many runs
trained at once against the cap.

    python bench/bench_server.py [--sessions 10 30] [--clicks 10] [--chars 100000] [--launchers 10]
                                 [--steps 30]

A step on Learn BPE (Next, Previous, the slider, Play) is drawn by the browser and reaches no
server (``ui/views/step_view.py``), so what a room makes the server do there is whole-page runs: a click
on a token, a page switch, a settings change.  Each "click" here is one: the page run again with
the session's widgets, timed from the request to the server's ``script_finished``.

Each session is a websocket client speaking Streamlit's own protocol (``streamlit_client.py``),
with its own owner id in the URL, pasting its own corpus (so nothing is shared between sessions by
accident, the worst case for memory).  The server is a fresh ``streamlit run`` on loopback with
``server.disconnectedSessionTTL`` at 10 s, so "after" means the sessions are really gone rather
than kept 2 minutes for a reconnect, and without the file watcher (a room's server runs fixed code,
and an edit to the tree made while the benchmark runs must not reload modules under it).  Memory
is the server process's VmRSS from /proc; the baseline is the RSS after one session has stepped
Learn BPE and left, "after" the same once a phase's sessions have left (``settle``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's core and ui, not an installed copy

from streamlit_client import Session
from core.room.runs import list_runs
from core.samples import python_docs_corpus
from ui.serving.memory import COLLECT_EVERY_S, PERIOD_S
from ui.serving.supervisor import free_port, healthy

PASTE_LABEL = "Or paste your own text"
TTL_S = 10            # server.disconnectedSessionTTL: how long a session that left is kept
HOUSEKEEPING_S = COLLECT_EVERY_S + 2 * PERIOD_S  # the app's housekeeper: a collection owed, then paid
STEADY_S = 8          # RSS that has not fallen for this long has settled


def rss_mb(pid: int | list[int]) -> float:
    """VmRSS of a process, or the sum over several (``bench_room.py``: every app process)."""
    if isinstance(pid, list):
        return sum(rss_mb(p) for p in pid)
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Sampler(threading.Thread):
    """The server's RSS every 0.2 s, so the peak during a phase is seen, not guessed."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self._stop_flag = pid, 0.0, threading.Event()

    def run(self):
        while not self._stop_flag.is_set():
            self.peak = max(self.peak, rss_mb(self.pid))
            time.sleep(0.2)

    def stop(self) -> float:
        self._stop_flag.set()
        self.join()
        return self.peak


def machine() -> str:
    """The machine a benchmark ran on, for its report: CPU model, cores, memory, Python, Streamlit."""
    import platform

    import streamlit

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    mem = int(Path("/proc/meminfo").read_text().split()[1]) / 2**20
    return (f"{cpu}, {os.cpu_count()} cores, {mem:.0f} GiB; Python {platform.python_version()}, "
            f"Streamlit {streamlit.__version__}")


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def start_server(runs_dir: Path, env: dict, script: str = "streamlit_app.py") -> tuple[subprocess.Popen, str]:
    """``streamlit run script`` from the checkout (so with the app's ``.streamlit/config.toml``)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port),
         "--browser.gatherUsageStats", "false", "--server.disconnectedSessionTTL", str(TTL_S),
         "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "BPE_EXPLORER_RUNS_DIR": str(runs_dir), **env})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if healthy(port):
            return proc, url
        time.sleep(0.3)
    proc.kill()
    raise SystemExit("the server did not start")


async def open_session(url: str, owner: str, text: str) -> Session:
    """A new tab: open the app, paste this session's corpus (the sidebar's text box)."""
    s = Session(url, query=f"u={owner}")
    await s.connect()
    await s.rerun()
    s.keep(PASTE_LABEL, string_value=text)
    await s.rerun()
    return s


async def run_learn_bpe(s: Session, clicks: int) -> list[float]:
    """``clicks`` whole-page runs of Learn BPE, one after the other, as fast as the server answers."""
    return [await s.rerun() for _ in range(clicks)]


def owner_id(i: int) -> str:
    return f"bench-owner-{i:04d}-xxxxxxxx"


async def learn_phase(url: str, pid: int, n: int, clicks: int, chars: int) -> dict:
    base = python_docs_corpus(chars)
    sampler = Sampler(pid)
    sampler.start()
    sessions = await asyncio.gather(*(open_session(url, owner_id(i), f"session {i}\n" + base)
                                      for i in range(n)))
    latencies = await asyncio.gather(*(run_learn_bpe(s, clicks) for s in sessions))
    during = sampler.stop()
    await asyncio.gather(*(s.close() for s in sessions))
    flat = sorted(t for ts in latencies for t in ts)
    return {"sessions": n, "clicks": len(flat), "p50_ms": 1000 * statistics.median(flat),
            "p95_ms": 1000 * flat[int(0.95 * (len(flat) - 1))], "peak_mb": during}


async def launch_from(url: str, owner: str, text: str, steps: int) -> Session:
    """A tab on Train a GPT with a corpus pasted and a short run set up, Launch not yet clicked."""
    s = await open_session(url, owner, text)
    await s.rerun(page="train_gpt")
    s.keep("Steps", int_value=steps)
    await s.rerun(page="train_gpt")
    return s


def watch_queue(runs_dir: Path, expected: int, timeout: float) -> dict:
    """Poll every run folder until ``expected`` runs have ended; the most seen on a GPT worker at once
    (runs take turns: the cap is on the runs stepping at the same moment)."""
    most, start, statuses = 0, time.monotonic(), {}
    while time.monotonic() - start < timeout:
        runs = list_runs(runs_dir)
        statuses = {r.name: r.status for r in runs}
        most = max(most, sum(r.stepping for r in runs))
        if len(runs) == expected and not any(r.active for r in runs):
            break
        time.sleep(0.2)
    return {"most_training": most, "seconds": time.monotonic() - start, "statuses": statuses}


async def launch_phase(url: str, runs_dir: Path, n: int, steps: int, timeout: float) -> dict:
    text = python_docs_corpus(20_000)
    # a corpus each: identical launches would train once (core.room.identical) and leave no queue
    sessions = await asyncio.gather(*(launch_from(url, owner_id(1000 + i), f"launcher {i}\n" + text, steps)
                                      for i in range(n)))
    clicks = await asyncio.gather(*(s.rerun(page="train_gpt", trigger=s.button("🚀 Launch"))
                                    for s in sessions))
    await asyncio.gather(*(s.close() for s in sessions))
    watched = await asyncio.to_thread(watch_queue, runs_dir, n, timeout)
    return {"launch_p95_ms": 1000 * sorted(clicks)[int(0.95 * (n - 1))], **watched}


def settle(pid: int, ttl: float = TTL_S, bound: float = 180.0) -> float:
    """RSS once the sessions that left are gone: past their reconnect time (``ttl``) and one round
    of the app's housekeeper (``ui.serving.memory``, which closes them and gives memory back), then once
    RSS has not fallen for ``STEADY_S`` seconds; at most ``bound`` seconds."""
    start = time.monotonic()
    lowest, lowest_at = rss_mb(pid), start
    while time.monotonic() - start < bound:
        time.sleep(1)
        now, rss = time.monotonic(), rss_mb(pid)
        if rss < lowest - 0.5:
            lowest, lowest_at = rss, now
        if now - start > ttl + HOUSEKEEPING_S and now - lowest_at > STEADY_S:
            break
    return rss_mb(pid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[10, 30])
    parser.add_argument("--clicks", type=int, default=10)
    parser.add_argument("--chars", type=int, default=100_000)
    parser.add_argument("--launchers", type=int, default=10)
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs_dir = Path(tmp) / "runs"
        proc, url = start_server(runs_dir, {})
        try:
            warm = asyncio.run(learn_phase(url, proc.pid, 1, 2, args.chars))  # imports, compiled kernels
            baseline = settle(proc.pid)
            print(f"server warmed by one session (p50 {warm['p50_ms']:.0f} ms); baseline RSS "
                  f"{baseline:.0f} MB")
            print("| sessions | page runs | p50 | p95 | RSS before | RSS peak | RSS after |")
            print("|---|---|---|---|---|---|---|")
            for n in args.sessions:
                before = rss_mb(proc.pid)
                r = asyncio.run(learn_phase(url, proc.pid, n, args.clicks, args.chars))
                after = settle(proc.pid)
                print(f"| {n} | {r['clicks']} | {r['p50_ms']:.0f} ms | {r['p95_ms']:.0f} ms | "
                      f"{before:.0f} MB | {r['peak_mb']:.0f} MB | {after:.0f} MB "
                      f"({100 * (after - baseline) / baseline:+.0f} % vs baseline) |", flush=True)
            if args.launchers:
                r = asyncio.run(launch_phase(url, runs_dir, args.launchers, args.steps, 1800))
                ended = sorted(set(r["statuses"].values()))
                print(f"{args.launchers} sessions clicked Launch at once ({args.steps} steps each): "
                      f"at most {r['most_training']} stepping at once; all ended in "
                      f"{r['seconds']:.0f} s as {ended}; Launch reply p95 {r['launch_p95_ms']:.0f} ms")
        finally:
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
