"""The compiled hot loop of BPE training (numba), in flat arrays only (about 8 bytes a symbol):
pair counts in an open-addressing table, a lazy max-heap over it, one position list per token.

``seq`` is int32 with ``-1`` between chunks (no pair spans one).  A token of length L >= 2 at
``p`` keeps its id at ``seq[p]`` and ``-(L + 1)`` at ``seq[p + 1]`` and ``seq[p + L - 1]`` (``-2``
inside), so the sequence is its own linked list.  A pair ``(a, b)`` is keyed ``a << 32 | b`` in
``keys``/``counts`` (linear probing, ``-1`` empty, never deleted).  ``pool[lo[t]:hi[t]]`` lists,
ascending, where token ``t`` starts with a token on its right; merging ``a b`` walks ``a``'s list
once, keeps the ``a`` still there, moves the merged ones into the space they free as the new
token's list, and drops stale ones: the pool never grows.

``function.py_func`` runs the same source uncompiled: the readable reference the tests compare
against.  Leaves out: what to do with a step (``core.bpe.trainer``) and encoding.
"""

from __future__ import annotations

import numpy as np
from numba import njit

SEPARATOR = -1
DELETED = -2  # inside a merged token; -(L + 1) <= -3 marks a token's second and last position


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
    s = _find(keys, key)
    new = keys[s] == -1
    keys[s] = key
    counts[s] += delta
    return s, new


@njit(cache=True)
def grow_table(keys, counts, need):
    """The same pairs in a table with room for ``need`` (twice as many slots, a power of two)."""
    capacity = len(keys)
    while 2 * need > capacity:
        capacity *= 2
    new_keys = np.full(capacity, -1, dtype=np.int64)
    new_counts = np.zeros(capacity, dtype=np.int64)
    for s in range(len(keys)):
        if keys[s] != -1:
            t = _find(new_keys, keys[s])
            new_keys[t] = keys[s]
            new_counts[t] = counts[s]
    return new_keys, new_counts


@njit(cache=True)
def count_pairs(seq, weights):
    """Weighted count of every adjacent pair, overlapping ones included.  ``weights`` holds each
    position's chunk frequency, or is a single 1 (every chunk once).  Returns the table and the
    number of pairs in it."""
    unit = len(weights) == 1
    keys = np.full(1 << 12, -1, dtype=np.int64)
    counts = np.zeros(1 << 12, dtype=np.int64)
    used = 0
    for i in range(len(seq) - 1):
        if seq[i] >= 0 and seq[i + 1] >= 0:
            if 2 * (used + 1) > len(keys):
                keys, counts = grow_table(keys, counts, len(keys))
            _, new = _add(keys, counts, pair_key(seq[i], seq[i + 1]), 1 if unit else weights[i])
            used += new
    return keys, counts, used


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
def build_heap(keys, counts, extra):
    """A max-heap of (count, slot) over the live pairs, with room for ``extra`` more entries.

    The heap is lazy: a merge pushes a fresh entry for each pair whose count rose; an entry
    whose count no longer matches the table is dropped when it surfaces (and re-pushed with the
    true count if that fell), so the top valid entry is always the true maximum.
    """
    live = np.flatnonzero(counts > 0)
    size = len(live)
    hc = np.empty(size + extra, dtype=np.int64)  # counts
    hs = np.empty(size + extra, dtype=np.int64)  # table slots
    hc[:size], hs[:size] = counts[live], live
    for start in range((size - 2) // 2, -1, -1):
        _sift_down(hc, hs, size, start)
    return hc, hs, size


@njit(cache=True)
def _next(seq, p):
    v = seq[p + 1]
    return p - v - 1 if v <= -3 else p + 1


@njit(cache=True)
def _prev(seq, p):
    v = seq[p - 1]
    return p + v + 1 if v <= -3 else p - 1


@njit(cache=True)
def rank_pairs(seq, pool, lo, hi, keys, counts, hc, hs, size, mark, top_k):
    """The ``top_k`` most frequent pairs, ties ordered by first occurrence in ``seq``.

    Returns ``(pair_keys, counts, first_positions, heap_size)``; entry 0 is the pair to merge
    (none left: empty arrays).  Every pair tied with the maximum is taken for the tie-break, so
    the winner is exact even when the displayed list is shorter than the ties.
    """
    taken = np.empty(size, dtype=np.int64)
    m, top = 0, -1
    while size > 0:
        c, s = hc[0], hs[0]
        if mark[s] or counts[s] != c:  # taken already, or stale: put the true count back
            size = _heap_pop(hc, hs, size)
            if not mark[s] and 0 < counts[s] < c:
                size = _heap_push(hc, hs, size, counts[s], s)
            continue
        top = c if top < 0 else top
        if m >= top_k and c < top:
            break
        size = _heap_pop(hc, hs, size)
        mark[s] = 1
        taken[m] = s
        m += 1
    n = len(seq)
    cnts = np.empty(m, dtype=np.int64)
    first = np.full(m, n, dtype=np.int64)
    for i in range(m):
        cnts[i] = counts[taken[i]]
        mark[taken[i]] = 0
        size = _heap_push(hc, hs, size, cnts[i], taken[i])  # put back
    for i in range(m):  # only pairs that share a count need their first position
        a, b = keys[taken[i]] >> 32, keys[taken[i]] & 0xFFFFFFFF
        if (i > 0 and cnts[i - 1] == cnts[i]) or (i + 1 < m and cnts[i + 1] == cnts[i]):
            for r in range(lo[a], hi[a]):  # ``a``'s list is ascending: the first hit is first
                if seq[pool[r]] == a and seq[_next(seq, pool[r])] == b:
                    first[i] = pool[r]
                    break
    order = np.argsort(-cnts * (n + 1) + first, kind="mergesort")
    return keys[taken[:m][order]], cnts[order], first[order], size


@njit(cache=True)
def merge_pair(seq, weights, pool, lo, hi, keys, counts, mark, a, b, new):
    """Replace every ``a b`` (left to right, non-overlapping) by ``new``, walking ``a``'s list.

    Only the neighbours of each merged occurrence change count.  Returns ``(tokens_removed,
    raised, added)``: ``raised`` lists the slots whose count rose (each once; the caller pushes
    them on the heap), ``added`` counts the pairs new to the table.  The caller keeps the table
    under half full with room for ``2 * (new + 1)`` new pairs, which bounds the pairs one merge
    can create.
    """
    unit = len(weights) == 1
    start, end = lo[a], hi[a]
    moved = np.empty(end - start, dtype=np.int32)
    raised = np.empty(2 * (new + 1), dtype=np.int64)
    kept = start  # a's list, compacted in place: the occurrences of ``a`` not merged
    c = 0  # occurrences of ``new`` with a right neighbour: they become new's list
    r_n = 0  # slots in ``raised``
    removed = 0  # tokens removed, weighted by their chunk's frequency
    added = 0  # pairs new to the table
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
        if p > 0 and seq[_prev(seq, p)] >= 0:  # the left neighbour, already in its merged form
            left = seq[_prev(seq, p)]
            _add(keys, counts, pair_key(left, a), -w)
            r_n, added = _raise(keys, counts, mark, raised, r_n, added, pair_key(left, new), w)
        if seq[right] >= 0:
            _add(keys, counts, pair_key(b, seq[right]), -w)
            r_n, added = _raise(keys, counts, mark, raised, r_n, added, pair_key(new, seq[right]), w)
            moved[c] = p
            c += 1
        seq[q] = DELETED
        seq[p] = new
        seq[p + 1] = seq[right - 1] = p - right - 1
        removed += w
    _add(keys, counts, pair_key(a, b), -removed)
    pool[kept:kept + c] = moved[:c]
    hi[a] = kept  # a's list ends where new's begins
    lo[new] = kept
    hi[new] = kept + c
    for i in range(r_n):
        mark[raised[i]] = 0
    return removed, raised[:r_n], added


@njit(cache=True)
def _raise(keys, counts, mark, raised, r_n, added, key, w):
    s, fresh = _add(keys, counts, key, w)
    if not mark[s]:
        mark[s] = 1
        raised[r_n] = s
        r_n += 1
    return r_n, added + fresh


@njit(cache=True)
def train_steps(seq, weights, pool, lo, hi, table, heap, first_new, steps, top_k, out, competitors):
    """Up to ``steps`` merges in one call, new ids from ``first_new``.  ``table`` is ``(keys,
    counts, used)`` and ``heap`` ``(hc, hs, size)``; both grow here when a merge could overflow.
    Step ``i`` goes to ``out[i] = (left, right, count, removed, competitors)`` and its top pairs
    to ``competitors[i]`` (keys and counts).  Returns ``(steps_done, table, heap)``."""
    keys, counts, used = table
    hc, hs, size = heap
    mark = np.zeros(len(keys), dtype=np.uint8)
    for i in range(steps):
        new = first_new + i
        if 2 * (used + 2 * (new + 1)) > len(keys):
            keys, counts = grow_table(keys, counts, used + 2 * (new + 1))
            mark = np.zeros(len(keys), dtype=np.uint8)
            hc, hs, size = build_heap(keys, counts, 4 * (new + 1) + 1024)
        elif size + 2 * (new + 1) > len(hc):
            hc, hs, size = build_heap(keys, counts, 4 * (new + 1) + 1024)
        ranked, cnts, _, size = rank_pairs(seq, pool, lo, hi, keys, counts, hc, hs, size, mark, top_k)
        if len(ranked) == 0:
            return i, (keys, counts, used), (hc, hs, size)
        a, b = ranked[0] >> 32, ranked[0] & 0xFFFFFFFF
        removed, raised, added = merge_pair(seq, weights, pool, lo, hi, keys, counts, mark, a, b, new)
        used += added
        for s in raised:
            if counts[s] > 0:
                size = _heap_push(hc, hs, size, counts[s], s)
        k = min(top_k, len(ranked))
        out[i, 0] = a
        out[i, 1] = b
        out[i, 2] = cnts[0]
        out[i, 3] = removed
        out[i, 4] = k
        competitors[i, 0, :k] = ranked[:k]
        competitors[i, 1, :k] = cnts[:k]
    return steps, (keys, counts, used), (hc, hs, size)


@njit(cache=True)
def _heap_push(hc, hs, size, count, slot):
    if size == len(hc):
        raise IndexError("BPE pair heap is full")  # the caller sizes it; never write past the end
    i = size
    hc[i], hs[i] = count, slot
    while i > 0:
        parent = (i - 1) // 2
        if hc[parent] >= hc[i]:
            break
        hc[i], hc[parent] = hc[parent], hc[i]
        hs[i], hs[parent] = hs[parent], hs[i]
        i = parent
    return size + 1


@njit(cache=True)
def _heap_pop(hc, hs, size):
    size -= 1
    hc[0], hs[0] = hc[size], hs[size]
    _sift_down(hc, hs, size, 0)
    return size


@njit(cache=True)
def _sift_down(hc, hs, size, i):
    while True:
        largest = i
        for child in range(2 * i + 1, min(2 * i + 3, size)):
            if hc[child] > hc[largest]:
                largest = child
        if largest == i:
            return
        hc[i], hc[largest] = hc[largest], hc[i]
        hs[i], hs[largest] = hs[largest], hs[i]
        i = largest
