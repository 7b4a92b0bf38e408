"""Serving a workshop from one machine: the app as N Streamlit processes behind HAProxy, one command.

    python -m ui.serve [--processes N] [--port 8501] [--address 127.0.0.1]

Why several processes: a Streamlit process runs its scripts' Python on one core at a time, so on an
8-core machine one process leaves seven cores idle while a room waits.  Why a proxy in front: one
address for the room, while a Streamlit session lives in the one process that holds its websocket,
and its file uploads (``/_stcore/upload_file``) and media must reach that same process (elsewhere
they fail with "400 session invalid").  What this module owns, and why each choice:

- **The pin is a cookie the proxy sets** (``cookie bpe_explorer_process insert indirect nocache``),
  never the client address: a room often reaches the server from one venue address, which would
  put everyone on one process.  A new visitor goes to the process holding the fewest connections
  (``balance leastconn``: open websockets are the attendees a process holds).
- **A process that dies is restarted** here, on its port, with a growing pause if it keeps dying;
  one that stops answering its health check for a minute (hung) is killed first.
  Its attendees' tabs reconnect meanwhile: the pinned request is tried on the dead process first
  (``option persist``: a busy process that misses a health check keeps its attendees) and, refused,
  sent to a live one (``option redispatch``), which sets a new pin.  The tab runs again there at
  once (:func:`rerun_on_reconnect`, which the frame calls), and the new session restores the corpus
  and the settings from the URL and the owner's corpus store (``ui.plumbing.frame``,
  ``ui.plumbing.corpus_sidebar``).
  Health checks ask ``/_stcore/health``; websockets pass through with an 8-hour tunnel timeout.
- **The proxy compresses text** (``compression algo gzip``) for a browser that accepts it.
  Streamlit leaves its static files uncompressed on purpose, expecting a proxy in front to do it:
  a new attendee's first load of Learn BPE shrinks by nearly half on the venue's network, for a
  little more server CPU a tab (why: docs/benchmarks.md, "A new attendee's first page load").
- **One engine for the machine**, not started here: every app process sends its heavy jobs to the
  runs folder's engine (``core.room.engine``), which the first of them to need it starts, so
  ``JOB_WORKERS`` bounds the machine, not each process, and a job asked from two processes runs once.
- **Every process runs the same app the same way**: the repository as working directory (its
  ``.streamlit/config.toml`` and ``secrets.toml``), the same environment (the instructor key and
  the caps, ``BPE_EXPLORER_*``; one runs folder, so one queue under ``core.runfolder.locks``' file locks), one
  ``server.cookieSecret`` (Streamlit signs its own cookies with it; its XSRF cookie is checked
  against the header, so an upload still passes after a failover), no file watcher (an edit made
  while a room runs must not reload some processes and not others).  The processes listen on
  loopback only; only the proxy listens on ``--address``, loopback unless you say otherwise.
- **Nothing left behind**: the proxy's configuration and stats socket live in a temporary folder,
  removed on exit; Ctrl+C or SIGTERM stops the proxy, then every app process, by PID (on Linux a
  child also gets SIGTERM if this command is killed outright).  The engine and the GPT runs it trains
  outlive the server by design (``core.room.engine``), as under ``streamlit run``.

``--status-file`` writes the URL, every PID and HAProxy's stats socket (``show stat``: the
connections open on each process) as JSON, for tests and ``bench/bench_room.py``.  Leaves out
TLS: put a TLS-terminating proxy in front, or serve the room on a trusted network.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import streamlit as st

from core.atomic import atomic_write
from core.room.cpu_policy import die_with_parent
from core.room.limits import cpu_cores

ROOT = Path(__file__).resolve().parents[2]  # the repository: streamlit_app.py, .streamlit/
COOKIE = "bpe_explorer_process"
BACKEND = "app"
# What the proxy compresses for a browser that accepts gzip: Streamlit's frontend, most of what a new
# tab fetches, leaves its own process uncompressed, by design, for a proxy in front to compress.
# Fonts and images come compressed already.
COMPRESSED_TYPES = ("text/html", "text/css", "text/plain", "text/javascript", "application/javascript",
                    "application/json", "image/svg+xml")
HAPROXY_PLACES = ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy", "/opt/homebrew/sbin/haproxy")
POLL_S = 0.5
READY_S = 180.0        # an app process's first start imports torch & co.: slow on a busy machine
STOP_S = 10.0          # a process gets this long after SIGTERM, then SIGKILL
STABLE_S = 60.0        # a process up this long that dies is restarted at once
MAX_PAUSE_S = 30.0     # the longest pause before restarting a process that keeps dying
HEALTH_EVERY_S = 10.0  # how often a running app process's health is asked here
HUNG_S = 60.0          # an app process silent this long (after READY_S from its start) is hung
RECONNECT_TIMER = "1h"  # the timer that makes a reconnected tab run again (see rerun_on_reconnect)


class Stopped(Exception):
    """Ctrl+C or SIGTERM: stop everything."""


def _on_signal(signum, frame) -> None:
    for s in (signal.SIGINT, signal.SIGTERM):  # a second Ctrl+C must not cut the shutdown short
        signal.signal(s, signal.SIG_IGN)
    raise Stopped


@st.fragment(run_every=RECONNECT_TIMER)
def rerun_on_reconnect() -> None:
    """Draws nothing; the frame calls it on every page.  Streamlit's browser side runs a page again
    when its websocket reconnects only if the page has a timer fragment (or a run was under way):
    without one, a tab whose process died reconnected to a live process but stayed as drawn, its
    new session empty, and a click on a fragment's button (Next) was dropped there ("fragment does
    not exist anymore").  With it, the tab runs at once in its new session, which restores the
    corpus and the settings from the URL.  The timer itself fires once an hour: nothing to speak of."""


# -- the processes --------------------------------------------------------------------------------------
def _dies_with_parent():
    """A ``preexec_fn`` for Linux: the child gets SIGTERM when this command dies, even by SIGKILL."""
    if not sys.platform.startswith("linux"):
        return None
    parent = os.getpid()

    def preexec() -> None:
        die_with_parent(signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before that
            os._exit(1)
    return preexec


class Child:
    """One process this command keeps alive: an app process or the proxy.  It runs in a session of
    its own, so a Ctrl+C in the terminal reaches this command alone, which stops it in turn."""

    def __init__(self, name: str, command: list[str], env: dict | None = None, port: int | None = None):
        self.name, self.command, self.env, self.port = name, command, env, port
        self.proc: subprocess.Popen | None = None
        self.started = 0.0
        self.restarts = 0
        self.quick_deaths = 0
        self.restart_at: float | None = None
        self.next_check = 0.0
        self.silent_since: float | None = None

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def start(self) -> None:
        self.proc = subprocess.Popen(self.command, cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL,
                                     start_new_session=True,
                                     preexec_fn=_dies_with_parent())  # noqa: PLW1509 (no threads here)
        self.started, self.restart_at = time.monotonic(), None
        self.next_check, self.silent_since = self.started + READY_S, None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def tend(self, now: float) -> bool:
        """Notice a death (and plan the restart), or restart when its time has come; whether this
        child was started again."""
        if self.restart_at is not None:
            if now < self.restart_at:
                return False
            self.start()
            self.restarts += 1
            print(f"{self.name}: restarted as pid {self.pid}", file=sys.stderr, flush=True)
            return True
        if self.proc is None or self.proc.poll() is None:
            return False
        self.quick_deaths = self.quick_deaths + 1 if now - self.started < STABLE_S else 1
        pause = min(MAX_PAUSE_S, 2.0 ** (self.quick_deaths - 1))
        print(f"{self.name}: pid {self.pid} exited with code {self.proc.returncode}; restarting it in "
              f"{pause:.0f} s (its attendees reconnect to a live process meanwhile)",
              file=sys.stderr, flush=True)
        self.restart_at = now + pause
        return False

    def watch(self, now: float) -> None:
        """Kill an app process that has not answered its health check for ``HUNG_S`` seconds:
        alive to the kernel but dead to its attendees, whom the proxy would keep sending to it
        (``option persist``); :meth:`tend` then restarts it like any process that died."""
        if self.port is None or not self.alive() or now < self.next_check:
            return
        self.next_check = now + HEALTH_EVERY_S
        if healthy(self.port):
            self.silent_since = None
            return
        self.silent_since = self.silent_since or now
        if now - self.silent_since >= HUNG_S:
            print(f"{self.name}: pid {self.pid} has not answered its health check for {HUNG_S:.0f} s; "
                  "killing it, to start it again", file=sys.stderr, flush=True)
            self.proc.kill()
            self.proc.wait()

    def signal_stop(self) -> None:
        if self.alive():
            self.proc.terminate()

    def wait_stopped(self, deadline: float) -> None:
        if self.proc is None:
            return
        try:
            self.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def stop_all(children: list[Child]) -> None:
    """The proxy first (no new requests), then every app process at once; each by its PID."""
    for group in (children[:1], children[1:]):
        for child in group:
            child.signal_stop()
        deadline = time.monotonic() + STOP_S
        for child in group:
            child.wait_stopped(deadline)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def app_command(name: str, port: int) -> list[str]:
    return [sys.executable, "-m", "streamlit", "run", str(ROOT / "streamlit_app.py"),
            "--server.headless", "true", "--server.address", "127.0.0.1", "--server.port", str(port),
            "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false",
            "--logger.hideWelcomeMessage", "true",
            "--logger.messageFormat", f"{name} %(asctime)s %(message)s"]


def app_env(environ: dict | None = None) -> dict:
    """The environment every app process shares: this one (``BPE_EXPLORER_*`` included), one cookie
    secret (kept if ``STREAMLIT_SERVER_COOKIE_SECRET`` is set), the runs folder as an absolute path."""
    env = dict(os.environ if environ is None else environ)
    env.setdefault("STREAMLIT_SERVER_COOKIE_SECRET", secrets.token_hex(32))
    if env.get("BPE_EXPLORER_RUNS_DIR"):
        env["BPE_EXPLORER_RUNS_DIR"] = str(Path(env["BPE_EXPLORER_RUNS_DIR"]).expanduser().absolute())
    return env


def healthy(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def wait_ready(apps: list[Child], bound: float = READY_S) -> None:
    """Until every app process answers its health check; a process that exits first is an error."""
    deadline, waiting = time.monotonic() + bound, list(apps)
    while waiting:
        for app in list(waiting):
            if not app.alive():
                raise SystemExit(f"{app.name} exited with code {app.proc.returncode} before it was "
                                 "ready (its messages are above).")
            if healthy(app.port):
                waiting.remove(app)
        if waiting and time.monotonic() > deadline:
            raise SystemExit(f"{', '.join(a.name for a in waiting)} not ready after {bound:.0f} s.")
        time.sleep(POLL_S)


# -- the proxy ------------------------------------------------------------------------------------------
def find_haproxy(explicit: str | None = None) -> str:
    """HAProxy's path (``--haproxy``, else on PATH or where packages put it), or a clear exit."""
    found = explicit if explicit and Path(explicit).is_file() else None
    if not explicit:
        found = shutil.which("haproxy") or next((p for p in HAPROXY_PLACES if Path(p).is_file()), None)
    if found is None:
        raise SystemExit(
            f"HAProxy was not found{f' at {explicit}' if explicit else ''}: this command starts it in "
            "front of the app processes.  Install it (Debian/Ubuntu: `sudo apt-get install haproxy`, "
            "macOS: `brew install haproxy`), or serve one process with `streamlit run streamlit_app.py`.")
    return found


def bind_address(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def haproxy_config(address: str, port: int, apps: list[Child], stats_socket: Path) -> str:
    """HAProxy's configuration for this command (the module docstring says why each line)."""
    servers = "".join(f"    server {a.name} 127.0.0.1:{a.port} cookie {a.name}\n" for a in apps)
    return f"""# written by `python -m ui.serve` while it serves, removed when it stops
global
    maxconn 4096
    stats socket {stats_socket} mode 600 level user

defaults
    mode http
    retries 2
    option redispatch 1
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-request 30s
    timeout tunnel 8h
    timeout client-fin 30s
    timeout check 10s

frontend bpe_explorer
    bind {bind_address(address, port)}
    default_backend {BACKEND}

backend {BACKEND}
    compression algo gzip
    compression type {" ".join(COMPRESSED_TYPES)}
    balance leastconn
    cookie {COOKIE} insert indirect nocache httponly
    option persist
    option httpchk GET /_stcore/health
    http-check expect status 200
    default-server check inter 2s fall 3 rise 2
{servers}"""


def wait_listening(proxy: Child, host: str, port: int, bound: float = 30.0) -> None:
    deadline = time.monotonic() + bound
    while not healthy(port, host):
        if not proxy.alive():
            raise SystemExit(f"HAProxy exited with code {proxy.proc.returncode} (its message is above): is "
                             f"port {port} taken? Choose another with --port.")
        if time.monotonic() > deadline:
            raise SystemExit(f"HAProxy does not answer on port {port} after {bound:.0f} s.")
        time.sleep(0.2)


# -- the command ----------------------------------------------------------------------------------------
def local_host(address: str) -> str:
    """Where this machine reaches the proxy (a wildcard address is reached on loopback)."""
    return {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(address, address)


def url_of(address: str, port: int) -> str:
    host = local_host(address)
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def write_server_status(path: Path | None, url: str, proxy: Child, apps: list[Child],
                        stats_socket: Path) -> None:
    if path is None:
        return
    status = {"url": url, "cookie": COOKIE, "stats_socket": str(stats_socket), "proxy_pid": proxy.pid,
              "processes": {a.name: {"pid": a.pid, "port": a.port, "restarts": a.restarts} for a in apps}}
    with atomic_write(path) as f:
        json.dump(status, f, indent=1)


def supervise(children: list[Child], on_restart) -> None:
    """Keep every child alive, and every app process answering, until Ctrl+C or SIGTERM
    (:class:`Stopped`)."""
    while True:
        time.sleep(POLL_S)
        now = time.monotonic()
        for child in children:
            child.watch(now)
        restarted = [child for child in children if child.tend(now)]  # tend every child
        if restarted:
            on_restart()


def serve(args: argparse.Namespace, haproxy: str, folder: Path) -> None:
    env = app_env()
    ports = [free_port() for _ in range(args.processes)]
    apps = [Child(f"p{i + 1}", app_command(f"p{i + 1}", port), env, port) for i, port in enumerate(ports)]
    stats_socket, config = folder / "haproxy.sock", folder / "haproxy.cfg"
    proxy = Child("proxy", [haproxy, "-db", "-f", str(config)])
    try:
        for app in apps:
            app.start()
        wait_ready(apps)
        config.write_text(haproxy_config(args.address, args.port, apps, stats_socket), encoding="utf-8")
        proxy.start()
        url = url_of(args.address, args.port)
        wait_listening(proxy, local_host(args.address), args.port)
        status = functools.partial(write_server_status, args.status_file, url, proxy, apps, stats_socket)
        status()
        where = "every interface" if args.address in ("0.0.0.0", "::") else args.address
        print(f"BPE Explorer: {len(apps)} app process(es) behind HAProxy on {where}, port {args.port}: "
              f"{url}\n  " + ", ".join(f"{a.name} pid {a.pid}" for a in apps) + f", proxy pid {proxy.pid}"
              "\n  Stop with Ctrl+C.", flush=True)
        supervise([proxy, *apps], status)
    finally:
        stop_all([proxy, *apps])
        if args.status_file is not None:
            args.status_file.unlink(missing_ok=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m ui.serve", description=__doc__.splitlines()[0],
                                     epilog="Set the instructor key and the caps as for `streamlit run` "
                                            "(README, 'Serve a workshop'): every process gets them.")
    parser.add_argument("--processes", type=int, default=cpu_cores(),
                        help="app processes, about one per core (default: this machine's %(default)s)")
    parser.add_argument("--port", type=int, default=8501, help="the room's port (default %(default)s)")
    parser.add_argument("--address", default="127.0.0.1",
                        help="where the proxy listens: 0.0.0.0 for every interface "
                             "(default: this machine only)")
    parser.add_argument("--haproxy", help="HAProxy's path (default: found on PATH or in /usr/sbin)")
    parser.add_argument("--status-file", type=Path,
                        help="write the URL, the PIDs and the stats socket here as JSON (for scripts)")
    args = parser.parse_args(argv)
    if not 1 <= args.processes <= 64:
        parser.error("--processes must be between 1 and 64")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    haproxy = find_haproxy(args.haproxy)
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, _on_signal)
    with tempfile.TemporaryDirectory(prefix="bpe-explorer-serve-") as folder:
        os.chmod(folder, 0o700)
        try:
            serve(args, haproxy, Path(folder))
        except Stopped:
            print("Stopped: the proxy and every app process have exited.", flush=True)
