"""Jobs for tests/room/test_jobs.py, importable by name in a worker process.  Each leaves a trace
the test can read (a line in a file) rather than a timing."""

from __future__ import annotations

import mmap
import os
import time
from pathlib import Path

from core.room.worker_process import report_progress


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


def forever_in(path: str) -> None:
    """:func:`forever`, in a process whose id it records in ``path`` first."""
    record(path, str(os.getpid()))
    forever()


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


_kept: list = []


def map_megabytes(megabytes: int) -> None:
    """A setup step: map ``megabytes`` of address space and keep it, untouched, as a large
    library's import does (it counts against an address-space cap, not against memory in use)."""
    _kept.append(mmap.mmap(-1, megabytes * 2**20))


def written(megabytes: int) -> int:
    """Write ``megabytes`` of memory; its size in bytes."""
    return len(b"x" * (megabytes * 2**20))


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


def remote_client(where: str, dask: bool, session: str, owner: str, jobs: list, out: str) -> None:
    """Another app process, of this machine or of another host: submit ``jobs`` (``(key, fn,
    args)``) to the engine of the runs folder ``where`` (or, with ``dask``, to the Dask cluster at
    that address) as ``session`` of ``owner``, say so in ``out.asked``, wait for each and write their
    results to ``out``."""
    from core.room.dask_jobs import DaskJobs
    from core.room.engine_link import RemoteEngine

    engine = DaskJobs(where) if dask else RemoteEngine(
        where, job_workers=2, limit_s=120.0, max_rss=None, abandon_s=None, preload=())
    for key, fn, args in jobs:
        engine.submit(session, key, fn, args, owner=owner)
    Path(out + ".asked").touch()
    results = []
    for key, _, _ in jobs:
        job = engine.job(key)
        while not job.done:
            time.sleep(0.02)
            job = engine.job(key)
        results.append(repr(job.result()))
    Path(out).write_text("\n".join(results), encoding="utf-8")


def launch_on_host(address: str, runs_dir: str, owner: str, steps: int) -> None:
    """Another host of the room: launch a run whose turns go to the Dask cluster at ``address``."""
    os.environ["BPE_EXPLORER_DASK_SCHEDULER"] = address
    from core.room.runs import launch_run
    from core.settings import ServerSettings
    from tests.training_data import TEXT, tiny_config

    launch_run(tiny_config(max_steps=steps, eval_interval=500, log_interval=10), "from-host-a",
               runs_dir, owner=owner, text=TEXT, settings=ServerSettings())


def dies() -> None:
    """Be killed as the kernel's out-of-memory killer kills."""
    import signal

    os.kill(os.getpid(), signal.SIGKILL)


def hangs_up() -> None:
    """Close this worker's pipe to the engine and live on: what a killed worker's pipe reads as
    while its process is still dying."""
    os.closerange(3, 4096)
    time.sleep(3600)
