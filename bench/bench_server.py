"""A workshop room against one server: N sessions step Learn BPE at once, then N sessions launch
GPT runs at once.  Reports step latency (p50/p95), the server's memory before, during and after,
and how many runs trained at once against the cap.

    python bench/bench_server.py [--sessions 10 30] [--clicks 10] [--chars 100000] [--launchers 10]

Each session is a websocket client speaking Streamlit's own protocol (``streamlit_client.py``),
with its own owner id in the URL, pasting its own corpus (so nothing is shared between sessions by
accident, the worst case for memory).  The server is a fresh ``streamlit run`` on loopback with
``server.disconnectedSessionTTL`` at 10 s, so "after" means the sessions are really gone rather
than kept 2 minutes for a reconnect.  Memory is the server process's VmRSS from /proc.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from streamlit_client import Session  # noqa: E402
from ui.samples import python_docs_corpus  # noqa: E402

PASTE_LABEL = "Or paste your own text"


def rss_mb(pid: int) -> float:
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


def start_server(runs_dir: Path, env: dict) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port),
         "--browser.gatherUsageStats", "false", "--server.disconnectedSessionTTL", "10"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "BPE_EXPLORER_RUNS_DIR": str(runs_dir), **env})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2):
                return proc, url
        except OSError:
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


async def step_learn_bpe(s: Session, clicks: int) -> list[float]:
    times = []
    for _ in range(clicks):
        times.append(await s.rerun(trigger=s.button("Next ▶")))
    return times


def owner_id(i: int) -> str:
    return f"bench-owner-{i:04d}-xxxxxxxx"


async def learn_phase(url: str, pid: int, n: int, clicks: int, chars: int) -> dict:
    base = python_docs_corpus(chars)
    sampler = Sampler(pid)
    sampler.start()
    sessions = await asyncio.gather(*(open_session(url, owner_id(i), f"session {i}\n" + base)
                                      for i in range(n)))
    latencies = await asyncio.gather(*(step_learn_bpe(s, clicks) for s in sessions))
    during = sampler.stop()
    await asyncio.gather(*(s.close() for s in sessions))
    flat = sorted(t for ts in latencies for t in ts)
    return {"sessions": n, "clicks": len(flat), "p50_ms": 1000 * statistics.median(flat),
            "p95_ms": 1000 * flat[int(0.95 * (len(flat) - 1))], "peak_mb": during}


def settle(pid: int, seconds: float) -> float:
    """RSS once disconnected sessions have expired (TTL 10 s) and the garbage is collected."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(1)
    return rss_mb(pid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[10, 30])
    parser.add_argument("--clicks", type=int, default=10)
    parser.add_argument("--chars", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_server(Path(tmp) / "runs", {})
        try:
            warm = asyncio.run(learn_phase(url, proc.pid, 1, 2, args.chars))  # imports, compiled kernels
            baseline = settle(proc.pid, 25)
            print(f"server warmed by one session (p50 {warm['p50_ms']:.0f} ms); baseline RSS "
                  f"{baseline:.0f} MB")
            print("| sessions | clicks | step p50 | step p95 | RSS before | RSS peak | RSS after |")
            print("|---|---|---|---|---|---|---|")
            for n in args.sessions:
                before = rss_mb(proc.pid)
                r = asyncio.run(learn_phase(url, proc.pid, n, args.clicks, args.chars))
                after = settle(proc.pid, 25)
                print(f"| {n} | {r['clicks']} | {r['p50_ms']:.0f} ms | {r['p95_ms']:.0f} ms | "
                      f"{before:.0f} MB | {r['peak_mb']:.0f} MB | {after:.0f} MB "
                      f"({100 * (after - baseline) / baseline:+.0f} % vs baseline) |", flush=True)
        finally:
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
