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
training) is a long one: it goes on, no longer at the front, and the next run in line takes the
front, while fewer than ``LONG_AT_ONCE`` long runs go on (else the front waits for one to end, up
to ``LONG_S`` more: a long run may be waiting for what a run in line holds, a lock or a job).  So
one attendee's long run delays the others by ``LONG_S``, never by its whole length, and the short
runs still go one after another, sharing the interpreter with one long run at most: when a long
run let every waiting run go on beside it, ten heavy attendees' runs kept the line open most of the
time, and a room's calm runs all shared the GIL at once, each finishing seconds late (why:
docs/benchmarks.md, "A room that does not behave").  A long run makes way (:func:`make_way`, at the
shared caches' lookups and the app's large markup) while runs wait: back in line behind them, it
carries on when the line is free, so the calm runs have the GIL to themselves.
A session whose last run was long (twice ``LONG_S`` at the front: a large corpus's page) waits
behind the others' runs, unless it has waited ``PATIENCE_S`` already: ten heavy attendees' reruns
kept the line busy by themselves, each holding the front ``LONG_S``, and three hundred calm
attendees' runs of milliseconds waited behind them for a second and more at a workshop's scale
(``bench/bench_hostile_room.py``).  A first run has no past, and goes with the calm ones.
Fragment runs (a token picked in a tree, a progress bar's poll) do not wait in line: they are
small.  A run that waits on another process (the room's engine, a probe's child) steps aside while
it waits (:func:`step_aside`): it holds no GIL then, and holding the front would keep every other
run waiting for nothing.  (Not the room's *turns*, ``core.room.turns``: those are GPT runs' few
seconds on a GPT worker.)"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass

LONG_S = 0.2
LONG_AT_ONCE = 1  # long runs going on beside the front at once, unless the front's holder is twice long
PATIENCE_S = 5.0  # a run of a session whose last run was long goes behind later calm ones until then


@dataclass
class Place:
    """One run's place in line: whether its session's last run was long, and how long this one
    has held the front (or gone on as a long run) so far."""

    behind: bool = False
    since: float = 0.0       # when it joined the line
    long_s: float = LONG_S   # its line's
    held_s: float = 0.0
    _front_at: float | None = None

    @property
    def long(self) -> bool:
        """Long enough to send its session's next run behind: twice its line's ``long_s``, so
        that a calm run slowed by a busy moment is not taken for a heavy one."""
        return self.held_s >= 2 * self.long_s


class PageQueue:
    """One run at the front at a time, the others waiting in the order they came; a run that has
    held the front ``long_s`` goes on as a long one, if fewer than ``long_at_once`` do, and the next
    in line takes the front."""

    def __init__(self, long_s: float = LONG_S, long_at_once: int = LONG_AT_ONCE,
                 patience_s: float = PATIENCE_S):
        self.long_s, self.long_at_once, self.patience_s = long_s, long_at_once, patience_s
        self._lock = threading.Lock()
        self._line: list[tuple[threading.Condition, Place]] = []  # the waiting runs, the first first
        self._places: dict[int, Place] = {}   # the runs in this line by thread, waiting or not
        self._taken_at: float | None = None  # when the holder reached the front; None: nobody
        self._holder: int | None = None       # the holder's thread
        self._long: set[int] = set()          # the long runs' threads

    @property
    def held(self) -> bool:
        return self._taken_at is not None

    @property
    def waiting(self) -> int:
        """Runs in line."""
        return len(self._line)

    @property
    def long_runs(self) -> int:
        return len(self._long)

    @contextmanager
    def place(self, behind: bool = False) -> Iterator[Place]:
        """Hold the front of the line for one run, once it is free, or its holder has held it
        ``long_s`` and may go on as a long run; ``behind``: its session's last run was long (the
        module's docstring).  The ``Place`` says how long the run held the front."""
        me, spent = threading.get_ident(), Place(behind, time.monotonic(), self.long_s)
        self._places[me] = spent
        try:
            self._enter(spent)
            try:
                yield spent
            finally:
                self._leave()
        finally:
            del self._places[me]

    @contextmanager
    def aside(self) -> Iterator[None]:
        """The front (or a long run's place) left free while this thread's run waits on something
        else, then taken again in line (nothing for a thread outside the line)."""
        me = threading.get_ident()
        if self._holder != me and me not in self._long:
            yield
            return
        self._leave()
        try:
            yield
        finally:
            self._enter(self._places[me])

    def make_way(self) -> None:
        """For a long run, between two pieces of its work: while runs wait in line, it goes back
        into line as a run whose session's last run was long (behind calm runs, up to
        ``patience_s``), and carries on when its place comes; nothing for any other run.  A long run
        going on beside the front shares the GIL with it, so every calm run in line took twice its
        time while a heavy attendee's page was long (the module's docstring)."""
        me = threading.get_ident()
        if me not in self._long or not self._line:  # read without the lock: a hint
            return
        spent = self._places[me]
        self._leave()
        spent.behind, spent.since = True, time.monotonic()
        self._enter(spent)

    def _enter(self, spent: Place) -> None:
        with self._lock:
            call_up = threading.Condition(self._lock)  # woken alone: the others sleep on, GIL-free
            self._line.insert(self._where(spent), (call_up, spent))
            try:
                while self._line[0][0] is not call_up or (left := self._front_in()) > 0:
                    call_up.wait(None if self._line[0][0] is not call_up else left)  # or a long run ends
            finally:
                self._line.remove((call_up, spent))  # the first, but for a run interrupted while it waited
                self._wake()  # the next in line times the new holder
            if self._holder is not None:
                self._long.add(self._holder)
            self._taken_at, self._holder = time.monotonic(), threading.get_ident()
            spent._front_at = self._taken_at

    def _where(self, spent: Place) -> int:
        """Where a run joins the line: at its end, or, for a calm session's run, before the runs
        behind that have waited less than ``patience_s``.  Runs wait longer as they stay, so
        those are all at the line's end, in the order they came."""
        if spent.behind:
            return len(self._line)
        now, at = time.monotonic(), len(self._line)
        while at and self._line[at - 1][1].behind and now - self._line[at - 1][1].since < self.patience_s:
            at -= 1
        return at

    def _front_in(self) -> float:
        """Seconds until the front is the first waiting run's: at once when nobody holds it; when
        its holder has held it ``long_s`` and may go on as a long run; and at twice that however
        many long runs go on (a long run may wait for what a run in line holds: a lock, a job)."""
        if self._taken_at is None:
            return 0.0
        patience = self.long_s if len(self._long) < self.long_at_once else 2 * self.long_s
        return self._taken_at + patience - time.monotonic()

    def _leave(self) -> None:
        with self._lock:
            me = threading.get_ident()
            if self._holder == me:
                self._taken_at = self._holder = None
            self._long.discard(me)
            spent = self._places.get(me)
            if spent is not None and spent._front_at is not None:
                spent.held_s += time.monotonic() - spent._front_at
                spent._front_at = None
            self._wake()

    def _wake(self) -> None:
        if self._line:
            self._line[0][0].notify()


_process = PageQueue()


def place_in_line(behind: bool = False) -> AbstractContextManager[Place]:
    """This process's line, for one page run (``ui.plumbing.frame.run_app``); ``behind``: the
    session's last run was long."""
    return _process.place(behind)


def make_way() -> None:
    """A point where this thread's run, if it is a long one, lets the runs waiting in line go first."""
    _process.make_way()


def step_aside() -> AbstractContextManager[None]:
    """Out of this process's line while the page run waits on another process."""
    return _process.aside()
