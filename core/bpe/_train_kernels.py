"""The compiled hot loop of BPE training (numba): counting pairs, the lazy max-heap of counts, and
merging one pair everywhere it occurs.

Sequences are int32 arrays of token ids in which ``-1`` separates chunks (no pair spans a
separator).  A pair ``(a, b)`` is keyed as ``a << 32 | b`` in typed dicts.

Each function is plain Python that numba compiles; ``function.py_func`` runs the very same source
uncompiled, which is the readable reference path the tests compare against (and the textbook
in ``core.bpe._educational`` checks both).  Leaves out: choosing what to do with a step
(``core.bpe.trainer``) and encoding (``core.bpe._encode_kernels``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.typed import Dict

SEPARATOR = -1
DELETED = -2  # a position whose symbol was merged into its left neighbour


@njit(cache=True)
def pair_key(a, b):
    return (np.int64(a) << 32) | np.int64(b)


@njit(cache=True)
def count_pairs(seq, weights, n):
    """Weighted count of every adjacent pair in ``seq[:n]``, overlapping ones included.
    ``weights`` holds each position's chunk frequency, or is a single 1 (every chunk once)."""
    unit = len(weights) == 1
    counts = Dict.empty(key_type=types.int64, value_type=types.int64)
    for i in range(n - 1):
        a = seq[i]
        b = seq[i + 1]
        if a >= 0 and b >= 0:
            key = pair_key(a, b)
            counts[key] = counts.get(key, 0) + (1 if unit else weights[i])
    return counts


@njit(cache=True)
def heap_from_counts(counts, capacity):
    """A max-heap of (count, key) over the current counts, with room for ``capacity`` entries.

    The heap is lazy: ``merge_pair`` pushes a fresh entry whenever a count rises; an entry whose
    count no longer matches ``counts`` is dropped when it surfaces (and re-pushed with the
    true count if that fell), so the top valid entry is always the true maximum.
    """
    size = len(counts)
    hc = np.empty(max(capacity, size + 1), dtype=np.int64)
    hk = np.empty(max(capacity, size + 1), dtype=np.int64)
    i = 0
    for key in counts:
        hc[i] = counts[key]
        hk[i] = key
        i += 1
    for start in range((size - 2) // 2, -1, -1):
        _sift_down(hc, hk, size, start)
    return hc, hk, size


@njit(cache=True)
def rank_pairs(counts, heap_c, heap_k, heap_size, seq, nxt, slots, head, pool_pos, pool_next, top_k):
    """The ``top_k`` most frequent pairs, ties ordered by first occurrence in ``seq``.

    Returns ``(keys, counts, first_positions, heap_size)``; entry 0 is the pair to merge.  Every
    pair tied with the maximum is taken for the tie-break, so the winner is exact even when the
    displayed list is shorter than the ties.
    """
    n = len(seq)
    taken = Dict.empty(key_type=types.int64, value_type=types.int64)  # keys already collected
    keys_list = []
    top = -1
    while heap_size > 0:
        c = heap_c[0]
        key = heap_k[0]
        if key in taken:  # a second entry for a pair already taken
            heap_size = _heap_pop_max(heap_c, heap_k, heap_size)
            continue
        current = counts.get(key, 0)
        if current != c:  # stale: decrements push nothing, so put the true count back now
            heap_size = _heap_pop_max(heap_c, heap_k, heap_size)
            if 0 < current < c:
                heap_size = _heap_push_max(heap_c, heap_k, heap_size, current, key)
            continue
        if top < 0:
            top = c
        if len(keys_list) >= top_k and c < top:
            break
        heap_size = _heap_pop_max(heap_c, heap_k, heap_size)
        taken[key] = len(keys_list)
        keys_list.append(key)
    m = len(keys_list)
    keys = np.empty(m, dtype=np.int64)
    cnts = np.empty(m, dtype=np.int64)
    first = np.full(m, n, dtype=np.int64)
    for i in range(m):
        keys[i] = keys_list[i]
        cnts[i] = counts[keys_list[i]]
        heap_size = _heap_push_max(heap_c, heap_k, heap_size, cnts[i], keys[i])  # put back
    # Only pairs that share a count need their first position (the tie-break).  Every current
    # occurrence of a pair is in its position list, so the smallest still-valid entry is it.
    for i in range(m):
        tied = (i > 0 and cnts[i - 1] == cnts[i]) or (i + 1 < m and cnts[i + 1] == cnts[i])
        if tied:
            a = keys[i] >> 32
            b = keys[i] & 0xFFFFFFFF
            k = head[slots[keys[i]]]
            while k >= 0:
                p = pool_pos[k]
                if p < first[i] and seq[p] == a and nxt[p] >= 0 and seq[nxt[p]] == b:
                    first[i] = p
                k = pool_next[k]
    # Sort by count descending, then first position: one int64 key (counts * (n + 1) fits easily).
    order = np.argsort(-cnts * (n + 1) + first, kind="mergesort")
    return keys[order], cnts[order], first[order], heap_size


@njit(cache=True)
def index_pairs(seq, slot_capacity, pool_capacity):
    """Link every position to its neighbours and list, for each pair, the positions it starts at.

    Returns ``(nxt, prv, slots, head, slot_len, pool_pos, pool_next, pool_used)``: ``slots`` maps
    a pair key to a slot; a slot's positions form a linked list through ``pool_*`` starting at
    ``head[slot]``.  Lists may hold stale positions; ``merge_pair`` checks each before use.
    Positions are int32 (a corpus holds fewer than 2**31 symbols): half the memory of int64.
    """
    n = len(seq)
    nxt = np.empty(n, dtype=np.int32)
    prv = np.empty(n, dtype=np.int32)
    for i in range(n):
        nxt[i] = i + 1 if i + 1 < n else -1
        prv[i] = i - 1
    slots = Dict.empty(key_type=types.int64, value_type=types.int64)
    head = np.full(slot_capacity, -1, dtype=np.int32)
    slot_len = np.zeros(slot_capacity, dtype=np.int32)
    pool_pos = np.empty(pool_capacity, dtype=np.int32)
    pool_next = np.empty(pool_capacity, dtype=np.int32)
    pool_used = 0
    for i in range(n - 1):
        if seq[i] >= 0 and seq[i + 1] >= 0:
            pool_used = _list_push(slots, head, slot_len, pool_pos, pool_next, pool_used,
                                   pair_key(seq[i], seq[i + 1]), i)
    return nxt, prv, slots, head, slot_len, pool_pos, pool_next, pool_used


@njit(cache=True)
def _list_push(slots, head, slot_len, pool_pos, pool_next, pool_used, key, position):
    if key in slots:
        slot = slots[key]
    else:
        slot = len(slots)
        slots[key] = slot
    pool_pos[pool_used] = position
    pool_next[pool_used] = head[slot]
    head[slot] = pool_used
    slot_len[slot] += 1
    return pool_used + 1


@njit(cache=True)
def merge_pair(seq, nxt, prv, weights, counts, heap_c, heap_k, heap_size, slots, head, slot_len,
               pool_pos, pool_next, pool_used, a, b, new):
    """Replace every ``a b`` (left to right, non-overlapping) by ``new``, visiting only the
    positions listed for that pair.

    Pair counts are updated incrementally: only the neighbours of each merged occurrence change;
    each changed count is pushed onto the lazy heap and each new pair's position onto its list.
    ``weights`` holds each position's chunk frequency, or is a single 1 when every chunk counts
    once (the char variant).  The caller makes sure the arrays have room for this merge
    (``BPETrainer.ensure_room``).  Returns ``(tokens_removed, heap_size, pool_used)``.
    """
    unit = len(weights) == 1
    key = pair_key(a, b)
    slot = slots[key]
    m = slot_len[slot]
    todo = np.empty(m, dtype=np.int32)
    k = head[slot]
    for i in range(m):
        todo[i] = pool_pos[k]
        k = pool_next[k]
    head[slot] = -1  # (a, b) cannot form again: new pairs always contain ``new``
    slot_len[slot] = 0
    todo.sort()
    removed = 0
    for p in todo:
        q = nxt[p]
        if seq[p] != a or q < 0 or seq[q] != b:
            continue  # stale, or consumed by the previous occurrence (the middle of "a a a")
        w = 1 if unit else weights[p]
        heap_size = _add(counts, heap_c, heap_k, heap_size, key, -w)
        left = prv[p]
        if left >= 0 and seq[left] >= 0:  # already in its merged form
            heap_size = _add(counts, heap_c, heap_k, heap_size, pair_key(seq[left], a), -w)
            heap_size = _add(counts, heap_c, heap_k, heap_size, pair_key(seq[left], new), w)
            pool_used = _list_push(slots, head, slot_len, pool_pos, pool_next, pool_used,
                                   pair_key(seq[left], new), left)
        right = nxt[q]
        if right >= 0 and seq[right] >= 0:  # not merged yet
            heap_size = _add(counts, heap_c, heap_k, heap_size, pair_key(b, seq[right]), -w)
            heap_size = _add(counts, heap_c, heap_k, heap_size, pair_key(new, seq[right]), w)
            pool_used = _list_push(slots, head, slot_len, pool_pos, pool_next, pool_used,
                                   pair_key(new, seq[right]), p)
        seq[p] = new
        seq[q] = DELETED
        nxt[p] = right
        if right >= 0:
            prv[right] = p
        removed += w
    return removed, heap_size, pool_used


@njit(cache=True)
def _add(counts, heap_c, heap_k, heap_size, key, delta):
    """Change a pair count; only a rise needs a heap entry (a fall is fixed up lazily)."""
    value = counts.get(key, 0) + delta
    if value == 0:
        counts.pop(key, 0)
        return heap_size
    counts[key] = value
    if delta > 0:
        return _heap_push_max(heap_c, heap_k, heap_size, value, key)
    return heap_size


@njit(cache=True)
def listed_positions(slots, slot_len, key):
    """How many positions are listed for a pair: a bound on its occurrences."""
    return slot_len[slots[key]] if key in slots else 0


@njit(cache=True)
def _heap_push_max(hc, hk, size, count, key):
    if size == len(hc):
        raise IndexError("BPE pair heap is full")  # the caller sizes it; never write past the end
    i = size
    hc[i] = count
    hk[i] = key
    while i > 0:
        parent = (i - 1) // 2
        if hc[parent] < hc[i]:
            hc[i], hc[parent] = hc[parent], hc[i]
            hk[i], hk[parent] = hk[parent], hk[i]
            i = parent
        else:
            break
    return size + 1


@njit(cache=True)
def _heap_pop_max(hc, hk, size):
    size -= 1
    hc[0] = hc[size]
    hk[0] = hk[size]
    _sift_down(hc, hk, size, 0)
    return size


@njit(cache=True)
def _sift_down(hc, hk, size, i):
    while True:
        left = 2 * i + 1
        right = left + 1
        largest = i
        if left < size and hc[left] > hc[largest]:
            largest = left
        if right < size and hc[right] > hc[largest]:
            largest = right
        if largest == i:
            return
        hc[i], hc[largest] = hc[largest], hc[i]
        hk[i], hk[largest] = hk[largest], hk[i]
        i = largest
