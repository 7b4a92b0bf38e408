"""The queue's worker: ``python -m core.scheduler RUNS_DIR --max-running N [--gpus G]``.

One process per runs folder starts queued runs in first-in-first-out order while fewer than
``max_running`` train, and is the parent of every trainer it starts, so it reaps them as they
end (no ``<defunct>`` processes anywhere: the web server only ever starts this scheduler, and a
thread there collects its exit).

Why a separate process: queued runs must start when a slot frees even with no browser open, and
survive a restart of ``streamlit run``; a thread in the web server would do neither.  Why it is
safe to start one "on demand" from every Launch: it takes an exclusive ``flock`` on
``RUNS_DIR/.scheduler.lock`` first and exits at once if another scheduler holds it.  It exits
by itself when nothing is queued and none of its trainers runs; before exiting it releases the
lock and looks at the queue once more, so a run queued in that moment is never stranded (either
this scheduler sees it and carries on, or the launcher found the lock free and started a new
one).  Every dequeue happens under the runs folder's queue lock (``core.runs``), the same one
Launch, Resume, Stop and Delete take.  Torch is never imported here: the process stays small.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from .locks import FileLock, locked
from .runfiles import write_json
from .runs import QUEUE_LOCK, SCHEDULER_FILE, SCHEDULER_LOCK, queue_state, start_trainer

POLL_S = 0.5


class Scheduler:
    """Starts queued runs of ``runs_dir`` into free slots and reaps the trainers it started."""

    def __init__(self, runs_dir, max_running: int, gpus: int = 0) -> None:
        self.runs_dir = Path(runs_dir)
        self.max_running = max(1, max_running)
        self.gpus = gpus
        self.children: dict[int, tuple[subprocess.Popen, int | None]] = {}  # pid -> (process, gpu)

    def reap(self) -> None:
        for pid, (proc, _) in list(self.children.items()):
            if proc.poll() is not None:
                del self.children[pid]

    def _free_gpu(self) -> int | None:
        """With several GPUs, the first no trainer of ours uses (None: leave the default)."""
        if self.gpus <= 1:
            return None
        used = {gpu for _, gpu in self.children.values()}
        return next((g for g in range(self.gpus) if g not in used), 0)

    def start_queued(self) -> int:
        """Start as many queued runs as there are free slots; returns how many still wait."""
        with locked(self.runs_dir / QUEUE_LOCK):
            training, queued = queue_state(self.runs_dir)
            free = max(0, self.max_running - len(training))
            for run_dir in queued[:free]:
                gpu = self._free_gpu()
                env = {"CUDA_VISIBLE_DEVICES": str(gpu)} if gpu is not None else None
                proc = start_trainer(run_dir, env)
                self.children[proc.pid] = (proc, gpu)
            return len(queued) - min(free, len(queued))

    def run(self, lock: FileLock) -> None:
        """Loop until nothing is queued and no trainer of ours runs (``lock`` is held)."""
        while True:
            self.reap()
            waiting = self.start_queued()
            if not waiting and not self.children:
                lock.release()
                if not queue_state(self.runs_dir)[1] or not lock.acquire():
                    return
            time.sleep(POLL_S)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m core.scheduler",
                                description="Start queued training runs of RUNS_DIR in order.")
    p.add_argument("runs_dir")
    p.add_argument("--max-running", type=int, default=1, help="runs training at once")
    p.add_argument("--gpus", type=int, default=0, help="CUDA GPUs to spread runs over")
    args = p.parse_args(argv)
    runs_dir = Path(args.runs_dir)
    lock = FileLock(runs_dir / SCHEDULER_LOCK)
    if not lock.acquire():
        return 0  # another scheduler serves this folder
    write_json(runs_dir / SCHEDULER_FILE, {"pid": os.getpid(), "max_running": args.max_running,
                                           "gpus": args.gpus})
    Scheduler(runs_dir, args.max_running, args.gpus).run(lock)
    return 0


if __name__ == "__main__":
    sys.exit(main())
