"""The room's one way to run work off the page: a worker process that its parent starts, feeds,
watches, bounds and kills.  The engine's job workers and GPT workers (``core.room.jobs``), the
probe's one-call children (``core.room.probe``, and ``core.room.limits.this_machine``'s) and a job's
process on a Dask worker (``core.room.dask_jobs.run_watched``) are all this.

A worker is a ``multiprocessing`` process and a pipe: the parent sends ``(seq, fn, args)``; the
worker answers ``("started", seq)``, any number of ``("progress", seq, done, total)`` (what ``fn``
reports with :func:`report_progress`), then ``("done", seq, value)`` or ``("error", seq, exc)``.
What differs between its users is only the *setup* a worker runs once, before any call
(its CPU priority, a memory cap, torch's threads and GPU: ``(function, args)`` pairs of module-level
functions), and how the parent waits: the engine's collector waits on many workers at once
(:attr:`WorkerProcess.conn`, :attr:`WorkerProcess.sentinel`), the probe and a Dask worker's job on
one :func:`call` with a time limit (the latter watching its Dask worker's bounds too: ``watch``).

Why not ``concurrent.futures.ProcessPoolExecutor``: a job must be killable alone (its attendee left,
or it went over a bound) without breaking the calls of other workers, and must send progress while
it runs; a pool does neither.  Why not pebble's ``ProcessPool``, which does kill a task alone: it
sends no progress, watches no worker's memory, sets every worker up alike (a GPT worker's GPU is its
own), and, timed beside the engine, took longer to replace a killed worker and to stop a job past
its time (why: docs/benchmarks.md, "The job engine against a well-kept pool").  Torch-free: the
setup imports torch where a worker needs it.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import time
from multiprocessing.connection import wait as wait_any

from .cpu_policy import die_with_parent

PROGRESS_EVERY_S = 0.1   # a worker sends a call's progress at most this often
WATCH_EVERY_S = 0.1      # how often :func:`call` looks at its caller's bounds while the call runs


class WorkerLost(RuntimeError):
    """The worker process ended during a call (killed, out of memory, crashed)."""


class WorkerProcess:
    """One worker process and the parent's end of its pipe.  ``context``: a ``multiprocessing``
    context (``spawn`` for a fresh interpreter; the job engine's ``forkserver``); ``setup``: the
    ``(function, args)`` pairs the worker runs first, in order."""

    def __init__(self, context, setup: tuple = (), name: str = "room-worker") -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, setup), name=name, daemon=True)
        self.process.start()
        child.close()
        self.progress = (0, 0)   # (done, total) as the call under way last reported it (:meth:`answer`)
        self.hung_up = False     # its end of the pipe closed: the process ended, or is ending

    @property
    def sentinel(self) -> int:
        """Ready when the process has ended (for ``multiprocessing.connection.wait``)."""
        return self.process.sentinel

    def send(self, seq: int, fn, args: tuple) -> None:
        """Ask for ``fn(*args)``; raises what pickling raises, or ``WorkerLost`` for a worker that
        is gone."""
        try:
            self.conn.send((seq, fn, args))
        except (BrokenPipeError, ConnectionResetError, EOFError) as exc:
            raise WorkerLost(self.describe_end()) from exc

    def receive(self) -> tuple | None:
        """The worker's next message; ``None`` once its end of the pipe is closed (it ended:
        :attr:`hung_up`).  A message that does not unpickle here comes as ``("error", None, exc)``."""
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            self.hung_up = True
            return None
        except Exception as exc:
            return ("error", None, exc)

    def answer(self, ready) -> tuple[bool, object] | None:
        """How the call under way ended, read from ``ready`` (what ``multiprocessing.connection.wait``
        returned for :attr:`conn` and :attr:`sentinel`): ``(True, value)``, ``(False, exception)``
        (``WorkerLost`` for a process that ended without its answer), or ``None`` while it runs (a
        ``started`` message is read and passed over, a ``progress`` one kept in :attr:`progress`)."""
        if self.conn in ready:
            message = self.receive()
            if message is None:
                return False, WorkerLost(self.describe_end())
            kind, _, *rest = message
            if kind in ("done", "error"):
                return kind == "done", rest[0]
            if kind == "progress":
                self.progress = tuple(rest)
            return None
        if self.sentinel in ready:
            return False, WorkerLost(self.describe_end())
        return None

    def rss(self) -> int:
        """The process's resident memory in bytes (0 where ``/proc`` does not say)."""
        try:
            with open(f"/proc/{self.process.pid}/statm", "rb") as f:
                return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            return 0

    def describe_end(self) -> str:
        """What the end of a process that stopped answering was, in a sentence."""
        self.process.join(timeout=1)
        code = self.process.exitcode
        if code is not None and code < 0:
            return "The worker process doing it was killed (out of memory?)."
        return f"The worker process doing it ended unexpectedly (exit code {code})."

    def kill(self) -> None:
        self.process.kill()

    def stop(self) -> None:
        """Kill the process if it still runs, collect it and close the pipe."""
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()


def call(fn, args: tuple = (), *, setup: tuple = (), timeout: float, context=None, watch=None):
    """``fn(*args)`` in a fresh worker (``spawn`` unless ``context`` says), set up by ``setup``,
    killed after ``timeout`` seconds (``TimeoutError``), or once ``watch(worker)``, called every
    ``WATCH_EVERY_S`` while it runs (it reads :attr:`WorkerProcess.progress`, its memory), raises;
    returns what ``fn`` returns, raises what it raised, or ``WorkerLost``."""
    worker = WorkerProcess(context or multiprocessing.get_context("spawn"), setup, name="room-call")
    try:
        worker.send(0, fn, args)
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            wait_s = left if watch is None else min(left, WATCH_EVERY_S)
            ready = wait_any([worker.conn, worker.sentinel], timeout=wait_s)
            answer = worker.answer(ready)
            if answer is not None:
                ok, value = answer
                if ok:
                    return value
                raise value
            if watch is not None:
                watch(worker)
        raise TimeoutError(f"{timeout:.0f} s went by")
    finally:
        worker.stop()


# -- inside a worker -------------------------------------------------------------------------------
def cap_address_space(memory: int | None) -> None:
    """A setup step: from now on this process may map at most ``memory`` bytes more than it has
    mapped already (``None``: no cap), so a call that needs more fails with ``MemoryError`` instead
    of pushing the machine into swap or the kernel's out-of-memory killer.  Counted from what is
    mapped, not from zero: a CUDA build of torch maps gigabytes of libraries at its import, which
    an absolute cap fitted to the CPU build left too little room for a sample on the CPU."""
    if memory:
        limit = _mapped_bytes() + memory
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _mapped_bytes() -> int:
    """This process's address space now (Linux's ``/proc/self/statm``; 0 where it is not there)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


_reporting: list = []  # [send(done, total), when progress was last sent], while a call runs here


def report_progress(done: int, total: int) -> None:
    """Tell the parent how far the running call is (a no-op outside a worker: inline work)."""
    if not _reporting:
        return
    send, last = _reporting
    now = time.monotonic()
    if done >= total or now - last >= PROGRESS_EVERY_S:
        send(done, total)
        _reporting[1] = now


def reporting_to(send) -> None:
    """Send the running call's progress with ``send(done, total)`` from now on (``None``: stop)."""
    _reporting[:] = [] if send is None else [send, 0.0]


def _serve(conn, setup: tuple) -> None:
    """A worker's life: die with its parent, run the setup, then each call sent, sending back its
    result or its exception."""
    die_with_parent()
    for function, args in setup:
        function(*args)
    while True:
        try:
            seq, fn, args = conn.recv()
        except (EOFError, OSError):
            return
        conn.send(("started", seq))
        reporting_to(lambda done, total, seq=seq: conn.send(("progress", seq, done, total)))
        try:
            message = ("done", seq, fn(*args))
        except Exception as exc:  # the call's own failure goes back to whoever waits for it
            message = ("error", seq, exc)
        reporting_to(None)
        try:
            conn.send(message)
        except Exception as exc:  # a result or an exception that does not pickle
            conn.send(("error", seq, RuntimeError(f"{type(exc).__name__}: {exc}")))
