"""How this package starts the engine of a runs folder (``core.room.engine``): ``python -m
core.room.engine`` in the repository, in a session of its own (it outlives the app process that
started it: runs train with no browser open), with the repository on ``PYTHONPATH`` and absolute
paths only, so nothing depends on the working directory of that process.  The engine's worker
processes inherit its environment.

Torch-free.  Leaves out what the engine does (``core.room.engine``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from .cpu_policy import CPU_SHARING_ENV
from ..runfolder.locks import is_locked
from ..runfolder.layout import ENGINE_LOCK, ENGINE_LOG

ROOT = Path(__file__).resolve().parents[2]   # the repository: the folder that holds core/
ENGINE = "core.room.engine"


def child_env() -> dict:
    """This environment, with the repository first on ``PYTHONPATH``, output unbuffered and CPU
    threads that wait without spinning (``core.room.cpu_policy.CPU_SHARING_ENV``)."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return {**CPU_SHARING_ENV, **os.environ, "PYTHONPATH": path, "PYTHONUNBUFFERED": "1"}


def ensure_engine(runs_dir) -> None:
    """Start the engine of ``runs_dir`` unless one holds the folder's engine lock (it reads the caps
    from the folder: ``core.runfolder.layout.queue_settings``).  Its exit status is collected by a
    waiting thread, so it never lingers as a zombie of this process."""
    runs_dir = Path(runs_dir).resolve()
    runs_dir.mkdir(parents=True, exist_ok=True)
    if is_locked(runs_dir / ENGINE_LOCK):
        return
    with open(runs_dir / ENGINE_LOG, "ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", ENGINE, str(runs_dir)], cwd=ROOT, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env=child_env())
    threading.Thread(target=proc.wait, name=f"reap-engine-{proc.pid}", daemon=True).start()
