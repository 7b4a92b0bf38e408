"""Reading runs: one run's state from its folder (:class:`RunInfo`), the runs a viewer may see,
the queue with its estimated waits, who launched each run, and whether a process is alive.

Writes no run's files (a run whose status says a process trains it but whose process is gone
*reads* as failed or as waiting for its next turn; the engine records it,
``core.room.turns.lose_turn``); but :func:`list_runs` starts the runs folder's engine when a run
waits for turns and no engine is running (``core.room.spawn.ensure_engine``), so that a page that
lists a queued run also gets it trained after a server restart.  Torch-free, like the engine
that uses it.  Leaves out launching, stopping and the rest of a run's changes
(``core.room.runs``) and who trains next (``core.room.turns``).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from .identical import is_join, joined_run, read_identity
from .limits import TURN_S
from .owners import LOCAL_OWNER, OWNER_PATTERN, ROOM_OWNER, RunAccessError, Viewer
from ..runfolder.layout import (CHECKPOINT_FILE, CONFIG_FILE, JOIN_FILE, LAUNCH_FILE, LOG_FILE, METRICS_FILE,
                     SAMPLES_FILE, SHARE_FILE, TRAIN_CONFIG_FILE, default_runs_dir, now, queue_settings,
                     read_json, read_jsonl)
from ..runfolder.status import ACTIVE, RESUMABLE, TRAINING, RunStatus, has_status_file, read_status
from .spawn import ensure_engine


@dataclass
class RunInfo:
    name: str
    path: Path                  # the folder the run's files are in (a joined run's, for a join)
    status: str                 # queued / running / finished / failed / stopped
    owner: str = LOCAL_OWNER
    shared: bool = False
    pid: int | None = None      # the process training it at this moment, if any
    started: str | None = None
    ended: str | None = None
    error: str | None = None
    step: int = 0               # the last logged step
    max_steps: int | None = None
    queued_at: float | None = None
    stepping: bool = False      # a GPT worker has its turn now
    step_s: float | None = None          # seconds a step took so far (None before two records)
    joined_by: str | None = None         # for a join: the launcher whose view of the run this is
    join_path: Path | None = None        # ... and their folder for it
    launchers: int = 1                   # attendees who launched this run (set by list_runs)
    queue_position: int | None = None    # 1 = next to get a first turn (set by list_runs)
    wait_s: float | None = None          # estimated seconds until its first turn (list_runs)
    taking_turns: int = 0                # runs sharing the GPT workers with it, itself included
    runs_at_once: int = 1                # runs trained at the same moment on this server (GPT workers)
    eta_s: float | None = None           # estimated seconds until it finishes (list_runs)
    config: dict = field(default_factory=dict)   # config.json, once training has started
    last: dict = field(default_factory=dict)     # the last metrics record

    @property
    def active(self) -> bool:
        """Queued or training: it holds a share of its launchers' slots, and cannot be deleted."""
        return self.status in ACTIVE

    @property
    def has_checkpoint(self) -> bool:
        return (self.path / CHECKPOINT_FILE).is_file()

    @property
    def resumable(self) -> bool:
        """Stopped or killed with a checkpoint, and launched from the page (see resume_run)."""
        return (self.status in RESUMABLE and self.has_checkpoint
                and (self.path / TRAIN_CONFIG_FILE).is_file())


def read_metrics(run_dir) -> list[dict]:
    return read_jsonl(Path(run_dir) / METRICS_FILE)


def read_samples(run_dir) -> list[dict]:
    return read_jsonl(Path(run_dir) / SAMPLES_FILE)


def read_log(run_dir, max_chars: int = 4000) -> str:
    try:
        return (Path(run_dir) / LOG_FILE).read_text(encoding="utf-8", errors="replace")[-max_chars:]
    except OSError:
        return ""


def pid_alive(pid: int | None) -> bool:
    """True while ``pid`` runs (a zombie, dead but not yet reaped, counts as gone)."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def died(run_dir) -> dict:
    """The status fields of a training process that ended without saying so (killed, out of
    memory): failed, with the last line it printed."""
    log = read_log(run_dir, 600).strip()
    error = ("The training process ended without finishing (killed, or out of memory?)."
             + (f" Last output: {log.splitlines()[-1]}" if log else ""))
    return {"status": RunStatus.FAILED, "error": error, "ended": now()}


def here(status: dict) -> bool:
    """Whether the process named in ``status`` runs on this machine (its pid means something
    here): a GPT worker on a Dask worker elsewhere records its host."""
    return status.get("host") in (None, os.uname().nodename)


def process_start(pid: int | None) -> int | None:
    """When process ``pid`` started (clock ticks after boot, ``/proc/<pid>/stat``'s 22nd field);
    None where that cannot be read.  With the pid, it names one process: a pid is given again to
    a later process (soon, after a restart, when pids count from 1 again), its start time is not."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def process_alive(status: dict) -> bool:
    """Whether the process ``status`` names (``pid``, and ``pid_start`` when recorded) still runs,
    rather than a later process given the same pid; never a process whose pid was recorded on
    another machine (see :func:`here`) - that one is unknown here, so it reads as gone."""
    pid = status.get("pid")
    if not (here(status) and pid_alive(pid)):
        return False
    start = status.get("pid_start")
    return start is None or process_start(pid) in (None, start)


def turn_alive(status: dict) -> bool:
    """A turn is under way: given to a GPT worker whose process (when it runs here) is alive."""
    if not status.get("turn"):
        return False
    return status.get("pid") is None or not here(status) or process_alive(status)


def observed_status(run_dir) -> dict:
    """``status.json`` (no metrics read), except that a run trained by one process of its own (the
    command line, or an older version) whose process is found gone reads as failed: this covers
    a machine that restarted.  A run taking turns never reads as failed here: a turn its GPT worker
    did not finish is given again by the scheduler (``core.room.turns``)."""
    status = read_status(run_dir)
    if status.get("in_turns") or status.get("status") not in TRAINING or process_alive(status):
        return status
    status = read_status(run_dir)  # it may have just finished: read once more
    if status.get("status") in TRAINING:
        status = {**status, **died(run_dir)}
    return status


def run_info(run_dir) -> RunInfo:
    """The run's state read from its folder; for a join (``core.room.identical``), the joined run's
    state under the join's name, read-only for its launcher."""
    run_dir = Path(run_dir)
    if is_join(run_dir):
        return _join_info(run_dir)
    launch = read_json(run_dir / LAUNCH_FILE)
    status = observed_status(run_dir)
    metrics = read_metrics(run_dir)
    return RunInfo(
        name=run_dir.name, path=run_dir, status=status.get("status") or RunStatus.FAILED,
        owner=run_dir.parent.name, shared=bool(read_json(run_dir / SHARE_FILE).get("shared")),
        pid=status.get("pid") or (None if status.get("in_turns") else launch.get("pid")),
        started=status.get("started") or launch.get("launched"),
        ended=status.get("ended"), error=status.get("error"),
        step=metrics[-1]["step"] if metrics else int(status.get("step") or 0),
        max_steps=status.get("max_steps") or read_json(run_dir / TRAIN_CONFIG_FILE).get("max_steps"),
        queued_at=status.get("queued_at"), stepping=turn_alive(status),
        step_s=seconds_per_step(metrics), config=read_json(run_dir / CONFIG_FILE),
        last=metrics[-1] if metrics else {})


def _join_info(join_dir: Path, read: dict[Path, RunInfo] | None = None) -> RunInfo:
    """A join: its run's state (from ``read`` when that run was read already) under its name."""
    target = joined_run(join_dir)
    if target is None or not is_run(target) or is_join(target):
        return RunInfo(name=join_dir.name, path=join_dir, status=RunStatus.FAILED, owner=join_dir.parent.name,
                       joined_by=join_dir.parent.name, join_path=join_dir,
                       error="The run this launch joined is gone: its owner deleted it.")
    info = (read or {}).get(target) or run_info(target)
    return replace(info, name=join_dir.name, joined_by=join_dir.parent.name, join_path=join_dir)


def is_run(path: Path) -> bool:
    return path.is_dir() and (has_status_file(path)
                              or any((path / name).is_file() for name in (LAUNCH_FILE, JOIN_FILE)))


def run_folders(runs_dir: Path, owner: str | None = None) -> list[Path]:
    """The run folders in ``runs_dir`` (only ``owner``'s when given), joins included."""
    if not runs_dir.is_dir():
        return []
    owners = [runs_dir / owner] if owner else runs_dir.iterdir()
    return [run for folder in owners if folder.is_dir() and OWNER_PATTERN.fullmatch(folder.name)
            for run in folder.iterdir() if is_run(run)]


def joins_of(runs_dir: Path, run_dir: Path, owner: str | None = None) -> list[Path]:
    """The joins of ``run_dir`` (only ``owner``'s when given: one at most)."""
    return [j for j in run_folders(runs_dir, owner) if is_join(j) and joined_run(j) == run_dir]


def list_runs(runs_dir=None, viewer: Viewer | None = None) -> list[RunInfo]:
    """The runs ``viewer`` may see (every run and join when ``viewer`` is None), newest first:
    their own, their joins, the runs others shared (one entry per run: a run they joined shows as
    their join), each with how many launched it, queued ones with their place and estimated
    wait, training ones with their estimated end.  A queue left without its engine (the
    machine restarted) gets one."""
    runs_dir = Path(runs_dir) if runs_dir else default_runs_dir()
    folders = run_folders(runs_dir)
    read = {run: run_info(run) for run in folders if not is_join(run)}  # each run read once
    runs = [*read.values(), *(_join_info(join, read) for join in folders if is_join(join))]
    _count_launchers(runs)
    _estimate(runs, queue_settings(runs_dir)["max_running"])
    if any(r.active and r.joined_by is None for r in runs):
        ensure_engine(runs_dir)
    if viewer is not None:
        runs = _visible(runs, viewer)
    return sorted(runs, key=lambda r: (r.started or "", r.queued_at or 0, r.name), reverse=True)


def _visible(runs: list[RunInfo], viewer: Viewer) -> list[RunInfo]:
    """What ``viewer`` sees: their joins, and the runs they may view that they did not join."""
    joins = [r for r in runs if r.joined_by == viewer.owner]
    joined = {r.path for r in joins}
    return joins + [r for r in runs if r.joined_by is None and r.path not in joined and viewer.can_view(r)]


def _count_launchers(runs: list[RunInfo]) -> None:
    counts: dict[Path, int] = {}
    for r in runs:
        if r.joined_by is not None or r.owner != ROOM_OWNER:
            counts[r.path] = counts.get(r.path, 0) + 1
    for r in runs:
        r.launchers = counts.get(r.path, 0)


def get_run(run_dir, viewer: Viewer) -> RunInfo:
    """The run, if ``viewer`` may see it (RunAccessError otherwise); a run they joined reads as
    their join, whichever of the two folders is named."""
    run_dir = Path(run_dir)
    info = run_info(run_dir)
    if is_run(run_dir) and viewer.can_manage(info):
        return info
    joinable = is_run(run_dir) and not is_join(run_dir)  # a run, not a join: the viewer may have joined it
    joins = joins_of(run_dir.parent.parent, run_dir, viewer.owner) if joinable else []
    if joins:
        return run_info(joins[0])
    if is_run(run_dir) and viewer.can_view(info):
        return info
    raise RunAccessError(f"There is no run {info.name!r} you can see.")


def seconds_per_step(metrics: list[dict]) -> float | None:
    """Seconds a step took so far, from the logged elapsed times (None before two records)."""
    if not metrics or metrics[-1].get("step", 0) <= 0:
        return None
    first, last = metrics[0], metrics[-1]
    steps = last["step"] - first["step"]
    if steps > 0:
        return (last["elapsed_s"] - first["elapsed_s"]) / steps
    return last["elapsed_s"] / last["step"]


def _estimate(runs: list[RunInfo], runs_at_once: int) -> None:
    """Fill in what the queue view says.  Every active run takes turns of ``TURN_S`` seconds on
    the ``runs_at_once`` GPT workers (``core.room.turns``), a run that has had none first: the n-th of
    those waits about ``ceil(n / runs_at_once)`` turns; a started one trains at its own step time for
    about ``runs_at_once / taking_turns`` of the time.  A join shows its run's figures."""
    trained = [r for r in runs if r.joined_by is None and r.active]
    waiting = sorted((r for r in trained if r.status == RunStatus.QUEUED),
                     key=lambda r: (r.queued_at or 0, r.name))
    for r in trained:
        r.taking_turns = len(trained)
        r.runs_at_once = runs_at_once
    for position, run in enumerate(waiting, 1):
        run.queue_position = position
        run.wait_s = math.ceil(position / runs_at_once) * TURN_S
    share = min(1.0, runs_at_once / max(1, len(trained)))
    for run in trained:
        if run.step_s is not None and run.max_steps:
            run.eta_s = run.step_s * max(0, run.max_steps - run.step) / share
    by_path = {r.path: r for r in trained}
    for join in runs:
        source = by_path.get(join.path) if join.joined_by is not None else None
        if source is not None:
            for name in ("queue_position", "wait_s", "taking_turns", "runs_at_once", "eta_s"):
                setattr(join, name, getattr(source, name))


def queue_state(runs_dir) -> tuple[list[Path], list[Path]]:
    """(folders of runs started and not ended, folders of queued runs oldest first), read from
    status files only, joins left out.  Call it holding the queue lock to act on it."""
    statuses = {run: observed_status(run) for run in run_folders(Path(runs_dir)) if not is_join(run)}
    training = [run for run, s in statuses.items() if s.get("status") in TRAINING]
    queued = sorted((run for run, s in statuses.items() if s.get("status") == RunStatus.QUEUED),
                    key=lambda run: (statuses[run].get("queued_at") or 0, str(run)))
    return training, queued


def launchers(runs_dir) -> dict[Path, list[str]]:
    """For every run folder (joins left out): the owners who launched it, its owner first (unless
    it is the room's) then its joiners, oldest join first."""
    runs_dir = Path(runs_dir)
    found: dict[Path, list[str]] = {}
    joins = []
    for folder in run_folders(runs_dir):
        if is_join(folder):
            joins.append(folder)
        else:
            found[folder] = [] if folder.parent.name == ROOM_OWNER else [folder.parent.name]
    for join in sorted(joins, key=lambda j: (j / JOIN_FILE).stat().st_mtime):
        target = joined_run(join)
        if target in found and join.parent.name not in found[target]:
            found[target].append(join.parent.name)
    return found


def owner_load(runs_dir: Path, owner: str) -> float:
    """How many runs' worth ``owner`` holds: each queued or training run they launched counts
    ``1 / n`` when ``n`` attendees launched it (it trains once, for all of them)."""
    return sum(1 / len(who) for run, who in launchers(runs_dir).items()
               if owner in who and observed_status(run).get("status") in ACTIVE)


def find_identical(runs_dir, identity: str) -> Path | None:
    """A run of this folder with ``identity`` (``core.room.identical``) that is finished or still
    queued or training, oldest first: what a new identical launch joins."""
    for run in sorted(run_folders(Path(runs_dir))):
        if not is_join(run) and read_identity(run) == identity:
            if observed_status(run).get("status") in (RunStatus.FINISHED, *ACTIVE):
                return run
    return None
