"""Training runs that belong to someone: launch (into a fair queue), stop, resume, share, sample
and delete; and, re-exported for one import, listing them (``core.gpt.registry``) and who may do
what (``core.gpt.owners``).

Layout: ``runs_dir/<owner>/<run-name>/`` (``runs_dir`` defaults to ``./runs`` at the repository
root, or ``$BPE_EXPLORER_RUNS_DIR``).  A run launched here holds its config, corpus and tokenizer
(so it depends on no file or session it came from), and whatever the trainer writes; the file
names are ``core.gpt.rundir``'s.

Who may do what is decided here, not by which buttons a page shows: every operation takes a
:class:`Viewer`; anything not allowed raises :class:`RunAccessError`.

Launching never starts a process here: the run is written as ``queued`` and the scheduler
(``core.gpt.scheduler``, one process per runs folder, started on demand) starts queued runs in
first-in-first-out order while fewer than ``max_running`` train, and reaps them.  Queue
transitions (enqueue, cancel, dequeue, delete) happen under one lock on the runs folder, and a
trainer holds a lock on its run folder for its whole life (``core.gpt.loop``), so two Resume
clicks give one trainer.  Stopping sends SIGTERM, which the training loop turns into "save a final
checkpoint, then status stopped".  A run whose process died reads as failed; its last checkpoint
stays, and :func:`resume_run` carries on from it.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import torch

from ..bpe import CharTokenizer
from ..settings import ServerSettings
from .config import TrainConfig
from .device import detect_device
from .limits import check_config, default_max_running, threads_per_run
from .locks import locked
from .owners import (LOCAL_OWNER, SERVER, RunAccessError, Viewer, sanitize_run_name, unique_run_name,
                     validate_owner)
from .probe import sample_checkpoint
from .registry import (RunInfo, get_run, is_run, list_runs, owner_load, pid_alive, read_metrics,
                       read_samples, run_info, seconds_per_step)
from .rundir import (CORPUS_FILE, QUEUE_LOCK, SHARE_FILE, TOKENIZER_FILE, TRAIN_CONFIG_FILE,
                     TRAINING, default_runs_dir, now, read_json, read_status, write_json,
                     write_queue_settings, write_status, write_text)
from .spawn import ensure_scheduler

__all__ = [  # the actions here, then what a caller of them needs from the registry and owners
    "RunLimitError", "delete_run", "launch_run", "resume_run", "sample_run", "set_shared", "stop_run",
    "LOCAL_OWNER", "SERVER", "RunAccessError", "RunInfo", "Viewer", "default_runs_dir", "get_run",
    "list_runs", "pid_alive", "read_metrics", "read_samples", "run_info", "sanitize_run_name",
    "seconds_per_step", "unique_run_name", "validate_owner",
]


class RunLimitError(ValueError):
    """The owner already has as many runs queued or training as the server allows."""


def _managed(run_dir, viewer: Viewer, verb: str) -> RunInfo:
    info = get_run(run_dir, viewer)
    if not viewer.can_manage(info):
        raise RunAccessError(f"Run {info.name!r} was shared by another attendee: you can watch "
                             f"it and sample from it, but not {verb} it.")
    return info


def _check_owner_cap(runs_dir: Path, owner: str, settings: ServerSettings) -> None:
    cap = settings.max_runs_per_owner
    if owner_load(runs_dir, owner) >= cap:
        raise RunLimitError(f"You already have {cap} run{'s' if cap != 1 else ''} queued or "
                            f"training, the most this server allows per person. Wait for one to "
                            f"finish, or stop one, then launch again.")


def _enqueue(run_dir: Path, **fields) -> None:
    write_status(run_dir, "queued", queued_at=time.time(), pid=None, ended=None, error=None, **fields)


def _scheduler_settings(settings: ServerSettings, device: str) -> dict:
    """``max_running`` (the server's setting, else from the device) and the GPUs to spread over."""
    gpus = torch.cuda.device_count() if device.startswith("cuda") else 0
    return {"max_running": settings.max_running or default_max_running(device, gpus), "gpus": gpus}


def _enqueue_with_caps(runs_dir: Path, run_dir: Path, caps: dict, **fields) -> None:
    """Queue ``run_dir`` and tell the scheduler this server's caps (under the queue lock)."""
    write_queue_settings(runs_dir, **caps)
    _enqueue(run_dir, **fields)


def launch_run(config: TrainConfig, name: str, runs_dir=None, *, owner: str = LOCAL_OWNER,
               text: str, tokenizer=None, settings: ServerSettings | None = None) -> RunInfo:
    """Queue ``config`` as ``runs_dir/owner/name``, to train on ``text`` with ``tokenizer`` (its
    characters when None), and return at once; the scheduler starts it when a slot is free.

    Refused with a ``ValueError`` subclass: a model over the device's bounds (``LimitError``), an
    owner with ``max_runs_per_owner`` runs already queued or training (``RunLimitError``), an
    existing run of that name.  CPU runs get ``cores // max_running`` torch threads unless
    ``config.threads`` says otherwise.
    """
    runs_dir = Path(runs_dir).absolute() if runs_dir else default_runs_dir()
    settings = settings or ServerSettings.from_env()
    tokenizer = tokenizer if tokenizer is not None else CharTokenizer.from_text(text)
    device = detect_device(config.device)
    check_config(config, device, tokenizer.vocab_size)
    scheduler = _scheduler_settings(settings, device)
    run_dir = runs_dir / validate_owner(owner) / sanitize_run_name(name)
    run_dir.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with locked(runs_dir / QUEUE_LOCK):
        _check_owner_cap(runs_dir, owner, settings)
        if run_dir.exists():
            raise ValueError(f"A run named {run_dir.name!r} already exists; pick another name.")
        run_dir.mkdir(mode=0o700)
        write_text(run_dir / CORPUS_FILE, text)
        tokenizer.save(run_dir / TOKENIZER_FILE)
        write_json(run_dir / TRAIN_CONFIG_FILE, {**config.to_dict(), "resume": False,
                   "threads": config.threads or threads_per_run(scheduler["max_running"])})
        _enqueue_with_caps(runs_dir, run_dir, scheduler, max_steps=config.max_steps)
    ensure_scheduler(runs_dir)
    return run_info(run_dir)


def resume_run(run_dir, viewer: Viewer, settings: ServerSettings | None = None) -> RunInfo:
    """Queue a stopped or killed run to continue from its last checkpoint, in its own folder, to
    the step it was launched for.  Its metrics go on from the checkpoint's step (the loop drops
    what was logged after it).  Checked and queued under the runs folder's lock: of two Resume
    clicks at once, the second finds the run queued and is refused."""
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
        config = {**read_json(run_dir / TRAIN_CONFIG_FILE), "resume": True}
        write_json(run_dir / TRAIN_CONFIG_FILE, config)
        caps = _scheduler_settings(settings, detect_device(config.get("device") or "auto"))
        _enqueue_with_caps(runs_dir, run_dir, caps)
    ensure_scheduler(runs_dir)
    return run_info(run_dir)


def set_shared(run_dir, viewer: Viewer, shared: bool) -> RunInfo:
    """Let everyone see this run read-only (``shared=True``), or make it private again."""
    info = _managed(run_dir, viewer, "share")
    write_json(info.path / SHARE_FILE, {"shared": bool(shared)})
    return run_info(info.path)


def sample_run(run_dir, viewer: Viewer, prompt: str = "\n", max_new_tokens: int = 200,
               temperature: float = 0.8, top_k: int | None = None, *, timeout: float = 60.0) -> str:
    """Text generated from the run's checkpoint in a child process (``core.gpt.probe``): by its
    owner, the instructor, or anyone once it is shared (sampling reads the model and changes
    nothing).  A prompt the tokenizer cannot encode, a corrupt checkpoint or a timeout raise
    ProbeError."""
    info = get_run(run_dir, viewer)
    if not info.has_checkpoint:
        raise ValueError(f"Run {info.name!r} has no checkpoint yet.")
    return sample_checkpoint(info.path, prompt, max_new_tokens, temperature, top_k, timeout=timeout)


def delete_run(run_dir, viewer: Viewer) -> None:
    """Remove a run's folder: checkpoint, metrics and all.  Only run folders, and never a run
    that is queued or training (stop it first)."""
    run_dir = Path(run_dir)
    if not is_run(run_dir):
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
            write_status(run_dir, "stopped", queued_at=None, ended=now())
            return run_info(run_dir)
    if not info.training or not info.pid:
        return info
    try:
        os.kill(info.pid, signal.SIGTERM)
    except ProcessLookupError:
        return run_info(run_dir)
    killed = not _wait_gone(info.pid, timeout)
    if killed:
        try:
            os.killpg(info.pid, signal.SIGKILL)  # the run is its own session: its group id is its pid
        except (ProcessLookupError, PermissionError):
            pass
        _wait_gone(info.pid, 5.0)
    status = read_status(run_dir).get("status")
    # "failed" is how the scheduler records a process that ended without a word: here, killed
    if status in (None, *TRAINING) or (killed and status == "failed"):
        write_status(run_dir, "stopped", pid=info.pid, ended=now(), error=None)
    return run_info(run_dir)


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
