"""Reading runs: one run's state from its folder (:class:`RunInfo`), the runs a viewer may see,
the queue and its estimated waits, and whether a training process is still alive.

Reads only: no function here writes a run's files (a run whose status says it trains but whose
process is gone *reads* as failed; the scheduler records that when it reaps the process, see
:func:`died`).  Torch-free, like the scheduler that uses it.  Leaves out launching, stopping and
the rest of a run's changes (``core.gpt.runs``).
"""

from __future__ import annotations

import heapq
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from .owners import LOCAL_OWNER, OWNER_PATTERN, RunAccessError, Viewer
from .rundir import (ACTIVE, CHECKPOINT_FILE, CONFIG_FILE, LAUNCH_FILE, LOG_FILE, METRICS_FILE,
                     SAMPLES_FILE, SHARE_FILE, STATUS_FILE, TRAIN_CONFIG_FILE, TRAINING,
                     default_runs_dir, now, queue_settings, read_json, read_jsonl, read_status)
from .spawn import ensure_scheduler


@dataclass
class RunInfo:
    name: str
    path: Path
    status: str                 # queued / starting / running / finished / failed / stopped
    owner: str = LOCAL_OWNER
    shared: bool = False
    pid: int | None = None
    started: str | None = None
    ended: str | None = None
    error: str | None = None
    step: int = 0               # the last logged step
    max_steps: int | None = None
    queued_at: float | None = None
    queue_position: int | None = None   # 1 = next to start (set by list_runs)
    wait_s: float | None = None         # estimated seconds until it starts (set by list_runs)
    config: dict = field(default_factory=dict)   # config.json, once training has started
    last: dict = field(default_factory=dict)     # the last metrics record

    @property
    def active(self) -> bool:
        """Queued or training: it holds one of its owner's slots, and cannot be deleted."""
        return self.status in ACTIVE

    @property
    def training(self) -> bool:
        return self.status in TRAINING

    @property
    def has_checkpoint(self) -> bool:
        return (self.path / CHECKPOINT_FILE).is_file()

    @property
    def resumable(self) -> bool:
        """Stopped or killed with a checkpoint, and launched from the page (see resume_run)."""
        return (self.status in ("stopped", "failed") and self.has_checkpoint
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
    return {"status": "failed", "error": error, "ended": now()}


def observed_status(run_dir) -> dict:
    """``status.json`` (no metrics read), except that a training process found gone reads as
    failed: the scheduler records it when it reaps the process, and this covers a scheduler that
    is gone too (the machine restarted)."""
    status = read_status(run_dir)
    if status.get("status") in TRAINING and not pid_alive(status.get("pid")):
        status = read_status(run_dir)  # it may have just finished: read once more
        if status.get("status") in TRAINING:
            status = {**status, **died(run_dir)}
    return status


def run_info(run_dir) -> RunInfo:
    """The run's state read from its folder."""
    run_dir = Path(run_dir)
    launch = read_json(run_dir / LAUNCH_FILE)
    status = observed_status(run_dir)
    metrics = read_metrics(run_dir)
    return RunInfo(
        name=run_dir.name, path=run_dir, status=status.get("status") or "failed",
        owner=run_dir.parent.name, shared=bool(read_json(run_dir / SHARE_FILE).get("shared")),
        pid=status.get("pid") or launch.get("pid"),
        started=status.get("started") or launch.get("launched"),
        ended=status.get("ended"), error=status.get("error"),
        step=metrics[-1]["step"] if metrics else int(status.get("step") or 0),
        max_steps=status.get("max_steps") or read_json(run_dir / TRAIN_CONFIG_FILE).get("max_steps"),
        queued_at=status.get("queued_at"), config=read_json(run_dir / CONFIG_FILE),
        last=metrics[-1] if metrics else {})


def is_run(path: Path) -> bool:
    return path.is_dir() and ((path / LAUNCH_FILE).is_file() or (path / STATUS_FILE).is_file())


def run_folders(runs_dir: Path, owner: str | None = None) -> list[Path]:
    """The run folders in ``runs_dir`` (only ``owner``'s when given)."""
    if not runs_dir.is_dir():
        return []
    owners = [runs_dir / owner] if owner else runs_dir.iterdir()
    return [run for folder in owners if folder.is_dir() and OWNER_PATTERN.fullmatch(folder.name)
            for run in folder.iterdir() if is_run(run)]


def list_runs(runs_dir=None, viewer: Viewer | None = None) -> list[RunInfo]:
    """The runs ``viewer`` may see (every run when ``viewer`` is None), newest first, queued ones
    with their place in line and estimated wait.  A queue left without its scheduler (the
    machine restarted) gets one."""
    runs_dir = Path(runs_dir) if runs_dir else default_runs_dir()
    runs = [run_info(run) for run in run_folders(runs_dir)]
    _estimate_waits(runs, queue_settings(runs_dir)["max_running"])
    if any(r.status == "queued" for r in runs):
        ensure_scheduler(runs_dir)
    visible = [r for r in runs if viewer is None or viewer.can_view(r)]
    return sorted(visible, key=lambda r: (r.started or "", r.queued_at or 0, r.name), reverse=True)


def get_run(run_dir, viewer: Viewer) -> RunInfo:
    """The run, if ``viewer`` may see it (RunAccessError otherwise)."""
    info = run_info(run_dir)
    if not is_run(info.path) or not viewer.can_view(info):
        raise RunAccessError(f"There is no run {info.name!r} you can see.")
    return info


def seconds_per_step(metrics: list[dict]) -> float | None:
    """Seconds a step took so far, from the logged elapsed times (None before two records)."""
    if not metrics or metrics[-1].get("step", 0) <= 0:
        return None
    first, last = metrics[0], metrics[-1]
    steps = last["step"] - first["step"]
    if steps > 0:
        return (last["elapsed_s"] - first["elapsed_s"]) / steps
    return last["elapsed_s"] / last["step"]


def _estimate_waits(runs: list[RunInfo], max_running: int) -> None:
    """Fill in queued runs' place in line and estimated wait: the running runs' remaining time
    (their measured step time × steps left), then each run ahead in line taking as long per step
    as the running ones do on average."""
    queued = sorted((r for r in runs if r.status == "queued"), key=lambda r: (r.queued_at or 0, r.name))
    per_step = {r.name: seconds_per_step(read_metrics(r.path)) for r in runs if r.training}
    known = [s for s in per_step.values() if s is not None]
    typical = sum(known) / len(known) if known else None
    slots = [0.0] * max(0, max_running - len(per_step))
    for run in runs:
        if run.training:
            left = (run.max_steps or 0) - run.step
            slots.append(per_step[run.name] * left if per_step[run.name] is not None else float("nan"))
    heapq.heapify(slots)
    for position, run in enumerate(queued, 1):
        run.queue_position = position
        start = heapq.heappop(slots) if slots else float("nan")
        run.wait_s = None if math.isnan(start) else start  # NaN: a run ahead has no step time yet
        own = typical * (run.max_steps or 0) if typical is not None else float("nan")
        heapq.heappush(slots, start + own)


def queue_state(runs_dir) -> tuple[list[Path], list[Path]]:
    """(folders of runs training now, folders of queued runs oldest first): what the scheduler
    needs, read from status files only.  Call it holding the queue lock to act on it."""
    statuses = {run: observed_status(run) for run in run_folders(Path(runs_dir))}
    training = [run for run, s in statuses.items() if s.get("status") in TRAINING]
    queued = sorted((run for run, s in statuses.items() if s.get("status") == "queued"),
                    key=lambda run: (statuses[run].get("queued_at") or 0, str(run)))
    return training, queued


def owner_load(runs_dir: Path, owner: str) -> int:
    """How many of ``owner``'s runs are queued or training."""
    return sum(observed_status(run).get("status") in ACTIVE for run in run_folders(runs_dir, owner))
