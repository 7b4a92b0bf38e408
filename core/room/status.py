"""A run's status: its values (:class:`RunStatus`), how a turn ended (:class:`TurnOutcome`), and
``status.json``, read and written here alone.

``status.json``, in each run folder (``runs_dir/<owner>/<run>/``), one JSON object:

- ``status``: a :class:`RunStatus`.  It moves queued -> running -> finished / stopped / failed,
  and stopped or failed -> queued on resume; ``starting`` is read from runs of an older version.
- ``in_turns``: the run trains in turns given by the scheduler (``core.room.turns``), not as a
  process of its own (``python -m core.train``).
- ``queued_at``: when it was queued (``time.time()``), the queue's order; None once it ended.
- ``turn``: the turn a worker has now, ``{"id", "scheduler", ...}``; None between turns.
- ``pid``, ``pid_start``, ``host``, ``gpu``: the process training it (its start time tells a
  reused pid apart; ``host`` where a Dask worker runs elsewhere), its GPU.
- ``started``, ``ended``: time stamps (``core.room.rundir.now``); ``error``: why it failed.
- ``step``: the last step trained; ``max_steps``: where it ends.
- ``turns``, ``turn_s``, ``last_turn``, ``last_turn_id``: turns had, their seconds, when the last
  one ended and its id (a worker carries a run on from memory only after its own turn).
- ``lost_turns``: turns in a row whose worker died (``core.room.turns.MAX_LOST_TURNS`` fails it).

:func:`write_status` is the only writer: it sets ``status`` and the fields given, keeping the
others.  The values are a ``StrEnum``, so they compare equal to the strings in the file.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from ..atomic import write_json
from .rundir import read_json

STATUS_FILE = "status.json"


class RunStatus(StrEnum):
    QUEUED = "queued"
    STARTING = "starting"   # runs of an older version only
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
    """How a worker's turn on a run ended (``core.room.turn_runner.run_turn``)."""
    PAUSED = "paused"       # its time is up; the run trains on at its next turn
    FINISHED = RunStatus.FINISHED.value
    STOPPED = RunStatus.STOPPED.value
    FAILED = RunStatus.FAILED.value
    BUSY = "busy"           # another process holds the run folder
    REVOKED = "revoked"     # the turn was no longer this worker's


def read_status(run_dir) -> dict:
    """``status.json``'s fields (``{}`` when there is none yet)."""
    return read_json(Path(run_dir) / STATUS_FILE)


def write_status(run_dir, status: RunStatus, *, fresh: bool = False, **fields) -> dict:
    """Set the run's ``status`` and ``fields``, keeping the others already there (none when
    ``fresh``: a trainer starting over).  Returns the record written."""
    record = {**({} if fresh else read_status(run_dir)), **fields, "status": RunStatus(status).value}
    write_json(Path(run_dir) / STATUS_FILE, record)
    return record


def has_status_file(run_dir) -> bool:
    return (Path(run_dir) / STATUS_FILE).is_file()
