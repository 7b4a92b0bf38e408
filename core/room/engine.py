"""The room's engine: ``python -m core.room.engine RUNS_DIR [--dask ADDRESS]``, one process per runs
folder, which owns every job worker and GPT worker of the machine: one queue (``core.room.jobs.JobEngine``)
for the attendees' heavy jobs, on job workers, and their runs' turns (given by
``core.room.scheduler``), on GPT workers, under one CPU policy (``core.room.cpu_policy``: pages
first, then the job an attendee waits for, then GPT turns, which pause while a job waits).

- **Started on demand** by whichever app process needs it first (a heavy job, a Launch, a page that
  lists a queued run: ``core.room.spawn.ensure_engine``), ``streamlit run`` alone or any of
  ``ui.serve``'s processes, which all share it (``core.room.engine_link``).  It takes an exclusive
  ``flock`` on the folder's ``ENGINE_LOCK`` first and exits at once if another engine holds it.
- **Outlives the app**: runs train with no browser open and survive a restart of the server.
- **Exits when idle**: no run queued or training, no job live and nothing asked for ``IDLE_S``,
  counted from the last turn too (a run trains for minutes without a job asked: leaving as it
  ended lost the jobs it kept, which every page then asked for again).
  Leaving, it stops being found (its ``ENGINE_FILE`` goes, and a call that still reaches it is
  refused as a lost link, which the caller makes again to a new engine), releases the lock, then
  looks at the queue once more: a run queued in that moment gets a new engine.
- **One per runs folder, on one machine**: its link listens on loopback.  A room on several
  machines sends its turns to a Dask cluster instead (``--dask``, default
  ``$BPE_EXPLORER_DASK_SCHEDULER``), and its app processes send their jobs there
  (``core.room.dask_jobs``).

Torch-free: torch loads in the GPT workers only.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import sys
import time
from pathlib import Path

from ..runfolder.layout import ENGINE_LOCK, QUEUE_FILE, file_stamp
from ..runfolder.locks import FileLock
from .dask_jobs import RESOURCES_ENV, SCHEDULER_ENV, DaskJobs, parse_resources
from .engine_link import SharedEngine, listen, unlisten
from .scheduler import Scheduler
from .spawn import ensure_engine

IDLE_ENV = "BPE_EXPLORER_ENGINE_IDLE_S"   # seconds, instead of IDLE_S (the tests' engines leave sooner)
IDLE_S = 60.0        # nothing asked, queued or training this long: the engine exits
TURNS_POLL_S = 0.5   # how often the queue is looked at while turns are under way
QUIET_POLL_S = 1.0   # and while none is: a run launched now waits this long at most for its turn
RECHECK_S = 30.0     # a queue found empty is read whole again after this, changed or not


def serve(scheduler: Scheduler, jobs: SharedEngine, idle_s: float = IDLE_S) -> None:
    """Give turns and serve jobs until the engine is idle for ``idle_s`` (the module's docstring).

    While no run takes turns the runs folder is read whole only when its ``QUEUE_FILE`` changed
    (every launch and resume writes it, under the queue lock the engine's reads take too) or
    every ``RECHECK_S``: a room's hundreds of finished runs are not read every second while it
    only pastes."""
    quiet = None  # (the queue file's stamp, when) while no run waits for a turn
    rested = time.monotonic()  # when the last turn ended: the engine stays ``idle_s`` after it too
    while scheduler.runs_dir.is_dir():
        stamp = file_stamp(scheduler.runs_dir / QUEUE_FILE)
        if quiet is None or quiet[0] != stamp or time.monotonic() - quiet[1] > RECHECK_S:
            scheduler.tick()
            if scheduler.in_flight:
                quiet = None
                scheduler.wait(TURNS_POLL_S)
                continue
            if scheduler.has_work():
                quiet = None
            else:
                if quiet is None:
                    scheduler.rest()  # the last turn just ended
                    rested = time.monotonic()
                quiet = (stamp, time.monotonic())
        if quiet is not None and time.monotonic() - rested >= idle_s and jobs.retire(idle_s):
            return
        time.sleep(QUIET_POLL_S)


def more_descriptors(most: int = 65536) -> None:
    """Raise this process's soft limit on open files to its hard one (at most ``most``): every
    connection an app process keeps to the engine is a descriptor and a thread here, and a room
    of several app processes, each calling in bursts, may pass the usual soft limit of 1,024."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = most if hard == resource.RLIM_INFINITY else min(hard, most)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        except (ValueError, OSError):
            pass


def _turns_queue(jobs: SharedEngine, address: str | None, resources: str | None):
    """Where turns go: this engine's queue, or a Dask cluster's (``address``)."""
    if not address:
        return jobs.engine
    return DaskJobs(address, resources=parse_resources(resources))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m core.room.engine",
                                description="Serve RUNS_DIR's heavy jobs and give its runs turns.")
    p.add_argument("runs_dir")
    p.add_argument("--dask", default=os.environ.get(SCHEDULER_ENV),
                   help=f"the address of a Dask cluster's scheduler: train on its Dask workers (default: "
                        f"${SCHEDULER_ENV}; none: GPT workers here)")
    p.add_argument("--dask-resources", default=os.environ.get(RESOURCES_ENV),
                   help="what one turn takes from a Dask worker, e.g. GPU=1")
    args = p.parse_args(argv)
    runs_dir = Path(args.runs_dir).resolve()
    lock = FileLock(runs_dir / ENGINE_LOCK)
    if not lock.acquire():
        return 0  # another engine serves this folder
    more_descriptors()
    jobs_waiting = multiprocessing.get_context("spawn").Event()
    jobs = SharedEngine(jobs_waiting)
    scheduler = Scheduler(runs_dir, _turns_queue(jobs, args.dask, args.dask_resources))
    listen(jobs, runs_dir)
    try:
        serve(scheduler, jobs, float(os.environ.get(IDLE_ENV) or IDLE_S))
    finally:
        unlisten(runs_dir)
        jobs.close()
        if scheduler.jobs is not jobs.engine:
            scheduler.jobs.close()
        lock.release()
    if runs_dir.is_dir() and scheduler.has_work():
        ensure_engine(runs_dir)  # a run queued while this engine was leaving
    return 0


if __name__ == "__main__":
    from core.room.engine import main as real_main  # its link's objects pickle by the module's name

    code = real_main()
    sys.stdout.flush()
    os._exit(code)  # the link's serving threads are not daemons: leave without them
