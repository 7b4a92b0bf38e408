"""A room that does not behave (issue 26): calm attendees on Learn BPE while a few paste what people
paste, with fresh real tabs arriving, against one ``streamlit run`` and against ``python -m ui.serve``.

    python bench/bench_hostile_room.py [--calm 30] [--heavy 3] [--duration 120] [--processes 1 2]
        [--chromium 1] [--fresh-every 5] [--every 15] [--browser-nice 0] [--heavy-timeout 300] [--quick]

- *Calm attendees* (websocket sessions speaking Streamlit's protocol, ``streamlit_client.py``) open
  Learn BPE on the built-in Python docs sample, each with its own owner id, and run the whole page
  about every ``--every`` seconds (open loop, a random phase each; a run due while the last still
  runs starts when it ends, counted as *late*), a rerun and a reload in turn.  A step is drawn by
  the browser and sends nothing, so their page runs are what a calm room asks of the server.
- *Heavy attendees* (websocket sessions too) open the start page, paste a text into the sidebar's
  paste box (the widget's value over the protocol, as a browser sends it on Ctrl+Enter, and again
  at each run while the page still draws that box; not once the app has replaced it, as the
  frontend forgets a widget a run no longer draws), then open every other page (Learn BPE, Char vs BPE,
  Compare tokenizers, Tokenizer questions, Chat templates, Train a GPT), each timed to the end of
  its run (or, where the page answers with a progress bar and finishes later, to the run that no
  longer shows one).  The texts: 2 MB of random Unicode (code points
  U+0020-U+2FFFF, seeded), the first 8 MB of ``../shared/corpora/debian-docs-100mb.txt.xz`` (skipped
  with a message where absent) and a 1 MB line with no space (seeded), taken in turn.  They start
  5 s into the room, 2 s apart; each page waits at most ``--heavy-timeout`` s.
- *Real tabs* (Chromium, ``/usr/bin/chromium``): every ``--fresh-every`` seconds a fresh tab (its own
  browser context: a new attendee; at most 3 open at once) opens Learn BPE from the room's link and
  is timed until the step view has drawn its first step (``.bpe-step`` gets ``data-step``), at
  most 60 s; and ``--chromium`` tabs, opened before the heavy ones arrive, click Next (or Previous
  back from the last merge) every 3 s, timed in the page from the click to the frame that shows the
  step.  The report names when the three slowest fresh tabs opened, in seconds into the room.
  ``--browser-nice 10`` runs that Chromium below the server's CPU priority: here it shares the
  server's two cores, which a workshop's browsers, on the attendees' laptops, do not.

What each heavy page run ended with is read from what the page shows after it: an exception, an
error or warning (its text), or its result (Learn BPE's result is the step view).  Exceptions are
counted in every session, in every real tab and in the server's log.  Memory is VmRSS from /proc:
the app processes, and any processes they started (workers), once warmed and settled (baseline),
before the room, at its peak and once the room has left and the app has given back what it
will (``LEFT_S``: its sessions closed, a collection, an idle worker stopped) and settled.  Each
``--processes`` value gets a fresh server with the file watcher off and sessions kept 10 s after
they leave; 1 is the README's ``streamlit run``, 2 or more ``python -m ui.serve --processes N``.
Everything listens on loopback, every loop is bounded, and only the processes this script started
(and theirs) are stopped, by PID.  Timings depend on what else runs: the machine and ``uptime`` are printed.

This script depends on the app only through its URLs, page names, the sidebar's paste box label,
the step view's markup, ``python -m ui.serve``'s command line and the app's idle times.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import signal
import string
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_room import CLICK_AND_WAIT, VIEW as STEP_VIEW  # noqa: E402  (a step timed in the page)
from bench_server import machine, uptime  # noqa: E402
from streamlit_client import Session  # noqa: E402

sys.path.insert(0, str(ROOT))
from core.room.jobs import IDLE_S as WORKER_IDLE_S  # noqa: E402
from ui.serving.memory import COLLECT_EVERY_S, PERIOD_S  # noqa: E402
from ui.plumbing.navigation import PAGES as NAVIGATION  # noqa: E402
from ui.serving.supervisor import free_port, healthy  # noqa: E402

CALM_CORPUS = "sample:English: Python docs (built in)"
PAGES = tuple(name for name, _, _ in NAVIGATION[1:])  # every page but the start, in the navigation's order
PASTE_LABEL = "Or paste your own text"
DOCS_XZ = ROOT.parent / "shared" / "corpora" / "debian-docs-100mb.txt.xz"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TTL_S = 10            # server.disconnectedSessionTTL: sessions that left are gone this soon
# When the app has given back what a room left: its sessions closed, a garbage collection owed
# then paid, an idle job worker stopped (the housekeeper and the job engine, and one more round)
LEFT_S = TTL_S + max(COLLECT_EVERY_S, WORKER_IDLE_S) + 2 * PERIOD_S
WINDOW_S = 10  # the calm runs' p95 is also reported per this many seconds of the room
OPEN_TIMEOUT_S = 120  # a calm tab's or a real tab's first page
FRESH_BOUND_S = 60    # a fresh tab that shows no step view by then counts as this, and as timed out
FRESH_AT_ONCE = 3     # fresh tabs open at once, at most (Chromium's own work must not swamp the room)
CLICK_EVERY_S = 3
HEAVY_AFTER_S, HEAVY_APART_S = 5, 2
WORKER_TEXT = 300_000  # characters the warm-up trains in a worker (core.room.jobs.INLINE_BELOW: 256,000)


# -- what heavy attendees paste --------------------------------------------------------------------------
def random_unicode(size: int, seed: int = 26) -> str:
    """``size`` UTF-8 bytes of code points drawn uniformly from U+0020-U+2FFFF (no surrogates)."""
    rng, out, total = random.Random(seed), [], 0
    while total < size:
        cp = rng.randint(0x20, 0x2FFFF)
        if 0xD800 <= cp <= 0xDFFF:
            continue
        out.append(chr(cp))
        total += 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4
    return "".join(out)


def docs_head(size: int) -> str | None:
    """The first ``size`` bytes of the Debian documentation dump (a cut character dropped)."""
    if not DOCS_XZ.exists():
        return None
    proc = subprocess.Popen(["xzcat", str(DOCS_XZ)], stdout=subprocess.PIPE)
    data = proc.stdout.read(size)
    proc.stdout.close()
    proc.terminate()
    proc.wait()
    return data.decode("utf-8", "ignore")


def long_line(size: int, seed: int = 26) -> str:
    alphabet = string.ascii_letters + string.digits + string.punctuation  # no space, no newline
    return "".join(random.Random(seed).choices(alphabet, k=size))


CASES = {"unicode": (random_unicode, 2 * 2**20, "random Unicode"),
         "docs": (docs_head, 8 * 2**20, "documentation dump"),
         "line": (long_line, 2**20, "one line, no space")}


def heavy_texts(cases: list[str], scale: float) -> list[tuple[str, str]]:
    """``(what, text)`` per case, ``scale`` times its size; a case whose data is missing is skipped."""
    texts = []
    for case in cases:
        make, size, what = CASES[case]
        text = make(int(size * scale))
        if text is None:
            print(f"skipped the {what}: {DOCS_XZ} is missing", flush=True)
            continue
        texts.append((f"{len(text.encode('utf-8')) / 2**20:.2f} MB {what}", text))
    return texts


# -- what a room measured ---------------------------------------------------------------------------------
@dataclass
class HeavyRun:
    attendee: int
    text: str
    page: str
    seconds: float
    progress_s: float | None  # first progress bar shown, seconds after the request
    outcome: str
    began: float | None = None  # s into the room


@dataclass
class Tally:
    stolen: float = 0.0  # share of the machine's CPU time its host took during the room
    calm: list[float] = field(default_factory=list)     # page runs, ms
    calm_when: list[tuple[float, float]] = field(default_factory=list)  # (begun, s into the room; ms)
    opened: list[float] = field(default_factory=list)   # calm tabs' first page, ms
    late: int = 0
    no_view: int = 0     # calm page runs that ended without the step view
    lost: list[str] = field(default_factory=list)
    clicks: list[float] = field(default_factory=list)   # real tab, click to step drawn, ms
    fresh: list[float] = field(default_factory=list)    # fresh tab to step view, ms (timeouts at the bound)
    fresh_timeouts: int = 0
    fresh_late: int = 0  # fresh tabs that waited for one of the FRESH_AT_ONCE places
    fresh_when: list[tuple[float, float]] = field(default_factory=list)  # (opened, s into the room; ms)
    began: float = field(default_factory=time.perf_counter)  # the room's start (its tabs open)
    heavy: list[HeavyRun] = field(default_factory=list)
    exceptions: dict[str, int] = field(default_factory=lambda: {"calm": 0, "heavy": 0, "chromium": 0})


def rank(values: list[float], q: float) -> str:
    """The ``q`` quantile by nearest rank (p50 of two values is the lower one), or "-"."""
    return f"{sorted(values)[max(math.ceil(q * len(values)) - 1, 0)]:,.0f}" if values else "-"


def quantiles(values: list[float]) -> str:
    return f"{rank(values, 0.5)} / {rank(values, 0.95)} / {rank(values, 1.0)}"


# -- websocket attendees ----------------------------------------------------------------------------------
def has_step_view(s: Session) -> bool:
    return any(e.kind == "bidi_component" for e in s.shown())


class CalmTab:
    """An attendee on Learn BPE whose page runs (a rerun, a reload, in turn) are timed."""

    def __init__(self, url: str, i: int, tally: Tally):
        self.s = Session(url, query=f"u=bench-calm-{i:04d}-xxxxxxxxxx&corpus={quote(CALM_CORPUS)}")
        self.tally, self.turn = tally, 0

    async def open(self) -> None:
        start = time.perf_counter()
        await self.s.connect()
        await self.s.rerun(timeout=OPEN_TIMEOUT_S)
        self.tally.opened.append(1000 * (time.perf_counter() - start))

    async def act(self, timeout: float) -> None:
        self.turn += 1
        begun = time.perf_counter() - self.tally.began
        if self.turn % 2:
            seconds = await self.s.rerun(timeout=timeout)
        else:
            seconds = await self.s.reload(timeout=timeout)
        self.tally.calm.append(1000 * seconds)
        self.tally.calm_when.append((begun, 1000 * seconds))
        self.tally.no_view += not has_step_view(self.s)

    async def close(self) -> None:
        self.tally.exceptions["calm"] += self.s.exceptions
        await self.s.close()


async def act_every(act, every: float, stop_at: float, tally: Tally, name: str) -> None:
    """``act(timeout)`` every ``every`` s from a random phase until ``stop_at``, on a fixed schedule
    (late: started over 0.5 s behind; slots missed whole are skipped); an error ends it, as lost."""
    due = time.monotonic() + random.uniform(0, every)
    while due < stop_at:
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        tally.late += time.monotonic() - due > 0.5
        try:
            await act(max(stop_at - time.monotonic(), 1.0) + OPEN_TIMEOUT_S)
        except Exception as exc:  # a timeout, a dropped connection, a step it did not ask for
            tally.lost.append(f"{name}: {exc!r}"[:200])
            return
        due += every
        while due + every < time.monotonic():
            due += every


def outcome(s: Session, page: str) -> str:
    """What a page ended with: its exception, its error, or its result (with any warning)."""
    shown = s.shown()
    alerts = {1: [], 2: [], 3: []}  # error, warning, info: their text, Markdown escapes dropped
    for e in shown:
        if e.kind == "exception":
            return f"exception {e.proto.type}: {e.proto.message}"[:160]
        if e.kind == "alert" and e.proto.format in alerts:
            alerts[e.proto.format].append(e.proto.body.replace("\\", ""))
    if alerts[1]:
        return "error: " + " / ".join(alerts[1])[:160]
    if page == "learn_bpe" and not has_step_view(s):
        return "no step view: " + " / ".join(alerts[2] + alerts[3])[:140]
    return "result" + ("; warning: " + " / ".join(alerts[2])[:140] if alerts[2] else "")


def first_bar(s: Session, since: float) -> float | None:
    """Seconds from ``since`` to the first progress bar the last run drew, if it drew one."""
    bars = [e.at for e in s.elements if e.kind == "progress"]
    return min(bars) - since if bars else None


def working(s: Session) -> bool:
    """Whether the page answered "under way": it shows a progress bar and runs again by a timer
    (a fragment's ``run_every`` of at most 10 s), as a page whose work runs elsewhere would."""
    return (any(e.kind == "progress" for e in s.shown())
            and any(0 < every <= 10 for every in s.timers.values()))


async def page_run(s: Session, page: str, bound: float) -> tuple[float, float | None]:
    """Open ``page`` and wait for its answer: the run's end, or, while the page shows a progress bar
    when its run ends (work done elsewhere), the first run again (every second) that shows none.
    Returns the seconds, and when a progress bar first showed."""
    if page and page not in s.pages:
        raise LookupError(f"no page {page!r} among {sorted(s.pages)}")
    start = time.perf_counter()
    progress = None
    while True:
        await s.rerun(page=page, timeout=max(bound - (time.perf_counter() - start), 1.0))
        if page and progress is None:  # the start page always shows the lessons' bar
            progress = first_bar(s, start)
        if not working(s):
            return time.perf_counter() - start, progress
        if time.perf_counter() - start > bound:
            raise TimeoutError
        await asyncio.sleep(1.0)


async def heavy_attendee(url: str, i: int, what: str, text: str, bound: float, tally: Tally) -> None:
    """Paste ``text`` on the start page, then open each of ``PAGES``; each page run bounded."""
    await asyncio.sleep(HEAVY_AFTER_S + HEAVY_APART_S * i)
    s = Session(url, query=f"u=bench-heavy-{i:04d}-xxxxxxxxxx", path="")
    steps = [("paste (start page)", None), *((p, p) for p in PAGES)]
    try:
        await s.connect()
        await s.rerun(timeout=bound)
        s.keep(PASTE_LABEL, string_value=text)
        for n, (name, page) in enumerate(steps):
            started = time.perf_counter()
            try:
                seconds, progress = await page_run(s, page or "", bound)
            except (TimeoutError, asyncio.TimeoutError):
                progress = first_bar(s, started) if page else None
                said = f"no answer within {bound:.0f} s"
                tally.heavy.append(HeavyRun(i, what, name, bound, progress, said, started - tally.began))
                tally.heavy += [HeavyRun(i, what, later, 0.0, None, "not opened: the last one never answered")
                                for later, _ in steps[n + 1:]]
                return
            tally.heavy.append(HeavyRun(i, what, name, seconds, progress, outcome(s, page or ""),
                                       started - tally.began))
    except Exception as exc:  # a dropped connection: the pages not reached say so
        tally.heavy.append(HeavyRun(i, what, "-", 0.0, None, f"lost: {exc!r}"[:160]))
    finally:
        tally.exceptions["heavy"] += s.exceptions
        await s.close()


# -- real tabs --------------------------------------------------------------------------------------------
async def fresh_tab(browser, url: str, tally: Tally) -> None:
    """A new attendee's tab opening the room's link, timed until the step view has drawn."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1600})
    page = await context.new_page()
    start = time.perf_counter()
    try:
        await page.goto(f"{url}/learn_bpe?corpus={quote(CALM_CORPUS)}", wait_until="commit",
                        timeout=FRESH_BOUND_S * 1000)
        left_ms = FRESH_BOUND_S * 1000 - 1000 * (time.perf_counter() - start)
        await page.wait_for_function(f"document.querySelector('{STEP_VIEW}')?.dataset.step !== undefined",
                                     timeout=max(left_ms, 1), polling=20)
        ms = 1000 * (time.perf_counter() - start)
    except Exception:  # playwright's TimeoutError: not shown within the bound
        ms = FRESH_BOUND_S * 1000.0
        tally.fresh_timeouts += 1
    tally.fresh.append(ms)
    tally.fresh_when.append((start - tally.began, ms))
    tally.exceptions["chromium"] += await page.locator('[data-testid="stException"]').count()
    await context.close()


async def fresh_tabs(browser, url: str, every: float, stop_at: float, tally: Tally) -> None:
    """A fresh tab every ``every`` s until ``stop_at`` (open loop), at most ``FRESH_AT_ONCE`` open at
    once (one due past that waits for a free place, counted in ``fresh_late``)."""
    places, opened = asyncio.Semaphore(FRESH_AT_ONCE), []

    async def one() -> None:
        async with places:
            await fresh_tab(browser, url, tally)

    due = time.monotonic()
    while due < stop_at:
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        tally.fresh_late += places.locked()
        opened.append(asyncio.create_task(one()))
        due += every
    await asyncio.gather(*opened)


class StepTab:
    """A real tab on Learn BPE stepping Next (Previous back from the end), timing click to drawn."""

    def __init__(self, browser, url: str, i: int, tally: Tally):
        self.browser, self.tally = browser, tally
        self.link = f"{url}/learn_bpe?u=bench-chromium-{i:04d}-xxxxxx&corpus={quote(CALM_CORPUS)}"
        self.k, self.n, self.forward = 0, 0, True

    async def open(self) -> None:
        self.context = await self.browser.new_context(viewport={"width": 1400, "height": 1600})
        self.page = await self.context.new_page()
        await self.page.goto(self.link, timeout=OPEN_TIMEOUT_S * 1000)
        slider = self.page.locator(f"{STEP_VIEW} input[type=range]")
        await slider.wait_for(state="attached", timeout=OPEN_TIMEOUT_S * 1000)
        await self.page.wait_for_function(f"document.querySelector('{STEP_VIEW}')?.dataset.step === '0'",
                                          timeout=OPEN_TIMEOUT_S * 1000)
        self.n = int(await slider.get_attribute("max"))

    async def step(self, timeout: float) -> None:
        if not 0 <= self.k + (1 if self.forward else -1) <= self.n:
            self.forward = not self.forward
        want = self.k + (1 if self.forward else -1)
        ms = await self.page.evaluate(CLICK_AND_WAIT, ["next" if self.forward else "previous", want,
                                                       min(timeout, 60) * 1000])
        if ms < 0:
            raise RuntimeError(f"step {self.k} -> {want}: {'no button' if ms == -1 else 'not drawn'}")
        self.tally.clicks.append(ms)
        self.k = want

    async def close(self) -> None:
        self.tally.exceptions["chromium"] += await self.page.locator('[data-testid="stException"]').count()
        await self.context.close()


# -- servers and memory -----------------------------------------------------------------------------------
class Server:
    """A fresh server: ``streamlit run`` (1 process) or ``python -m ui.serve --processes N``; its
    output in ``log``.  Stops what it started, by PID, and says what outlived it."""

    def __init__(self, processes: int, folder: Path):
        self.processes, self.folder = processes, folder
        self.log, self.status = folder / "server.log", folder / "serve.json"
        self.env = {**os.environ, "BPE_EXPLORER_RUNS_DIR": str(folder / "runs"),
                    "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": str(TTL_S),
                    "STREAMLIT_SERVER_FILE_WATCHER_TYPE": "none",  # fixed code while it runs
                    "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}

    def __enter__(self) -> Server:
        self.port = port = free_port()
        if self.processes == 1:
            command = [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.headless",
                       "true", "--server.address", "127.0.0.1", "--server.port", str(port)]
        else:
            command = [sys.executable, "-m", "ui.serve", "--processes", str(self.processes),
                       "--port", str(port), "--status-file", str(self.status)]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=log,
                                         stderr=subprocess.STDOUT)
        self.url = f"http://127.0.0.1:{port}"
        self._wait_ready()
        return self

    def _wait_ready(self, bound: float = 300.0) -> None:
        deadline = time.monotonic() + bound
        while time.monotonic() < deadline and self.proc.poll() is None:
            if (self.processes == 1 or self.status.exists()) and healthy(self.port):
                return
            time.sleep(0.5)
        self.__exit__()
        raise SystemExit("the server did not start: " + self.log.read_text(errors="replace")[-2000:])

    def pids(self) -> list[int]:
        """The app processes (a ``ui.serve``'s proxy is not one)."""
        if self.processes == 1:
            return [self.proc.pid]
        return [p["pid"] for p in json.loads(self.status.read_text())["processes"].values()]

    def tracebacks(self) -> int:
        return self.log.read_text(errors="replace").count("Traceback (most recent call last)")

    def __exit__(self, *exc) -> None:
        started = descendants([self.proc.pid])
        self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        deadline = time.monotonic() + 10  # a worker runs SCHED_IDLE: its exit waits for a free CPU
        while (left := [p for p in started if running(p)]) and time.monotonic() < deadline:
            time.sleep(0.2)
        for pid in left:  # started by the server, left behind by it: ours to stop
            try:
                os.kill(pid, 15)
            except ProcessLookupError:
                pass
        if left:
            print(f"  the server left {len(left)} process(es) behind (stopped by PID: {left})", flush=True)


def running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not exited (a zombie, exited but not yet reaped by
    whoever adopted it, has)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def descendants(pids: list[int]) -> list[int]:
    """Every process started (directly or not) by ``pids``, from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], list(pids)
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            lines = Path(f"/proc/{pid}/status").read_text().splitlines()
            total += next(int(line.split()[1]) for line in lines if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            pass
    return total / 1024


def memory(server: Server) -> tuple[float, float]:
    """RSS of the app processes, and of the processes they started (workers), MB."""
    apps = server.pids()
    return rss_mb(apps), rss_mb([p for p in descendants(apps) if p not in apps])


class Peak(threading.Thread):
    """The highest RSS (apps and their workers) every 0.5 s while a room runs."""

    def __init__(self, server: Server):
        super().__init__(daemon=True)
        self.server, self.peak, self.done = server, 0.0, threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.5):
            self.peak = max(self.peak, sum(memory(self.server)))

    def stop(self) -> float:
        self.done.set()
        self.join()
        return self.peak


def settle(server: Server, after: float = LEFT_S, bound: float = 180.0,
           steady: float = 8.0) -> tuple[float, float]:
    """RSS once what left is given back: ``after`` s at least, then once it has not fallen for
    ``steady`` s; at most ``bound`` s."""
    start = time.monotonic()
    lowest, lowest_at = sum(memory(server)), start
    while time.monotonic() - start < bound:
        time.sleep(1)
        rss = sum(memory(server))
        if rss < lowest - 0.5:
            lowest, lowest_at = rss, time.monotonic()
        if time.monotonic() - start > after and time.monotonic() - lowest_at > steady:
            break
    return memory(server)


# -- one room ---------------------------------------------------------------------------------------------
async def open_all(tabs: list, tally: Tally) -> list:
    opened = await asyncio.gather(*(t.open() for t in tabs), return_exceptions=True)
    for tab, error in zip(tabs, opened):
        if isinstance(error, BaseException):
            tally.lost.append(f"{type(tab).__name__} did not open: {error!r}"[:200])
    return [t for t, o in zip(tabs, opened) if not isinstance(o, BaseException)]


async def room(url: str, args: argparse.Namespace, texts: list, browser) -> Tally:
    """Calm tabs and step tabs open; for ``--duration`` s they act, fresh tabs arrive and the heavy
    attendees start (5 s in); then the room waits for the heavy ones (each page bounded) and leaves."""
    tally = Tally()
    calm = [CalmTab(url, i, tally) for i in range(args.calm)]
    steppers = [StepTab(browser, url, i, tally) for i in range(args.chromium if browser else 0)]
    calm, steppers = await open_all(calm, tally), await open_all(steppers, tally)
    stop_at, tally.began = time.monotonic() + args.duration, time.perf_counter()
    heavy = [asyncio.create_task(heavy_attendee(url, i, *texts[i % len(texts)], args.heavy_timeout, tally))
             for i in range(args.heavy if texts else 0)]
    loops = [*(act_every(t.act, args.every, stop_at, tally, f"calm {i}") for i, t in enumerate(calm)),
             *(act_every(t.step, CLICK_EVERY_S, stop_at, tally, f"step tab {i}")
               for i, t in enumerate(steppers))]
    if browser and args.fresh_every > 0:
        loops.append(fresh_tabs(browser, url, args.fresh_every, stop_at, tally))
    await asyncio.gather(*loops)
    await asyncio.gather(*heavy)
    for t in [*calm, *steppers]:
        await t.close()
    return tally


def by_window(when: list[tuple[float, float]]) -> str:
    """The p95 of each ``WINDOW_S`` seconds of the room (by when a run began): when it was slow."""
    windows: dict[int, list[float]] = {}
    for at, ms in when:
        windows.setdefault(int(at // WINDOW_S), []).append(ms)
    return ", ".join(f"{k * WINDOW_S}-: {rank(v, 0.95)}" for k, v in sorted(windows.items()))


def report(processes: int, tally: Tally, rss: dict, tracebacks: int) -> str:
    t = tally
    kind = "one `streamlit run`" if processes == 1 else f"`python -m ui.serve --processes {processes}`"
    slowest = ", ".join(f"{at:.0f} s into the room ({ms / 1000:.1f} s)"
                        for at, ms in sorted(t.fresh_when, key=lambda w: -w[1])[:3]) or "-"
    lines = [f"\n### {kind}\n",
             "| what | n | p50 / p95 / max ms | notes |", "|---|---|---|---|",
             f"| calm page runs | {len(t.calm)} | {quantiles(t.calm)} | {t.late} late, {t.no_view} without "
             f"the step view; tabs opened p95 {rank(t.opened, 0.95)} ms |",
             f"| calm page runs' p95 by {WINDOW_S} s of the room | | {by_window(t.calm_when)} | |",
             f"| steps in a real tab (click to drawn) | {len(t.clicks)} | {quantiles(t.clicks)} | |",
             f"| fresh tab to step view | {len(t.fresh)} | {quantiles(t.fresh)} | "
             f"{t.fresh_timeouts} not shown within {FRESH_BOUND_S} s (counted as {FRESH_BOUND_S} s); "
             f"{t.fresh_late} waited for one of {FRESH_AT_ONCE} places; the slowest opened {slowest} |",
             "", "| heavy attendee | text | page | began, s into the room | seconds | progress shown after "
             "| ended with |", "|---|---|---|---|---|---|---|"]
    for h in t.heavy:
        progress = "-" if h.progress_s is None else f"{h.progress_s:.1f} s"
        began = "-" if h.began is None else f"{h.began:.0f}"
        lines.append(f"| {h.attendee} | {h.text} | {h.page} | {began} | {h.seconds:,.1f} | {progress} | "
                     f"{h.outcome.replace('|', '/').replace(chr(10), ' ')} |")
    exceptions = ", ".join(f"{k} {v}" for k, v in t.exceptions.items())
    lines += ["", f"Exceptions shown: {exceptions}; tracebacks in the server's log: {tracebacks}; "
              f"lost sessions: {len(t.lost)}" + "".join(f"\n  - {x}" for x in t.lost[:10]),
              "RSS, app processes + their workers, MB: " + ", ".join(
                  f"{k} {rss[k][0]:,.0f} + {rss[k][1]:,.0f}" for k in ("baseline", "before", "after"))
              + f", peak {rss['peak']:,.0f} (after vs baseline "
              f"{100 * (sum(rss['after']) / sum(rss['baseline']) - 1):+.0f} %)",
              f"Load at the end: {uptime()}; CPU time the host took from this machine during the "
              f"room (steal, /proc/stat): {100 * t.stolen:.0f} %"]
    return "\n".join(lines)


def cpu_times() -> list[int]:
    """The machine's CPU time so far by kind (user, nice, system, idle, iowait, irq, softirq,
    steal), in ticks, from /proc/stat."""
    return [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]


def stolen_share(before: list[int], after: list[int]) -> float:
    """The share of CPU time between two ``cpu_times`` that a virtual machine's host gave to others
    (runs on a machine whose host is busy are slower through no fault of the app)."""
    spent = [b - a for a, b in zip(before, after)]
    return spent[7] / max(sum(spent), 1)


async def warm(url: str, processes: int) -> None:
    """One calm tab per process (the proxy spreads them) runs Learn BPE twice, opens the heavy
    attendees' pages on the calm corpus, then trains a small pasted text in a worker: what every
    room loads once (imports, compiled kernels, the real tokenizers Compare tokenizers shows, the
    job engine's fork server) is in the baseline, not counted as left behind."""
    tally = Tally()
    for i in range(processes):
        tab = CalmTab(url, 9000 + i, tally)
        await tab.open()
        await tab.act(OPEN_TIMEOUT_S)
        await tab.act(OPEN_TIMEOUT_S)
        for page in PAGES:
            await tab.s.rerun(page=page, timeout=OPEN_TIMEOUT_S)
        tab.s.keep(PASTE_LABEL, string_value=long_line(WORKER_TEXT, seed=i))
        await page_run(tab.s, "learn_bpe", OPEN_TIMEOUT_S)
        await tab.close()


def niced(executable: Path, niceness: int, folder: Path) -> Path:
    """``executable``, or a script that runs it ``niceness`` lower in CPU priority (its children too):
    on this one machine the real tabs share the server's cores, which a workshop's browsers, on
    the attendees' laptops, do not."""
    if not niceness:
        return executable
    script = folder / "chromium"
    script.write_text(f'#!/bin/sh\nexec nice -n {int(niceness)} {executable} "$@"\n', encoding="utf-8")
    script.chmod(0o700)
    return script


async def measure(args: argparse.Namespace, texts: list) -> None:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser, wrapper = None, tempfile.TemporaryDirectory()
        if CHROMIUM.exists():
            executable = niced(CHROMIUM, args.browser_nice, Path(wrapper.name))
            browser = await pw.chromium.launch(executable_path=str(executable), args=CHROMIUM_ARGS)
        else:
            print(f"no real tabs: {CHROMIUM} is missing", flush=True)
        for processes in args.processes:
            with tempfile.TemporaryDirectory() as tmp, Server(processes, Path(tmp)) as server:
                print(f"\n{processes} process(es) at {server.url}", flush=True)
                await warm(server.url, processes)
                rss = {"baseline": await asyncio.to_thread(settle, server)}
                rss["before"] = memory(server)
                peak = Peak(server)
                peak.start()
                cpu = cpu_times()
                tally = await room(server.url, args, texts, browser)
                tally.stolen = stolen_share(cpu, cpu_times())
                rss["peak"] = peak.stop()
                rss["after"] = await asyncio.to_thread(settle, server)
                print(report(processes, tally, rss, server.tracebacks()), flush=True)
        if browser:
            await browser.close()
        wrapper.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calm", type=int, default=30, help="calm attendees on Learn BPE")
    parser.add_argument("--heavy", type=int, default=3, help="attendees who paste a heavy text")
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES),
                        help="the heavy texts, taken in turn")
    parser.add_argument("--scale", type=float, default=1.0, help="times each heavy text's size")
    parser.add_argument("--duration", type=float, default=120.0, help="seconds the calm room acts")
    parser.add_argument("--every", type=float, default=15.0, help="seconds between a calm tab's page runs")
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2],
                        help="app processes: 1 is streamlit run, 2 or more python -m ui.serve")
    parser.add_argument("--chromium", type=int, default=1, help="real tabs timing steps")
    parser.add_argument("--fresh-every", type=float, default=5.0,
                        help="seconds between fresh real tabs (0: none)")
    parser.add_argument("--browser-nice", type=int, default=0,
                        help="niceness of the real tabs' Chromium (10: the server's cores go to the server "
                             "first, as where the attendees' browsers run on their own machines)")
    parser.add_argument("--heavy-timeout", type=float, default=300.0, help="bound on each heavy page, s")
    parser.add_argument("--quick", action="store_true",
                        help="a check of the script: 5 calm, 1 heavy (40 KB of random Unicode), 30 s")
    args = parser.parse_args()
    if args.quick:
        args.calm, args.heavy, args.cases, args.scale, args.duration = 5, 1, ["unicode"], 0.02, 30.0
        args.heavy_timeout = min(args.heavy_timeout, 120.0)
    print(f"machine: {machine()}\nat start: {uptime()}")
    print(f"room: {args.calm} calm tabs (a page run every {args.every:g} s each), {args.heavy} heavy, "
          f"{args.chromium} step tab(s), a fresh tab every {args.fresh_every:g} s, {args.duration:g} s"
          + (f", Chromium niced by {args.browser_nice}" if args.browser_nice else ""),
          flush=True)
    texts = heavy_texts(args.cases, args.scale)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stopped: still stop the servers it started
    asyncio.run(measure(args, texts))
    print(f"\nat end: {uptime()}")


if __name__ == "__main__":
    main()
