"""The engine's turn-giver: the runs launched in a runs folder get turns on the engine's GPT workers
(``core.room.engine`` runs :class:`Scheduler` in its main loop): ``max_running`` GPT workers of its own
(``core.room.gpt_workers``; the caps the server wrote into the folder, read before every turn, so
it obeys the server's settings whoever started the engine), or the Dask workers of a cluster
(``core.room.dask_workers``).  Whose turn it is, and what a turn's end does to a run, is
``core.room.turns``; the turn itself, in the GPT worker, ``core.room.turn_runner.run_turn``.

A GPT worker that dies during a turn (killed, out of memory) loses that turn only: the run gets
another from its last checkpoint; so does a turn of an engine that died (``turns.reclaim_turns``).
Torch is never imported here.
"""

from __future__ import annotations

import os
import traceback
from pathlib import Path

from .limits import TURN_S, threads_per_run
from ..runfolder.locks import locked
from .queries import launchers
from ..runfolder.layout import QUEUE_LOCK, queue_settings
from ..runfolder.status import IN_TURNS, TurnOutcome, read_status
from .gpt_workers import LocalWorkers, train_turn
from .turns import Turn, end_turn, lose_turn, next_turn, reclaim_turns


class Scheduler:
    """Gives turns of ``runs_dir``'s runs to ``gpt_workers`` (``LocalWorkers`` by default)."""

    def __init__(self, runs_dir, gpt_workers=None) -> None:
        self.runs_dir = Path(runs_dir)
        self.gpt_workers = gpt_workers or LocalWorkers()
        self.in_flight: dict[object, Turn] = {}   # future -> the turn it trains

    def collect(self) -> None:
        """Record the turns that ended: trained (``turns.end_turn``), or lost with their GPT worker."""
        for future, turn in list(self.in_flight.items()):
            if not future.done():
                continue
            del self.in_flight[future]
            try:
                outcome = future.result()
            except self.gpt_workers.lost_errors as exc:
                self.gpt_workers.done(future, lost=True)
                lose_turn(self.runs_dir, turn, f"{type(exc).__name__}: {exc}"[:300])
                continue
            except Exception as exc:  # raised in the turn: torch out of memory, a bug
                traceback.print_exc()
                outcome = {"outcome": TurnOutcome.FAILED, "error": f"{type(exc).__name__}: {exc}"[:500]}
            self.gpt_workers.done(future, lost=False)
            end_turn(self.runs_dir, turn, outcome)

    def give_turns(self) -> None:
        """Every free GPT worker gets the next turn, while runs wait for one."""
        caps = queue_settings(self.runs_dir)
        self.gpt_workers.configure(caps["max_running"], threads_per_run(caps["max_running"]), caps["gpus"])
        busy = {turn.run_dir for turn in self.in_flight.values()}
        for _ in range(self.gpt_workers.free()):
            turn = next_turn(self.runs_dir, os.getpid(), busy)
            if turn is None:
                return
            busy.add(turn.run_dir)
            self.in_flight[self.gpt_workers.submit(train_turn, str(turn.run_dir), turn.id, TURN_S)] = turn

    def tick(self) -> None:
        """Record the turns that ended, give again those whose GPT worker is gone, give new ones."""
        self.collect()
        reclaim_turns(self.runs_dir, os.getpid(), {turn.id for turn in self.in_flight.values()})
        self.give_turns()

    def rest(self) -> None:
        """No run waits for a turn: the idle GPT workers stop, and torch's memory goes with them
        (the next turn starts one again)."""
        self.gpt_workers.configure(0, 1, 0)

    def has_work(self) -> bool:
        """Turns under way, or runs that take turns and have not ended."""
        if self.in_flight:
            return True
        with locked(self.runs_dir / QUEUE_LOCK):
            return any(_in_turns(run) for run in launchers(self.runs_dir))


def _in_turns(run: Path) -> bool:
    status = read_status(run)
    return bool(status.get("in_turns")) and status.get("status") in IN_TURNS
