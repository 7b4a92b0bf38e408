"""The queue's scheduler: ``python -m core.room.scheduler RUNS_DIR [--dask ADDRESS]``.

One process per runs folder gives the runs launched there turns on its GPT workers: ``max_running``
GPT workers of its own (``core.room.gpt_workers``; the caps the server wrote into the folder,
read before every turn, so the scheduler obeys the server's settings whoever started it), or the
Dask workers of a cluster (``core.room.dask_workers``, when ``--dask`` or
``$BPE_EXPLORER_DASK_SCHEDULER`` names one).  Whose turn it is, and what a turn's end does to a
run, is ``core.room.turns``; the turn itself, in the GPT worker, ``core.room.turn_runner.run_turn``.

Why a separate process: runs must train with no browser open, and survive a restart of
``streamlit run``; a thread in the web server would do neither.  Why it is safe to start one "on
demand" from every Launch: it takes an exclusive ``flock`` on ``RUNS_DIR/.scheduler.lock`` first
and exits at once if another scheduler holds it.  It exits by itself when no run is queued or
training, stopping its GPT workers; before exiting it releases the lock and looks at the queue once
more, so a run queued in that moment is never stranded (either this scheduler sees it and carries
on, or the launcher found the lock free and started a new one).  A GPT worker that dies during a turn
(killed, out of memory) loses that turn only: the run gets another from its last checkpoint; so
does a turn of a scheduler that died (``turns.reclaim_turns``).  Torch is never imported here.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

from .limits import TURN_S, threads_per_run
from ..runfolder.locks import FileLock, locked
from .queries import launchers
from ..runfolder.layout import QUEUE_LOCK, SCHEDULER_LOCK, queue_settings
from ..runfolder.status import IN_TURNS, TurnOutcome, read_status
from .gpt_workers import LocalWorkers, train_turn
from .turns import Turn, end_turn, lose_turn, next_turn, reclaim_turns

POLL_S = 0.5   # how often the queue is looked at while every GPT worker is busy


class Scheduler:
    """Gives turns of ``runs_dir``'s runs to ``workers`` (``LocalWorkers`` by default)."""

    def __init__(self, runs_dir, workers=None) -> None:
        self.runs_dir = Path(runs_dir)
        self.workers = workers or LocalWorkers()
        self.in_flight: dict[object, Turn] = {}   # future -> the turn it trains

    def collect(self) -> None:
        """Record the turns that ended: trained (``turns.end_turn``), or lost with their GPT worker."""
        for future, turn in list(self.in_flight.items()):
            if not future.done():
                continue
            del self.in_flight[future]
            try:
                outcome = future.result()
            except self.workers.lost_errors as exc:
                self.workers.done(future, lost=True)
                lose_turn(self.runs_dir, turn, f"{type(exc).__name__}: {exc}"[:300])
                continue
            except Exception as exc:  # raised in the turn: torch out of memory, a bug
                traceback.print_exc()
                outcome = {"outcome": TurnOutcome.FAILED, "error": f"{type(exc).__name__}: {exc}"[:500]}
            self.workers.done(future, lost=False)
            end_turn(self.runs_dir, turn, outcome)

    def give_turns(self) -> None:
        """Every free GPT worker gets the next turn, while runs wait for one."""
        caps = queue_settings(self.runs_dir)
        self.workers.configure(caps["max_running"], threads_per_run(caps["max_running"]), caps["gpus"])
        busy = {turn.run_dir for turn in self.in_flight.values()}
        for _ in range(self.workers.free()):
            turn = next_turn(self.runs_dir, os.getpid(), busy)
            if turn is None:
                return
            busy.add(turn.run_dir)
            self.in_flight[self.workers.submit(train_turn, str(turn.run_dir), turn.id, TURN_S)] = turn

    def has_work(self) -> bool:
        """Turns under way, or runs that take turns and have not ended."""
        if self.in_flight:
            return True
        with locked(self.runs_dir / QUEUE_LOCK):
            return any(_in_turns(run) for run in launchers(self.runs_dir))

    def run(self, lock: FileLock) -> None:
        """Give turns until no run is queued or training (``lock`` is held), then stop the
        GPT workers."""
        try:
            while True:
                self.collect()
                reclaim_turns(self.runs_dir, os.getpid(), {turn.id for turn in self.in_flight.values()})
                self.give_turns()
                if not self.has_work():
                    lock.release()
                    if not self.has_work() or not lock.acquire():
                        return
                if self.in_flight:
                    self.workers.wait(list(self.in_flight), POLL_S)
                else:
                    time.sleep(POLL_S)
        finally:
            self.workers.close()


def _in_turns(run: Path) -> bool:
    status = read_status(run)
    return bool(status.get("in_turns")) and status.get("status") in IN_TURNS


def _workers(address: str | None, resources: str | None):
    if not address:
        return LocalWorkers()
    from .dask_workers import DaskWorkers, parse_resources

    return DaskWorkers(address, parse_resources(resources))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m core.room.scheduler",
                                description="Give the runs of RUNS_DIR turns on GPT workers.")
    p.add_argument("runs_dir")
    p.add_argument("--dask", default=os.environ.get("BPE_EXPLORER_DASK_SCHEDULER"),
                   help="a Dask scheduler's address: train on its Dask workers (default: "
                        "$BPE_EXPLORER_DASK_SCHEDULER; none: GPT workers here)")
    p.add_argument("--dask-resources", default=os.environ.get("BPE_EXPLORER_DASK_RESOURCES"),
                   help="what one turn takes from a Dask worker, e.g. GPU=1")
    args = p.parse_args(argv)
    runs_dir = Path(args.runs_dir)
    lock = FileLock(runs_dir / SCHEDULER_LOCK)
    if not lock.acquire():
        return 0  # another scheduler serves this folder
    Scheduler(runs_dir, _workers(args.dask, args.dask_resources)).run(lock)
    return 0


if __name__ == "__main__":
    sys.exit(main())
