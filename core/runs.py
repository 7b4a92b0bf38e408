"""Training runs as background processes: launch, list, stop, resume, delete, and notice the
ones that died.

A run is a folder under the runs directory (default ``./runs`` at the repository root, or
``$BPE_EXPLORER_RUNS_DIR``) holding ``train_config.json``, the corpus and tokenizer it trains on,
``launch.json`` (pid and command), ``train.log`` (the process's output) and whatever
``core.train`` writes (``status.json``, ``metrics.jsonl``, ``samples.jsonl``, ``ckpt.pt``).

Each run is its own process (``python -m core.train`` in a new session), so a Streamlit rerun or
a closed browser tab does not end it; everything is read back from the folder.  Stopping sends
SIGTERM, which the training loop turns into "save a final checkpoint, then status stopped".  A run
whose status says running but whose process is gone is marked failed; its last checkpoint stays,
and :func:`resume_run` carries on from it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from .train import (CONFIG_FILE, METRICS_FILE, SAMPLES_FILE, STATUS_FILE, TrainConfig, read_jsonl,
                    write_json)

ROOT = Path(__file__).resolve().parent.parent
LAUNCH_FILE, TRAIN_CONFIG_FILE, LOG_FILE = "launch.json", "train_config.json", "train.log"
CORPUS_FILE, TOKENIZER_FILE = "corpus.txt", "tokenizer.json"
STATUSES = ("starting", "running", "finished", "failed", "stopped")

_children: dict[int, subprocess.Popen] = {}  # processes this process started, reaped on poll


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
    status: str                 # starting / running / finished / failed / stopped
    pid: int | None = None
    started: str | None = None
    ended: str | None = None
    error: str | None = None
    step: int = 0               # the last logged step
    max_steps: int | None = None
    config: dict = field(default_factory=dict)   # config.json, once training has started
    last: dict = field(default_factory=dict)     # the last metrics record

    @property
    def active(self) -> bool:
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
def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


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
    child = _children.get(pid)
    if child is not None and child.poll() is not None:
        _children.pop(pid, None)
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


def run_info(run_dir) -> RunInfo:
    """The run's state read from its folder; a dead process still marked running becomes failed."""
    run_dir = Path(run_dir)
    launch = _read_json(run_dir / LAUNCH_FILE)
    status = _read_json(run_dir / STATUS_FILE)
    metrics = read_metrics(run_dir)
    pid = status.get("pid") or launch.get("pid")
    state = status.get("status") or ("starting" if launch else "failed")
    error = status.get("error")
    if state in ("starting", "running") and not pid_alive(pid):
        # The process may have just finished: read its status once more before calling it dead.
        status = _read_json(run_dir / STATUS_FILE)
        state = status.get("status") or state
        error = status.get("error")
        if state in ("starting", "running"):
            log = read_log(run_dir, 600).strip()
            error = ("The training process ended without finishing (killed, or out of memory?)."
                     + (f" Last output: {log.splitlines()[-1]}" if log else ""))
            status = {**status, "status": "failed", "pid": pid, "error": error,
                      "ended": datetime.now(timezone.utc).isoformat(timespec="seconds")}
            write_json(run_dir / STATUS_FILE, status)
            state = "failed"
    train_config = _read_json(run_dir / TRAIN_CONFIG_FILE)
    return RunInfo(
        name=run_dir.name, path=run_dir, status=state, pid=pid,
        started=status.get("started") or launch.get("launched"), ended=status.get("ended"),
        error=error, step=metrics[-1]["step"] if metrics else int(status.get("step") or 0),
        max_steps=status.get("max_steps") or train_config.get("max_steps"),
        config=_read_json(run_dir / CONFIG_FILE), last=metrics[-1] if metrics else {})


def list_runs(runs_dir=None) -> list[RunInfo]:
    """Every run folder in ``runs_dir``, newest first."""
    runs_dir = Path(runs_dir) if runs_dir else default_runs_dir()
    if not runs_dir.is_dir():
        return []
    folders = [p for p in runs_dir.iterdir()
               if p.is_dir() and ((p / LAUNCH_FILE).is_file() or (p / STATUS_FILE).is_file())]
    infos = [run_info(p) for p in folders]
    return sorted(infos, key=lambda r: (r.started or "", r.name), reverse=True)


# -- launching and stopping ---------------------------------------------------------------------
def unique_run_name(name: str, runs_dir=None) -> str:
    runs_dir = Path(runs_dir) if runs_dir else default_runs_dir()
    base = sanitize_run_name(name)
    candidate, k = base, 2
    while (runs_dir / candidate).exists():
        candidate, k = f"{base}-{k}", k + 1
    return candidate


def launch_run(config: TrainConfig, name: str, runs_dir=None, *, text: str | None = None,
               tokenizer=None, env: dict | None = None) -> RunInfo:
    """Start ``python -m core.train`` for ``config`` in ``runs_dir/name`` and return at once.

    ``text`` (the corpus) and ``tokenizer`` are saved into the run folder, so the run does not
    depend on the files or the session it came from.  The name is sanitized; an existing run
    folder is never overwritten (ValueError).
    """
    runs_dir = Path(runs_dir) if runs_dir else default_runs_dir()
    run_dir = runs_dir / sanitize_run_name(name)
    if run_dir.exists():
        raise ValueError(f"A run named {run_dir.name!r} already exists; pick another name.")
    run_dir.mkdir(parents=True)
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
    write_json(run_dir / TRAIN_CONFIG_FILE, settings)
    _start(run_dir, env)
    return run_info(run_dir)


def resume_run(run_dir, env: dict | None = None) -> RunInfo:
    """Continue a stopped or killed run from its last checkpoint, in its own folder, to the step
    it was launched for.  Its metrics go on from the checkpoint's step (``core.train`` drops what
    was logged after it), so nothing a crash or a stop interrupted is lost or counted twice."""
    run_dir = Path(run_dir)
    info = run_info(run_dir)
    if info.active:
        raise ValueError(f"Run {info.name!r} is still running.")
    if not info.resumable:
        raise ValueError(f"Run {info.name!r} cannot be resumed: it needs a checkpoint and its "
                         f"{TRAIN_CONFIG_FILE} (runs started with `python -m core.train` resume "
                         f"with --resume).")
    write_json(run_dir / TRAIN_CONFIG_FILE,
               {**_read_json(run_dir / TRAIN_CONFIG_FILE), "resume": True})
    pid = _start(run_dir, env)
    status = _read_json(run_dir / STATUS_FILE)
    if status.get("pid") != pid:  # unless the new process got there first (it imports torch first)
        write_json(run_dir / STATUS_FILE, {**status, "status": "starting", "pid": pid,
                                           "ended": None, "error": None})
    return run_info(run_dir)


def _start(run_dir: Path, env: dict | None) -> int:
    """``python -m core.train`` on the folder's training config, in a session of its own (a closed
    tab or a Streamlit rerun does not end it), writing to ``train.log``; returns its pid."""
    cmd = [sys.executable, "-m", "core.train", "--config", str((run_dir / TRAIN_CONFIG_FILE).resolve()),
           "--run-dir", str(run_dir.resolve())]
    with open(run_dir / LOG_FILE, "ab") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})
    _children[proc.pid] = proc
    write_json(run_dir / LAUNCH_FILE, {"pid": proc.pid, "command": cmd,
                                       "launched": datetime.now(timezone.utc).isoformat(timespec="seconds")})
    return proc.pid


def delete_run(run_dir) -> None:
    """Remove a run's folder: checkpoint, metrics and all.  Only run folders, and never a run
    that is still training (stop it first)."""
    run_dir = Path(run_dir)
    if not ((run_dir / LAUNCH_FILE).is_file() or (run_dir / STATUS_FILE).is_file()):
        raise ValueError(f"{run_dir} is not a run folder; nothing was deleted.")
    if run_info(run_dir).active:
        raise ValueError(f"Run {run_dir.name!r} is still running; stop it before deleting it.")
    shutil.rmtree(run_dir)


def stop_run(run_dir, timeout: float = 30.0) -> RunInfo:
    """Ask the run to stop (SIGTERM -> final checkpoint -> status stopped) and wait up to
    ``timeout`` seconds; a process that does not stop by then is killed and marked stopped."""
    run_dir = Path(run_dir)
    info = run_info(run_dir)
    if not info.active or not info.pid:
        return info
    try:
        os.kill(info.pid, signal.SIGTERM)
    except ProcessLookupError:
        return run_info(run_dir)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and pid_alive(info.pid):
        time.sleep(0.1)
    if pid_alive(info.pid):
        try:
            os.killpg(info.pid, signal.SIGKILL)  # the run is its own session: its group id is its pid
        except (ProcessLookupError, PermissionError):
            pass
        _wait_gone(info.pid, 5.0)
    status = _read_json(run_dir / STATUS_FILE)
    if status.get("status") in (None, "starting", "running"):
        write_json(run_dir / STATUS_FILE, {**status, "status": "stopped", "pid": info.pid,
                                           "ended": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                                           "error": None})
    return run_info(run_dir)


def _wait_gone(pid: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and pid_alive(pid):
        time.sleep(0.05)
