"""Training runs that belong to someone: launch (into a fair queue), list, stop, resume, share,
delete, and notice the ones that died.

Layout: ``runs_dir/<owner>/<run-name>/`` (``runs_dir`` defaults to ``./runs`` at the repository
root, or ``$BPE_EXPLORER_RUNS_DIR``).  A run folder holds ``train_config.json``, the corpus and
tokenizer it trains on, ``status.json``, ``launch.json`` (pid and command), ``train.log``,
``shared.json`` once shared, and whatever ``core.train`` writes (``metrics.jsonl``,
``samples.jsonl``, ``ckpt.pt``).  Owner ids and run names are checked to a safe character set, so
neither can point outside ``runs_dir``.

Who may do what is decided here, not by which buttons a page shows: every operation takes a
:class:`Viewer`.  An owner lists, stops, resumes, deletes, shares and samples their own runs; a run
they share is listed for everyone, read-only (its curves, samples and bits-per-character line, and
sampling from its checkpoint: that reads the model and changes nothing); an instructor sees and
manages every run.  Anything else raises :class:`RunAccessError`.

Launching never starts a process here: the run is written as ``queued`` and the scheduler
(``core.scheduler``, one process per runs folder, started on demand) starts queued runs in
first-in-first-out order while fewer than ``max_running`` train, and reaps them.  Queue
transitions (enqueue, cancel, dequeue, delete) happen under one lock on the runs folder, and a
trainer holds a lock on its run folder for its whole life (``core.train``), so two Resume clicks
give one trainer.  Stopping sends SIGTERM, which the training loop turns into "save a final
checkpoint, then status stopped".  A run whose status says running but whose process is gone is
marked failed; its last checkpoint stays, and :func:`resume_run` carries on from it.
"""

from __future__ import annotations

import heapq
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from .locks import is_locked, locked
from .runfiles import (CONFIG_FILE, METRICS_FILE, SAMPLES_FILE, STATUS_FILE, read_json,
                       read_jsonl, write_json)
from .settings import ServerSettings

ROOT = Path(__file__).resolve().parent.parent
LAUNCH_FILE, TRAIN_CONFIG_FILE, LOG_FILE = "launch.json", "train_config.json", "train.log"
CORPUS_FILE, TOKENIZER_FILE, SHARE_FILE = "corpus.txt", "tokenizer.json", "shared.json"
QUEUE_LOCK, SCHEDULER_LOCK, SCHEDULER_FILE = ".queue.lock", ".scheduler.lock", ".scheduler.json"
STATUSES = ("queued", "starting", "running", "finished", "failed", "stopped")
LOCAL_OWNER = "local"
_OWNER = re.compile(r"[A-Za-z0-9_-]{1,64}")


class RunAccessError(ValueError):
    """This viewer may not see, or may not change, this run."""


class RunLimitError(ValueError):
    """The owner already has as many runs queued or training as the server allows."""


def validate_owner(owner: str) -> str:
    """``owner`` if it is 1-64 letters, digits, ``_`` or ``-`` (a folder name, never a path)."""
    if not isinstance(owner, str) or not _OWNER.fullmatch(owner):
        raise RunAccessError(f"{owner!r} is not a valid owner id (letters, digits, _ and - only).")
    return owner


@dataclass(frozen=True)
class Viewer:
    """Who is asking: an owner id, and whether they hold the instructor key."""

    owner: str
    instructor: bool = False

    def __post_init__(self) -> None:
        validate_owner(self.owner)

    def can_manage(self, run: RunInfo) -> bool:
        return self.instructor or run.owner == self.owner

    def can_view(self, run: RunInfo) -> bool:
        return self.can_manage(run) or run.shared


SERVER = Viewer(LOCAL_OWNER, instructor=True)  # scripts and tests at the server's own keyboard


def default_runs_dir() -> Path:
    return Path(os.environ.get("BPE_EXPLORER_RUNS_DIR") or ROOT / "runs")


def sanitize_run_name(name: str) -> str:
    """A safe folder name: letters, digits, ``. _ -``; anything else becomes ``-``.

    >>> sanitize_run_name("../../etc/passwd")
    'etc-passwd'
    """
    clean = re.sub(r"[^A-Za-z0-9._-]+", "-", name or "").strip(".-_")[:64].strip(".-_")
    if not clean:
        raise ValueError(f"Run name {name!r} has no letters or digits; pick a name like 'char-tiny'.")
    return clean


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
        return self.status in ("queued", "starting", "running")

    @property
    def training(self) -> bool:
        return self.status in ("starting", "running")

    @property
    def has_checkpoint(self) -> bool:
        return (self.path / "ckpt.pt").is_file()

    @property
    def resumable(self) -> bool:
        """Stopped or killed with a checkpoint, and launched by this module (see resume_run)."""
        return (self.status in ("stopped", "failed") and self.has_checkpoint
                and (self.path / TRAIN_CONFIG_FILE).is_file())


# -- reading a run folder -----------------------------------------------------------------------
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


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _mark_dead(run_dir: Path, status: dict) -> dict:
    """Record that a training process ended without saying so (killed, out of memory)."""
    log = read_log(run_dir, 600).strip()
    error = ("The training process ended without finishing (killed, or out of memory?)."
             + (f" Last output: {log.splitlines()[-1]}" if log else ""))
    status = {**status, "status": "failed", "error": error, "ended": _now()}
    write_json(run_dir / STATUS_FILE, status)
    return status


def run_info(run_dir) -> RunInfo:
    """The run's state read from its folder; a dead process still marked running becomes failed."""
    run_dir = Path(run_dir)
    launch = read_json(run_dir / LAUNCH_FILE)
    status = _status(run_dir)
    pid = status.get("pid") or launch.get("pid")
    metrics = read_metrics(run_dir)
    train_config = read_json(run_dir / TRAIN_CONFIG_FILE)
    return RunInfo(
        name=run_dir.name, path=run_dir, status=status.get("status") or "failed",
        owner=run_dir.parent.name, shared=bool(read_json(run_dir / SHARE_FILE).get("shared")),
        pid=pid, started=status.get("started") or launch.get("launched"),
        ended=status.get("ended"), error=status.get("error"),
        step=metrics[-1]["step"] if metrics else int(status.get("step") or 0),
        max_steps=status.get("max_steps") or train_config.get("max_steps"),
        queued_at=status.get("queued_at"), config=read_json(run_dir / CONFIG_FILE),
        last=metrics[-1] if metrics else {})


def _is_run(path: Path) -> bool:
    return path.is_dir() and ((path / LAUNCH_FILE).is_file() or (path / STATUS_FILE).is_file())


def _run_folders(runs_dir: Path) -> list[Path]:
    if not runs_dir.is_dir():
        return []
    return [run for owner in runs_dir.iterdir() if owner.is_dir() and _OWNER.fullmatch(owner.name)
            for run in owner.iterdir() if _is_run(run)]


def list_runs(runs_dir=None, viewer: Viewer | None = None) -> list[RunInfo]:
    """The runs ``viewer`` may see (every run when ``viewer`` is None), newest first, queued ones
    with their place in line and estimated wait.  A queue left without its scheduler (the
    machine restarted) gets one."""
    runs_dir = Path(runs_dir) if runs_dir else default_runs_dir()
    runs = [run_info(run) for run in _run_folders(runs_dir)]
    _estimate_waits(runs, int(read_json(runs_dir / SCHEDULER_FILE).get("max_running") or 1))
    if any(r.status == "queued" for r in runs):
        ensure_scheduler(runs_dir)
    visible = [r for r in runs if viewer is None or viewer.can_view(r)]
    return sorted(visible, key=lambda r: (r.started or "", r.queued_at or 0, r.name), reverse=True)


def get_run(run_dir, viewer: Viewer) -> RunInfo:
    """The run, if ``viewer`` may see it (RunAccessError otherwise)."""
    info = run_info(run_dir)
    if not _is_run(info.path) or not viewer.can_view(info):
        raise RunAccessError(f"There is no run {info.name!r} you can see.")
    return info


def _managed(run_dir, viewer: Viewer, verb: str) -> RunInfo:
    info = get_run(run_dir, viewer)
    if not viewer.can_manage(info):
        raise RunAccessError(f"Run {info.name!r} was shared by another attendee: you can watch "
                             f"it and sample from it, but not {verb} it.")
    return info


# -- the queue ----------------------------------------------------------------------------------
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


def _status(run_dir: Path) -> dict:
    """``status.json`` alone (no metrics read), a dead training process marked failed."""
    status = read_json(run_dir / STATUS_FILE)
    if status.get("status") in ("starting", "running") and not pid_alive(status.get("pid")):
        # The process may have just finished: read its status once more before calling it dead.
        status = read_json(run_dir / STATUS_FILE)
        if status.get("status") in ("starting", "running"):
            status = _mark_dead(run_dir, status)
    return status


def queue_state(runs_dir) -> tuple[list[Path], list[Path]]:
    """(folders of runs training now, folders of queued runs oldest first): what the scheduler
    needs, read from status files only.  Call it holding the queue lock to act on it."""
    statuses = {run: _status(run) for run in _run_folders(Path(runs_dir))}
    training = [run for run, s in statuses.items() if s.get("status") in ("starting", "running")]
    queued = sorted((run for run, s in statuses.items() if s.get("status") == "queued"),
                    key=lambda run: (statuses[run].get("queued_at") or 0, str(run)))
    return training, queued


def _owner_load(runs_dir: Path, owner: str) -> int:
    folder = runs_dir / owner
    if not folder.is_dir():
        return 0
    return sum(_status(p).get("status") in ("queued", "starting", "running")
               for p in folder.iterdir() if _is_run(p))


def _check_owner_cap(runs_dir: Path, owner: str, settings: ServerSettings) -> None:
    cap = settings.max_runs_per_owner
    if _owner_load(runs_dir, owner) >= cap:
        raise RunLimitError(f"You already have {cap} run{'s' if cap != 1 else ''} queued or "
                            f"training, the most this server allows per person. Wait for one to "
                            f"finish, or stop one, then launch again.")


def _enqueue(run_dir: Path, status: dict) -> None:
    write_json(run_dir / STATUS_FILE, {**status, "status": "queued", "queued_at": time.time(),
                                       "pid": None, "ended": None, "error": None})


def _scheduler_settings(settings: ServerSettings, device: str) -> dict:
    """``max_running`` (the server's setting, else from the device) and the GPUs to spread over."""
    from .limits import default_max_running  # torch stays out of the scheduler's imports

    gpus = 0
    if device.startswith("cuda"):
        import torch

        gpus = torch.cuda.device_count()
    return {"max_running": settings.max_running or default_max_running(device, gpus), "gpus": gpus}


def ensure_scheduler(runs_dir, max_running: int | None = None, gpus: int | None = None) -> None:
    """Start ``python -m core.scheduler runs_dir`` unless one holds the folder's scheduler lock.
    Without arguments it reuses the last scheduler's settings.  Its exit status is collected by
    a waiting thread, so it never lingers as a zombie of this process."""
    runs_dir = Path(runs_dir)
    if is_locked(runs_dir / SCHEDULER_LOCK):
        return
    saved = read_json(runs_dir / SCHEDULER_FILE)
    max_running = max_running or int(saved.get("max_running") or 1)
    gpus = int(saved.get("gpus") or 0) if gpus is None else gpus
    cmd = [sys.executable, "-m", "core.scheduler", str(runs_dir.resolve()),
           "--max-running", str(max_running), "--gpus", str(gpus)]
    with open(runs_dir / ".scheduler.log", "ab") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    threading.Thread(target=proc.wait, name=f"reap-scheduler-{proc.pid}", daemon=True).start()


# -- launching and stopping ---------------------------------------------------------------------
def unique_run_name(name: str, runs_dir=None, owner: str = LOCAL_OWNER) -> str:
    folder = (Path(runs_dir) if runs_dir else default_runs_dir()) / validate_owner(owner)
    base = sanitize_run_name(name)
    candidate, k = base, 2
    while (folder / candidate).exists():
        candidate, k = f"{base}-{k}", k + 1
    return candidate


def launch_run(config, name: str, runs_dir=None, *, owner: str = LOCAL_OWNER,
               text: str | None = None, tokenizer=None,
               settings: ServerSettings | None = None) -> RunInfo:
    """Queue ``config`` (a ``TrainConfig``) as ``runs_dir/owner/name`` and return at once; the
    scheduler starts it when a slot is free.

    ``text`` (the corpus) and ``tokenizer`` are saved into the run folder, so the run does not
    depend on the files or the session it came from.  Refused with a ``ValueError`` subclass: a
    model over the device's bounds (``LimitError``), an owner with ``max_runs_per_owner`` runs
    already queued or training (``RunLimitError``), an existing run of that name.  CPU runs get
    ``cores // max_running`` torch threads unless ``config.threads`` says otherwise.
    """
    from .device import detect_device
    from .limits import check_config, threads_per_run

    runs_dir = Path(runs_dir) if runs_dir else default_runs_dir()
    settings = settings or ServerSettings.from_env()
    device = detect_device(config.device)
    check_config(config, device, tokenizer.vocab_size if tokenizer is not None else 0)
    scheduler = _scheduler_settings(settings, device)
    run_dir = runs_dir / validate_owner(owner) / sanitize_run_name(name)
    run_dir.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with locked(runs_dir / QUEUE_LOCK):
        _check_owner_cap(runs_dir, owner, settings)
        if run_dir.exists():
            raise ValueError(f"A run named {run_dir.name!r} already exists; pick another name.")
        run_dir.mkdir(mode=0o700)
        _write_run_files(run_dir, config, text, tokenizer,
                         threads_per_run(scheduler["max_running"]))
        _enqueue(run_dir, {"max_steps": config.max_steps})
    ensure_scheduler(runs_dir, **scheduler)
    return run_info(run_dir)


def _write_run_files(run_dir: Path, config, text, tokenizer, threads: int) -> None:
    settings = config.to_dict()
    if text is not None:
        (run_dir / CORPUS_FILE).write_text(text, encoding="utf-8")
        settings["corpus"] = str((run_dir / CORPUS_FILE).resolve())
    elif settings.get("corpus"):
        settings["corpus"] = str(Path(settings["corpus"]).resolve())
    if tokenizer is not None:
        tokenizer.save(run_dir / TOKENIZER_FILE)
        settings["tokenizer_file"] = str((run_dir / TOKENIZER_FILE).resolve())
    settings["resume"] = False
    settings["threads"] = settings.get("threads") or threads
    write_json(run_dir / TRAIN_CONFIG_FILE, settings)


def resume_run(run_dir, viewer: Viewer, settings: ServerSettings | None = None) -> RunInfo:
    """Queue a stopped or killed run to continue from its last checkpoint, in its own folder, to
    the step it was launched for.  Its metrics go on from the checkpoint's step (``core.train``
    drops what was logged after it).  Checked and queued under the runs folder's lock: of two
    Resume clicks at once, the second finds the run queued and is refused."""
    run_dir = Path(run_dir)
    runs_dir = run_dir.parent.parent
    settings = settings or ServerSettings.from_env()
    with locked(runs_dir / QUEUE_LOCK):
        info = _managed(run_dir, viewer, "resume")
        if info.active:
            raise ValueError(f"Run {info.name!r} is already {info.status}.")
        if not info.resumable:
            raise ValueError(f"Run {info.name!r} cannot be resumed: it needs a checkpoint and its "
                             f"{TRAIN_CONFIG_FILE} (runs started with `python -m core.train` "
                             f"resume with --resume).")
        _check_owner_cap(runs_dir, info.owner, settings)
        write_json(run_dir / TRAIN_CONFIG_FILE,
                   {**read_json(run_dir / TRAIN_CONFIG_FILE), "resume": True})
        _enqueue(run_dir, read_json(run_dir / STATUS_FILE))
    ensure_scheduler(runs_dir)
    return run_info(run_dir)


def start_trainer(run_dir: Path, env: dict | None = None) -> subprocess.Popen:
    """``python -m core.train`` on the folder's training config, in a session of its own, writing
    to ``train.log``; status becomes ``starting`` with its pid.  Called by the scheduler (which
    holds the queue lock, and reaps the process)."""
    cmd = [sys.executable, "-m", "core.train", "--config", str((run_dir / TRAIN_CONFIG_FILE).resolve()),
           "--run-dir", str(run_dir.resolve())]
    with open(run_dir / LOG_FILE, "ab") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})
    write_json(run_dir / LAUNCH_FILE, {"pid": proc.pid, "command": cmd, "launched": _now()})
    write_json(run_dir / STATUS_FILE, {**read_json(run_dir / STATUS_FILE), "status": "starting",
                                       "pid": proc.pid, "queued_at": None})
    return proc


def set_shared(run_dir, viewer: Viewer, shared: bool) -> RunInfo:
    """Let everyone see this run read-only (``shared=True``), or make it private again."""
    info = _managed(run_dir, viewer, "share")
    write_json(info.path / SHARE_FILE, {"shared": bool(shared)})
    return run_info(info.path)


def sample_run(run_dir, viewer: Viewer, prompt: str = "\n", max_new_tokens: int = 200,
               temperature: float = 0.8, top_k: int | None = None, *, timeout: float = 60.0) -> str:
    """Text generated from the run's checkpoint in a child process (``core.probe``): by its owner,
    the instructor, or anyone once it is shared (sampling reads the model and changes nothing).
    A prompt the tokenizer cannot encode, a corrupt checkpoint or a timeout raise ProbeError."""
    from .probe import sample_checkpoint

    info = get_run(run_dir, viewer)
    if not info.has_checkpoint:
        raise ValueError(f"Run {info.name!r} has no checkpoint yet.")
    return sample_checkpoint(info.path, prompt, max_new_tokens, temperature, top_k, timeout=timeout)


def delete_run(run_dir, viewer: Viewer) -> None:
    """Remove a run's folder: checkpoint, metrics and all.  Only run folders, and never a run
    that is queued or training (stop it first)."""
    run_dir = Path(run_dir)
    if not _is_run(run_dir):
        raise ValueError(f"{run_dir.name!r} is not a run folder; nothing was deleted.")
    with locked(run_dir.parent.parent / QUEUE_LOCK):
        info = _managed(run_dir, viewer, "delete")
        if info.active:
            raise ValueError(f"Run {info.name!r} is still {info.status}; stop it before deleting it.")
        shutil.rmtree(run_dir)


def stop_run(run_dir, viewer: Viewer, timeout: float = 30.0) -> RunInfo:
    """Take a queued run out of the queue, or ask a training one to stop (SIGTERM -> final
    checkpoint -> status stopped) and wait up to ``timeout`` seconds; a process that does not
    stop by then is killed and marked stopped."""
    run_dir = Path(run_dir)
    with locked(run_dir.parent.parent / QUEUE_LOCK):
        info = _managed(run_dir, viewer, "stop")
        if info.status == "queued":
            write_json(run_dir / STATUS_FILE, {**read_json(run_dir / STATUS_FILE),
                                               "status": "stopped", "queued_at": None, "ended": _now()})
            return run_info(run_dir)
    if not info.training or not info.pid:
        return info
    try:
        os.kill(info.pid, signal.SIGTERM)
    except ProcessLookupError:
        return run_info(run_dir)
    if not _wait_gone(info.pid, timeout):
        try:
            os.killpg(info.pid, signal.SIGKILL)  # the run is its own session: its group id is its pid
        except (ProcessLookupError, PermissionError):
            pass
        _wait_gone(info.pid, 5.0)
    status = read_json(run_dir / STATUS_FILE)
    if status.get("status") in (None, "starting", "running"):
        write_json(run_dir / STATUS_FILE, {**status, "status": "stopped", "pid": info.pid,
                                           "ended": _now(), "error": None})
    return run_info(run_dir)


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
