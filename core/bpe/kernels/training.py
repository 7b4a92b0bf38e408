"""The compiled hot loop of BPE training (numba): the textbook's loop (``core.bpe._educational``:
count every pair, pick the most frequent, first in the sequence on a tie, merge it everywhere) done
incrementally, so a merge costs what it changes, whatever the text.

The data, in flat arrays only (about 8 bytes a position, plus 28 bytes a pair-table slot):

``seq`` (int32)
    The symbols of every chunk, ``-1`` (SEPARATOR) after each, so no pair spans two chunks.  A merged
    token of length L >= 2 starting at ``p`` keeps its id at ``seq[p]`` and ``-(L + 1)`` at
    ``seq[p + 1]`` and at ``seq[p + L - 1]`` (older values in between): the sequence is its own
    linked list, and ``_next``/``_prev`` step over a token from either end in one read (what lies
    inside a token is never read).  "abcd" is ``[a, b, c, d, -1]``; merging (b, c) into X gives
    ``[a, X, -3, d, -1]``, then (a, X) into Y gives ``[Y, -4, -4, d, -1]``.
``weights`` (int32)
    Each position's chunk frequency, or a single 1 when every chunk counts once (char).
Pair table: ``keys``, ``counts``, ``first``, one slot per pair
    Open addressing with linear probing, key ``a << 32 | b``, ``-1`` empty, never deleted, kept
    under half full.  ``counts`` are weighted.  ``first[s]`` is where pair ``s`` first occurs in
    the current sequence, ``-1`` nowhere, or ``-(x + 2)`` once the first occurrence, at ``x``, is
    merged away: the next one lies right of ``x``, found when the pair is next a candidate.
Position lists: ``pool``, ``lo``, ``hi``
    ``pool[lo[t]:hi[t]]`` lists, ascending, where token ``t`` starts with a token on its right;
    merging ``a b`` walks ``a``'s list once, keeps the ``a`` still there, moves the merged ones into
    the space they free as the new token's list, and drops stale ones: the pool never grows.
Heap: ``hc``, ``hf``, ``hs``
    A max-heap of (count, first position, slot), the larger count first and, among equal counts,
    the earlier position: its top is the pair the textbook picks, with no scan of the ties.

Why the heap can be lazy: a pair's occurrences all appear in the one merge that mints its newer
token (or in the corpus as laid out); every later merge only takes occurrences away.  So once a
pair is on the heap its count only falls and its first position only moves right: an entry that no
longer matches the table ranks its pair too high, and is corrected when it surfaces.  A slot has at
most one entry, so the heap never holds more entries than the table has pairs.  The same reason
bounds the search for a moved first occurrence: it starts where the last one was, so over a whole
training it reads each position of ``a``'s list at most once per pair ``(a, b)``.

``function.py_func`` runs the same source uncompiled: the readable reference the tests compare
against.  Leaves out: what to do with a step (``core.bpe.trainer``) and encoding.
"""

from __future__ import annotations

import numpy as np
from numba import njit

SEPARATOR = -1
DELETED = -2  # where a merged token's right half began; -(L + 1) <= -3 marks its second and last
NONE = -1  # no position: the first occurrence of a pair that occurs nowhere


@njit(cache=True)
def pair_key(a, b):
    return (np.int64(a) << 32) | np.int64(b)


@njit(cache=True)
def _find(keys, key):
    """The slot of ``key``, or the empty slot where it would go (tables stay under half full)."""
    mask = len(keys) - 1
    h = (key >> 32) * 0x9E3779B1 + (key & 0xFFFFFFFF)  # mixed without overflow: ids < 2**31
    h = ((h ^ (h >> 29)) & 0x7FFFFFFF) * 0x85EBCA77
    s = (h ^ (h >> 32)) & mask
    while keys[s] != key and keys[s] != -1:
        s = (s + 1) & mask
    return s


@njit(cache=True)
def _add(keys, counts, key, delta):
    """Add ``delta`` to the count of ``key``; returns its slot and whether the key is new."""
    s = _find(keys, key)
    new = keys[s] == -1
    keys[s] = key
    counts[s] += delta
    return s, new


@njit(cache=True)
def grow_table(keys, counts, first, need):
    """The same pairs in a table with room for ``need`` (twice as many slots, a power of two)."""
    capacity = len(keys)
    while 2 * need > capacity:
        capacity *= 2
    new_keys = np.full(capacity, -1, dtype=np.int64)
    new_counts = np.zeros(capacity, dtype=np.int64)
    new_first = np.full(capacity, NONE, dtype=np.int32)
    for s in range(len(keys)):
        if keys[s] != -1:
            t = _find(new_keys, keys[s])
            new_keys[t] = keys[s]
            new_counts[t] = counts[s]
            new_first[t] = first[s]
    return new_keys, new_counts, new_first


@njit(cache=True)
def _lost(first, s, x):
    """The occurrence of pair ``s`` at ``x`` is gone: if it was the first, the next lies right of it."""
    if first[s] == x:
        first[s] = -(x + 2)


@njit(cache=True)
def _bound(f):
    """A heap position for ``first[s]``: exact, or the position the first occurrence lies right of."""
    return f if f >= 0 else -f - 2


@njit(cache=True)
def _first_after(seq, pool, lo, hi, a, b, x):
    """Where ``a b`` first occurs right of ``x``: the first hit in ``a``'s ascending list."""
    r = lo[a] + np.searchsorted(pool[lo[a]:hi[a]], x, side="right")
    for r in range(r, hi[a]):
        p = pool[r]
        if seq[p] == a and seq[_next(seq, p)] == b:
            return p
    return NONE  # only for a pair with no occurrence left


# -- the textbook's first count ------------------------------------------------------------------
@njit(cache=True)
def count_pairs(seq, weights):
    """Count every adjacent pair, overlapping ones included (the textbook's ``get_stats``), and
    note where each first occurs.  ``weights`` holds each position's chunk frequency, or is a
    single 1 (every chunk once).  Returns ``(keys, counts, first, used)``."""
    unit = len(weights) == 1
    keys = np.full(1 << 12, -1, dtype=np.int64)
    counts = np.zeros(1 << 12, dtype=np.int64)
    first = np.full(1 << 12, NONE, dtype=np.int32)
    used = 0
    for i in range(len(seq) - 1):
        if seq[i] >= 0 and seq[i + 1] >= 0:
            if 2 * (used + 1) > len(keys):
                keys, counts, first = grow_table(keys, counts, first, len(keys))
            s, new = _add(keys, counts, pair_key(seq[i], seq[i + 1]), 1 if unit else weights[i])
            if new:  # left to right: the first time a pair is seen is its first occurrence
                first[s] = i
                used += 1
    return keys, counts, first, used


@njit(cache=True)
def list_positions(seq, capacity):
    """Every position that starts a pair, grouped by its token (counting sort, so ascending).
    Returns ``(pool, lo, hi)`` with room in ``lo``/``hi`` for ``capacity`` token ids."""
    lo = np.zeros(capacity, dtype=np.int64)
    hi = np.zeros(capacity, dtype=np.int64)
    for i in range(len(seq) - 1):
        if seq[i] >= 0 and seq[i + 1] >= 0:
            hi[seq[i]] += 1
    total = 0
    for t in range(capacity):
        lo[t] = total
        total += hi[t]
        hi[t] = lo[t]
    pool = np.empty(total, dtype=np.int32)
    for i in range(len(seq) - 1):
        if seq[i] >= 0 and seq[i + 1] >= 0:
            pool[hi[seq[i]]] = i
            hi[seq[i]] += 1
    return pool, lo, hi


@njit(cache=True)
def build_heap(keys, counts, first):
    """The heap over the table's live pairs, with room for an entry per slot in use (the most a
    lazy heap with one entry per slot can hold while the table stays under half full)."""
    live = np.flatnonzero(counts > 0)
    size = len(live)
    capacity = len(keys) // 2 + 1
    hc = np.empty(capacity, dtype=np.int64)  # counts
    hf = np.empty(capacity, dtype=np.int32)  # first positions
    hs = np.empty(capacity, dtype=np.int32)  # table slots
    hc[:size], hs[:size] = counts[live], live
    for i in range(size):
        hf[i] = _bound(first[live[i]])
    for start in range((size - 2) // 2, -1, -1):
        _sift_down(hc, hf, hs, size, start)
    return hc, hf, hs, size


@njit(cache=True)
def _next(seq, p):
    v = seq[p + 1]
    return p - v - 1 if v <= -3 else p + 1


@njit(cache=True)
def _prev(seq, p):
    v = seq[p - 1]
    return p + v + 1 if v <= -3 else p - 1


# -- the textbook's pick: max(counter, key=counter.get) --------------------------------------------
@njit(cache=True)
def rank_pairs(seq, positions, keys, counts, first, heap, top_k):
    """The slots of the ``top_k`` most frequent pairs, ties in order of first occurrence: entry 0
    is the pair to merge (none left: empty).  Returns ``(slots, heap_size)``; the heap keeps them."""
    pool, lo, hi = positions
    hc, hf, hs, size = heap
    taken = np.empty(top_k, dtype=np.int64)
    m = 0
    while size > 0 and m < top_k:
        c, f, s = hc[0], hf[0], hs[0]
        size = _heap_pop(hc, hf, hs, size)
        if counts[s] != c or first[s] != f:  # stale: the pair lost occurrences since it was pushed
            if counts[s] > 0:
                if first[s] < NONE:  # its first occurrence went: find the next one
                    a, b = keys[s] >> 32, keys[s] & 0xFFFFFFFF
                    first[s] = _first_after(seq, pool, lo, hi, a, b, _bound(first[s]))
                size = _heap_push(hc, hf, hs, size, counts[s], first[s], s)  # its true rank, lower
            continue
        taken[m] = s
        m += 1
    for i in range(m):  # put back: they stay candidates
        size = _heap_push(hc, hf, hs, size, counts[taken[i]], first[taken[i]], taken[i])
    return taken[:m], size


# -- the textbook's merge: rewrite every a b as the new token --------------------------------------
@njit(cache=True)
def merge_pair(seq, weights, positions, keys, counts, first, a, b, new, room):
    """Replace every ``a b`` (left to right, non-overlapping) by ``new``, walking ``a``'s list:
    only the neighbours of each merged occurrence change pair.

    Returns ``(tokens_removed, created, added)``: ``created`` lists the slots of the pairs made
    with ``new`` (they enter the heap), ``added`` counts the pairs new to the table.  The caller
    leaves room in the table for ``room`` new pairs: at most two per occurrence merged, and at
    most ``2 * (new + 1)`` distinct ones.
    """
    pool, lo, hi = positions
    unit = len(weights) == 1
    start, end = lo[a], hi[a]
    moved = np.empty(end - start, dtype=np.int32)
    created = np.empty(room, dtype=np.int64)
    n_created = 0
    kept = start  # a's list, compacted in place: the occurrences of ``a`` not merged
    c = 0  # occurrences of ``new`` with a right neighbour: they become new's list
    removed = 0  # tokens removed, weighted by their chunk's frequency
    for r in range(start, end):
        p = pool[r]
        if seq[p] != a:
            continue  # stale, or consumed by the previous occurrence (the middle of "a a a")
        q = _next(seq, p)
        if seq[q] != b:
            pool[kept] = p
            kept += 1
            continue
        w = 1 if unit else weights[p]
        right = _next(seq, q)
        if p > 0 and seq[_prev(seq, p)] >= 0:  # (left, a) becomes (left, new)
            left = _prev(seq, p)
            s = _find(keys, pair_key(seq[left], a))
            counts[s] -= w
            _lost(first, s, left)
            s, fresh = _add(keys, counts, pair_key(seq[left], new), w)
            if fresh:  # met left to right: its first occurrence
                first[s] = left
                created[n_created] = s
                n_created += 1
        if seq[right] >= 0:  # (b, right) becomes (new, right), now starting at p
            s = _find(keys, pair_key(b, seq[right]))
            counts[s] -= w
            _lost(first, s, q)
            s, fresh = _add(keys, counts, pair_key(new, seq[right]), w)
            if fresh:
                first[s] = p
                created[n_created] = s
                n_created += 1
            moved[c] = p
            c += 1
        seq[q] = DELETED  # the token at p now spans p .. right - 1
        seq[p] = new
        seq[p + 1] = seq[right - 1] = p - right - 1
        removed += w
    s = _find(keys, pair_key(a, b))
    counts[s] -= removed  # every occurrence went: merged, or consumed by the one on its left
    first[s] = NONE
    pool[kept:kept + c] = moved[:c]
    hi[a] = kept  # a's list ends where new's begins
    lo[new] = kept
    hi[new] = kept + c
    return removed, created[:n_created], n_created


@njit(cache=True)
def train_steps(seq, weights, positions, table, heap, first_new, steps, top_k, out, competitors):
    """Up to ``steps`` merges in one call, new ids from ``first_new``.  ``positions`` is ``(pool,
    lo, hi)`` with room in ``lo``/``hi`` for the new ids, ``table`` ``(keys, counts, first,
    used)`` and ``heap`` ``(hc, hf, hs, size)``; the table and heap grow here when a merge could
    overflow them.  Step ``i`` goes to ``out[i] = (left, right, count, removed, competitors)`` and
    its top pairs to ``competitors[i]`` (keys and counts).  Returns ``(steps_done, table, heap)``."""
    keys, counts, first, used = table
    hc, hf, hs, size = heap
    for i in range(steps):
        new = first_new + i  # the textbook's "mint a new token"
        # "best = max(pairs, key=pairs.get)": the heap's top, and the runners-up shown beside it
        top, size = rank_pairs(seq, positions, keys, counts, first, (hc, hf, hs, size), top_k)
        if len(top) == 0:  # "if not pairs: break"
            return i, (keys, counts, first, used), (hc, hf, hs, size)
        k = len(top)
        competitors[i, 0, :k] = keys[top]
        competitors[i, 1, :k] = counts[top]
        a, b, count = keys[top[0]] >> 32, keys[top[0]] & 0xFFFFFFFF, counts[top[0]]
        room = 2 * min(count, new + 1)  # count >= occurrences: every weight is at least 1
        if 2 * (used + room) > len(keys):
            keys, counts, first = grow_table(keys, counts, first, used + room)
            hc, hf, hs, size = build_heap(keys, counts, first)
        # "chunks = [merge(symbols, best, new) ...]", and the next step's recount, for the pairs
        # it changes only: every count is right again when it returns
        removed, created, added = merge_pair(seq, weights, positions, keys, counts, first, a, b, new, room)
        used += added
        for s in created:  # a new pair's count only falls from now on: one entry is enough
            if counts[s] > 0:
                size = _heap_push(hc, hf, hs, size, counts[s], _bound(first[s]), s)
        out[i, 0] = a
        out[i, 1] = b
        out[i, 2] = count
        out[i, 3] = removed
        out[i, 4] = k
    return steps, (keys, counts, first, used), (hc, hf, hs, size)


# -- the heap ------------------------------------------------------------------------------------
@njit(cache=True)
def _above(hc, hf, i, j):
    """Entry ``i`` ranks above ``j``: a larger count, or the same count first in the sequence."""
    return hc[i] > hc[j] or (hc[i] == hc[j] and hf[i] < hf[j])


@njit(cache=True)
def _swap(hc, hf, hs, i, j):
    hc[i], hc[j] = hc[j], hc[i]
    hf[i], hf[j] = hf[j], hf[i]
    hs[i], hs[j] = hs[j], hs[i]


@njit(cache=True)
def _heap_push(hc, hf, hs, size, count, position, slot):
    if size == len(hc):
        raise IndexError("BPE pair heap is full")  # sized for one entry a slot; never write past it
    i = size
    hc[i], hf[i], hs[i] = count, position, slot
    while i > 0:
        parent = (i - 1) // 2
        if not _above(hc, hf, i, parent):
            break
        _swap(hc, hf, hs, i, parent)
        i = parent
    return size + 1


@njit(cache=True)
def _heap_pop(hc, hf, hs, size):
    size -= 1
    hc[0], hf[0], hs[0] = hc[size], hf[size], hs[size]
    _sift_down(hc, hf, hs, size, 0)
    return size


@njit(cache=True)
def _sift_down(hc, hf, hs, size, i):
    while True:
        best = i
        for child in range(2 * i + 1, min(2 * i + 3, size)):
            if _above(hc, hf, child, best):
                best = child
        if best == i:
            return
        _swap(hc, hf, hs, i, best)
        i = best
