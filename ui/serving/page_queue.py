"""Page runs wait in line in an app process: one at the front at a time, in the order they came.

Streamlit runs each session's page run on a thread of its own, and the GIL lets one thread run
Python at a time: twenty runs begun together all finish late, sharing the interpreter in slices
of ``sys.getswitchinterval()``, where one after another the first would finish at once.  The event
loop thread, which sends every run's messages (about 35 for Learn BPE), also waits for the GIL up
to a slice each time a run's thread holds it, so the more runs run at once, the longer each
finished run's messages take to leave.  The workshop room, calm attendees beside heavy ones,
needs the line: without it the calm page runs' p95 went past its target there, while a room of
calm attendees alone met its own with or without it (why: docs/benchmarks.md, "A room that does
not behave" and "A room on Learn BPE").

A run that holds the front of the line longer than ``LONG_S`` (a first view of a full text box, a
small corpus's first training) is a long one: the runs waiting stop waiting for it and go on beside
it, as every run did before the line.  So one attendee's long run delays the others by ``LONG_S`` at
most, never by its whole length, while a burst of short runs still goes one after another, however
long the line.  Long runs are rare and short now that no page computes what grows with its corpus on
its own thread (``ui.plumbing.heavy_jobs``): holding them back further (one long run at a time, a
long session's runs behind calm ones, a long run making way at its pauses) bought nothing a
workshop room could measure once that was so (why: docs/benchmarks.md, "A room that does not
behave").  Fragment runs (a token picked in a tree, a progress bar's poll) do not wait in line: they
are small.  A run that waits on another process (the room's engine, a probe's child) steps aside
while it waits (:func:`step_aside`): it holds no GIL then, and holding the front would keep every
other run waiting for nothing.  (Not the room's *turns*, ``core.room.turns``: those are GPT runs'
few seconds on a GPT worker.)"""

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
        self._holder: int | None = None       # the holder's thread
        self.waiting = 0  # runs in line

    @property
    def held(self) -> bool:
        return self._taken_at is not None

    @contextmanager
    def place(self) -> Iterator[bool]:
        """Hold the front of the line for one run, once it is free or its holder has held it
        ``long_s``; yields whether the run had the front (False: it goes on beside a long holder)."""
        had = self._enter()
        try:
            yield had
        finally:
            if had:  # and still, unless it stepped aside and came back beside a long holder
                self._leave()

    @contextmanager
    def aside(self) -> Iterator[None]:
        """The front left free while this thread's run waits on something else, then taken again
        in line (nothing for a thread that does not hold it)."""
        if self._holder != threading.get_ident():
            yield
            return
        self._leave()
        try:
            yield
        finally:
            self._enter()

    def _enter(self) -> bool:
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
            if self._taken_at is not None:
                return False
            self._taken_at, self._holder = time.monotonic(), threading.get_ident()
            return True

    def _leave(self) -> None:
        with self._changed:
            if self._holder == threading.get_ident():
                self._taken_at = self._holder = None
                self._changed.notify()


_process = PageQueue()


def place_in_line() -> AbstractContextManager[bool]:
    """This process's line, for one page run (``ui.plumbing.frame.run_app``)."""
    return _process.place()


def step_aside() -> AbstractContextManager[None]:
    """Out of this process's line while the page run waits on another process."""
    return _process.aside()
