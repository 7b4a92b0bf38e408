"""The least-recently-used cache every shared cache of the app is (``ui.cache``, ``ui.charts``):
bounded by entries and by estimated bytes, so memory stays flat however many visitors come and go,
and emptied of what nobody used for ``CACHE_IDLE_S`` seconds by ``ui.memory``'s housekeeper, so a
room's leftovers (its tokenizers, its charts) leave after the room rather than at the next room.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict

# An entry nobody used for 10 minutes goes: long enough for a visitor reading a page, short enough
# that a room's tokenizers are gone soon after the room.
CACHE_IDLE_S = 600


class BoundedCache:
    """A least-recently-used dict shared by every session, bounded by entries and by an estimated
    size in bytes (``cost(value)``), so memory stays flat however many visitors come and go; an
    entry unused for ``idle_s`` seconds goes at the next :meth:`drop_idle` (``ui.memory``'s
    housekeeper calls it for every cache), so a room's leftovers leave after the room."""

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

    def _drop_oldest(self) -> None:
        _, (_, size, _) = self._items.popitem(last=False)
        self.bytes -= size

    def __len__(self) -> int:
        return len(self._items)
