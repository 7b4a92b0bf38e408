"""Training runs that belong to someone: launch (into a fair queue, or joining an identical run),
stop, resume, share, sample and delete; and, re-exported for one import, listing them
(``core.room.queries``) and who may do what (``core.room.owners``).

Layout: ``runs_dir/<owner>/<run-name>/`` (``runs_dir`` defaults to ``./runs`` at the repository
root, or ``$BPE_EXPLORER_RUNS_DIR``).  A run launched here holds its config, corpus and tokenizer
(so it depends on no file or session it came from), and whatever the GPT worker writes; the file
names are ``core.runfolder.layout``'s.

Who may do what is decided here, not by which buttons a page shows: every operation takes a
:class:`Viewer`; anything not allowed raises :class:`RunAccessError`.

Launching never trains here: the run is written as ``RunStatus.QUEUED`` and the runs folder's engine
(``core.room.engine``, one process per runs folder, started on demand; its ``core.room.scheduler``)
gives it turns of a few seconds on its GPT workers, in turn with every other run, fair between
owners (``core.room.turns``).
A launch identical to a run that is finished, queued or training (the same corpus bytes,
tokenizer, settings and seed: ``core.room.identical``) trains nothing: the launcher gets a *join*,
their own name for that run, read-only, and a run launched by n attendees counts 1/n against
each one's cap.  Queue changes (enqueue, join, stop, resume, delete) happen under one lock on the
runs folder, so two Resume clicks queue one run, and a GPT worker holds a lock on the run folder
for its turn, so one GPT worker trains it.  Stopping a run between turns is immediate; during a
turn it asks the GPT worker (``stop.request``), which checkpoints and ends the turn.  A run whose
GPT worker died gets its turn again from its last checkpoint; three times in a row, it fails, its
last checkpoint stays, and :func:`resume_run` carries on from it.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..bpe import CharTokenizer
from ..settings import ServerSettings
from .identical import is_join, run_identity, write_identity, write_join
from .limits import (check_config, default_max_running, detect_device, runs_per_gpu, this_machine,
                     threads_per_run)
from ..runfolder.locks import locked
from .owners import (LOCAL_OWNER, ROOM_OWNER, SERVER, RunAccessError, Viewer, sanitize_run_name,
                     unique_run_name, validate_owner)
from .queries import (RunInfo, find_identical, get_run, is_run, joins_of, launchers, list_runs,
                       owner_load, pid_alive, process_alive, read_metrics, read_samples, run_info,
                       seconds_per_step, turn_alive)
from ..atomic import atomic_write, write_json
from ..runfolder.layout import (CORPUS_FILE, QUEUE_LOCK, SHARE_FILE, STOP_FILE, TOKENIZER_FILE,
                                TRAIN_CONFIG_FILE, default_runs_dir, now, read_json, write_queue_settings)
from ..runfolder.status import ACTIVE, TRAINING, RunStatus, read_status, write_status
from .spawn import ensure_engine

if TYPE_CHECKING:
    from ..gpt.config import TrainConfig

__all__ = [  # the actions here, then what a caller of them needs from the queries and owners
    "RunLimitError", "delete_run", "launch_run", "resume_run", "sample_run", "set_shared", "stop_run",
    "LOCAL_OWNER", "ROOM_OWNER", "SERVER", "RunAccessError", "RunInfo", "Viewer", "default_runs_dir",
    "get_run", "list_runs", "pid_alive", "read_metrics", "read_samples", "run_info",
    "sanitize_run_name", "seconds_per_step", "unique_run_name", "validate_owner",
]


class RunLimitError(ValueError):
    """The owner already has as many runs queued or training as the server allows."""


def _managed(run_dir, viewer: Viewer, verb: str) -> RunInfo:
    info = get_run(run_dir, viewer)
    if info.joined_by is not None and not viewer.instructor:
        raise RunAccessError(f"Run {info.name!r} is trained once for everyone who launched the same "
                             f"corpus, tokenizer, settings and seed: you can watch it and sample "
                             f"from it, but not {verb} it.")
    if not viewer.can_manage(info):
        raise RunAccessError(f"Run {info.name!r} was shared by another attendee: you can watch "
                             f"it and sample from it, but not {verb} it.")
    return info


def _check_owner_cap(runs_dir: Path, owner: str, settings: ServerSettings, share: float) -> None:
    """Refuse a launch that would give ``owner`` more than the server's runs' worth (a run that
    n attendees launched counts ``1 / n`` for each: ``queries.owner_load``)."""
    cap = settings.max_runs_per_owner
    load = owner_load(runs_dir, owner)
    if load + share <= cap + 1e-9:
        return
    held = (f"{load:.0f} run{'s' if round(load) != 1 else ''}" if abs(load - round(load)) < 1e-9
            else f"runs worth {load:.2g} (a run that n people launched counts 1/n)")
    raise RunLimitError(f"You already have {held} queued or training; this server allows {cap} per "
                        f"person. Wait for one to finish, or stop one, then launch again.")


def _scheduler_settings(settings: ServerSettings, device: str) -> dict:
    """``max_running`` (the server's setting, else from the device), the GPUs to spread over and
    how many runs each GPU trains at once (``core.room.limits.runs_per_gpu``)."""
    gpus = this_machine().gpus if device.startswith("cuda") else ()
    per_gpu = runs_per_gpu(gpus[0]) if gpus else 1
    return {"max_running": settings.max_running or default_max_running(device, len(gpus), per_gpu),
            "gpus": len(gpus), "runs_per_gpu": per_gpu}


def _enqueue(run_dir: Path, **fields) -> None:
    write_status(run_dir, RunStatus.QUEUED, in_turns=True, queued_at=time.time(), turn=None, pid=None,
                 host=None, ended=None, error=None, lost_turns=0, last_turn_id=None, **fields)


def launch_run(config: TrainConfig, name: str, runs_dir=None, *, owner: str = LOCAL_OWNER,
               text: str, tokenizer=None, settings: ServerSettings | None = None,
               room: bool = False, corpus_of: Path | None = None) -> RunInfo:
    """Queue ``config`` as ``runs_dir/owner/name``, to train on ``text`` with ``tokenizer`` (its
    characters when None), and return at once; the scheduler gives it turns on its GPT workers.

    Identical runs train once (``core.room.identical``): when a run of the same corpus bytes,
    tokenizer, settings and seed is finished, queued or training, ``runs_dir/owner/name``
    becomes ``owner``'s join of it: the returned ``RunInfo`` reads that run (``path``), under this
    ``name``, with ``joined_by == owner`` (read-only for them).  An owner who launched it
    already gets their run or join back.  ``room=True`` is for runs the room shares (a lesson's
    station): a run not trained yet is made the room's (owner ``ROOM_OWNER``, shared with
    everyone, managed by the instructor alone), and ``owner`` joins it like every later launcher.

    Refused with a ``ValueError`` subclass: a model over the device's bounds (``LimitError``),
    an owner holding ``max_runs_per_owner`` runs' worth already (``RunLimitError``; a run that n
    attendees launched counts 1/n), an existing run of that name.  CPU runs get ``cores //
    max_running`` torch threads unless ``config.threads`` says otherwise.  ``corpus_of``: a run
    folder holding this same ``text`` (a sweep's first run), whose corpus file the new run links
    rather than writes again: a page's thread writes a pasted 64 MB once, not once a run.
    """
    runs_dir = Path(runs_dir).absolute() if runs_dir else default_runs_dir()
    settings = settings or ServerSettings.from_env()
    tokenizer = tokenizer if tokenizer is not None else CharTokenizer.from_text(text)
    device = detect_device(config.device)
    check_config(config, device, tokenizer.vocab_size)
    caps = _scheduler_settings(settings, device)
    corpus = text.encode("utf-8")  # once, for its identity and its file: a pasted 8 MB takes a while
    identity = run_identity(corpus, tokenizer, config.to_dict(), device)
    run_dir = runs_dir / validate_owner(owner) / sanitize_run_name(name)
    run_dir.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with locked(runs_dir / QUEUE_LOCK):
        existing = find_identical(runs_dir, identity)
        if (room or owner == ROOM_OWNER) and existing is not None and existing.parent.name != ROOM_OWNER:
            existing = None  # the room's runs never rest on an attendee's, which they may stop or delete
        mine = _launched_by(runs_dir, existing, owner) if existing is not None else None
        if mine is not None:
            return run_info(mine)
        if run_dir.exists():
            raise ValueError(f"A run named {run_dir.name!r} already exists; pick another name.")
        if existing is None:
            _check_owner_cap(runs_dir, owner, settings, 1.0)
            existing = run_dir
            if room:  # the room's own run, which the launcher joins
                existing = runs_dir / ROOM_OWNER / unique_run_name(name, runs_dir, ROOM_OWNER)
                existing.parent.mkdir(exist_ok=True, mode=0o700)
            _write_run(existing, corpus, tokenizer, config, identity, caps, corpus_of)
            if room:
                write_json(existing / SHARE_FILE, {"shared": True})
        if existing != run_dir:
            _join(runs_dir, run_dir, existing, owner, settings)
        info = run_info(run_dir)
    ensure_engine(runs_dir)
    return info


def _launched_by(runs_dir: Path, run_dir: Path, owner: str) -> Path | None:
    """``owner``'s own folder for ``run_dir``: the run itself, or their join of it."""
    if run_dir.parent.name == owner:
        return run_dir
    return next(iter(joins_of(runs_dir, run_dir, owner)), None)


def _write_run(run_dir: Path, corpus: bytes, tokenizer, config: TrainConfig, identity: str,
               caps: dict, corpus_of: Path | None = None) -> None:
    """A new run folder, queued: everything the GPT workers need (under the queue lock)."""
    run_dir.mkdir(mode=0o700)
    if not _linked(corpus_of, run_dir / CORPUS_FILE, len(corpus)):
        with atomic_write(run_dir / CORPUS_FILE, "wb") as f:
            f.write(corpus)
    tokenizer.save(run_dir / TOKENIZER_FILE)
    write_json(run_dir / TRAIN_CONFIG_FILE, {**config.to_dict(), "resume": False,
               "threads": config.threads or threads_per_run(caps["max_running"])})
    write_identity(run_dir, identity)
    write_queue_settings(run_dir.parent.parent, **caps)
    _enqueue(run_dir, max_steps=config.max_steps)


def _linked(run_dir: Path | None, target: Path, size: int) -> bool:
    """Whether ``target`` is now a link to ``run_dir``'s corpus file, of ``size`` bytes (no GPT
    worker writes a corpus file, and deleting a run leaves the other links whole)."""
    source = None if run_dir is None else Path(run_dir) / CORPUS_FILE
    try:
        if source is None or source.stat().st_size != size:
            return False
        os.link(source, target)
    except OSError:  # another file system, or links not allowed: written instead
        return False
    return True


def _join(runs_dir: Path, join_dir: Path, run_dir: Path, owner: str, settings: ServerSettings) -> None:
    """``owner`` joins ``run_dir`` (under the queue lock): while the run is queued or training,
    their share of it counts against their cap."""
    active = read_status(run_dir).get("status") in ACTIVE
    share = 1 / (len(launchers(runs_dir).get(run_dir, [])) + 1) if active else 0.0
    _check_owner_cap(runs_dir, owner, settings, share)
    join_dir.mkdir(mode=0o700)
    write_join(join_dir, run_dir, runs_dir)


def resume_run(run_dir, viewer: Viewer, settings: ServerSettings | None = None) -> RunInfo:
    """Queue a stopped or killed run to continue from its last checkpoint, in its own folder, to
    the step it was launched for.  Its metrics go on from the checkpoint's step (the GPT worker drops
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
        who = launchers(runs_dir).get(info.path) or [info.owner]
        _check_owner_cap(runs_dir, info.owner, settings, 1 / len(who))
        device = read_json(info.path / TRAIN_CONFIG_FILE).get("device") or "auto"
        write_queue_settings(runs_dir, **_scheduler_settings(settings, detect_device(device)))
        (info.path / STOP_FILE).unlink(missing_ok=True)
        _enqueue(info.path, max_steps=info.max_steps)
    ensure_engine(runs_dir)
    return run_info(run_dir)


def set_shared(run_dir, viewer: Viewer, shared: bool) -> RunInfo:
    """Let everyone see this run read-only (``shared=True``), or make it private again."""
    info = _managed(run_dir, viewer, "share")
    write_json(info.path / SHARE_FILE, {"shared": bool(shared)})
    return run_info(info.path)


def sample_run(run_dir, viewer: Viewer, prompt: str = "\n", max_new_tokens: int = 200,
               temperature: float = 0.8, top_k: int | None = None, *, timeout: float = 60.0) -> str:
    """Text generated from the run's checkpoint in a child process (``core.room.probe``): by its
    owner, the instructor, its launchers, or anyone once it is shared (sampling reads the model
    and changes nothing).  A prompt the tokenizer cannot encode, a corrupt checkpoint or a
    timeout raise ProbeError."""
    info = get_run(run_dir, viewer)
    if not info.has_checkpoint:
        raise ValueError(f"Run {info.name!r} has no checkpoint yet.")
    from .probe import sample_checkpoint  # torch: only in the process that samples

    return sample_checkpoint(info.path, prompt, max_new_tokens, temperature, top_k, timeout=timeout)


def delete_run(run_dir, viewer: Viewer) -> None:
    """Remove a run's folder: checkpoint, metrics and all; only run folders, and never a run that
    is queued or training (stop it first).  A join goes at any time (the run trains on for the
    others), by its launcher or the instructor.  A run others joined is handed to the first of
    them instead: their join becomes the run, so nobody loses a run they launched."""
    run_dir = Path(run_dir)
    if not is_run(run_dir):
        raise ValueError(f"{run_dir.name!r} is not a run folder; nothing was deleted.")
    runs_dir = run_dir.parent.parent
    with locked(runs_dir / QUEUE_LOCK):
        if is_join(run_dir):
            if not (viewer.instructor or run_dir.parent.name == viewer.owner):
                raise RunAccessError(f"There is no run {run_dir.name!r} you can see.")
            shutil.rmtree(run_dir)
            return
        info = _managed(run_dir, viewer, "delete")
        if info.active:
            raise ValueError(f"Run {info.name!r} is still {info.status}; stop it before deleting it.")
        joins = joins_of(runs_dir, run_dir)
        if not joins:
            shutil.rmtree(run_dir)
            return
        _hand_over(runs_dir, run_dir, sorted(joins, key=lambda j: j.stat().st_mtime))


def _hand_over(runs_dir: Path, run_dir: Path, joins: list[Path]) -> None:
    """The run becomes the first joiner's (in their join's place); the other joins follow it."""
    heir = joins[0]
    shutil.rmtree(heir)
    os.rename(run_dir, heir)
    (heir / SHARE_FILE).unlink(missing_ok=True)
    for join in joins[1:]:
        write_join(join, heir, runs_dir)


def stop_run(run_dir, viewer: Viewer, timeout: float = 30.0) -> RunInfo:
    """Take a queued run out of the queue, or stop a training one: between turns at once; during
    a turn, the GPT worker is asked to checkpoint and end it, and waited for up to ``timeout``
    seconds (a GPT worker that does not stop by then is killed: the run stops at its last
    checkpoint)."""
    with locked(Path(run_dir).parent.parent / QUEUE_LOCK):
        info = _managed(run_dir, viewer, "stop")
        status = read_status(info.path)
        if not info.active:
            return info
        if status.get("status") == RunStatus.QUEUED or (status.get("in_turns") and not turn_alive(status)):
            write_status(info.path, RunStatus.STOPPED, queued_at=None, ended=now(), turn=None, pid=None)
            return run_info(info.path)
        if status.get("in_turns"):
            (info.path / STOP_FILE).touch()
    if not status.get("in_turns"):
        return _stop_process(info, timeout) if info.pid else info
    if not _wait(lambda: read_status(info.path).get("status") not in ACTIVE, timeout):
        _force_stop(info.path)
    return run_info(info.path)


def _force_stop(run_dir: Path) -> None:
    """A GPT worker that did not end its turn when asked: killed (it trains no other run during
    this turn), and the run stopped at its last checkpoint."""
    with locked(run_dir.parent.parent / QUEUE_LOCK):
        status = read_status(run_dir)
        if status.get("status") in ACTIVE:
            if process_alive(status):  # the GPT worker itself, never a later process given its pid
                os.kill(status["pid"], signal.SIGKILL)
            write_status(run_dir, RunStatus.STOPPED, queued_at=None, ended=now(), turn=None, pid=None)
        (run_dir / STOP_FILE).unlink(missing_ok=True)


def _stop_process(info: RunInfo, timeout: float) -> RunInfo:
    """Stop a run trained by a process of its own (the command line; an older version's
    GPT worker): SIGTERM -> final checkpoint -> status stopped; killed after ``timeout``."""
    try:
        os.kill(info.pid, signal.SIGTERM)
    except ProcessLookupError:
        return run_info(info.path)
    killed = not _wait(lambda: not pid_alive(info.pid), timeout)
    if killed:
        try:
            os.killpg(info.pid, signal.SIGKILL)  # it leads an OS session of its own: its group id is its pid
        except (ProcessLookupError, PermissionError):
            pass
        _wait(lambda: not pid_alive(info.pid), 5.0)
    status = read_status(info.path).get("status")
    # FAILED is how a reader sees a process that ended without a word: here, killed
    if status in (None, *TRAINING) or (killed and status == RunStatus.FAILED):
        write_status(info.path, RunStatus.STOPPED, pid=info.pid, ended=now(), error=None)
    return run_info(info.path)


def _wait(done, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
