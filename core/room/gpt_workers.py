"""GPT workers on this machine: the engine's ``max_running`` GPT workers, each a long-lived
process that trains one run's turn at a time (``core.room.turn_runner.run_turn``).

Why long-lived processes: a GPT worker imports torch once and keeps the runs it trained in memory, so
changing runs between turns costs a checkpoint; a process per turn would cost more in start and
imports than the turn (``core.room.limits.TURN_S``; why: docs/benchmarks.md, "Training in a room").
Each GPT worker is a ``core.room.worker_process.WorkerProcess`` (a fresh interpreter: ``spawn``), so
one that dies (killed, out of memory) loses only its own turn.  GPT workers run at background
priority, with ``cores / max_running`` torch threads each and, on a machine with GPUs, a GPU of their
own or shared with ``runs_per_gpu - 1`` others (``gpu_for``): :func:`start_gpt_process`, which the
probe's step-time estimate runs too, so that it times a step in a process set up as the run's.

Torch-free itself: torch is imported in the GPT worker processes only.  The Dask counterpart, with the
same three verbs (``submit``, ``wait``, ``close``), is ``core.room.dask_workers``.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
from concurrent.futures import Future
from multiprocessing.connection import wait as wait_any

from .cpu_policy import CPU_SHARING_ENV, give_way_to, yield_cpu_to_server
from .worker_process import WorkerLost, WorkerProcess


def gpu_for(gpt_worker: int, gpus: int) -> int | None:
    """The GPU GPT worker number ``gpt_worker`` uses: the GPT workers spread over the GPUs in turn (with
    2 GPUs and 2 runs per GPU, GPT workers 0-3 use GPUs 0, 1, 0, 1); None without GPUs."""
    return gpt_worker % gpus if gpus else None


def visible_device(gpu: int) -> str:
    """``CUDA_VISIBLE_DEVICES`` for a GPT worker on the server's GPU number ``gpu``: the server's own
    mask, if it was started with one (``2,3``, or MIG UUIDs), names the devices it may use."""
    inherited = [d.strip() for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    return inherited[gpu] if gpu < len(inherited) else str(gpu)


def train_turn(run_dir: str, turn_id: str, seconds: float) -> dict:
    """``core.room.turn_runner.run_turn``, run in a GPT worker: what the scheduler sends (a reference by
    name that it can pass without importing torch itself)."""
    from .turn_runner import run_turn

    return run_turn(run_dir, turn_id, seconds)


def start_gpt_process(threads: int | None, gpu: int | None, background: bool = True,
                      trains: bool = True) -> None:
    """A worker's setup, before torch loads: its GPU, waiting threads that do not spin, background
    priority (unless someone waits for it: ``background=False``); then torch, with ``threads``
    threads (``None``: torch's default), and for a GPT worker (``trains``) the training code, so
    its first turn starts at once."""
    if gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = visible_device(gpu)
    for name, value in CPU_SHARING_ENV.items():
        os.environ.setdefault(name, value)
    if background:
        yield_cpu_to_server()
    import torch

    if threads:
        torch.set_num_threads(threads)
    if trains:
        from . import turn_runner  # noqa: F401  (loaded before the first turn, not during it)


class LocalWorkers:
    """Up to ``count`` GPT worker processes; a turn goes to a free one, and its future is settled
    by :meth:`wait`, which the scheduler calls while turns are under way."""

    lost_errors = (WorkerLost,)   # the GPT worker died during the turn

    def __init__(self, jobs_waiting=None) -> None:
        self.jobs_waiting = jobs_waiting   # the engine's event its turns give way to (cpu_policy)
        self.count = 1
        self.threads = 1
        self.gpus = 0
        self._workers: dict[int, tuple[WorkerProcess, tuple]] = {}   # GPT worker -> (process, setup)
        self._busy: dict[Future, int] = {}
        self._seq = itertools.count()

    def _setup(self, worker: int) -> tuple:
        return ((start_gpt_process, (self.threads, gpu_for(worker, self.gpus))),
                (give_way_to, (self.jobs_waiting,)))

    def configure(self, count: int, threads: int, gpus: int) -> None:
        """The server's current caps: idle GPT workers beyond ``count``, or set up for other caps,
        stop (busy ones once their turn ends)."""
        self.count = count
        self.threads = threads
        self.gpus = gpus
        busy = set(self._busy.values())
        for worker, (process, setup) in list(self._workers.items()):
            if worker not in busy and (worker >= count or setup != self._setup(worker)):
                del self._workers[worker]
                process.stop()

    def free(self) -> int:
        return max(0, self.count - len(self._busy))

    def submit(self, fn, *args) -> Future:
        worker = next(t for t in range(self.count) if t not in self._busy.values())
        future = Future()
        future.set_running_or_notify_cancel()
        try:
            self._process(worker).send(next(self._seq), fn, args)
        except WorkerLost:  # the GPT worker died while idle (killed, out of memory): a new one
            self._workers.pop(worker)[0].stop()
            self._process(worker).send(next(self._seq), fn, args)
        self._busy[future] = worker
        return future

    def _process(self, worker: int) -> WorkerProcess:
        if worker not in self._workers or not self._workers[worker][0].process.is_alive():
            if worker in self._workers:
                self._workers.pop(worker)[0].stop()
            context = multiprocessing.get_context("spawn")  # a fresh interpreter: no forked locks
            process = WorkerProcess(context, self._setup(worker), name=f"gpt-worker-{worker}")
            self._workers[worker] = (process, self._setup(worker))
        return self._workers[worker][0]

    def wait(self, futures, timeout: float) -> None:
        """Until one of ``futures`` is done, or ``timeout`` seconds: reads what the busy GPT workers
        sent and settles their turns' futures (a GPT worker that died: ``WorkerLost``)."""
        busy = {self._workers[self._busy[f]][0]: f for f in futures if not f.done()}
        ready = wait_any([p.conn for p in busy] + [p.sentinel for p in busy], timeout=timeout)
        for process, future in busy.items():
            answer = process.answer(ready)
            if answer is not None:
                ok, value = answer
                if ok:
                    future.set_result(value)
                else:
                    future.set_exception(value)

    def done(self, future: Future, lost: bool) -> None:
        """``future``'s GPT worker is free again (started anew on its next turn when it died)."""
        worker = self._busy.pop(future)
        if lost:
            self._workers.pop(worker)[0].stop()

    def close(self) -> None:
        """Stop every GPT worker (a turn under way is lost: the run takes it again from its last
        checkpoint, ``core.room.turns.reclaim_turns``)."""
        for process, _ in self._workers.values():
            process.stop()
        self._workers.clear()
        self._busy.clear()
