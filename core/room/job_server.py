"""One job engine for every app process of a machine: ``python -m core.room.job_server --port P``.

``ui.serve --processes N`` runs N app processes, and each used to make its own
:class:`~core.room.jobs.JobEngine`: N times the job workers and their memory, fairness per process,
and the same training done once per process that asked
(why: docs/benchmarks.md, "A room on several app processes").
Here one engine, in a process of its own, takes the jobs of every app process: the machine's
``job_workers`` bound them all, one owner's share is counted over every tab and process of theirs,
and a job asked from two processes runs once.  The supervisor starts it beside the app processes,
restarts it if it dies, and gives them its address and key (:data:`ADDRESS_ENV`, :data:`KEY_ENV`);
``streamlit run`` alone keeps an engine in its own process.

The link is the standard library's ``multiprocessing.managers``: loopback only, and a connection
must prove it holds the key before anything is unpickled.  A job travels as one pickled blob that
this process never opens (:func:`run_blob` opens it in the job worker), and so does its result:
a corpus or a trained tokenizer is copied, not rebuilt, and this process imports nothing of the
jobs' own.
"""

from __future__ import annotations

import argparse
import os
import pickle
import signal
import threading
import time
from dataclasses import dataclass
from multiprocessing.managers import BaseManager

from .jobs import JobEngine, JobState, JobStopped

ADDRESS_ENV = "BPE_EXPLORER_JOB_SERVER"         # host:port of this machine's job server
KEY_ENV = "BPE_EXPLORER_JOB_SERVER_KEY"         # its key, in hex
HOST = "127.0.0.1"
CONNECT_S = 30.0                                # how long a client waits for a (re)starting server


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
    """What an app process sees of a job: plain values, read at one moment."""

    key: object
    state: JobState
    progress: tuple[int, int]
    waited_s: float          # since it was first submitted


class SharedEngine:
    """The engine as the app processes reach it: made by the first ``configure`` (every app
    process of a machine has the same settings), then plain values in and out."""

    def __init__(self) -> None:
        self._engine: JobEngine | None = None
        self._lock = threading.Lock()

    def configure(self, workers: int | None, limit_s: float, max_rss: int | None,
                  abandon_s: float | None, preload: tuple[str, ...], waiting_file=None) -> None:
        with self._lock:
            if self._engine is None:
                self._engine = JobEngine(workers=workers, limit_s=limit_s, max_rss=max_rss,
                                         abandon_s=abandon_s, preload=(__name__, *preload),
                                         waiting_file=waiting_file)

    def submit(self, session, owner, key, blob: bytes | None) -> tuple[JobView, tuple | None] | None:
        """Join the job for ``key``, or start it from ``blob``: its view, and its outcome if it is
        done (read with it: another process may have it forgotten a moment later); ``None`` when
        there is no such job and no ``blob`` (the caller sends it then: a corpus crosses only when
        it is needed)."""
        if blob is None:
            job = self._jobs().join(session, key, owner)
        else:
            job = self._jobs().submit(session, key, run_blob, (blob,), owner=owner)
        return None if job is None else (_view(job), _outcome(job))

    def view(self, key) -> JobView | None:
        job = self._jobs().job(key)
        return None if job is None else _view(job)

    def outcome(self, key) -> tuple[bool, object] | None:
        """:func:`_outcome` of the job kept for ``key``, if any."""
        job = self._jobs().job(key)
        return None if job is None else _outcome(job)

    def cancel(self, session, key=None) -> int:
        return self._jobs().cancel(session, key)

    def forget(self, key) -> None:
        self._jobs().forget(key)

    def close(self) -> None:
        """Drop the link (the machine's job server and its jobs go on for the other processes)."""
        with self._lock:
            self._proxy = None

    def worker_pids(self) -> list[int]:
        return [] if self._engine is None else self._engine.worker_pids()

    def _jobs(self) -> JobEngine:
        if self._engine is None:
            raise RuntimeError("the job server is not configured yet")
        return self._engine

    def _close(self) -> None:  # not a method the app processes can call
        if self._engine is not None:
            self._engine.close()


def _view(job) -> JobView:
    return JobView(job.key, job.state, job.progress, time.monotonic() - job.submitted)


def _outcome(job) -> tuple[bool, object] | None:
    """A finished job's ``(ok, pickled result or exception)``, ``(False, JobStopped)`` for a bound;
    ``None`` while it is not finished."""
    if not job.done:
        return None
    if job.error is not None:
        return False, job.error
    return job.result_value


class _Link(BaseManager):
    """The manager both ends use: the server registers the engine, a client asks for it."""


_served = SharedEngine()
_Link.register("engine", callable=lambda: _served)


def serve(port: int, authkey: bytes) -> None:
    """Serve :data:`_served` on loopback ``port`` until SIGTERM or SIGINT."""
    server = _Link(address=(HOST, port), authkey=authkey).get_server()

    def stop(signum, frame) -> None:
        _served._close()
        os._exit(0)  # the manager's serving threads are not daemons: leave without them

    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, stop)
    server.serve_forever()


def connect(address: str, authkey: bytes):
    """A proxy of the machine's :class:`SharedEngine` at ``host:port`` (waiting up to
    :data:`CONNECT_S` for a server that is starting)."""
    host, _, port = address.rpartition(":")
    link = _Link(address=(host, int(port)), authkey=authkey)
    deadline = time.monotonic() + CONNECT_S
    while True:
        try:
            link.connect()
            return link.engine()
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


class RemoteJob:
    """A job of the machine's engine as one app process sees it: what ``heavy_jobs`` reads of a
    :class:`~core.room.jobs.Job` (``done``, ``state``, ``progress``, ``submitted``, ``result``)."""

    def __init__(self, engine: RemoteEngine, view: JobView, outcome: tuple | None = None) -> None:
        self._engine, self.key, self.state, self.progress = engine, view.key, view.state, view.progress
        self.submitted = time.monotonic() - view.waited_s
        self._outcome = outcome

    @property
    def done(self) -> bool:
        return self.state not in (JobState.QUEUED, JobState.RUNNING)

    def result(self):
        """The function's value; raises what it raised, or :class:`JobStopped`."""
        outcome = self._outcome or self._engine.call("outcome", self.key)
        if outcome is None:
            raise JobStopped("crashed", "Its result is no longer kept on the server; ask again.")
        ok, value = outcome
        if isinstance(value, BaseException):
            raise value
        value = pickle.loads(value)
        if not ok:
            raise value
        return value


class RemoteEngine:
    """The machine's job engine, used like a :class:`~core.room.jobs.JobEngine` by an app process:
    ``submit``, ``job``, ``cancel``, ``forget``, ``worker_pids``.  A lost link (the server was
    restarted) is made again once per call; a second failure is a :class:`JobStopped`."""

    def __init__(self, address: str, authkey: bytes, workers: int | None, limit_s: float,
                 max_rss: int | None, abandon_s: float | None, preload: tuple[str, ...],
                 waiting_file=None) -> None:
        self.address, self._authkey = address, authkey
        self._config = (workers, limit_s, max_rss, abandon_s, preload, waiting_file)
        self._proxy = None
        self._lock = threading.Lock()

    def call(self, method: str, *args):
        for attempt in range(2):
            proxy = self._linked()
            try:
                return getattr(proxy, method)(*args)
            except (ConnectionError, EOFError, OSError):
                with self._lock:
                    self._proxy = None
                if attempt:
                    raise JobStopped("crashed", "The machine's job server did not answer; try again "
                                                "in a moment.") from None

    def _linked(self):
        with self._lock:
            if self._proxy is None:
                proxy = connect(self.address, self._authkey)
                proxy.configure(*self._config)
                self._proxy = proxy
            return self._proxy

    def submit(self, session, key, fn, args: tuple = (), owner=None) -> RemoteJob:
        found = self.call("submit", session, owner, key, None)
        if found is None:
            blob = pickle.dumps((fn, tuple(args)), protocol=pickle.HIGHEST_PROTOCOL)
            found = self.call("submit", session, owner, key, blob)
        return RemoteJob(self, *found)

    def job(self, key) -> RemoteJob | None:
        view = self.call("view", key)
        return None if view is None else RemoteJob(self, view)

    def cancel(self, session, key=None) -> int:
        return self.call("cancel", session, key)

    def forget(self, key) -> None:
        self.call("forget", key)

    def close(self) -> None:
        """Drop the link (the machine's job server and its jobs go on for the other processes)."""
        with self._lock:
            self._proxy = None

    def worker_pids(self) -> list[int]:
        return self.call("worker_pids")


def remote_engine(environ, **config) -> RemoteEngine | None:
    """The machine's engine when ``environ`` names a job server (``ui.serve``), else ``None``."""
    address = environ.get(ADDRESS_ENV)
    if not address:
        return None
    return RemoteEngine(address, bytes.fromhex(environ.get(KEY_ENV, "")), **config)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m core.room.job_server",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True, help="the loopback port to listen on")
    args = parser.parse_args(argv)
    key = os.environ.get(KEY_ENV)
    if not key:
        parser.error(f"set {KEY_ENV} (hex) to the key the app processes are given")
    serve(args.port, bytes.fromhex(key))


if __name__ == "__main__":
    from core.room.job_server import main as real_main  # run_blob must pickle by its module's name
    real_main()
