"""The room's heavy work, off the web server's threads, in one queue: a :class:`JobEngine` runs
jobs (training a tokenizer on a pasted corpus, encoding it, building a page's data) in a few job
worker processes, fair between the attendees who asked (their owners: one person's tabs count as
one), shared when two ask for the same thing, and bounded; and the GPT runs' turns, which the
runs folder's scheduler submits to the same queue (``core.room.scheduler``), on GPT worker
processes.  It lives in the runs folder's engine process (``core.room.engine``), which every app
process of the machine reaches (``core.room.engine_link``).

Why processes: a page's script runs on a thread of the one server process, so a long training
there holds the GIL and every other attendee's page waits behind it.  A job worker process holds its
own GIL, runs only on CPU time nobody else wants (``core.room.cpu_policy.run_only_when_idle``), ends
with the engine, and can be killed when its job is cancelled or goes over a bound, then replaced;
the server only reads results.

- **Fair**: the next free job worker takes the oldest queued job of the owner with the fewest jobs
  running, then the one served least recently; with two or more job workers an owner runs at most
  ``job_workers - 1`` jobs at once, so a job worker is left for somebody else's job.  A job counts for
  the owner of the first session still asking for it (a session is a tab; its owner the person).
- **Shared**: jobs have keys; a second submit of a queued, running or recently finished key joins
  that job (``keep`` finished jobs, for ``keep_s`` seconds: failures too, so a job that overran
  its time is not started again by every rerun of a page).
- **Cancelled**: :meth:`JobEngine.cancel` takes a session off a job (or all of a session's jobs);
  a job no session asks for any more is dropped from the queue or its job worker killed and replaced.  A job
  nobody asked about (:meth:`Job.touch`) for ``abandon_s`` seconds is cancelled the same way: its
  attendee left.
- **Bounded**: a job over its time (``limit_s``) or a job worker over ``max_rss`` bytes of memory is
  killed and the job ends with :class:`JobStopped`, whose message says which bound.
- **Progress**: a job's function calls ``core.room.worker_process.report_progress`` (``done``,
  ``total``), and a collector thread in the engine keeps the last on the job (``Job.progress``).
- **First in the engine's policy**: while a job waits or runs, ``jobs_waiting`` is set, and the
  GPT workers pause their turns at their next step (``core.room.cpu_policy``).
- **GPT turns** (``submit(..., gpt_turn=True)``) go to the GPT workers only, in the order the
  scheduler gave them (``core.room.turns`` decides whose turn it is, fairly between owners, before
  it submits one): no time bound (a turn ends itself after ``core.room.limits.TURN_S``), nobody to
  abandon or cancel it.  A GPT worker is a fresh interpreter with torch, its threads and its GPU
  (``core.room.gpt_workers.start_gpt_process``), long-lived, so that it keeps the runs it trained
  in memory; :meth:`JobEngine.set_gpt_workers` says how many, from the server's caps.

Small work should not come here (:data:`INLINE_BELOW`): a job costs copying its input and its
result between processes, and a page that polls for it (every half second) before the result
shows, while a small corpus trains its merges on the page's own thread in less, with no progress
bar flashing by (why: docs/benchmarks.md, "A room that does not behave").  So callers run small
work inline and only large work here.

Torch-free and Streamlit-free: a job worker is a ``core.room.worker_process.WorkerProcess``, started
with the ``forkserver`` method (``spawn`` where there is none), never by forking the threaded engine,
which can deadlock the child on a lock another thread held.  A job's function and its arguments
must be picklable (a module-level function).
"""

from __future__ import annotations

import enum
import itertools
import logging
import multiprocessing
import pickle
import threading
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from multiprocessing.connection import wait as wait_any
from typing import Protocol, runtime_checkable

from .cpu_policy import give_way_to, run_only_when_idle
from .gpt_workers import gpu_for, start_gpt_process
from .limits import cpu_cores
from .worker_process import WorkerLost, WorkerProcess

# characters: a corpus below this is trained on the page's thread; the built-in samples (the
# Python docs sample is 200,000 characters, the default a room opens on) stay below it
INLINE_BELOW = 256_000
DEFAULT_LIMIT_S = 120.0        # a job's time, unless the engine is given another (the server's job_time_s)
TICK_S = 0.1                   # how often the collector checks the bounds while a job is live
IDLE_S = 60.0                  # a job worker idle this long is stopped
RETRY_S = 1.0                  # the collector's pause after a failed tick: a lasting fault is no tight loop
SERVED_KEPT = 1000             # owners whose last service is remembered, beyond those with live jobs
_LOG = logging.getLogger(__name__)


def default_job_workers() -> int:
    """Job workers for this machine: one core stays for the web server (at least one)."""
    return max(1, cpu_cores() - 1)


class JobState(enum.Enum):
    """Where a job is (not a GPT run's status: ``core.runfolder.status`` owns those words)."""

    QUEUED = enum.auto()
    RUNNING = enum.auto()
    DONE = enum.auto()       # a result
    FAILED = enum.auto()     # the function raised, or a bound stopped it
    CANCELLED = enum.auto()  # nobody wanted it any more


class JobHandle(Protocol):
    """What a caller reads of a job or a GPT turn, whichever engine runs it
    (``core.room.engine_link.JobView``, ``core.room.dask_jobs.DaskJob``; :class:`Job` inside the
    engine)."""

    key: object
    submitted: float    # time.monotonic() when it was first asked for

    @property
    def done(self) -> bool: ...

    @property
    def state(self) -> JobState: ...

    @property
    def progress(self) -> tuple[int, int]: ...

    def result(self): ...


@runtime_checkable
class Jobs(Protocol):
    """The one interface a page's plumbing knows (``ui.plumbing.heavy_jobs``), with two
    implementations: the machine's engine (``core.room.engine_link.RemoteEngine``) and a Dask
    cluster's (``core.room.dask_jobs.DaskJobs``).  :class:`JobEngine`, inside the engine, offers it
    too."""

    def submit(self, session, key, fn, args: tuple = (), owner=None) -> JobHandle:
        """The job for ``key``, ``session`` joining it if it is queued, running or kept, else a new
        one running ``fn(*args)``; ``owner`` is whose share it counts in."""

    def job(self, key) -> JobHandle | None: ...

    def cancel(self, session, key=None) -> int:
        """Take ``session`` off ``key``'s job (or all of its jobs); a job nobody asks for goes."""

    def forget(self, key, session=None) -> None:
        """Take ``session`` off a finished job, whose result it has read and keeps in a cache of
        its own; the job goes once no session of it is left (``None``: at once, whoever asked)."""

    def worker_pids(self) -> list[int]: ...

    def close(self) -> None: ...


@runtime_checkable
class TurnQueue(Jobs, Protocol):
    """The same queue as the engine's scheduler uses it for GPT turns, which it submits with
    ``submit(..., gpt_turn=True)``: :class:`JobEngine` on this machine, and a Dask cluster's
    (``core.room.dask_jobs.DaskJobs``).  The app processes never submit turns."""

    def set_gpt_workers(self, count: int, threads: int, gpus: int) -> int:
        """The server's caps for GPT turns (``count`` at once, ``threads`` torch threads each, over
        ``gpus`` GPUs); how many turns may run at once (a cluster's own count on Dask)."""


class JobStopped(RuntimeError):
    """A job that ended without its function's answer; ``reason`` is ``"time"``, ``"memory"``,
    ``"cancelled"`` or ``"crashed"`` and the message says what happened."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason

    def __reduce__(self):  # it crosses processes (``core.room.engine_link``) with both its arguments
        return type(self), (self.reason, str(self))


def take_off(jobs, session, key=None) -> list:
    """Take ``session`` off its job for ``key`` among ``jobs`` (``None``: off all its jobs); the
    jobs it left without a session, which nobody asks for any more."""
    taken = [j for j in jobs if session in j.sessions and (key is None or j.key == key)]
    for job in taken:
        del job.sessions[session]
    return [j for j in taken if not j.sessions]


@dataclass(eq=False)
class Job:
    """One piece of work and what is known about it; read it from any thread."""

    key: object
    fn: object
    args: tuple
    limit_s: float | None                        # None: no time bound (a GPT turn)
    gpt_turn: bool = False                       # run by a GPT worker, not a job worker
    sessions: dict = field(default_factory=dict)   # session -> its owner, in the order they asked
    state: JobState = JobState.QUEUED
    progress: tuple[int, int] = (0, 0)           # (done, total) as the job last reported it
    result_value: object = None
    error: BaseException | None = None
    seq: int = 0
    submitted: float = field(default_factory=time.monotonic)
    started: float | None = None                 # when its job worker began it (its time counts from here)
    ended: float | None = None
    seen: float = field(default_factory=time.monotonic)
    _finished: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def done(self) -> bool:
        return self._finished.is_set()

    @property
    def owner(self):
        """Whose share this job counts in (the owner of the first session still asking for it)."""
        return next(iter(self.sessions.values()), None)

    def touch(self) -> None:
        """Say that somebody still waits for this job (see ``abandon_s``)."""
        self.seen = time.monotonic()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the job ends (or ``timeout``); a caller waiting here asks for it all along."""
        end = None if timeout is None else time.monotonic() + timeout
        while not self._finished.is_set():
            self.touch()
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                return False
            self._finished.wait(TICK_S * 5 if left is None else min(TICK_S * 5, left))
        return True

    def result(self, timeout: float | None = None):
        """The function's return value; raises what it raised, or :class:`JobStopped`."""
        if not self.wait(timeout):
            raise TimeoutError(f"job {self.key!r} is still {self.state.name.lower()}")
        if self.error is not None:
            raise self.error
        return self.result_value

    def _end(self, state: JobState, value=None, error: BaseException | None = None) -> None:
        self.state, self.result_value, self.error = state, value, error
        self.fn, self.args, self.ended = None, (), time.monotonic()  # a corpus is not kept with its result
        self._finished.set()


class JobEngine:
    """A pool of up to ``job_workers`` job worker processes (default: :func:`default_job_workers`), and
    of GPT worker processes (:meth:`set_gpt_workers`), started when jobs or turns wait, and the
    collector thread that hands them out and watches them.

    ``limit_s``: a job's time; ``max_rss``: bytes a job worker's memory
    may reach while it runs a job (``None``: unwatched); ``abandon_s``: cancel a job nobody
    touched for that long (``None``: never); ``idle_s``: stop a job worker idle that long (started
    again when a job comes); ``preload``: modules the fork server imports once,
    so that each job worker starts with them (the jobs' own modules); ``jobs_waiting``: a
    ``multiprocessing`` event set while jobs wait or run, which the engine's GPT turns give way to
    (``core.room.cpu_policy``)."""

    def __init__(self, job_workers: int | None = None, limit_s: float = DEFAULT_LIMIT_S,
                 max_rss: int | None = None, abandon_s: float | None = None, keep: int = 32,
                 keep_s: float = 600.0, idle_s: float = IDLE_S, preload: tuple[str, ...] = (),
                 jobs_waiting=None) -> None:
        self.size = job_workers or default_job_workers()
        self.limit_s, self.max_rss, self.abandon_s = limit_s, max_rss, abandon_s
        self.keep, self.keep_s, self.idle_s = keep, keep_s, idle_s
        methods = multiprocessing.get_all_start_methods()
        self._context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        self._preload(preload)
        self._lock = threading.RLock()
        self._queue: list[Job] = []                    # submit order
        self._live: dict[object, Job] = {}             # key -> queued or running job
        self._kept: OrderedDict[object, Job] = OrderedDict()  # key -> finished job, oldest first
        self._served: dict[object, float] = {}         # owner -> when a job of theirs last started
        self._workers: list[_Worker] = []
        self._seq = itertools.count()
        self._wake_r, self._wake_w = multiprocessing.Pipe(duplex=False)
        self._thread: threading.Thread | None = None
        self._closed = False
        self._jobs_waiting = jobs_waiting
        self._gpt = (0, 1, 0)   # GPT workers: how many, torch threads each, GPUs (set_gpt_workers)

    # -- what callers use ------------------------------------------------------------------------
    def submit(self, session, key, fn, args: tuple = (), owner=None, gpt_turn: bool = False) -> Job:
        """The job for ``key``: the one queued, running or kept for it (``session`` joins it), or a
        new one running ``fn(*args)`` within the engine's ``limit_s`` seconds (a GPT turn,
        ``gpt_turn``, within none).  ``owner``: whose share the session's jobs count in (default:
        the session's own)."""
        with self._lock:
            if self._closed:
                raise RuntimeError("this job engine is closed")
            if (self._live.get(key) or self._kept_job(key)) is None:
                limit_s = None if gpt_turn else self.limit_s
                job = Job(key, fn, tuple(args), limit_s, gpt_turn, seq=next(self._seq))
                self._live[key] = job
                self._queue.append(job)
            job = self.join(session, key, owner)
            self._start()
        self._wake()
        return job

    def join(self, session, key, owner=None) -> Job | None:
        """The job queued, running or kept for ``key`` with ``session`` joined to it (see
        :meth:`submit`), or ``None`` when there is none."""
        with self._lock:
            job = self._live.get(key) or self._kept_job(key)
            if job is not None:
                job.sessions.setdefault(session, session if owner is None else owner)
                job.touch()
        return job

    def job(self, key) -> Job | None:
        """The job queued, running or kept for ``key``, if any (touched)."""
        with self._lock:
            job = self._live.get(key) or self._kept_job(key)
        if job is not None:
            job.touch()
        return job

    def cancel(self, session, key=None) -> int:
        """Take ``session`` off its job for ``key`` (``None``: off all its jobs); a job left without
        sessions is cancelled (a finished one forgotten).  Returns how many jobs were cancelled."""
        with self._lock:
            ended = take_off(self._live.values(), session, key)
            for job in ended:
                self._stop(job, JobStopped("cancelled", "Cancelled: nobody asks for it any more."))
            for job in take_off(list(self._kept.values()), session, key):  # finished: nobody will read it
                del self._kept[job.key]
        self._wake()
        return len(ended)

    def forget(self, key, session=None) -> None:
        """Take ``session`` off the finished job kept for ``key`` (it keeps the result elsewhere);
        the job goes once no session asking for it is left, so a session of another app process
        still waiting for it finds it done, not gone (``None``: it goes at once)."""
        with self._lock:
            job = self._kept.get(key)
            if job is not None and session is not None:
                job.sessions.pop(session, None)
            if job is not None and (session is None or not job.sessions):
                del self._kept[key]

    def worker_pids(self) -> list[int]:
        with self._lock:
            return [w.process.pid for w in self._workers]

    def busy(self) -> bool:
        """Whether a job waits or runs."""
        with self._lock:
            return bool(self._live)

    def resize(self, job_workers: int | None, limit_s: float, max_rss: int | None,
               abandon_s: float | None, preload: tuple[str, ...]) -> None:
        """New bounds for the jobs from now on (job workers beyond ``job_workers`` stop when idle),
        and the modules to preload, until the fork server starts."""
        with self._lock:
            self.size = job_workers or default_job_workers()
            self.limit_s, self.max_rss, self.abandon_s = limit_s, max_rss, abandon_s
            self._preload(preload)

    def _preload(self, modules: tuple[str, ...]) -> None:
        """The fork server imports these once, and each job worker forked from it starts with them.
        Not the main module, though it is listed: Python 3.11 and 3.12 never preload it (CPython
        gh-126631), so each new job worker runs it again as ``__mp_main__``.  The engine's own
        (``core.room.engine``) imports little beyond these; a script that runs a :class:`JobEngine`
        guards its work under ``if __name__ == "__main__"`` and keeps heavy imports off its module
        level (``bench/bench_worker_pool.py``)."""
        if self._context.get_start_method() == "forkserver":
            self._context.set_forkserver_preload(["__main__", __name__, *modules])

    def set_gpt_workers(self, count: int, threads: int, gpus: int) -> int:
        """The server's caps for GPT turns, read by the scheduler before it gives turns: ``count``
        GPT workers, ``threads`` torch threads each, over ``gpus`` GPUs (:func:`gpu_for`).  Idle
        GPT workers beyond ``count`` or set up for other caps stop (busy ones once their turn
        ends); ``count`` 0 stops them all, and torch's memory goes with them.  Returns ``count``."""
        with self._lock:
            changed, self._gpt = self._gpt != (count, threads, gpus), (count, threads, gpus)
        if changed and self._thread is not None:
            self._wake()
        return count

    def close(self) -> None:
        """Cancel every job and stop the job workers (an engine is not used after this)."""
        with self._lock:
            self._closed = True
            for job in list(self._live.values()):
                self._stop(job, JobStopped("cancelled", "Cancelled: the server is stopping."))
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout=10)
        for worker in self._workers:
            worker.stop()
        self._workers.clear()
        self._mark(False)

    # -- the collector thread ----------------------------------------------------------------------
    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="room-jobs", daemon=True)
            self._thread.start()

    def _wake(self) -> None:
        self._wake_w.send_bytes(b"")

    def _loop(self) -> None:
        """Hand out jobs, read the job workers' messages, replace dead job workers, enforce the bounds."""
        while not self._closed:
            try:
                self._tick()
            except Exception:  # never let one bad message stop the room's jobs
                _LOG.exception("the job engine's collector failed; it carries on")
                time.sleep(RETRY_S)

    def _tick(self) -> None:
        with self._lock:
            self._replace_dead()
            self._retire_idle()
            missing = self._missing()
        started = self._start_workers(missing)  # outside the lock: it may take a while
        with self._lock:
            self._workers += started
            handed = self._dispatch()
            timeout = TICK_S if self._live else self.idle_s if self._workers else None
            # a killed worker's pipe reads as ended before the process is gone (a job worker that
            # runs only on idle CPU can take a while to die on a busy machine): its sentinel says
            # when, and waiting on the pipe too would spin the collector until then
            waits = [self._wake_r, *(w.conn for w in self._workers if not w.hung_up)]
            waits += [w.sentinel for w in self._workers]
        for worker, job in handed:  # a big corpus takes a while to send: not under the lock
            error = worker.send_job(job)
            if error is not None:
                with self._lock:
                    self._unsent(worker, job, error)
        for ready in wait_any(waits, timeout=timeout):
            if ready is self._wake_r:
                while self._wake_r.poll():
                    self._wake_r.recv_bytes()
            elif not isinstance(ready, int):
                self._read(ready)
        with self._lock:
            self._enforce_bounds()
            waiting = any(not j.gpt_turn for j in self._live.values())
        self._mark(waiting)

    def _missing(self) -> list[int | None]:
        """The workers to start for what is queued: ``None`` for each job worker, and the numbers
        of the GPT workers (the lowest not running)."""
        jobs = [w for w in self._workers if w.slot is None]
        queued_turns = sum(j.gpt_turn for j in self._queue)
        idle_jobs = sum(w.job is None for w in jobs)
        idle_gpt = sum(w.job is None for w in self._workers if w.slot is not None)
        missing = max(0, min(self.size - len(jobs), len(self._queue) - queued_turns - idle_jobs))
        running = {w.slot for w in self._workers}
        slots = [s for s in range(self._gpt[0]) if s not in running]
        return [None] * missing + slots[:max(0, queued_turns - idle_gpt)]

    def _start_workers(self, slots: list[int | None]) -> list[_Worker]:
        """The workers for ``slots`` (:meth:`_missing`), as many as could start: a machine out of
        processes or file descriptors gets them at a later tick, and none started is lost."""
        started = []
        for slot in slots:
            try:
                started.append(self._new_worker(slot))
            except Exception:
                _LOG.exception("a worker process could not start; the next tick tries again")
                break
        return started

    def _new_worker(self, slot: int | None) -> _Worker:
        if slot is None:
            return _Worker(self._context, ((run_only_when_idle, ()),), "room-job-worker")
        context = multiprocessing.get_context("spawn")  # a fresh interpreter for torch: no forked locks
        return _Worker(context, self._gpt_setup(slot), f"gpt-worker-{slot}", slot)

    def _gpt_setup(self, slot: int) -> tuple:
        _, threads, gpus = self._gpt
        return ((start_gpt_process, (threads, gpu_for(slot, gpus))), (give_way_to, (self._jobs_waiting,)))

    def _mark(self, waiting: bool) -> None:
        """Tell the GPT workers whether an attendee waits for a job."""
        if self._jobs_waiting is not None and waiting != self._jobs_waiting.is_set():
            (self._jobs_waiting.set if waiting else self._jobs_waiting.clear)()

    def _read(self, conn) -> None:
        with self._lock:
            worker = next((w for w in self._workers if w.conn is conn), None)
        message = worker and worker.receive()
        if not message:
            return  # a killed job worker: its sentinel is ready too
        kind, seq, *rest = message
        if seq is None:  # a result that does not unpickle here
            seq = getattr(worker.job, "seq", None)
        with self._lock:
            job = worker.job
            if job is None or job.seq != seq or job.done:
                return
            if kind == "started":  # a fresh job worker's start (imports) is not the job's time
                job.started = time.monotonic()
                return
            if kind == "progress":
                job.progress = tuple(rest)
                return
            worker.job, worker.idle_since = None, time.monotonic()
            self._live.pop(job.key, None)
            if kind == "done":
                job._end(JobState.DONE, value=rest[0])
            else:
                job._end(JobState.FAILED, error=rest[0])
            self._keep(job)

    def _dispatch(self) -> list[tuple[_Worker, Job]]:
        """Give each idle job worker the fairest queued job (see the module's docstring), and each
        idle GPT worker the first queued turn."""
        handed = []
        for worker in self._workers:
            if worker.job is not None:
                continue
            job = self._next_job(gpt=worker.slot is not None)
            if job is None:
                continue
            self._queue.remove(job)
            job.state = JobState.RUNNING
            self._served[job.owner] = time.monotonic()
            worker.job = job
            handed.append((worker, job))
        if len(self._served) > SERVED_KEPT:  # forget owners with nothing live
            owners = {o for j in self._live.values() for o in j.sessions.values()}
            self._served = {o: t for o, t in self._served.items() if o in owners}
        return handed

    def _next_job(self, gpt: bool) -> Job | None:
        queued = [j for j in self._queue if j.gpt_turn == gpt]
        if gpt:
            return queued[0] if queued else None
        running = Counter(w.job.owner for w in self._workers
                          if w.slot is None and w.job is not None and not w.job.done)
        share = max(1, self.size - 1)
        waiting = [j for j in queued if running[j.owner] < share]
        if not waiting:
            return None
        return min(waiting, key=lambda j: (running[j.owner], self._served.get(j.owner, float("-inf")),
                                           j.seq))

    def _unsent(self, worker: _Worker, job: Job, error: BaseException) -> None:
        """A job that could not be sent to its worker ends with ``error`` (a worker that died
        meanwhile: as a crash, which the loop replaces), and is kept like any failed job; its worker,
        if alive, is free again."""
        if worker.job is job:
            worker.job, worker.idle_since = None, time.monotonic()
        if job.done:  # cancelled meanwhile
            return
        self._live.pop(job.key, None)
        if isinstance(error, (WorkerLost, OSError)):
            error = JobStopped("crashed", str(error) or "The worker process doing it ended unexpectedly.")
        job._end(JobState.FAILED, error=error)
        self._keep(job)

    def _enforce_bounds(self) -> None:
        now = time.monotonic()
        for worker in self._workers:
            job = worker.job
            if job is None or job.done:
                continue
            if job.limit_s is not None and job.started is not None and now - job.started > job.limit_s:
                self._stop(job, JobStopped("time", f"It took longer than this server allows "
                                                   f"({job.limit_s:.0f} s, on the CPU time the room's pages "
                                                   f"leave free), so it was stopped."))
            elif self.max_rss is not None and worker.slot is None and worker.rss() > self.max_rss:
                allowed = f"{self.max_rss / 2**20:,.0f} MiB"
                self._stop(job, JobStopped("memory", f"It needed more memory than this server allows "
                                                     f"({allowed}), so it was stopped."))
        if self.abandon_s is not None:
            for job in [j for j in self._live.values() if now - j.seen > self.abandon_s and not j.gpt_turn]:
                self._stop(job, JobStopped("cancelled", "Cancelled: nobody was waiting for it any more."))

    def _stop(self, job: Job, error: JobStopped) -> None:
        """End ``job`` with ``error``: out of the queue, or its job worker killed (replaced by the loop)."""
        self._live.pop(job.key, None)
        if job in self._queue:
            self._queue.remove(job)
        for worker in self._workers:
            if worker.job is job:
                worker.kill()
        job._end(JobState.CANCELLED if error.reason == "cancelled" else JobState.FAILED, error=error)
        if error.reason != "cancelled":
            self._keep(job)

    def _replace_dead(self) -> None:
        for worker in [w for w in self._workers if not w.process.is_alive()]:
            job = worker.job
            worker.stop()
            self._workers.remove(worker)
            if job is not None and not job.done:  # it died by itself (the killed ones ended already)
                # ended and kept as any stopped job: asked again, it says so (a caller that only
                # knows the key would find no job, submit it again, and it would kill the next one)
                self._stop(job, JobStopped("crashed", worker.describe_end()))

    def _retire_idle(self) -> None:
        """Stop the workers idle for ``idle_s``: what a big job left in a job worker's memory goes
        with it, and a room that left holds no processes; and at once those beyond a new size, or
        GPT workers set up for other caps (:meth:`set_gpt_workers`)."""
        now, excess = time.monotonic(), sum(w.slot is None for w in self._workers) - self.size
        for worker in [w for w in self._workers if w.job is None]:
            if worker.slot is None:
                stale, excess = excess > 0, excess - 1
            else:
                stale = worker.slot >= self._gpt[0] or worker.setup != self._gpt_setup(worker.slot)
            if stale or now - worker.idle_since > self.idle_s:
                worker.stop()
                self._workers.remove(worker)

    def _keep(self, job: Job) -> None:
        self._kept[job.key] = job
        self._kept.move_to_end(job.key)
        while len(self._kept) > self.keep:
            self._kept.popitem(last=False)

    def _kept_job(self, key) -> Job | None:
        job = self._kept.get(key)
        if job is not None and time.monotonic() - job.ended > self.keep_s:
            del self._kept[key]
            return None
        return job


class _Worker(WorkerProcess):
    """A worker process of the engine, set up by ``setup``, and the job it runs now: a job worker
    (at idle priority), or GPT worker number ``slot``."""

    def __init__(self, context, setup: tuple, name: str, slot: int | None = None) -> None:
        super().__init__(context, setup, name=name)
        self.setup, self.slot = setup, slot
        self.job: Job | None = None
        self.idle_since = time.monotonic()

    def send_job(self, job: Job) -> BaseException | None:
        """Send ``job``; what stopped it, if anything: a function or arguments that do not pickle
        (nothing was written), or a worker killed meanwhile."""
        try:
            self.send(job.seq, job.fn, job.args)
        except (WorkerLost, OSError, pickle.PicklingError, AttributeError, TypeError) as exc:
            return exc
        return None
