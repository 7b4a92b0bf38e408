"""Page runs wait in line in an app process: one at the front at a time, in the order they came.

Streamlit runs each session's page run on a thread of its own, and the GIL lets one thread run
Python at a time: twenty runs begun together all finish late, sharing the interpreter in slices
of ``sys.getswitchinterval()``, where one after another the first would finish at once.  The event
loop thread, which sends every run's messages (about 35 for Learn BPE), also waits for the GIL up
to a slice each time a run's thread holds it, so the more runs run at once, the longer each
finished run's messages take to leave.  In ``bench/bench_room.py``'s room of 300 on one process,
a place in line and rarer full collections (``ui.serving.memory.collect_less_often``) together brought the
page runs' p95 to its target; neither alone did (why: docs/benchmarks.md, "A room on Learn BPE").

A run that holds the front of the line longer than ``LONG_S`` (a large text's page, a first
training) is a long one: the runs waiting stop waiting for it and go on beside it, as every run did
before the line.  So one attendee's long run delays the others by ``LONG_S`` at most, never by its
whole length, while a burst of short runs still goes one after another, however long the line.
Fragment runs (a token picked in a tree, a progress bar's poll) do not wait in line: they are
small.  (Not the room's *turns*, ``core.room.turns``: those are GPT runs' few seconds on a GPT worker.)"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

LONG_S = 0.2


class PageQueue:
    """One run at the front at a time, in the order they came (a newcomer may slip in as the front
    passes)."""

    def __init__(self, long_s: float = LONG_S):
        self.long_s = long_s
        self._changed = threading.Condition()
        self._taken_at: float | None = None  # when the holder reached the front; None: nobody
        self.waiting = 0  # runs in line

    @property
    def held(self) -> bool:
        return self._taken_at is not None

    @contextmanager
    def place(self) -> Iterator[bool]:
        """Hold the front of the line for one run, once it is free or its holder has held it
        ``long_s``; yields whether the run had the front (False: it goes on beside a long holder)."""
        with self._changed:
            while self._taken_at is not None:
                left = self._taken_at + self.long_s - time.monotonic()
                if left <= 0:
                    break
                self.waiting += 1
                try:
                    self._changed.wait(left)
                finally:
                    self.waiting -= 1
            had = self._taken_at is None
            if had:
                self._taken_at = time.monotonic()
        try:
            yield had
        finally:
            if had:
                with self._changed:
                    self._taken_at = None
                    self._changed.notify()


_process = PageQueue()


def place_in_line() -> AbstractContextManager[bool]:
    """This process's line, for one page run (``ui.plumbing.frame.run_app``)."""
    return _process.place()
