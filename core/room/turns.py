"""Runs take turns on the GPT workers: which run trains next, fair between owners, and what a turn
given, finished or lost does to the run's status.

Every run launched from the page trains in turns of ``TURN_S`` seconds (``core.room.limits``) on
one of the engine's GPT workers, given by its scheduler (``core.room.scheduler``), and is
checkpointed at the end of each (``core.room.turn_runner``), so its next turn can be anywhere: the
same GPT worker, which still holds it in memory, another GPT worker process, another machine.  A
room of 30 therefore sees every curve move within seconds, instead of a queue of whole runs.

Fair between owners: each owner is charged the seconds their runs trained (``.turns.json`` in
the runs folder); a turn of t seconds on a run that n attendees launched (identical runs train
once: ``core.room.identical``) charges each of them t / n, and a room's run nobody launched is
charged to the room.  The next turn goes to the run whose least-charged launcher was charged
least; an owner who had nothing training starts level with the least-charged owner training now
(a newcomer goes first, then takes turns with everyone, rather than catching up on an hour of
others' training).  Among equals, a run that has had no turn yet goes first, then the one whose
last turn ended longest ago, then the one queued first.

A turn's fields in ``status.json`` (``turn``, ``pid``, ``turns``, ``last_turn_id``, ``lost_turns``,
...) are ``core.runfolder.status.StatusRecord``'s.  ``last_turn_id`` is none after a lost turn, whose
GPT worker may have written part of it; a run whose GPT worker dies ``MAX_LOST_TURNS`` times in a
row (it takes its GPT worker down: out of memory) fails, and resumes by hand.  Each function here
holds the runs folder's queue lock while it reads and writes, the lock Launch, Stop, Resume and
Delete take.  Torch-free.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from .limits import TURN_S
from ..runfolder.locks import locked
from .owners import ROOM_OWNER
from .queries import launchers, process_alive, process_start
from ..atomic import write_json
from ..runfolder.layout import QUEUE_LOCK, STOP_FILE, TURNS_FILE, now, read_json
from ..runfolder.status import ENDED, IN_TURNS, RunStatus, TurnOutcome, read_status, write_status

MAX_LOST_TURNS = 3


@dataclass(frozen=True)
class Turn:
    """A turn given to a GPT worker: the run, and the id its status holds while the turn lasts."""

    run_dir: Path
    id: str


def next_turn(runs_dir, scheduler: int, busy: Collection[Path] = ()) -> Turn | None:
    """Give the next turn (see the module docstring) to scheduler ``scheduler``'s free GPT worker:
    marks the run as having it and returns it; None when no run waits for a turn.  Runs in
    ``busy`` are left out."""
    runs_dir = Path(runs_dir)
    with locked(runs_dir / QUEUE_LOCK):
        found = launchers(runs_dir)
        statuses = {run: read_status(run) for run in found}  # each read once, under the lock
        waiting = {run: who for run, who in found.items() if _waits(statuses[run], run, busy)}
        if not waiting:
            return None
        charged = _charges(runs_dir, found, statuses)
        floor = min(charged.values(), default=0.0)
        for run, who in found.items():  # a turn under way counts as charged already, so that free
            if statuses[run].get("turn"):  # GPT workers go to other owners
                _add_charge(charged, floor, who, TURN_S)

        def priority(run: Path) -> tuple:
            least = min(charged.get(owner, floor) for owner in waiting[run] or [ROOM_OWNER])
            status = statuses[run]
            return (least, bool(status.get("turns")), status.get("last_turn") or 0.0,
                    status.get("queued_at") or 0.0, str(run))

        run = min(waiting, key=priority)
        turn = Turn(run, uuid.uuid4().hex)
        write_status(run, RunStatus.RUNNING, turn={"id": turn.id, "scheduler": scheduler,
                                           "scheduler_start": process_start(scheduler),
                                           "host": os.uname().nodename}, pid=None, host=None)
        return turn


def takes_turns(status: dict) -> bool:
    """Whether a run of this status takes turns and has not ended."""
    return bool(status.get("in_turns")) and status.get("status") in IN_TURNS


def _waits(status: dict, run: Path, busy: Collection[Path]) -> bool:
    return takes_turns(status) and not status.get("turn") and run not in busy


def _charges(runs_dir: Path, found: dict[Path, list[str]],
             statuses: dict[Path, dict] | None = None) -> dict[str, float]:
    """The seconds charged so far to the owners of runs that take turns now (``statuses``: the
    runs' status records when the caller has read them)."""
    saved = read_json(runs_dir / TURNS_FILE).get("charged") or {}
    statuses = statuses or {run: read_status(run) for run in found}
    owners = {owner for run, who in found.items() if statuses[run].get("status") in IN_TURNS
              for owner in who or [ROOM_OWNER]}
    return {owner: float(saved.get(owner, 0.0)) for owner in owners if owner in saved}


def _charge(runs_dir: Path, run_dir: Path, seconds: float) -> None:
    """Charge a turn's ``seconds`` to the run's launchers, shared equally (the charges of owners
    with nothing taking turns are dropped: they start level again when they come back)."""
    found = launchers(runs_dir)
    charged = _charges(runs_dir, found)
    _add_charge(charged, min(charged.values(), default=0.0), found.get(run_dir), seconds)
    write_json(runs_dir / TURNS_FILE, {"charged": charged})


def _add_charge(charged: dict[str, float], floor: float, launched_by: list[str] | None,
                seconds: float) -> None:
    """Charge ``seconds`` to a run's launchers (the room's run: the room), shared equally; an owner
    not charged yet starts at ``floor``."""
    payers = launched_by or [ROOM_OWNER]
    for owner in payers:
        charged[owner] = charged.get(owner, floor) + seconds / len(payers)


def claim_turn(run_dir, turn_id: str, pid: int, host: str, gpu: str | None = None) -> dict | None:
    """In the GPT worker, as its turn begins: the run's status, with this process recorded as the
    one training it (its host, and its GPU when it has one of its own; ``started`` on a first
    turn); None when the turn is no longer this GPT worker's (the run was stopped, or its turn
    given again after a GPT worker was thought gone)."""
    run_dir = Path(run_dir)
    with locked(run_dir.parent.parent / QUEUE_LOCK):
        status = read_status(run_dir)
        if (status.get("turn") or {}).get("id") != turn_id:
            return None
        return write_status(run_dir, RunStatus.RUNNING, pid=pid, pid_start=process_start(pid), host=host,
                            gpu=gpu, started=status.get("started") or now())


def end_turn(runs_dir, turn: Turn, outcome: dict) -> None:
    """Record a turn its GPT worker finished (``core.room.turn_runner.run_turn``'s ``outcome``): the run
    trains on (``TurnOutcome.PAUSED``), or ended (``FINISHED``, ``STOPPED``, ``FAILED``); a turn the
    GPT worker could not take (``BUSY``: another process trains the folder; ``REVOKED``) changes nothing."""
    runs_dir = Path(runs_dir)
    with locked(runs_dir / QUEUE_LOCK):
        status = read_status(turn.run_dir)
        if (status.get("turn") or {}).get("id") != turn.id:
            return  # stopped by force meanwhile, or given again: that record stands
        kind = outcome.get("outcome")
        between = RunStatus.RUNNING if status.get("started") else RunStatus.QUEUED
        if kind in ("busy", "revoked"):
            write_status(turn.run_dir, between, turn=None, pid=None, host=None)
            return
        seconds = float(outcome.get("seconds") or 0.0)
        _charge(runs_dir, turn.run_dir, seconds)
        stop_file = turn.run_dir / STOP_FILE
        if kind == TurnOutcome.PAUSED and stop_file.exists():
            kind = TurnOutcome.STOPPED  # asked after the GPT worker last looked: the checkpoint is there
        fields = dict(turn=None, pid=None, host=None, gpu=None, last_turn_id=turn.id,
                      turns=int(status.get("turns") or 0) + 1,
                      turn_s=float(status.get("turn_s") or 0.0) + seconds, last_turn=time.time(),
                      lost_turns=0, step=outcome.get("step", status.get("step")))
        if kind == TurnOutcome.PAUSED:
            write_status(turn.run_dir, RunStatus.RUNNING, **fields)
            return
        error = outcome.get("error") if kind == TurnOutcome.FAILED else None
        write_status(turn.run_dir, kind if kind in ENDED else RunStatus.FAILED,
                     ended=now(), error=error, queued_at=None, **fields)
        stop_file.unlink(missing_ok=True)


def lose_turn(runs_dir, turn: Turn, reason: str) -> None:
    """The GPT worker of ``turn`` died during it: the run gets a turn again (from its last
    checkpoint, so no step is lost and none logged twice), unless that happened
    ``MAX_LOST_TURNS`` times in a row: then it fails, resumable by hand."""
    runs_dir = Path(runs_dir)
    with locked(runs_dir / QUEUE_LOCK):
        status = read_status(turn.run_dir)
        if (status.get("turn") or {}).get("id") == turn.id:
            _lose(turn.run_dir, status, reason)


def _lose(run_dir: Path, status: dict, reason: str) -> None:
    lost = int(status.get("lost_turns") or 0) + 1
    fields = dict(turn=None, pid=None, host=None, lost_turns=lost, last_turn_id=None)
    if (run_dir / STOP_FILE).exists():
        write_status(run_dir, RunStatus.STOPPED, ended=now(), queued_at=None, **fields)
        (run_dir / STOP_FILE).unlink(missing_ok=True)
    elif lost >= MAX_LOST_TURNS:
        write_status(run_dir, RunStatus.FAILED, ended=now(), queued_at=None, **fields,
                     error=f"The training process ended during this run's turn {lost} times in a row "
                           f"(killed, or out of memory?): {reason}")
    else:
        write_status(run_dir, RunStatus.RUNNING if status.get("started") else RunStatus.QUEUED, **fields)


def reclaim_turns(runs_dir, scheduler: int, in_flight: Collection[str]) -> None:
    """Give again the turns whose GPT worker is gone: turns of scheduler ``scheduler`` (this one)
    that it no longer waits on, and turns of a scheduler that died (the machine or the server
    restarted) whose GPT worker, when it ran here, has ended too."""
    runs_dir = Path(runs_dir)
    with locked(runs_dir / QUEUE_LOCK):
        for run in launchers(runs_dir):
            status = read_status(run)
            turn = status.get("turn") or {}
            if not turn or not status.get("in_turns") or turn.get("id") in in_flight:
                continue
            host = os.uname().nodename
            ours = turn.get("scheduler") == scheduler and turn.get("host") == host
            giver = {"pid": turn.get("scheduler"), "pid_start": turn.get("scheduler_start"),
                     "host": turn.get("host")}
            giver_alive = not ours and (turn.get("host") != host or process_alive(giver))
            worker_alive = status.get("pid") is not None and process_alive(status)
            if not giver_alive and not worker_alive:
                _lose(run, status, "its scheduler or GPT worker is gone")
