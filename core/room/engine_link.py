"""The link between an app process and its runs folder's engine (``core.room.engine``): both ends.

Every app process of a machine (``streamlit run``, or each of ``ui.serve``'s) sends its heavy jobs to
one engine, so the machine's ``job_workers`` bound them all, one owner's share is counted over every
tab and process of theirs, and a job asked from two processes runs once
(why: docs/benchmarks.md, "A room on several app processes").  :class:`RemoteEngine` is that engine
as a page's plumbing uses it (``core.room.jobs.Jobs``); it finds the engine through the runs
folder's ``ENGINE_FILE`` and starts one when there is none (``core.room.spawn.ensure_engine``), so
the first app process that needs it starts it, and a dead one is started again at the next call.

The link is the standard library's ``multiprocessing.connection``: loopback only, and a connection
must prove it holds the engine's key (written owner-only beside its address) before anything is
unpickled; then each call is one message each way, ``(method, args)`` and its answer.  An app process
keeps the connections it opened and reuses them (a pool as large as its calls at once): a page's
thread, or a progress bar's poll, does not pay a connection and its handshake
(``multiprocessing.managers`` opened one per thread, and the room's threads are new at every run:
docs/benchmarks.md, "A room that does not behave").  A job travels as one pickled blob that the
engine never opens (:func:`run_blob` opens it in the job worker), and so does its result: a corpus or
a trained tokenizer is copied, not rebuilt, and the engine imports nothing of the jobs' own.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import socket
import threading
import time
from dataclasses import dataclass
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client, Listener, answer_challenge, deliver_challenge
from pathlib import Path

from ..atomic import write_json
from ..runfolder.layout import ENGINE_FILE
from .jobs import JobEngine, JobState, JobStopped
from .spawn import ensure_engine

HOST = "127.0.0.1"
CONNECT_S = 30.0    # how long a caller waits for an engine that is starting
RESTART_S = 2.0     # a caller starts an engine at most this often while it waits for one
# connections waiting to be accepted: a room's app processes open several at once when the engine
# starts (multiprocessing's default of 1, with the challenge answered in the accepting thread,
# dropped them: the kernel's "SYN flooding" note, and a page waiting minutes on TCP's retries)
BACKLOG = 128
HANDSHAKE_S = 10.0  # a connection that has not proved it holds the key by then is cut (either end)
IDLE_KEPT = 8       # connections an app process keeps for its next calls; more, made in a burst, close
ACCEPT_RETRY_S = 0.1  # the listener's pause when it cannot take a connection (out of descriptors)


def run_blob(blob: bytes) -> tuple[bool, bytes]:
    """In a job worker: run the pickled ``(fn, args)`` and return ``(True, pickled result)``, or
    ``(False, pickled exception)`` for the function's own failure (a bound's is the engine's)."""
    fn, args = pickle.loads(blob)
    try:
        return True, pickle.dumps(fn(*args), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        try:
            return False, pickle.dumps(exc, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            return False, pickle.dumps(RuntimeError(f"{type(exc).__name__}: {exc}"))


@dataclass(frozen=True)
class JobView:
    """A job of the engine as an app process sees it, read at one moment: what ``heavy_jobs`` reads
    of a :class:`~core.room.jobs.Job`, and its outcome once it is done, read with it (another
    process may have it forgotten a moment later)."""

    key: object
    state: JobState
    progress: tuple[int, int]
    submitted: float               # time.monotonic(): one clock for every process of the machine
    outcome: tuple | None = None   # (ok, pickled value or exception), a bound's JobStopped as itself

    @classmethod
    def of(cls, job) -> JobView:
        outcome = None
        if job.done:
            outcome = (False, job.error) if job.error is not None else job.result_value
        return cls(job.key, job.state, job.progress, job.submitted, outcome)

    @property
    def done(self) -> bool:
        return self.outcome is not None

    def result(self):
        """The function's value; raises what it raised, or :class:`JobStopped`."""
        if self.outcome is None:
            raise TimeoutError(f"job {self.key!r} is still {self.state.name.lower()}")
        ok, value = self.outcome
        if isinstance(value, BaseException):
            raise value
        value = pickle.loads(value)
        if not ok:
            raise value
        return value


class SharedEngine:
    """The engine's queue (:attr:`engine`, whose GPT turns the engine's scheduler gives) as the app
    processes reach it: each app process ``configure``-s its jobs' bounds as it links (every app
    process of a machine has the same settings), then plain values in and out.  ``jobs_waiting``:
    the event its GPT workers give way to (``core.room.cpu_policy``).  Once :meth:`retire` said
    yes, every call is refused as a lost link, and the caller starts or finds the next engine."""

    def __init__(self, jobs_waiting=None) -> None:
        self.engine = JobEngine(preload=(__name__,), jobs_waiting=jobs_waiting)
        self._lock = threading.Lock()
        self._last_call = time.monotonic()
        self._retired = False

    def configure(self, job_workers: int | None, limit_s: float, max_rss: int | None,
                  abandon_s: float | None, preload: tuple[str, ...]) -> None:
        with self._lock:
            self._called()
            self.engine.resize(job_workers, limit_s, max_rss, abandon_s, preload=(__name__, *preload))

    def submit(self, session, owner, key, blob: bytes | None) -> JobView | None:
        """Join the job for ``key``, or start it from ``blob``; ``None`` when there is no such job
        and no ``blob`` (the caller sends it then: a corpus crosses only when it is needed)."""
        if blob is None:
            job = self._jobs().join(session, key, owner)
        else:
            job = self._jobs().submit(session, key, run_blob, (blob,), owner=owner)
        return None if job is None else JobView.of(job)

    def view(self, key) -> JobView | None:
        job = self._jobs().job(key)
        return None if job is None else JobView.of(job)

    def cancel(self, session, key=None) -> int:
        return self._jobs().cancel(session, key)

    def forget(self, key, session=None) -> None:
        self._jobs().forget(key, session)

    def worker_pids(self) -> list[int]:
        return self._jobs().worker_pids()

    def retire(self, idle_s: float) -> bool:
        """Whether nobody asked anything for ``idle_s`` seconds and no job is live; if so, every
        call from now on is refused (the engine is leaving)."""
        with self._lock:
            self._retired = self._retired or self._quiet(idle_s)
            return self._retired

    def _quiet(self, idle_s: float) -> bool:
        return not self.engine.busy() and time.monotonic() - self._last_call >= idle_s

    def close(self) -> None:
        self.engine.close()

    def _called(self) -> None:
        if self._retired:  # crosses the link as a lost connection: the caller links anew
            raise ConnectionRefusedError("the engine is leaving")
        self._last_call = time.monotonic()

    def _jobs(self) -> JobEngine:
        with self._lock:
            self._called()
            return self.engine


CALLS = frozenset({"configure", "submit", "view", "cancel", "forget", "worker_pids"})


def listen(jobs: SharedEngine, runs_dir) -> None:
    """In the engine's process: serve ``jobs``'s :data:`CALLS` on a free loopback port, a thread
    per connection, and write where, with a fresh key, to the runs folder's ``ENGINE_FILE``
    (owner-only)."""
    key = os.urandom(32)
    listener = Listener((HOST, 0), backlog=BACKLOG)  # the key's challenge is each connection's thread's
    threading.Thread(target=_accept, args=(listener, key, jobs), name="engine-link", daemon=True).start()
    # the project's atomic writer: its temporary file is made owner-only (mkstemp), and so the file
    write_json(Path(runs_dir) / ENGINE_FILE,
               {"address": f"{HOST}:{listener.address[1]}", "key": key.hex(), "pid": os.getpid()})


def _accept(listener: Listener, key: bytes, jobs: SharedEngine) -> None:
    while True:
        try:
            conn = listener.accept()
            threading.Thread(target=_serve, args=(conn, key, jobs), name="engine-call", daemon=True).start()
        except (OSError, RuntimeError):  # out of descriptors or threads: callers wait in the backlog
            time.sleep(ACCEPT_RETRY_S)


def handshake(conn, key: bytes, server: bool) -> None:
    """Both ends prove they hold ``key`` (the engine challenges first), within ``HANDSHAKE_S``: a
    silent or slow peer, on either side, is cut rather than holding a thread for ever.  Raises
    ``AuthenticationError``, or ``OSError``/``EOFError`` for a connection cut or lost."""
    cut = threading.Timer(HANDSHAKE_S, _shut, (conn,))
    cut.start()
    try:
        if server:
            deliver_challenge(conn, key)
            answer_challenge(conn, key)
        else:
            answer_challenge(conn, key)
            deliver_challenge(conn, key)
    finally:
        cut.cancel()


def _shut(conn) -> None:
    """Cut ``conn``'s socket both ways, waking a thread blocked reading it."""
    try:
        with socket.socket(fileno=os.dup(conn.fileno())) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _serve(conn, key: bytes, jobs: SharedEngine) -> None:
    """One caller's connection: the key's challenge first, both ways (nothing is unpickled before
    it), then each ``(method, args)`` answered with ``(True, value)`` or ``(False, exception)``,
    until it closes."""
    with conn:
        try:
            handshake(conn, key, server=True)
        except (AuthenticationError, OSError, EOFError):  # a caller without the key, or one that went
            return
        while True:
            try:
                method, args = conn.recv()
            except (OSError, EOFError):
                return
            try:
                if method not in CALLS:
                    raise AttributeError(f"the engine has no call {method!r}")
                answer = (True, getattr(jobs, method)(*args))
            except Exception as exc:
                answer = (False, exc)
            try:
                conn.send(answer)
            except (OSError, EOFError):
                return


def unlisten(runs_dir) -> None:
    """In the engine's process, leaving: callers stop finding it (those linked are refused)."""
    path = Path(runs_dir) / ENGINE_FILE
    try:
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass


def engine_address(runs_dir) -> tuple[tuple[str, int], bytes, int] | None:
    """``((host, port), key, pid)`` of the runs folder's engine as it wrote them, or ``None``."""
    try:
        found = json.loads((Path(runs_dir) / ENGINE_FILE).read_text(encoding="utf-8"))
        host, _, port = found["address"].rpartition(":")
        return (host, int(port)), bytes.fromhex(found["key"]), int(found["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def connect(runs_dir, config: tuple):
    """A connection to the runs folder's engine, its jobs configured with ``config``: the engine
    there, or one started now (waiting up to :data:`CONNECT_S` for it)."""
    deadline, started = time.monotonic() + CONNECT_S, float("-inf")
    while True:
        found = engine_address(runs_dir)
        if found is not None:
            conn = None
            try:
                conn = Client(found[0])
                handshake(conn, found[1], server=False)
                ask(conn, "configure", config)
                return conn
            except (AuthenticationError, EOFError, OSError):  # an engine leaving or gone (killed):
                if conn is not None:                          # its file stale, its port maybe another's
                    conn.close()
        if time.monotonic() - started >= RESTART_S:
            ensure_engine(runs_dir)  # nothing when an engine holds the folder's lock
            started = time.monotonic()
        if time.monotonic() > deadline:
            raise JobStopped("crashed", "The room's engine did not start; try again in a moment, or "
                                        "ask the person running the server.")
        time.sleep(0.1)


def ask(conn, method: str, args: tuple):
    """One call over ``conn``: its value, or what it raised in the engine."""
    conn.send((method, args))
    ok, value = conn.recv()
    if not ok:
        raise value
    return value


class RemoteEngine:
    """The runs folder's engine, used by an app process through the one interface
    (``core.room.jobs.Jobs``).  A lost link (the engine left, or died) is made again once per
    call, to the engine there or a new one; a second failure is a :class:`JobStopped`."""

    def __init__(self, runs_dir, job_workers: int | None, limit_s: float, max_rss: int | None,
                 abandon_s: float | None, preload: tuple[str, ...], waiting=contextlib.nullcontext) -> None:
        self.runs_dir = Path(runs_dir)
        self._config = (job_workers, limit_s, max_rss, abandon_s, preload)
        self._waiting = waiting         # a context a caller's thread is in while it waits for an answer
        self._idle: list = []           # connections no call uses now, the last used first
        self._lock = threading.Lock()

    def call(self, method: str, *args):
        for attempt in range(2):
            with self._waiting():
                conn = self._take()  # a JobStopped when no engine starts
                try:
                    value = ask(conn, method, args)
                except (ConnectionError, EOFError, OSError):
                    conn.close()
                    self.close()  # the others went with the same engine
                    if attempt:
                        raise JobStopped("crashed", "The room's engine did not answer; try again "
                                                    "in a moment.") from None
                    continue
                except BaseException:
                    self._give_back(conn)  # the call's own error: the connection is fine
                    raise
            self._give_back(conn)
            return value

    def _take(self):
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return connect(self.runs_dir, self._config)

    def _give_back(self, conn) -> None:
        with self._lock:
            if len(self._idle) < IDLE_KEPT:
                self._idle.append(conn)
                return
        conn.close()  # each connection the engine holds is a thread and a descriptor there

    def submit(self, session, key, fn, args: tuple = (), owner=None) -> JobView:
        found = self.call("submit", session, owner, key, None)
        if found is None:
            blob = pickle.dumps((fn, tuple(args)), protocol=pickle.HIGHEST_PROTOCOL)
            found = self.call("submit", session, owner, key, blob)
        return found

    def job(self, key) -> JobView | None:
        return self.call("view", key)

    def cancel(self, session, key=None) -> int:
        return self.call("cancel", session, key)

    def forget(self, key, session=None) -> None:
        self.call("forget", key, session)

    def close(self) -> None:
        """Drop the connections (the engine and its jobs go on for the other processes)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def worker_pids(self) -> list[int]:
        return self.call("worker_pids")
