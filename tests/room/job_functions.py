"""Jobs for tests/room/test_jobs.py, importable by name in a worker process.  Each leaves a trace
the test can read (a line in a file) rather than a timing."""

from __future__ import annotations

import os
import time
from pathlib import Path

from core.room.jobs import report_progress


def double(x: int) -> int:
    return 2 * x


def record(path: str, name: str) -> str:
    """Append ``name`` to the file at ``path`` (the order jobs ran in) and return it."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(name + "\n")
    return name


def until_released(path: str, name: str, gate: str) -> str:
    """Record ``name``, then report progress until the file ``gate`` exists."""
    record(path, name)
    done = 0
    while not Path(gate).exists():
        done += 1
        report_progress(done, 10**9)
        time.sleep(0.01)
    return name


def forever() -> None:
    """A job that only a bound or a cancel ends, reporting its progress as it goes."""
    done = 0
    while True:
        done += 1
        report_progress(done, 10**9)
        time.sleep(0.01)


def counted(path: str, steps: int) -> tuple[int, int]:
    """Record one execution (this process's id) in ``path``, report ``steps`` steps, and return
    (steps, pid)."""
    record(path, str(os.getpid()))
    for i in range(steps):
        report_progress(i + 1, steps)
        time.sleep(0.01)
    return steps, os.getpid()


def hog(megabytes: int) -> None:
    """Hold ``megabytes`` of written memory until stopped."""
    held = b"x" * (megabytes * 2**20)
    while held:
        time.sleep(0.01)


def fails(message: str) -> None:
    raise ValueError(message)


def scheduling() -> tuple[int, int]:
    """This worker's CPU scheduling policy and the signal it gets when its parent ends."""
    import ctypes

    signal = ctypes.c_int(0)
    ctypes.CDLL(None).prctl(2, ctypes.byref(signal))  # 2: PR_GET_PDEATHSIG
    return os.sched_getscheduler(0), signal.value


def loaded(names: tuple[str, ...]) -> list[str]:
    """Which of the modules ``names`` this job worker has imported."""
    import sys

    return [name for name in names if name in sys.modules]
