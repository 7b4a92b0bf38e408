"""The compiled hot loop of BPE training (numba): the textbook's loop (``core.bpe._educational``:
count every pair, pick the most frequent, first in the sequence on a tie, merge it everywhere) done
incrementally, so a merge costs what it changes, whatever the text.

The data, in flat arrays only (about 12 bytes a position, plus 28 bytes a pair-table slot):

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
    under half full.  ``counts`` are weighted; ``first[s]`` is where pair ``s`` first occurs in
    the current sequence (``-1``: nowhere).
Occurrence lists: ``nxt``, ``prv``, one entry a position
    Every position that starts a pair is in its pair's list, ascending: ``nxt[p]`` is the next
    occurrence (``-1``: the last), ``prv[p]`` the previous one, and ``prv[first[s]]`` the last one,
    so a position is appended, or taken out, in O(1).
Heap: ``hc``, ``hf``, ``hs``
    A max-heap of (count, first position, slot), the larger count first and, among equal counts,
    the earlier position: its top is the pair the textbook picks, with no scan of the ties.

Why the heap can be lazy: a pair's occurrences all appear in the one merge that mints its newer
token (or in the corpus as laid out); every later merge only takes occurrences away.  So once a
pair is on the heap its count only falls and its first position only moves right: an entry that no
longer matches the table ranks its pair too high, and is corrected when it surfaces.  A slot has at
most one entry, so the heap never holds more entries than the table has pairs.

``function.py_func`` runs the same source uncompiled: the readable reference the tests compare
against.  Leaves out: what to do with a step (``core.bpe.trainer``) and encoding.
"""

from __future__ import annotations

import numpy as np
from numba import njit

SEPARATOR = -1
DELETED = -2  # where a merged token's right half began; -(L + 1) <= -3 marks its second and last
NONE = -1  # no position: an empty occurrence list, the end of one


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


# -- occurrence lists --------------------------------------------------------------------------
@njit(cache=True)
def _append(first, nxt, prv, s, p):
    """Put position ``p`` at the end of pair ``s``'s list (``p`` lies right of all its others)."""
    nxt[p] = NONE
    head = first[s]
    if head == NONE:
        first[s] = p
        prv[p] = p
    else:
        last = prv[head]
        nxt[last] = p
        prv[p] = last
        prv[head] = p


@njit(cache=True)
def _remove(counts, first, nxt, prv, s, p, w):
    """Take the occurrence at ``p`` (chunk weight ``w``) out of pair ``s``: its count and list."""
    counts[s] -= w
    after, before = nxt[p], prv[p]
    if first[s] == p:
        first[s] = after  # NONE when p was the only one
        if after != NONE:
            prv[after] = before  # the new first points at the last
    else:
        nxt[before] = after
        if after != NONE:
            prv[after] = before
        else:
            prv[first[s]] = before  # p was the last


# -- the textbook's first count ------------------------------------------------------------------
@njit(cache=True)
def count_pairs(seq, weights):
    """Count every adjacent pair, overlapping ones included (the textbook's ``get_stats``), and
    list where each occurs.  ``weights`` holds each position's chunk frequency, or is a single 1
    (every chunk once).  Returns ``(keys, counts, first, used)`` and ``(nxt, prv)``."""
    unit = len(weights) == 1
    keys = np.full(1 << 12, -1, dtype=np.int64)
    counts = np.zeros(1 << 12, dtype=np.int64)
    first = np.full(1 << 12, NONE, dtype=np.int32)
    nxt = np.empty(len(seq), dtype=np.int32)
    prv = np.empty(len(seq), dtype=np.int32)
    used = 0
    for i in range(len(seq) - 1):
        if seq[i] >= 0 and seq[i + 1] >= 0:
            if 2 * (used + 1) > len(keys):
                keys, counts, first = grow_table(keys, counts, first, len(keys))
            s, new = _add(keys, counts, pair_key(seq[i], seq[i + 1]), 1 if unit else weights[i])
            used += new
            _append(first, nxt, prv, s, i)  # left to right: each list comes out ascending
    return (keys, counts, first, used), (nxt, prv)


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
    hc[:size], hf[:size], hs[:size] = counts[live], first[live], live
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
def rank_pairs(counts, first, heap, top_k):
    """The slots of the ``top_k`` most frequent pairs, ties in order of first occurrence: entry 0
    is the pair to merge (none left: empty).  Returns ``(slots, heap_size)``; the heap keeps them."""
    hc, hf, hs, size = heap
    taken = np.empty(top_k, dtype=np.int64)
    m = 0
    while size > 0 and m < top_k:
        c, f, s = hc[0], hf[0], hs[0]
        size = _heap_pop(hc, hf, hs, size)
        if counts[s] != c or first[s] != f:  # stale: the pair lost occurrences since it was pushed
            if counts[s] > 0:
                size = _heap_push(hc, hf, hs, size, counts[s], first[s], s)  # its true rank, lower
            continue
        taken[m] = s
        m += 1
    for i in range(m):  # put back: they stay candidates
        size = _heap_push(hc, hf, hs, size, counts[taken[i]], first[taken[i]], taken[i])
    return taken[:m], size


# -- the textbook's merge: rewrite every a b as the new token --------------------------------------
@njit(cache=True)
def merge_pair(seq, weights, nxt, prv, keys, counts, first, a, b, new, room):
    """Replace every ``a b`` by ``new``, left to right and non-overlapping, walking the pair's own
    list: only the neighbours of each merged occurrence change pair.

    Returns ``(tokens_removed, created, added)``: ``created`` lists the slots of the pairs made
    with ``new`` (they enter the heap), ``added`` counts the pairs new to the table.  The caller
    leaves room in the table for ``room`` new pairs: at most two per occurrence merged, and at
    most ``2 * (new + 1)`` distinct ones.
    """
    unit = len(weights) == 1
    s_ab = _find(keys, pair_key(a, b))
    created = np.empty(room, dtype=np.int64)
    n_created = 0
    removed = 0  # tokens removed, weighted by their chunk's frequency
    while first[s_ab] != NONE:
        p = first[s_ab]  # the leftmost occurrence left: "a a a" merges at 0, and 1 is gone with it
        q = _next(seq, p)
        right = _next(seq, q)
        w = 1 if unit else weights[p]
        _remove(counts, first, nxt, prv, s_ab, p, w)
        if p > 0 and seq[_prev(seq, p)] >= 0:  # (left, a) becomes (left, new)
            left = _prev(seq, p)
            _remove(counts, first, nxt, prv, _find(keys, pair_key(seq[left], a)), left, w)
            s, fresh = _add(keys, counts, pair_key(seq[left], new), w)
            _append(first, nxt, prv, s, left)
            if fresh:
                created[n_created] = s
                n_created += 1
        if seq[right] >= 0:  # (b, right) becomes (new, right), now starting at p
            _remove(counts, first, nxt, prv, _find(keys, pair_key(b, seq[right])), q, w)
            s, fresh = _add(keys, counts, pair_key(new, seq[right]), w)
            _append(first, nxt, prv, s, p)
            if fresh:
                created[n_created] = s
                n_created += 1
        seq[q] = DELETED  # the token at p now spans p .. right - 1
        seq[p] = new
        seq[p + 1] = seq[right - 1] = p - right - 1
        removed += w
    return removed, created[:n_created], n_created


@njit(cache=True)
def train_steps(seq, weights, links, table, heap, first_new, steps, top_k, out, competitors):
    """Up to ``steps`` merges in one call, new ids from ``first_new``.  ``links`` is ``(nxt,
    prv)``, ``table`` ``(keys, counts, first, used)`` and ``heap`` ``(hc, hf, hs, size)``; the
    table and heap grow here when a merge could overflow them.  Step ``i`` goes to ``out[i] =
    (left, right, count, removed, competitors)`` and its top pairs to ``competitors[i]`` (keys and
    counts).  Returns ``(steps_done, table, heap)``."""
    nxt, prv = links
    keys, counts, first, used = table
    hc, hf, hs, size = heap
    for i in range(steps):
        new = first_new + i  # the textbook's "mint a new token"
        # "best = max(pairs, key=pairs.get)": the heap's top, and the runners-up shown beside it
        top, size = rank_pairs(counts, first, (hc, hf, hs, size), top_k)
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
        # it changes only: every count and occurrence list is right again when it returns
        removed, created, added = merge_pair(seq, weights, nxt, prv, keys, counts, first, a, b, new, room)
        used += added
        for s in created:  # a new pair's count only falls from now on: one entry is enough
            if counts[s] > 0:
                size = _heap_push(hc, hf, hs, size, counts[s], first[s], s)
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
