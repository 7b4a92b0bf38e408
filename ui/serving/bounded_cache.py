"""What every shared cache of the app is (the plumbing's, the views', the pages'): a
least-recently-used dict with bounds (:class:`BoundedCache`), and one lock per key, so that what a
room asks for at once is made once (:class:`KeyLocks`)."""

from __future__ import annotations

import contextlib
import threading
import time
import weakref
from collections import OrderedDict
from typing import NamedTuple

from ui.serving import page_queue

# An entry nobody used for 10 minutes goes: long enough for a visitor reading a page, short enough
# that a room's tokenizers are gone soon after the room.
CACHE_IDLE_S = 600


class _Made(NamedTuple):
    """A value :meth:`BoundedCache.made_for` made, and the object it was made for."""
    source: weakref.ref
    value: object


class BoundedCache:
    """A least-recently-used dict shared by every session, bounded by entries and by an estimated
    size in bytes (``cost(value)``), so memory stays flat however many visitors come and go; an
    entry unused for ``idle_s`` seconds goes at the next :meth:`drop_idle` (``ui.serving.memory``'s
    housekeeper calls it for every cache), so a room's leftovers (its tokenizers, its charts) leave
    after the room rather than at the next room."""

    _all: weakref.WeakSet = weakref.WeakSet()

    def __init__(self, max_entries: int, max_bytes: int, cost=lambda value: 0,
                 idle_s: float = CACHE_IDLE_S) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.cost = cost
        self.idle_s = idle_s
        self._items: OrderedDict = OrderedDict()  # key -> (value, cost, last use), oldest use first
        self._lock = threading.Lock()
        self.bytes = 0
        BoundedCache._all.add(self)

    def get(self, key):
        with self._lock:
            entry = self._items.get(key)
            if entry is None:
                return None
            self._items[key] = (*entry[:2], time.monotonic())
            self._items.move_to_end(key)
            return entry[0]

    def made_for(self, source, key, make):
        """``make()``, made once for ``source`` (an object every session shares, such as a trained
        tokenizer) and ``key``: cached by ``source``'s id, with a weak reference proving that the
        id still means ``source`` (so a new object at a freed address is never served another's
        value).  The cache's ``cost`` sees ``(reference, value)``."""
        full = (id(source), key)
        entry = self.get(full)
        if entry is None or entry.source() is not source:
            entry = _Made(weakref.ref(source), make())
            self.put(full, entry)
        return entry.value

    def put(self, key, value) -> None:
        size = self.cost(value)
        with self._lock:
            old = self._items.pop(key, None)
            self.bytes += size - (old[1] if old else 0)
            self._items[key] = (value, size, time.monotonic())
            while len(self._items) > 1 and (len(self._items) > self.max_entries
                                            or self.bytes > self.max_bytes):
                self._drop_oldest()

    def drop_idle(self, now: float | None = None) -> int:
        """Drop the entries unused for ``idle_s`` seconds; how many went."""
        cutoff = (time.monotonic() if now is None else now) - self.idle_s
        dropped = 0
        with self._lock:
            while self._items and next(iter(self._items.values()))[2] <= cutoff:
                self._drop_oldest()
                dropped += 1
        return dropped

    @classmethod
    def drop_idle_everywhere(cls) -> int:
        return sum(cache.drop_idle() for cache in list(cls._all))

    def drop_where(self, gone) -> int:
        """Drop the entries for which ``gone(key, value)`` holds; how many went."""
        with self._lock:
            keys = [key for key, (value, _, _) in self._items.items() if gone(key, value)]
            for key in keys:
                self.bytes -= self._items.pop(key)[1]
        return len(keys)

    @classmethod
    def drop_orphans_everywhere(cls, corpora: set[str]) -> int:
        """Drop, from every cache, what was made for a corpus of ``corpora`` (its hash anywhere in
        the key) or for an object that no longer exists (:meth:`made_for`); how many went."""
        def gone(key, value) -> bool:
            return (isinstance(value, _Made) and value.source() is None) or _mentions(key, corpora)
        return sum(cache.drop_where(gone) for cache in list(cls._all))

    def _drop_oldest(self) -> None:
        _, (_, size, _) = self._items.popitem(last=False)
        self.bytes -= size

    def __len__(self) -> int:
        return len(self._items)


def _mentions(key, corpora: set[str]) -> bool:
    if isinstance(key, str):
        return key in corpora
    return isinstance(key, tuple) and any(_mentions(part, corpora) for part in key)


class KeyLocks:
    """One lock per key, so that a value a room asks for at once is computed once: the first
    session computes it while the others wait for it and then read it from the cache (thirty
    attendees opening the same sample train its tokenizer once, not thirty times).  A key's lock
    exists only while someone holds it or waits for it.  A run waits for it out of its process's
    page line (``ui.serving.page_queue.step_aside``): it does nothing until the holder is done, and
    in line it held the front, so three attendees waiting for a large text's tokenizer kept every
    calm run waiting ``LONG_S`` at a time (why: docs/benchmarks.md, "A room that does not
    behave")."""

    def __init__(self) -> None:
        self._locks: dict = {}  # key -> (lock, how many hold it or wait for it)
        self._guard = threading.Lock()

    @contextlib.contextmanager
    def hold(self, key, on_wait=None):
        """Hold ``key``'s lock; ``on_wait()`` is entered (a context manager, e.g. a spinner)
        while another thread holds it."""
        with self._guard:
            lock, users = self._locks.get(key, (None, 0))
            lock = lock or threading.Lock()
            self._locks[key] = (lock, users + 1)
        held = False
        try:
            held = lock.acquire(blocking=False)
            if not held:
                # ``on_wait``'s exit may raise (a Streamlit spinner, when its session is told to
                # rerun): the lock, once taken, is released all the same, or the room waits forever
                with page_queue.step_aside(), on_wait() if on_wait else contextlib.nullcontext():
                    held = lock.acquire()
            yield
        finally:
            if held:
                lock.release()
            with self._guard:
                lock, users = self._locks[key]
                if users == 1:
                    del self._locks[key]
                else:
                    self._locks[key] = (lock, users - 1)
