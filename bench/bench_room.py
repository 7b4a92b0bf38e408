"""A workshop room on Learn BPE, measured: N websocket tabs acting at a stated rate and mix, plus
real Chromium tabs timing a click to the updated view, against one ``streamlit run`` or against
``python -m ui.serve`` (N app processes behind HAProxy).

    python bench/bench_room.py [--tabs 10 30 50] [--processes 1 2] [--every 3] [--step-share 0.8]
        [--page-runs rerun,reload] [--chromium 2] [--duration 60] [--corpus NAME|own]
        [--target-p95-ms 1000]

Each websocket tab (``streamlit_client.py``) has its own owner id and acts every ``--every``
seconds on a fixed schedule (a random phase each; an action due while the last still runs starts
as soon as it ends, counted as *late*): a *step* (Next, or Previous back from the last merge) with
probability ``--step-share``, else a *whole-page run* taken in turn from ``--page-runs``
(``rerun``: the page run again, as a settings change, a click on a token or a page switch costs;
``reload``: a new session from the URL alone, at the step the browser wrote there).  A step is
drawn by the attendee's browser (``ui/views/step_view.py``) and sends the server nothing, so a websocket
tab only counts it.  Latencies are the server's: from the request to its ``script_finished``.  Each
Chromium tab (its own browser context, so its own proxy pin) steps at the same rate and times,
inside the page, the click to the frame showing the next step (:func:`click_step`).  A tab whose
page comes back at a step or tokenizer it did not ask for, whose connection drops or whose action
times out is a *lost session*; *exceptions* are the exception elements the app sent (and, in
Chromium, showed).

Each ``--processes`` value gets a fresh server (1: ``streamlit run``; 2 or more: the serve
command), sessions kept 10 s after they leave, warmed by one tab per process; then each ``--tabs``
value is a phase: the room arrives at once, acts for ``--duration`` seconds and leaves.  RSS is the
sum over the app processes (``bench_server.py``'s baseline and ``settle``); the spread is the
tabs per process, by the pin the proxy set.  The last table says, per process count, the most
tabs whose page-run p95 stayed within ``--target-p95-ms``.  Timings depend on what else
runs on the machine: the header prints the machine and the load, each row the load at its end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "app"), str(ROOT / "tests")]

from bench_server import TTL_S, Sampler, machine, rss_mb, settle, start_server, uptime  # noqa: E402
from streamlit_client import Session  # noqa: E402
from test_browser import ARGS, CHROMIUM  # noqa: E402
from core.samples import PYTHON_DOCS, python_docs_corpus  # noqa: E402
from ui.serving.supervisor import COOKIE, free_port  # noqa: E402

ACTION_TIMEOUT_S = 120.0
SHOWN = re.compile(r"\*\*(?:Merge (\d+):|All (\d+) merges done)")
PASTE_LABEL = "Or paste your own text"


# -- a step as a real tab shows it: Learn BPE's step view computes it in the browser ---------------------
NEXT, PREVIOUS = "next", "previous"  # the step view's buttons (their data-do)
VIEW = ".bpe-step"  # the step view, whose data-step is the step it shows
CLICK_AND_WAIT = f"""async ([what, want, boundMs]) => {{
  const root = document.querySelector('{VIEW}');
  const button = root && root.querySelector(`button[data-do="${{what}}"]`);
  if (!button || button.disabled) return -1;
  const start = performance.now();
  button.click();
  while (root.dataset.step !== String(want)) {{
    if (performance.now() - start > boundMs) return -2;
    await new Promise(r => setTimeout(r, 4));
  }}
  await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));  // the frame that shows it
  return performance.now() - start;
}}"""


async def click_step(page, k: int, n: int, forward: bool) -> float:
    """Click Next (``forward``) or Previous on a tab showing step ``k`` of ``n`` and wait until the
    view shows the step after it, drawn; the milliseconds from the click, timed in the page
    (negative: the button was missing or disabled (-1) or the view did not change in time (-2))."""
    return await page.evaluate(CLICK_AND_WAIT, [NEXT if forward else PREVIOUS, k + (1 if forward else -1),
                                                ACTION_TIMEOUT_S * 1000])


async def steps_in_view(page) -> int:
    """How many merges the tab steps through (waits for its first view, at step 0)."""
    slider = page.locator(f"{VIEW} input[type=range]")
    await slider.wait_for(state="attached", timeout=ACTION_TIMEOUT_S * 1000)
    await page.wait_for_function(f"document.querySelector('{VIEW}')?.dataset.step === '0'",
                                 timeout=ACTION_TIMEOUT_S * 1000)
    return int(await slider.get_attribute("max"))
# -----------------------------------------------------------------------------------------------------


@dataclass
class Tally:
    """What a phase measured, in milliseconds."""
    steps: int = 0  # steps the websocket tabs' browsers drew: nothing reaches the server
    page: list[float] = field(default_factory=list)
    click: list[float] = field(default_factory=list)
    opened: list[float] = field(default_factory=list)
    exceptions: int = 0
    lost: int = 0
    late: int = 0
    spread: Counter = field(default_factory=Counter)


def percentiles(values: list[float]) -> str:
    if not values:
        return "-"
    v = sorted(values)
    return f"{v[len(v) // 2]:,.0f} / {v[int(0.95 * (len(v) - 1))]:,.0f} / {v[-1]:,.0f}"


def p95(values: list[float]) -> float:
    return sorted(values)[int(0.95 * (len(values) - 1))] if values else float("nan")


def step_view(s: Session) -> tuple[int, int]:
    """What a websocket tab's page sent its step view: ``(the step it opens at, merges)``."""
    from ui.views.step_view import NAME

    view = next(e.proto for e in s.elements if e.kind == "bidi_component" and e.proto.component_name == NAME)
    opening, _key, body = view.bytes.split(b"\n", 2)
    return int(opening.split()[1]), json.loads(body)["n"]


class WsTab:
    """One attendee as a websocket session.  A step is drawn by their browser and sends nothing, so
    here it only moves the step the tab's URL would hold; a whole-page run is a rerun (a settings
    change, a click on a token, a page switch) or a reload (a new session from the URL, at its step)."""

    def __init__(self, url: str, owner: str, corpus: str, args: argparse.Namespace, tally: Tally):
        query = f"u={owner}" + ("" if corpus == "own" else f"&corpus={quote('sample:' + corpus)}")
        self.s, self.args, self.tally = Session(url, query=query), args, tally
        self.own_text = f"{owner}\n" + python_docs_corpus(args.chars) if corpus == "own" else None
        self.k, self.n, self.opened_at, self.forward, self.turn = 0, 0, 0, True, 0

    async def open(self) -> None:
        start = time.perf_counter()
        await self.s.connect()
        await self.s.rerun(timeout=ACTION_TIMEOUT_S)
        if self.own_text is not None:
            self.s.keep(PASTE_LABEL, string_value=self.own_text)
            await self.s.rerun(timeout=ACTION_TIMEOUT_S)
        self.tally.opened.append(1000 * (time.perf_counter() - start))
        self.opened_at, self.n = step_view(self.s)
        self.k = self.opened_at

    async def act(self) -> None:
        if random.random() < self.args.step_share:
            if not 0 <= self.k + (1 if self.forward else -1) <= self.n:
                self.forward = not self.forward
            self.k += 1 if self.forward else -1
            self.tally.steps += 1
            return
        kind = self.args.page_runs[self.turn % len(self.args.page_runs)]
        self.turn += 1
        if kind == "reload":  # the browser wrote the step it shows into the URL
            self.s.query = re.sub(r"&?step=\d+", "", self.s.query) + (f"&step={self.k}" if self.k else "")
            self.tally.page.append(1000 * await self.s.reload(timeout=ACTION_TIMEOUT_S))
            self.opened_at = self.k
        else:
            self.tally.page.append(1000 * await self.s.rerun(timeout=ACTION_TIMEOUT_S))
        shown = step_view(self.s)
        if shown != (self.opened_at, self.n):
            raise RuntimeError(f"the view opens at step {shown[0]} of {shown[1]}, "
                               f"not {self.opened_at} of {self.n}")

    async def close(self) -> None:
        self.tally.exceptions += self.s.exceptions
        self.tally.spread[self.s.cookies.get(COOKIE, "p1")] += 1
        await self.s.close()


async def act_every(act, every: float, stop_at: float, tally: Tally) -> None:
    """Call ``act`` every ``every`` seconds from a random phase until ``stop_at``, on a fixed
    schedule: an action due while the last one still runs starts when it ends (counted as late if
    that is over 0.5 s behind), and slots missed whole are skipped.  An error ends this tab as a
    lost session."""
    due = time.monotonic() + random.uniform(0, every)
    while due < stop_at:
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        tally.late += time.monotonic() - due > 0.5
        try:
            await act()
        except Exception:  # a timeout, a dropped connection, a step it did not ask for
            tally.lost += 1
            return
        due += every
        while due + every < time.monotonic():
            due += every


class ChromiumTab:
    """A real tab (its own browser context: its own proxy pin) stepping Next and Previous at the
    room's rate, timing click to view."""

    def __init__(self, browser, url: str, owner: str, corpus: str, tally: Tally):
        self.browser, self.tally = browser, tally
        corpus_param = "" if corpus == "own" else f"&corpus={quote('sample:' + corpus)}"
        self.url = f"{url}/learn_bpe?u={owner}{corpus_param}"
        self.k, self.n, self.forward = 0, 0, True

    async def open(self) -> None:
        self.context = await self.browser.new_context(viewport={"width": 1400, "height": 1600})
        self.page = await self.context.new_page()
        await self.page.goto(self.url, timeout=ACTION_TIMEOUT_S * 1000)
        self.n = await steps_in_view(self.page)

    async def step(self) -> None:
        if not 0 <= self.k + (1 if self.forward else -1) <= self.n:
            self.forward = not self.forward
        ms = await click_step(self.page, self.k, self.n, self.forward)
        if ms < 0:
            raise RuntimeError(f"step {self.k} {'forward' if self.forward else 'back'}: {ms}")
        self.tally.click.append(ms)
        self.k += 1 if self.forward else -1

    async def close(self) -> None:
        self.tally.exceptions += await self.page.locator('[data-testid="stException"]').count()
        pins = [c["value"] for c in await self.context.cookies() if c["name"] == COOKIE]
        self.tally.spread[(pins or ["p1"])[0]] += 1
        await self.context.close()


async def room(url: str, tabs: int, args: argparse.Namespace, browser) -> Tally:
    """One phase: ``tabs`` websocket tabs and ``--chromium`` real tabs arrive (at once), act for
    ``--duration`` seconds, leave."""
    tally = Tally()
    room_tabs = [WsTab(url, f"bench-room-{i:04d}-xxxxxxxx", args.corpus, args, tally) for i in range(tabs)]
    real_tabs = [ChromiumTab(browser, url, f"bench-chromium-{i:04d}-xxxxxx", args.corpus, tally)
                 for i in range(args.chromium)]
    opened = await asyncio.gather(*(t.open() for t in [*room_tabs, *real_tabs]), return_exceptions=True)
    for error in (o for o in opened if isinstance(o, Exception)):
        print(f"  a tab did not open: {error!r}", flush=True)
        tally.lost += 1
    acting = [t for t, o in zip([*room_tabs, *real_tabs], opened) if not isinstance(o, Exception)]
    stop_at = time.monotonic() + args.duration
    await asyncio.gather(*(act_every(t.act if isinstance(t, WsTab) else t.step, args.every, stop_at, tally)
                           for t in acting))
    for t in acting:
        await t.close()
    return tally


class Server:
    """A fresh server for one ``--processes`` value: ``streamlit run`` for 1, else ``ui.serving.supervisor``
    (for 1 too when ``proxied``)."""

    def __init__(self, processes: int, folder: Path, proxied: bool = False):
        self.processes, self.folder, self.proc = processes, folder, None
        self.status = folder / "serve.json"
        self.proxied = proxied or processes > 1

    def __enter__(self) -> Server:
        runs = self.folder / "runs"
        if not self.proxied:
            self.proc, self.url = start_server(runs, {})
            return self
        port = free_port()
        env = {**os.environ, "BPE_EXPLORER_RUNS_DIR": str(runs),
               "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": str(TTL_S)}  # as start_server's flag
        command = [sys.executable, "-m", "ui.serve", "--processes", str(self.processes), "--port", str(port),
                   "--status-file", str(self.status)]
        with open(self.folder / "serve.log", "wb") as log:
            self.proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 300
        while not self.status.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("ui.serve did not start: " + (self.folder / "serve.log").read_text()[-2000:])
            time.sleep(0.5)
        self.url = json.loads(self.status.read_text())["url"]
        return self

    def pids(self) -> list[int]:
        """The app processes."""
        if not self.proxied:
            return [self.proc.pid]
        return [p["pid"] for p in json.loads(self.status.read_text())["processes"].values()]

    def proxy_pid(self) -> int:
        return json.loads(self.status.read_text())["proxy_pid"]

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)


async def warm(url: str, processes: int, args: argparse.Namespace) -> None:
    """One tab per process (the proxy spreads them) steps and reloads: imports, kernels, caches."""
    tally = Tally()
    tabs = [WsTab(url, f"bench-warm-{i:04d}-xxxxxxxxx", args.corpus, args, tally) for i in range(processes)]
    await asyncio.gather(*(t.open() for t in tabs))
    for _ in range(3):
        await asyncio.gather(*(t.act() for t in tabs))
    for t in tabs:
        await t.close()


async def measure(args: argparse.Namespace) -> list[Row]:
    from playwright.async_api import async_playwright

    rows = []
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        for processes in args.processes:
            with tempfile.TemporaryDirectory() as tmp, Server(processes, Path(tmp)) as server:
                await warm(server.url, processes, args)
                baseline = await asyncio.to_thread(settle, server.pids())
                print(f"\n{processes} process(es) at {server.url}: baseline RSS {baseline:,.0f} MB",
                      flush=True)
                for tabs in args.tabs:
                    rows.append(await phase(server, processes, tabs, baseline, args, browser))
        await browser.close()
    return rows


async def phase(server: Server, processes: int, tabs: int, baseline: float, args, browser) -> Row:
    before = rss_mb(server.pids())
    sampler = Sampler(server.pids())
    sampler.start()
    tally = await room(server.url, tabs, args, browser)
    peak = sampler.stop()
    after = await asyncio.to_thread(settle, server.pids())
    row = Row(processes, tabs, args.chromium, tally, f"{before:,.0f} / {peak:,.0f} / {after:,.0f} MB "
              f"({100 * (after - baseline) / baseline:+.0f} %)", os.getloadavg()[0])
    print(HEADER + "\n" + row.line(), flush=True)
    return row


HEADER = ("| processes | tabs + Chromium | websocket tabs' steps (in their browsers) | "
          "page runs: n, p50 / p95 / max ms | click to view: n, p50 / p95 / max ms | open p95 ms | "
          "exceptions / lost / late | spread | "
          "RSS before / peak / after (vs baseline) | load 1 min |\n" + "|---" * 10 + "|")


@dataclass
class Row:
    processes: int
    tabs: int
    chromium: int
    tally: Tally
    rss: str
    load: float

    def line(self) -> str:
        t = self.tally
        spread = ", ".join(f"{name} {n}" for name, n in sorted(t.spread.items()))
        return (f"| {self.processes} | {self.tabs} + {self.chromium} | {t.steps}, 0 messages "
                f"| {len(t.page)}, {percentiles(t.page)} | {len(t.click)}, {percentiles(t.click)} | "
                f"{p95(t.opened):,.0f} | {t.exceptions} / {t.lost} / {t.late} | {spread} | {self.rss} | "
                f"{self.load:.1f} |")

    def held(self, target: float) -> bool:
        return p95(self.tally.page) <= target and not self.tally.lost


def held(rows: list[Row], target: float) -> str:
    lines = []
    for processes in sorted({r.processes for r in rows}):
        ok = [r.tabs for r in rows if r.processes == processes and r.held(target)]
        lines.append(f"{processes} process(es): {max(ok) if ok else 'none'} of the tab counts tried "
                     f"held page-run p95 within {target:,.0f} ms with no lost session")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tabs", type=int, nargs="+", default=[10], help="websocket tabs per phase")
    parser.add_argument("--processes", type=int, nargs="+", default=[1],
                        help="app processes per server: 1 is streamlit run, 2 or more ui.serving.supervisor")
    parser.add_argument("--every", type=float, default=3.0, help="seconds between a tab's actions")
    parser.add_argument("--step-share", type=float, default=0.8, help="share of actions that are steps")
    parser.add_argument("--page-runs", type=lambda v: v.split(","), default=["rerun", "reload"],
                        help="whole-page runs, taken in turn: rerun, reload")
    parser.add_argument("--chromium", type=int, default=2, help="real Chromium tabs timing click to view")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds the room acts per phase")
    parser.add_argument("--corpus", default=PYTHON_DOCS, help="a built-in sample's name, or 'own': each "
                        "tab pastes its own --chars characters")
    parser.add_argument("--chars", type=int, default=100_000)
    parser.add_argument("--target-p95-ms", type=float, default=1000.0)
    args = parser.parse_args()
    if set(args.page_runs) - {"rerun", "reload"}:
        parser.error("--page-runs takes rerun and/or reload")
    print(f"machine: {machine()}\nat start: {uptime()}")
    print(f"room: each tab acts every {args.every:g} s ({args.step_share:.0%} steps, page runs "
          f"{'/'.join(args.page_runs)}), {args.duration:g} s per phase, corpus {args.corpus!r}")
    rows = asyncio.run(measure(args))
    print("\n" + HEADER + "\n" + "\n".join(r.line() for r in rows))
    print(held(rows, args.target_p95_ms))
    print(f"at end: {uptime()}")


if __name__ == "__main__":
    main()
