"""How this package starts the scheduler of a runs folder: ``python -m core.room.scheduler`` in the
repository, in a session of its own (it outlives the server that started it), with the repository on
``PYTHONPATH`` and absolute paths only, so nothing depends on the working directory of that server.
The scheduler's GPT workers inherit its environment (``core.room.gpt_workers``); the work a server
waits for runs in worker processes of its own (``core.room.worker_process``).

Torch-free (the scheduler imports it).  Leaves out what the scheduler does (``core.room.scheduler``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from .limits import CPU_SHARING_ENV
from ..runfolder.locks import is_locked
from ..runfolder.layout import SCHEDULER_LOCK, SCHEDULER_LOG

ROOT = Path(__file__).resolve().parents[2]   # the repository: the folder that holds core/
SCHEDULER = "core.room.scheduler"


def module_command(module: str, *args: str) -> list[str]:
    return [sys.executable, "-m", module, *args]


def child_env(extra: dict | None = None) -> dict:
    """This environment, with the repository first on ``PYTHONPATH``, output unbuffered and CPU
    threads that wait without spinning (``core.room.limits.CPU_SHARING_ENV``)."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return {**CPU_SHARING_ENV, **os.environ, "PYTHONPATH": path, "PYTHONUNBUFFERED": "1",
            **(extra or {})}


def _start(cmd: list[str], log_path: Path) -> subprocess.Popen:
    """``cmd`` in a session of its own (it outlives the server's), writing to ``log_path``."""
    with open(log_path, "ab") as log:
        return subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, env=child_env())


def ensure_scheduler(runs_dir) -> None:
    """Start the scheduler of ``runs_dir`` unless one holds the folder's scheduler lock (it reads
    the caps from the folder: ``core.runfolder.layout.queue_settings``).  Its exit status is collected by a
    waiting thread, so it never lingers as a zombie of this process."""
    runs_dir = Path(runs_dir).resolve()
    if is_locked(runs_dir / SCHEDULER_LOCK):
        return
    proc = _start(module_command(SCHEDULER, str(runs_dir)), runs_dir / SCHEDULER_LOG)
    threading.Thread(target=proc.wait, name=f"reap-scheduler-{proc.pid}", daemon=True).start()
