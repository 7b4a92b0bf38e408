"""Compiled work over the pieces of a split text (numba): tables of byte ranges (open addressing,
FNV-1a hashes, bytes compared on equal hashes) in which the scanner finds equal pieces once
(``scanners.scan``) and a piece is looked up among a vocabulary's tokens; and the ids of
every piece gathered from those of the distinct ones.  ``function.py_func`` runs the same source
uncompiled (a hash is wrapped in ``np.uint64`` for that: from Python it comes back an ``int``).
Leaves out: cutting the text (``scanners``) and what the pieces become.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, _nrt=False)
def hash_bytes(buf, s, e):
    h = np.uint64(14695981039346656037)
    for p in range(s, e):
        h = (h ^ np.uint64(buf[p])) * np.uint64(1099511628211)
    return h


@njit(cache=True, _nrt=False)
def find_slot(slots, hashes, kbuf, kstarts, kends, buf, s, e, h):
    """The slot holding the key equal to ``buf[s:e]``, or the empty slot where it would go."""
    mask = len(slots) - 1
    slot = np.int64(h & np.uint64(mask))
    n = e - s
    while True:
        k = slots[slot]
        if k < 0:
            return slot
        if hashes[k] == h and kends[k] - kstarts[k] == n:
            t = kstarts[k]
            same = True
            for j in range(n):
                if kbuf[t + j] != buf[s + j]:
                    same = False
                    break
            if same:
                return slot
        slot = (slot + 1) & mask


@njit(cache=True)
def _empty_table(n):
    size = 16
    while size < 2 * n:
        size *= 2
    return np.full(size, -1, np.int64)


@njit(cache=True)
def rehashed(slots, hashes, d):
    """A table twice as large holding the first ``d`` keys (``hashes`` are kept per key)."""
    bigger = np.full(2 * len(slots), -1, np.int64)
    mask = len(bigger) - 1
    for k in range(d):
        slot = np.int64(hashes[k] & np.uint64(mask))
        while bigger[slot] >= 0:
            slot = (slot + 1) & mask
        bigger[slot] = k
    return bigger


@njit(cache=True)
def index_keys(kbuf, kstarts, kends):
    """``(slots, hashes)``: a table of the distinct byte strings ``kbuf[kstarts[k]:kends[k]]``."""
    n = len(kstarts)
    slots = _empty_table(n)
    hashes = np.empty(n, np.uint64)
    for k in range(n):
        h = np.uint64(hash_bytes(kbuf, kstarts[k], kends[k]))
        hashes[k] = h
        slots[find_slot(slots, hashes, kbuf, kstarts, kends, kbuf, kstarts[k], kends[k], h)] = k
    return slots, hashes


@njit(cache=True)
def find_keys(buf, starts, ends, kbuf, kstarts, kends, slots, hashes):
    """For each range ``buf[starts[i]:ends[i]]``, the index of the equal key, or -1."""
    found = np.empty(len(starts), np.int64)
    for i in range(len(starts)):
        s, e = starts[i], ends[i]
        h = np.uint64(hash_bytes(buf, s, e))
        found[i] = slots[find_slot(slots, hashes, kbuf, kstarts, kends, buf, s, e, h)]
    return found


@njit(cache=True)
def gather(which, flat, offsets):
    """The ids of the pieces in order: ``flat[offsets[w]:offsets[w + 1]]`` for each ``w`` in ``which``."""
    total = 0
    for w in which:
        total += offsets[w + 1] - offsets[w]
    out = np.empty(total, np.int32)
    q = 0
    for w in which:
        for j in range(offsets[w], offsets[w + 1]):
            out[q] = flat[j]
            q += 1
    return out
