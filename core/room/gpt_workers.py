"""GPT workers on this machine: the scheduler's ``max_running`` GPT workers, each a long-lived
process that trains one run's turn at a time (``core.room.turn_runner.run_turn``).

Why long-lived processes: a GPT worker imports torch once and keeps the runs it trained in memory, so
changing runs between turns costs a checkpoint; a process per turn would cost more in start and
imports than the turn (``core.room.limits.TURN_S``; why: docs/benchmarks.md, "Training in a room").
Each GPT worker is a ``ProcessPoolExecutor`` of one process: the standard library starts, feeds and
watches it, and a GPT worker that dies (killed, out of memory) breaks only its own pool, so no other
GPT worker's turn is lost with it.  GPT workers run at background priority, with ``cores / max_running``
torch threads each and, on a machine with GPUs, a GPU of their own or shared with
``runs_per_gpu - 1`` others (``gpu_for``).

Torch-free itself: torch is imported in the GPT worker processes only.  The Dask counterpart, with the
same three verbs (``submit``, ``wait``, ``close``), is ``core.room.dask_workers``.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures
from concurrent.futures.process import BrokenProcessPool

from .limits import CPU_SHARING_ENV, yield_cpu_to_server


def gpu_for(worker: int, gpus: int) -> int | None:
    """The GPU worker number ``worker`` uses: the GPT workers spread over the GPUs in turn (with
    2 GPUs and 2 runs per GPU, GPT workers 0-3 use GPUs 0, 1, 0, 1); None without GPUs."""
    return worker % gpus if gpus else None


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


def _start_worker(threads: int, gpu: int | None) -> None:
    """In a new GPT worker process, before torch loads: its GPU, waiting threads that do not spin,
    background priority; then torch and the training code, so the first turn starts at once."""
    if gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = visible_device(gpu)
    for name, value in CPU_SHARING_ENV.items():
        os.environ.setdefault(name, value)
    yield_cpu_to_server()
    import torch

    torch.set_num_threads(threads)
    from . import turn_runner  # noqa: F401  (loaded before the first turn, not during it)


class LocalWorkers:
    """Up to ``count`` GPT worker processes; a turn goes to a free one."""

    lost_errors = (BrokenProcessPool,)   # the GPT worker died during the turn

    def __init__(self) -> None:
        self.count = 1
        self.threads = 1
        self.gpus = 0
        self._pools: dict[int, tuple[ProcessPoolExecutor, tuple]] = {}   # GPT worker -> (pool, setup)
        self._busy: dict[Future, int] = {}

    def _setup(self, worker: int) -> tuple:
        return (self.threads, gpu_for(worker, self.gpus))

    def configure(self, count: int, threads: int, gpus: int) -> None:
        """The server's current caps: idle GPT workers beyond ``count``, or set up for other caps,
        stop (busy ones once their turn ends)."""
        self.count = count
        self.threads = threads
        self.gpus = gpus
        busy = set(self._busy.values())
        for worker, (pool, setup) in list(self._pools.items()):
            if worker not in busy and (worker >= count or setup != self._setup(worker)):
                del self._pools[worker]
                pool.shutdown(wait=True)

    def free(self) -> int:
        return max(0, self.count - len(self._busy))

    def submit(self, fn, *args) -> Future:
        worker = next(t for t in range(self.count) if t not in self._busy.values())
        try:
            future = self._pool(worker).submit(fn, *args)
        except BrokenProcessPool:  # the GPT worker died while idle (killed, out of memory): a new one
            self._pools.pop(worker)[0].shutdown(wait=False, cancel_futures=True)
            future = self._pool(worker).submit(fn, *args)
        self._busy[future] = worker
        return future

    def _pool(self, worker: int) -> ProcessPoolExecutor:
        if worker not in self._pools:
            context = multiprocessing.get_context("spawn")  # a fresh interpreter: no forked locks
            pool = ProcessPoolExecutor(1, mp_context=context, initializer=_start_worker,
                                       initargs=self._setup(worker))
            self._pools[worker] = (pool, self._setup(worker))
        return self._pools[worker][0]

    def wait(self, futures, timeout: float) -> None:
        """Until one of ``futures`` is done, or ``timeout`` seconds."""
        wait_futures(futures, timeout=timeout, return_when=FIRST_COMPLETED)

    def done(self, future: Future, lost: bool) -> None:
        """``future``'s GPT worker is free again (started anew on its next turn when it died)."""
        worker = self._busy.pop(future)
        if lost:
            self._pools.pop(worker)[0].shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop every GPT worker (after the turns under way)."""
        for pool, _ in self._pools.values():
            pool.shutdown(wait=True, cancel_futures=True)
        self._pools.clear()
        self._busy.clear()
