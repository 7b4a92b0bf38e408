"""A run's status: its values (:class:`RunStatus`), how a turn ended (:class:`TurnOutcome`), and
``status.json`` (:class:`StatusRecord`, its schema), read and written here alone.

``status`` moves queued -> running -> finished / stopped / failed, and stopped or failed -> queued
on resume.  :func:`write_status` is the only writer: it sets ``status`` and the fields given,
keeping the others, and refuses a field the schema does not name.  The values are a ``StrEnum``,
so they compare equal to the strings in the file.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TypedDict

from ..atomic import write_json
from .layout import read_json

STATUS_FILE = "status.json"


class RunStatus(StrEnum):
    QUEUED = "queued"
    STARTING = "starting"   # read from runs of an older version only
    RUNNING = "running"
    FINISHED = "finished"
    STOPPED = "stopped"
    FAILED = "failed"


TRAINING = (RunStatus.STARTING, RunStatus.RUNNING)
ACTIVE = (RunStatus.QUEUED, *TRAINING)   # holds a share of its launchers' caps; cannot be deleted
IN_TURNS = (RunStatus.QUEUED, RunStatus.RUNNING)   # the scheduler gives it turns
ENDED = (RunStatus.FINISHED, RunStatus.STOPPED, RunStatus.FAILED)
RESUMABLE = (RunStatus.STOPPED, RunStatus.FAILED)   # with a checkpoint


class TurnOutcome(StrEnum):
    """How a GPT worker's turn on a run ended (``core.room.turn_runner.run_turn``)."""
    PAUSED = "paused"       # its time is up; the run trains on at its next turn
    FINISHED = RunStatus.FINISHED.value
    STOPPED = RunStatus.STOPPED.value
    FAILED = RunStatus.FAILED.value
    BUSY = "busy"           # another process holds the run folder
    REVOKED = "revoked"     # the turn was no longer this GPT worker's


class StatusRecord(TypedDict, total=False):
    """``status.json``, one JSON object in each run folder (``runs_dir/<owner>/<run>/``)."""
    status: RunStatus
    in_turns: bool            # trained in turns (core.room.turns), not by python -m core.train
    queued_at: float | None   # time.time() when queued: the queue's order; None once it ended
    turn: dict | None         # the turn a GPT worker has now: {"id", "scheduler", ...}; None between turns
    pid: int | None           # the process training it,
    pid_start: int | None     # its start time (tells a reused pid apart),
    host: str | None          # its machine (a Dask worker elsewhere),
    gpu: int | None           # its GPU
    started: str | None       # time stamps (core.runfolder.layout.now)
    ended: str | None
    error: str | None         # why it failed
    step: int                 # the last step trained
    max_steps: int            # where it ends
    turns: int                # turns it has had,
    turn_s: float             # their seconds,
    last_turn: float          # when the last one ended (time.time()),
    last_turn_id: str | None  # and its id: a GPT worker carries a run on from memory only after its own
    lost_turns: int           # turns in a row whose GPT worker died (turns.MAX_LOST_TURNS fails the run)


FIELDS = frozenset(StatusRecord.__annotations__)


def read_status(run_dir) -> StatusRecord:
    """``status.json``'s fields (``{}`` when there is none yet)."""
    return read_json(Path(run_dir) / STATUS_FILE)


def write_status(run_dir, status: RunStatus, *, fresh: bool = False, **fields) -> StatusRecord:
    """Set the run's ``status`` and ``fields``, keeping the others already there (none when
    ``fresh``: a GPT worker starting over).  Returns the record written."""
    unknown = set(fields) - FIELDS
    if unknown:
        raise TypeError(f"status.json has no field {', '.join(sorted(unknown))} (StatusRecord)")
    record = {**({} if fresh else read_status(run_dir)), **fields, "status": RunStatus(status).value}
    write_json(Path(run_dir) / STATUS_FILE, record)
    return record


def has_status_file(run_dir) -> bool:
    return (Path(run_dir) / STATUS_FILE).is_file()
