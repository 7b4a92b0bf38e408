"""The room's one CPU policy, by rank: the pages (the app processes' threads); then the job an
attendee waits for at a progress bar (a job worker: :func:`run_only_when_idle`, CPU nobody else
wants); then a GPT run's turn, which gives way to such a job at its next step
(:func:`give_way_to_jobs`) and is niced besides (:func:`yield_cpu_to_server`).  A job worker alone
would get only what the GPT workers leave, which on a machine full of runs is nothing until its
time bound ends it.  The engine (``core.room.engine``) owns both kinds of worker, so the policy is
an event it holds (``jobs_waiting``), set by its job engine and read by its GPT workers: no file,
no polling across processes.

Torch-free: each function here is a worker's setup step or runs between its steps.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time

# Torch's CPU threads (OpenMP) spin while they wait for each other, so on cores shared with anything
# else (the web server, another run, anyone's work) a thread whose core was taken keeps the others
# spinning: beside one busy process a step took many times its time, and a time nobody could
# estimate; with passive waiting it is steady (why: docs/benchmarks.md, "Time-per-step
# estimate").  The GPT workers and probes (core.room.gpt_workers.start_gpt_process) and the
# engine (core.room.spawn) get this environment, unless the server's own sets it.
CPU_SHARING_ENV = {"OMP_WAIT_POLICY": "PASSIVE"}

# GPT workers and the step-time probe run below the web server's CPU priority (a sample, which
# somebody waits for, runs at the server's), so a server kept busy by a whole room serves its pages
# before training steps; a run gives way only while the server works (on idle cores niceness
# changes nothing).  With two runs on 2 cores pages opened as fast niced or not, the kernel already
# favouring a server that sleeps between requests: insurance, not a measured gain (why:
# docs/benchmarks.md, "Pages while runs fill the cores").
BACKGROUND_NICENESS = 10
GIVE_WAY_POLL_S = 0.05   # how often a turn that gives way looks again

_jobs_waiting: list = []  # in a GPT worker of the engine: its event (see give_way_to)


def yield_cpu_to_server() -> None:
    """Lower this process's CPU priority by ``BACKGROUND_NICENESS`` (a no-op where the OS has no
    niceness, such as Windows)."""
    try:
        os.nice(BACKGROUND_NICENESS)
    except (AttributeError, OSError):
        pass


def run_only_when_idle() -> None:
    """Run only on CPU time nobody else wants (Linux's ``SCHED_IDLE``; elsewhere niced as
    :func:`yield_cpu_to_server`): for the room's heavy jobs, which an attendee waits for with a
    progress bar, while the room's pages and the browsers beside them must not wait at all.

    In the hostile room, calm page runs and fresh tabs did better beside idle-only jobs than beside
    jobs niced by 10 (why: docs/benchmarks.md, "A room that does not behave").  On a machine the
    room keeps busy a job waits: its time bound (``core.room.jobs``) then ends it with a message."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        yield_cpu_to_server()


def give_way_to(jobs_waiting) -> None:
    """A GPT worker's setup step: its turns give way while ``jobs_waiting`` (a ``multiprocessing``
    event of the engine) is set.  A Dask worker has none: its cluster's priorities rank its work."""
    _jobs_waiting[:] = [] if jobs_waiting is None else [jobs_waiting]


def give_way_to_jobs(until: float) -> None:
    """Before a GPT run's step: sleep while an attendee waits for a job, until ``time.monotonic()``
    reaches ``until`` (the turn's end: the turn then ends as it would have)."""
    if not _jobs_waiting:
        return
    waiting = _jobs_waiting[0]
    while time.monotonic() < until and waiting.is_set():
        time.sleep(GIVE_WAY_POLL_S)


def die_with_parent(signum: int = signal.SIGKILL) -> None:
    """Get ``signum`` when the process that started this one ends (Linux's ``PR_SET_PDEATHSIG``; a
    no-op elsewhere): a worker then never outlives the engine, even one killed outright (a job
    worker's parent, the fork server, ends with the engine), nor an app process its ``ui.serve``
    command."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signum)  # 1: PR_SET_PDEATHSIG
    except (AttributeError, OSError, TypeError):
        pass
