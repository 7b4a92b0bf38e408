"""The room's job engine against a well-kept process pool, timed in the same run on what a room
asks of it: pebble's ``ProcessPool`` (per-task time limits, a running task killed on cancel), the
library issue 48 names.  Both with one worker process from a fork server, warm; each case repeated,
medians:

- a small job's answer (the engine's floor for every job a page sends it);
- 8 MB of text in, its length out (a large paste's copy into the worker);
- a running job cancelled (its attendee left), then the next job's answer (a worker killed and a
  fresh one started in its place);
- a job past its time limit: how long after the limit its caller learns it.

    python bench/bench_worker_pool.py [--repeat 30] [--mb 8]

Needs pebble (the ``bench`` extra: ``pip install -e .[bench]``).  What the engine does and pebble
does not (a job's progress while it runs, a memory bound per worker, the fairest job first rather
than the oldest, sharing one job between those who ask for the same) is the engine's reason to be
and is not timed here: the question is what keeping our own costs in the work both do.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
from concurrent.futures import CancelledError
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.room.jobs import JobEngine, JobState, JobStopped  # noqa: E402

LIMIT_S = 0.5  # the time-limit case's bound, short so that its repeats take seconds


def length(text: str) -> int:
    return len(text)


def forever() -> None:
    time.sleep(3600)


class Ours:
    """The room's :class:`JobEngine` as the engine process runs it, one job worker."""

    name = "the room's JobEngine"

    def __init__(self, limit_s: float = 120.0) -> None:
        self.engine = JobEngine(job_workers=1, limit_s=limit_s, idle_s=600.0)
        self.count = 0

    def submit(self, fn, args: tuple = ()):
        self.count += 1
        return self.engine.submit("bench", ("bench", self.count), fn, args)

    def answer(self, job):
        value = job.result()
        self.engine.forget(job.key)
        return value

    def running(self, job) -> bool:
        return job.state is JobState.RUNNING and job.started is not None

    def cancel(self, job) -> None:
        self.engine.cancel("bench", job.key)

    def close(self) -> None:
        self.engine.close()


class Pebble:
    """pebble's ``ProcessPool``, one worker, the same start method."""

    name = "pebble's ProcessPool"

    def __init__(self, limit_s: float | None = None) -> None:
        from pebble import ProcessPool

        self.pool = ProcessPool(max_workers=1, context=multiprocessing.get_context("forkserver"))
        self.limit_s = limit_s

    def submit(self, fn, args: tuple = ()):
        return self.pool.schedule(fn, args, timeout=self.limit_s)

    def answer(self, future):
        return future.result()

    def running(self, future) -> bool:
        return future.running()

    def cancel(self, future) -> None:
        future.cancel()

    def close(self) -> None:
        self.pool.stop()
        self.pool.join()


def median_ms(times: list[float]) -> float:
    return 1000 * statistics.median(times)


def answers(pool, args: tuple, repeat: int) -> float:
    pool.answer(pool.submit(length, args))  # the worker started and warm
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        pool.answer(pool.submit(length, args))
        times.append(time.perf_counter() - began)
    return median_ms(times)


def cancel_then_next(pool, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        job = pool.submit(forever)
        while not pool.running(job):
            time.sleep(0.005)
        began = time.perf_counter()
        pool.cancel(job)
        pool.answer(pool.submit(length, ("next",)))
        times.append(time.perf_counter() - began)
    return median_ms(times)


def past_limit(pool, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        try:
            pool.answer(pool.submit(forever))
        except (JobStopped, TimeoutError, CancelledError):
            times.append(time.perf_counter() - began - LIMIT_S)
    return median_ms(times)


def cases(kind, repeat: int, text: str) -> list[float]:
    pool = kind()
    try:
        row = [answers(pool, ("small",), repeat), answers(pool, (text,), repeat),
               cancel_then_next(pool, repeat)]
    finally:
        pool.close()
    pool = kind(limit_s=LIMIT_S)
    try:
        return row + [past_limit(pool, min(repeat, 10))]
    finally:
        pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--mb", type=float, default=8.0)
    args = parser.parse_args()
    from bench_server import machine  # here, not above: each new worker runs this module again

    text = "the room's paste " * int(args.mb * 2**20 / 17)
    print(f"machine: {machine()}")
    print(f"medians of {args.repeat} (the time limit's of {min(args.repeat, 10)}), ms")
    print("| pool | small job | 8 MB in | cancel, then the next | past the limit |")
    print("|---|---|---|---|---|")
    for kind in (Ours, Pebble, Ours, Pebble):  # in turn, twice: a drift in the machine shows
        row = cases(kind, args.repeat, text)
        print(f"| {kind.name} | " + " | ".join(f"{ms:,.1f}" for ms in row) + " |", flush=True)


if __name__ == "__main__":
    main()
