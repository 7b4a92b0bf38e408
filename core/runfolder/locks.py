"""File locks (``fcntl.flock``) that end with the process holding them.

A run folder has one GPT worker, ever, and a runs folder one engine: the holder keeps an exclusive
``flock`` on a lock file for its whole life.  The kernel drops the lock when the process dies, even
by SIGKILL, so a crash never leaves a stale lock behind, and "is anyone there?" is answered by
trying to take the lock, not by checking a pid and then acting (two processes could both pass the
check).  Lock files are empty and never deleted (deleting one while it is held would let a second
process lock a new file of the same name).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path


class FileLock:
    """An exclusive lock on ``path``: ``acquire(blocking)`` returns whether it is now held."""

    def __init__(self, path) -> None:
        self.path = Path(path)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, blocking: bool = False) -> bool:
        if self._fd is not None:
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor drops the flock
            self._fd = None


@contextlib.contextmanager
def locked(path):
    """Hold the lock on ``path`` (waiting for it) for a short check-then-act section."""
    lock = FileLock(path)
    lock.acquire(blocking=True)
    try:
        yield
    finally:
        lock.release()


def is_locked(path) -> bool:
    """Whether some process holds ``path``'s lock right now (briefly takes it when free, so use it
    only where a competing holder retries or waits; never on a GPT worker's lock)."""
    lock = FileLock(path)
    if not lock.acquire():
        return True
    lock.release()
    return False
