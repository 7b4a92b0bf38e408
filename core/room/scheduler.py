"""The engine's turn-giver: the runs launched in a runs folder get turns, submitted to the engine's one
queue (``core.room.engine`` runs :class:`Scheduler` in its main loop): on the GPT workers of its
job engine (``core.room.jobs.JobEngine``; ``max_running`` of them, the caps the server wrote into the
folder, read before every turn, so it obeys the server's settings whoever started the engine), or
on the Dask workers of a cluster (``core.room.dask_jobs.DaskJobs``), through the same interface.
Whose turn it is, and what a turn's end does to a run, is ``core.room.turns``; the turn itself, in
the GPT worker, ``core.room.turn_runner.run_turn``.

A GPT worker that dies during a turn (killed, out of memory) loses that turn only: the run gets
another from its last checkpoint; so does a turn of an engine that died (``turns.reclaim_turns``).
Torch is never imported here.
"""

from __future__ import annotations

import os
import time
import traceback
from pathlib import Path

from .gpt_workers import train_turn
from .jobs import JobStopped, TurnQueue
from .limits import TURN_S, threads_per_run
from ..runfolder.locks import locked
from .queries import launchers
from ..runfolder.layout import QUEUE_LOCK, queue_settings
from ..runfolder.status import TurnOutcome, read_status
from .turns import Turn, end_turn, lose_turn, next_turn, reclaim_turns, takes_turns

# the turns' session in the queue, and their owner there: no page's, so no page cancels them (whose
# turn it is between the runs' owners is core.room.turns's, before a turn is submitted)
SESSION = "the scheduler"
WAIT_POLL_S = 0.05          # how often :meth:`Scheduler.wait` looks at the turns under way


class Scheduler:
    """Gives turns of ``runs_dir``'s runs to the GPT workers of ``jobs`` (the engine's one queue)."""

    def __init__(self, runs_dir, jobs: TurnQueue) -> None:
        self.runs_dir = Path(runs_dir)
        self.jobs = jobs
        self.in_flight: dict[object, Turn] = {}   # the turn's job -> the turn

    def collect(self) -> None:
        """Record the turns that ended: trained (``turns.end_turn``), or lost with their GPT worker."""
        for job, turn in list(self.in_flight.items()):
            if not job.done:
                continue
            del self.in_flight[job]
            try:
                outcome = job.result()
            except JobStopped as exc:  # its GPT worker died, or the engine is leaving
                lose_turn(self.runs_dir, turn, str(exc)[:300])
                continue
            except Exception as exc:  # raised in the turn: torch out of memory, a bug
                traceback.print_exc()
                outcome = {"outcome": TurnOutcome.FAILED, "error": f"{type(exc).__name__}: {exc}"[:500]}
            finally:
                self.jobs.forget(job.key)  # read first: on Dask, forgetting a future releases it
            end_turn(self.runs_dir, turn, outcome)

    def give_turns(self) -> None:
        """Every free GPT worker gets the next turn, while runs wait for one."""
        caps = queue_settings(self.runs_dir)
        slots = self.jobs.set_gpt_workers(caps["max_running"], threads_per_run(caps["max_running"]),
                                          caps["gpus"])
        busy = {turn.run_dir for turn in self.in_flight.values()}
        for _ in range(slots - len(self.in_flight)):
            turn = next_turn(self.runs_dir, os.getpid(), busy)
            if turn is None:
                return
            busy.add(turn.run_dir)
            job = self.jobs.submit(SESSION, ("turn", turn.id), train_turn,
                                   (str(turn.run_dir), turn.id, TURN_S), gpt_turn=True)
            self.in_flight[job] = turn

    def tick(self) -> None:
        """Record the turns that ended, give again those whose GPT worker is gone, give new ones."""
        self.collect()
        reclaim_turns(self.runs_dir, os.getpid(), {turn.id for turn in self.in_flight.values()})
        self.give_turns()

    def wait(self, timeout: float) -> None:
        """Until a turn under way ends, or ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not any(job.done for job in self.in_flight) and time.monotonic() < deadline:
            time.sleep(WAIT_POLL_S)

    def rest(self) -> None:
        """No run waits for a turn: the idle GPT workers stop, and torch's memory goes with them
        (the next turn starts one again)."""
        self.jobs.set_gpt_workers(0, 1, 0)

    def has_work(self) -> bool:
        """Turns under way, or runs that take turns and have not ended."""
        if self.in_flight:
            return True
        with locked(self.runs_dir / QUEUE_LOCK):
            return any(takes_turns(read_status(run)) for run in launchers(self.runs_dir))
