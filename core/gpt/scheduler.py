"""The queue's worker: ``python -m core.gpt.scheduler RUNS_DIR``.

One process per runs folder starts queued runs in first-in-first-out order while fewer than
``max_running`` train (the caps the server wrote into the folder, read before every start, so
the scheduler obeys the server's settings whoever started it), and is the parent of every trainer it starts, so it reaps them as they
end (no ``<defunct>`` processes anywhere: the web server only ever starts this scheduler, and a
thread there collects its exit).

Why a separate process: queued runs must start when a slot frees even with no browser open, and
survive a restart of ``streamlit run``; a thread in the web server would do neither.  Why it is
safe to start one "on demand" from every Launch: it takes an exclusive ``flock`` on
``RUNS_DIR/.scheduler.lock`` first and exits at once if another scheduler holds it.  It exits
by itself when nothing is queued and none of its trainers runs; before exiting it releases the
lock and looks at the queue once more, so a run queued in that moment is never stranded (either
this scheduler sees it and carries on, or the launcher found the lock free and started a new
one).  Every dequeue happens under the runs folder's queue lock (``core.gpt.runs``), the same one
Launch, Resume, Stop and Delete take.  A trainer it reaps whose status still says it trains
ended without a word (killed, out of memory): it is recorded as failed here.  Torch is never
imported here: the process stays small.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from .locks import FileLock, locked
from .registry import died, queue_state
from .rundir import QUEUE_LOCK, SCHEDULER_LOCK, TRAINING, queue_settings, read_status, write_status
from .spawn import start_trainer

POLL_S = 0.5


class Scheduler:
    """Starts queued runs of ``runs_dir`` into free slots and reaps the trainers it started."""

    def __init__(self, runs_dir) -> None:
        self.runs_dir = Path(runs_dir)
        # pid -> (process, gpu, run folder)
        self.children: dict[int, tuple[subprocess.Popen, int | None, Path]] = {}

    def reap(self) -> None:
        for pid, (proc, _, run_dir) in list(self.children.items()):
            if proc.poll() is not None:
                del self.children[pid]
                self._record_death(run_dir, pid)

    def _record_death(self, run_dir: Path, pid: int) -> None:
        """Mark the run failed if its status still says this process trains it."""
        with locked(self.runs_dir / QUEUE_LOCK):
            status = read_status(run_dir)
            if status.get("status") in TRAINING and status.get("pid") == pid:
                write_status(run_dir, **died(run_dir))

    def _free_gpu(self, gpus: int) -> int | None:
        """With several GPUs, the first no trainer of ours uses (None: leave the default)."""
        if gpus <= 1:
            return None
        used = {gpu for _, gpu, _ in self.children.values()}
        return next((g for g in range(gpus) if g not in used), 0)

    def start_queued(self) -> int:
        """Start as many queued runs as there are free slots; returns how many still wait."""
        with locked(self.runs_dir / QUEUE_LOCK):
            caps = queue_settings(self.runs_dir)
            training, queued = queue_state(self.runs_dir)
            free = max(0, caps["max_running"] - len(training))
            for run_dir in queued[:free]:
                gpu = self._free_gpu(caps["gpus"])
                env = {"CUDA_VISIBLE_DEVICES": str(gpu)} if gpu is not None else None
                proc = start_trainer(run_dir, env)
                self.children[proc.pid] = (proc, gpu, run_dir)
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
    p = argparse.ArgumentParser(prog="python -m core.gpt.scheduler",
                                description="Start queued training runs of RUNS_DIR in order.")
    p.add_argument("runs_dir")
    runs_dir = Path(p.parse_args(argv).runs_dir)
    lock = FileLock(runs_dir / SCHEDULER_LOCK)
    if not lock.acquire():
        return 0  # another scheduler serves this folder
    Scheduler(runs_dir).run(lock)
    return 0


if __name__ == "__main__":
    sys.exit(main())
