"""What one page run costs the server, in CPU, split between Streamlit's event loop (the process's
main thread: sending, receiving, the session's bookkeeping) and the script threads (the page's
code and Streamlit's element calls); beside the same for ``streamlit_floor_app.py``, a bare page of
the same kinds of elements, which is Streamlit's own share.  A room's capacity on one process is
about the one core its Python may use, divided by this: at 20 page runs a second, 25 ms a run is
half of it.

    python bench/bench_page_cpu.py [--pages learn_bpe char_vs_bpe] [--runs 150] [--paste docs]

One websocket client (``streamlit_client.py``) reruns each page ``--runs`` times, then reloads it
(a new session from the URL) as often; CPU is read from ``/proc`` before and after.  A second
session stays open throughout: with none connected, Streamlit drops its compiled scripts and the
next run compiles them again, which a room never sees.  Times include loopback's waits; the CPU
figures do not.

``--paste`` (one of ``bench_hostile_room.py``'s heavy texts: ``docs``, 8 MB of the Debian docs;
``unicode``; ``line``) pastes it into the measured session first, as an attendee does, waits until
the page shows no progress bar (its jobs done, in job workers: other processes, not counted), then
times reruns alone (a reload opens the URL's corpus, not the paste): what a page's own thread costs
at every run whatever was pasted (``tests/app/test_page_thread.py`` holds each run to a budget).

``--box`` fills the page's own text box (Char vs BPE's test text, Compare tokenizers' text) with its
maximum, 20,000 characters of random Unicode (``bench_hostile_room.random_unicode``): the first run
with it (every tokenizer's spans of it made, for the room) is timed alone, then the reruns.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from bench_hostile_room import CASES, PASTE_LABEL, heavy_texts, random_unicode
from bench_server import machine, start_server
from streamlit_client import Session

CORPUS = "sample:English: Python docs (built in)"
TICK = os.sysconf("SC_CLK_TCK")
WARM_RUNS = 10
BOX_CHARS = 20_000  # the text boxes' maximum (app_pages' MAX_TEST_CHARS, MAX_TEXT_CHARS)
BOXES = {"char_vs_bpe": "Test text",
         "compare_tokenizers": "Text to compare (pick one above or paste your own)"}


def cpu_s(stat: Path) -> float:
    """User + system CPU seconds from a ``/proc`` stat file (a process's, or one thread's)."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


class CountingSession(Session):
    """A session that counts the messages its runs receive."""

    messages = 0

    def _from_cache(self, data: bytes):
        self.messages += 1
        return super()._from_cache(data)


async def pasted(s: Session, text: str, timeout: float = 600.0) -> None:
    """``text`` in the sidebar's paste box, rerun every second until the page shows no progress."""
    s.keep(PASTE_LABEL, string_value=text)
    deadline = time.monotonic() + timeout
    await s.rerun()
    while any(e.kind == "progress" for e in s.shown()) and time.monotonic() < deadline:
        await asyncio.sleep(1.0)
        await s.rerun()


async def cost(url: str, pid: int, path: str, runs: int, paste: str | None = None,
               box: str | None = None) -> list[str]:
    """Table rows for reruns and reloads of ``path``: messages, wall ms, event-loop and script CPU
    (with ``paste``, reruns only, once it is pasted and its jobs are done; with ``box``, its first
    run with the page's text box holding it, then reruns)."""
    query = "u={}&corpus=" + quote(CORPUS)
    keeper = Session(url, query=query.format("bench-keep-0000-xxxxxxxx"), path=path)
    s = CountingSession(url, query=query.format("bench-cost-0000-xxxxxxxx"), path=path)
    for session in (keeper, s):
        await session.connect()
        for _ in range(WARM_RUNS):  # caches filled, the first runs' imports done
            await session.rerun()
    if paste is not None:
        await pasted(s, paste)
        await s.rerun()
    rows = []
    if box is not None:
        s.keep(BOXES[path], string_value=box)
        rows.append(await _timed(s, pid, path, "first run, box full", 1))
    for kind in ("rerun",) if paste is not None or box is not None else ("rerun", "reload"):
        rows.append(await _timed(s, pid, path, kind, runs))
    await s.close()
    await keeper.close()
    return rows


async def _timed(s: CountingSession, pid: int, path: str, kind: str, runs: int) -> str:
    """A table row for ``runs`` runs of ``kind`` (a reload, else a rerun)."""
    process, loop = Path(f"/proc/{pid}/stat"), Path(f"/proc/{pid}/task/{pid}/stat")
    total0, loop0, messages0, wall = cpu_s(process), cpu_s(loop), s.messages, []
    for _ in range(runs):
        wall.append(await (s.reload() if kind == "reload" else s.rerun()))
    total, on_loop = (cpu_s(process) - total0) / runs, (cpu_s(loop) - loop0) / runs
    wall.sort()
    return (f"| {path or 'the app'} | {kind} | {(s.messages - messages0) / runs:.0f} | "
            f"{1000 * wall[len(wall) // 2]:.0f} | {1000 * on_loop:.1f} | "
            f"{1000 * (total - on_loop):.1f} | **{1000 * total:.1f}** |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", nargs="+", default=["learn_bpe"], help="the app's pages, by URL path")
    parser.add_argument("--runs", type=int, default=150)
    parser.add_argument("--paste", choices=list(CASES), help="a heavy text pasted first (bench_hostile_room)")
    parser.add_argument("--box", action="store_true", help="the page's own text box at its maximum")
    args = parser.parse_args()
    box = random_unicode(4 * BOX_CHARS)[:BOX_CHARS] if args.box else None
    paste = heavy_texts([args.paste], 1.0)[0][1] if args.paste else None
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.1f}; "
          f"{time.strftime('%Y-%m-%d %H:%M')}\n")
    print("| page | run | messages | wall p50 ms | event loop CPU ms | script threads CPU ms "
          "| total CPU ms |")
    print("|---|---|---|---|---|---|---|")
    for script, pages in (("streamlit_app.py", args.pages), ("bench/streamlit_floor_app.py", [""])):
        with tempfile.TemporaryDirectory() as runs_dir:
            proc, url = start_server(Path(runs_dir), {}, script=script)
            try:
                for page in pages:
                    own = (paste, box) if page else (None, None)  # the floor has no corpus, no box
                    for row in asyncio.run(cost(url, proc.pid, page, args.runs, *own)):
                        print(row.replace("| the app |", "| Streamlit's floor (a bare page) |"), flush=True)
            finally:
                proc.terminate()
                proc.wait()


if __name__ == "__main__":
    main()
