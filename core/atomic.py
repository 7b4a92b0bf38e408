"""Atomic file writes: the project's one writer for files another process may read at any moment
(tokenizer files, run folders and checkpoints, caches, saved corpora).

A reader sees the old file or the new one, never half of it: the new content goes to a temporary
file beside the target, is flushed and synced to disk, and only then renamed over the target.  It
sits at the top of ``core``, beside no domain, because both libraries (``core.bpe`` and
``core.gpt``) and the app write through it.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path


@contextlib.contextmanager
def atomic_write(path, mode: str = "w"):
    """Open a temporary file beside ``path`` for writing; on a clean exit it is flushed, synced to
    disk and renamed over ``path``; on an error it is removed and ``path`` is left as it was."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path, data: dict) -> None:
    """``data`` as JSON (UTF-8, not ASCII-escaped), written atomically."""
    with atomic_write(path) as f:
        f.write(json.dumps(data, ensure_ascii=False))
