"""The room's heavy jobs and GPT turns on a Dask cluster (the ``dist`` extra: ``pip install -e
.[dist]``), for a room served from several machines: where ``BPE_EXPLORER_DASK_SCHEDULER`` names a
cluster, every app process of every host sends its tokenizer jobs there, and the runs folder's
engine its GPT turns (``core.room.scheduler``), through the same interface as the engine's own
queue (``core.room.jobs.Jobs``):

    dask scheduler --host 10.0.0.1                     # anywhere
    DASK_DISTRIBUTED__WORKER__DAEMON=False \\
        dask worker tcp://10.0.0.1:8786 --nthreads 1 --memory-limit 3GB --resources GPU=1  # per GPU
    BPE_EXPLORER_DASK_SCHEDULER=tcp://10.0.0.1:8786 BPE_EXPLORER_DASK_RESOURCES=GPU=1 \\
        streamlit run streamlit_app.py

What Dask gives, and what is left to it:

- **one result**: a job's Dask key is a digest of its key (:func:`dask_key`), so the same job asked
  from two hosts is one task on Dask's scheduler, computed once, its result shared;
- **bounds**: a job runs in a worker process of its Dask worker (:func:`run_watched`: a Dask
  worker cannot stop a task's thread, but can kill a process), killed past the job's time or its
  Dask worker's ``--memory-limit`` (which its nanny keeps for the Dask worker itself); so Dask
  workers must be able to start processes (``DASK_DISTRIBUTED__WORKER__DAEMON=False``);
- **fairness**: Dask runs the highest priority first among the tasks a Dask worker holds; a job is
  submitted with its owner's count of jobs still waiting here, negated, so on a busy Dask worker
  an owner with many jobs waits behind an owner with one (Dask hands a few tasks to its Dask workers as
  they come, so across a cluster it is no promise: ``tests/room/test_jobs_interface.py``);
- **cancelled**: the last session of this process to let go releases its future; when no client
  of any host wants it, a queued task goes and a running one is killed (Dask marks it cancelled);
- **progress**: the job's :func:`~core.room.worker_process.report_progress` goes out as a Dask event
  (``Worker.log_event``), one topic per job, read back here;
- **GPT turns** run in the Dask worker's own thread (so that it keeps the runs it trained in memory,
  as a GPT worker does), one per unit of ``resources`` (``GPU=1``) or per thread.  The runs folder
  must be on storage every Dask worker mounts at the same path (NFS): a turn reads and writes it.
  A Dask worker that dies during a turn loses nothing: Dask runs the turn again on another, which
  carries on from the run's last checkpoint (its metrics past it dropped first), so no step is lost
  and none logged twice; if Dask gives up on it (``KilledWorker``) the turn is given again later.
  A Dask worker runs under its nanny, which restarts it past its ``--memory-limit``
  (``tests/room/test_dask_workers.py`` starts its Dask workers without one, so that a killed one
  stays dead, as a machine that went away).

Why Dask: the project already counts BPE pairs on it (``core.bpe.dask_counting``); it restarts a
lost task elsewhere, spreads tasks over Dask workers' declared resources, and a job or a turn is one
plain function call, which needs nothing more (Ray's actors or a Celery queue would add a second
engine and keep the same functions).  Dask is imported here only, when a cluster is configured.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import Counter
from concurrent.futures import CancelledError
from dataclasses import dataclass, field

from .jobs import DEFAULT_LIMIT_S, JobState, JobStopped, take_off
from .worker_process import WorkerLost, call

SCHEDULER_ENV = "BPE_EXPLORER_DASK_SCHEDULER"
RESOURCES_ENV = "BPE_EXPLORER_DASK_RESOURCES"  # what one GPT turn takes from a Dask worker (parse_resources)
CONNECT_S = 30      # seconds a host waits for Dask's scheduler before it says it did not answer
KEY_PREFIX = "bpe-job-"
KEEP = 32           # finished jobs whose results this process holds on the cluster, the newest
ABANDON_S = 30.0    # a job nobody here asked about for this long is let go (its attendee left)
FOLLOW_EVERY_S = 0.2  # a job's progress is asked of Dask's scheduler at most this often (a round trip)


def parse_resources(text: str | None) -> dict[str, float] | None:
    """``"GPU=1"`` or ``"GPU=1,MEM=4e9"`` -> ``{"GPU": 1.0, ...}``: what each GPT turn takes from a
    Dask worker (None: a Dask worker thread).

    >>> parse_resources("GPU=1")
    {'GPU': 1.0}
    """
    if not text:
        return None
    resources = {}
    for item in text.split(","):
        name, _, amount = item.partition("=")
        try:
            resources[name.strip()] = float(amount)
        except ValueError:
            raise ValueError(f"Dask resources look like GPU=1, not {item!r}.") from None
    return resources


def dask_key(key) -> str:
    """A job's key as Dask's: the same on every host (``repr`` of strings and numbers)."""
    return KEY_PREFIX + hashlib.sha256(repr(key).encode("utf-8", "surrogatepass")).hexdigest()[:40]


def run_watched(topic: str, limit_s: float, fn, args: tuple):
    """On a Dask worker: ``fn(*args)`` in a worker process of its own (``core.room.worker_process``),
    its progress sent as events on ``topic``, killed when no client wants it any more (the Dask
    worker marks the task cancelled), past ``limit_s`` (counted from the process's start) or past
    the Dask worker's memory limit: a Dask worker cannot stop a task's thread, but a process can be
    killed."""
    import multiprocessing

    from distributed import get_worker

    worker = get_worker()
    if multiprocessing.current_process().daemon:
        raise JobStopped("crashed", "This Dask worker cannot stop a job: start the Dask workers with "
                                    "DASK_DISTRIBUTED__WORKER__DAEMON=False (the README's command).")
    key, memory = worker.get_current_task(), worker.memory_manager.memory_limit
    sent = [(0, 0)]

    def watch(process) -> None:
        if process.progress != sent[0]:
            sent[0] = process.progress
            worker.log_event(topic, process.progress)
        task = worker.state.tasks.get(key)
        if task is None or task.state == "cancelled":
            raise JobStopped("cancelled", "Cancelled: nobody asks for it any more.")
        if memory and process.rss() > memory:
            raise JobStopped("memory", f"It needed more memory than a Dask worker allows "
                                       f"({memory / 2**20:,.0f} MiB), so it was stopped.")
    try:
        return call(fn, args, timeout=limit_s, watch=watch)
    except TimeoutError:
        raise JobStopped("time", f"It took longer than this server allows ({limit_s:.0f} s), so it "
                                 f"was stopped.") from None
    except WorkerLost as exc:
        raise JobStopped("crashed", str(exc)) from None


@dataclass(eq=False)
class DaskJob:
    """One job of this process on the cluster: what ``ui.plumbing.heavy_jobs`` reads of a
    :class:`~core.room.jobs.Job`."""

    key: object
    future: object
    jobs: DaskJobs
    gpt_turn: bool = False
    sessions: dict = field(default_factory=dict)     # session -> owner
    submitted: float = field(default_factory=time.monotonic)
    started: bool = False                # a progress report came back: a Dask worker runs it
    reported: tuple[int, int] = (0, 0)   # the last progress read back from the cluster
    seen: float = field(default_factory=time.monotonic)
    followed: float = 0.0   # when its progress was last asked for

    @property
    def owner(self):
        """Whose share this job counts in (the owner of the first session still asking for it)."""
        return next(iter(self.sessions.values()), None)

    @property
    def state(self) -> JobState:
        if self.future.done():  # Dask's own words for how a future ended
            return JobState.FAILED if self.future.status in ("error", "lost", "cancelled") else JobState.DONE
        self._follow()
        return JobState.RUNNING if self.started else JobState.QUEUED

    @property
    def progress(self) -> tuple[int, int]:
        self._follow()
        return self.reported

    @property
    def done(self) -> bool:
        return self.future.done()

    def _follow(self) -> None:
        """Read the job's progress, once per ``FOLLOW_EVERY_S`` however often a page reads the job."""
        if time.monotonic() - self.followed < FOLLOW_EVERY_S:
            return
        self.followed = time.monotonic()
        events = self.jobs.client.get_events(self.jobs.topic(self.key))
        if events:
            self.reported, self.started = tuple(events[-1][1]), True

    def result(self):
        """The function's value; raises what it raised, or :class:`JobStopped`."""
        try:
            return self.future.result()
        except self.jobs.killed_error:
            raise JobStopped("memory", "The Dask workers running it died, several times (over their "
                                       "memory limit?), so it was stopped.") from None
        except CancelledError:  # released by every host, or lost with the cluster
            raise JobStopped("crashed", "The Dask cluster dropped it; ask again.") from None


class DaskJobs:
    """Jobs and GPT turns on the Dask cluster at ``address``, through the one interface
    (``core.room.jobs.Jobs``); ``resources``: what one GPT turn takes of a Dask worker."""

    def __init__(self, address: str, limit_s: float = DEFAULT_LIMIT_S,
                 resources: dict[str, float] | None = None) -> None:
        from distributed import Client, KilledWorker  # the optional extra: fails here, by name

        self.client = Client(address, timeout=f"{CONNECT_S}s", set_as_default=False)
        self.killed_error = KilledWorker
        self.limit_s, self.resources = limit_s, resources
        self._jobs: dict[object, DaskJob] = {}
        self._lock = threading.Lock()

    @staticmethod
    def topic(key) -> str:
        return "progress-" + dask_key(key)

    def submit(self, session, key, fn, args: tuple = (), owner=None, gpt_turn: bool = False) -> DaskJob:
        owner = session if owner is None else owner
        with self._lock:
            job = self._jobs.get(key)
            if job is None and gpt_turn:
                future = self.client.submit(fn, *args, key=dask_key(key), pure=False,
                                            resources=self.resources)
                job = self._jobs[key] = DaskJob(key, future, self, gpt_turn=True)
            elif job is None:
                waiting = Counter(j.owner for j in self._jobs.values() if not j.future.done())
                future = self.client.submit(run_watched, self.topic(key), self.limit_s, fn, tuple(args),
                                            key=dask_key(key), pure=False, retries=0,
                                            priority=-waiting[owner])
                job = self._jobs[key] = DaskJob(key, future, self)
            job.sessions.setdefault(session, owner)
            job.seen = time.monotonic()
        self._tidy()
        return job

    def job(self, key) -> DaskJob | None:
        with self._lock:
            job = self._jobs.get(key)
            if job is not None:
                job.seen = time.monotonic()
        return job

    def _tidy(self) -> None:
        """Let go of jobs nobody waits for (``ABANDON_S``) and of finished ones beyond ``KEEP``
        (never of a GPT turn: the scheduler forgets each once it has read how it ended)."""
        now = time.monotonic()
        with self._lock:
            jobs = [j for j in self._jobs.values() if not j.gpt_turn]
        abandoned = [j for j in jobs if not j.future.done() and now - j.seen > ABANDON_S]
        finished = [j for j in jobs if j.future.done()]
        for job in abandoned + finished[:max(0, len(finished) - KEEP)]:
            self.forget(job.key)

    def cancel(self, session, key=None) -> int:
        with self._lock:
            ended = [j for j in take_off(self._jobs.values(), session, key) if not j.future.done()]
            for job in ended:  # here, under the lock: a session joining it now gets a new one
                del self._jobs[job.key]
        for job in ended:
            job.future.release()
        return len(ended)

    def forget(self, key, session=None) -> None:
        """Take ``session`` off the job (it read the result); this process lets go of the job once
        none of its sessions asks for it (``None``: at once)."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and session is not None:
                job.sessions.pop(session, None)
            if job is None or (session is not None and job.sessions):
                return
            del self._jobs[key]
        job.future.release()

    def set_gpt_workers(self, count: int, threads: int, gpus: int) -> int:
        """How many GPT turns the cluster's Dask workers hold at once (the server's caps are this
        machine's: the cluster's Dask workers say how many fit): a turn per unit of ``resources``,
        or per Dask worker thread."""
        workers = self.client.scheduler_info(n_workers=-1)["workers"].values()
        if self.resources:
            return sum(min(int(w.get("resources", {}).get(name, 0) // amount)
                           for name, amount in self.resources.items()) for w in workers)
        return sum(w.get("nthreads", 1) for w in workers)

    def worker_pids(self) -> list[int]:
        return []  # the Dask workers are the cluster's, on other machines

    def close(self) -> None:
        self.client.close()
