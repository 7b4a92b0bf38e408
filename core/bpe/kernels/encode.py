"""The compiled hot loops of BPE encoding (numba), over many chunks at once: applying named merges
in rank order (:func:`apply_merges`, trained tokenizers and GPT-2), and merging by the rank of the
joined bytes as tiktoken does (:func:`apply_ranks`, the pretrained vocabularies).

A pair is looked up by the same ``a << 32 | b`` pair key the trainer uses, in a table searched as the
trainer searches its own (``_find``).  A chunk longer than ``SHORT`` symbols is merged with a heap,
a shorter one (nearly all) by scanning an array of pair ranks, as tiktoken does.  Plain Python
that numba compiles; ``function.py_func`` runs the same source uncompiled.  Leaves out: which
chunks to encode and the cache of encoded chunks (``core.bpe.encoding``).

The data, shared by both encoders:

- ``seq``: every chunk's symbol ids, end to end in one array; chunk ``c`` is
  ``seq[starts[c]:starts[c+1]]``, so one call encodes a whole text with no Python per chunk.
- ``sym``: a copy of ``seq`` rewritten in place: a merge writes the new id at the left position
  and ``-1`` at the right one (a symbol merged away).
- ``nxt`` / ``prv``: the surviving positions of a chunk as a doubly linked list (``-1`` at the
  chunk's ends), so a merge unlinks the right symbol in O(1) instead of shifting the chunk.
- a pair ``(a, b)`` of ids is one int64, ``a << 32 | b`` (``pair_key``), looked up in a hash
  table of two arrays (``build_table``).
- ``_gather`` walks each chunk's list from its first position to write the result.
"""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit

from .training import _find, pair_key

SHORT = 48  # symbols: a chunk up to this long is merged by scanning (``_merge_short``), longer by a heap


@njit(cache=True)
def build_table(keys, values):
    """Pair key -> value, as two arrays searched linearly from the key's slot (``_find``; ``-1``:
    empty), under half full; of two equal keys the later value wins.  A lookup costs far less than
    numba's typed dict's, and the kernels below look one up for every pair they see (why:
    docs/benchmarks.md, "Encoding real tokenizers")."""
    size = 16
    while size < 2 * len(keys):
        size *= 2
    table_keys = np.full(size, -1, np.int64)
    table_values = np.empty(size, np.int64)
    for i in range(len(keys)):
        s = _find(table_keys, keys[i])
        table_keys[s] = keys[i]
        table_values[s] = values[i]
    return table_keys, table_values


@njit(cache=True)
def build_ranks(merge_a, merge_b):
    """Pair key -> merge rank (50k GPT-2 merges in a few ms)."""
    keys = np.empty(len(merge_a), np.int64)
    for r in range(len(merge_a)):
        keys[r] = pair_key(merge_a[r], merge_b[r])
    return build_table(keys, np.arange(len(merge_a)))


@njit(cache=True)
def build_pairs(keys, merged):
    """Pair key -> the id of the token the two joined tokens spell (every split of every token)."""
    return build_table(keys, merged)


@njit(cache=True, inline="always")
def _rank(table, key):
    s = _find(table[0], key)
    return table[1][s] if table[0][s] == key else -1


@njit(cache=True)
def apply_merges(seq, starts, ranks, merge_a, merge_b, merge_new):
    """Encode each chunk ``seq[starts[c]:starts[c+1]]`` by applying the merges in rank order.

    ``ranks`` maps a pair key to its merge rank.  All chunks are processed together, one rank at
    a time, leftmost occurrence first: exactly the textbook encoder (apply merge 0 everywhere,
    then merge 1, ...), but each rank only visits the positions where its pair occurs.  That
    works because a merge's parts always exist before it (the tokenizer checks this), so a merge
    only creates pairs of a *later* rank, which are queued in that rank's bucket.
    Returns ``(ids, out_starts)``.
    """
    # rank_at[p]: the rank of the pair starting at p in the text as given (-1: no merge joins
    # it); bucket_size[r + 1]: how many such pairs rank r has (shifted by one for the cumsum).
    total = len(seq)
    sym = seq.copy()
    nxt = np.empty(total, dtype=np.int64)
    prv = np.empty(total, dtype=np.int64)
    rank_at = np.full(total, -1, dtype=np.int64)
    n_ranks = len(merge_a)
    bucket_size = np.zeros(n_ranks + 1, dtype=np.int64)
    # Link each chunk's positions and find every pair a merge joins: the textbook's first scan.
    for c in range(len(starts) - 1):
        lo, hi = starts[c], starts[c + 1]
        for p in range(lo, hi):
            nxt[p] = p + 1 if p + 1 < hi else -1
            prv[p] = p - 1 if p > lo else -1
            if p + 1 < hi:
                r = _rank(ranks, pair_key(sym[p], sym[p + 1]))
                if r >= 0:
                    rank_at[p] = r
                    bucket_size[r + 1] += 1
    # Counting sort: the initial positions of each rank, in increasing position order.
    bucket_start = np.cumsum(bucket_size)
    fill = bucket_start[:-1].copy()
    initial = np.empty(bucket_start[-1], dtype=np.int64)
    for p in range(total):
        r = rank_at[p]
        if r >= 0:
            initial[fill[r]] = p
            fill[r] += 1
    # initial[bucket_start[r]:bucket_start[r + 1]]: where rank r's pair occurs before any merge,
    # left to right.
    # Positions where a merge created a later-ranked pair: a linked list per rank, its entries in
    # one pool (pool_pos[k]: the position; pool_next[k]: the next entry, -1 at the end).  Each
    # merge adds at most two entries, so 2 * total + 1 never runs out.
    queued_head = np.full(n_ranks, -1, dtype=np.int64)
    pool_pos = np.empty(2 * total + 1, dtype=np.int64)
    pool_next = np.empty(2 * total + 1, dtype=np.int64)
    pool_used = 0
    # The textbook loop: for each merge in rank order, replace every occurrence of its pair,
    # left to right.  Here a rank visits only the positions where its pair was found (todo).
    for r in range(n_ranks):
        lo, hi = bucket_start[r], bucket_start[r + 1]
        if lo == hi and queued_head[r] < 0:
            continue
        m = 0
        k = queued_head[r]
        while k >= 0:
            m += 1
            k = pool_next[k]
        todo = np.empty(hi - lo + m, dtype=np.int64)
        todo[: hi - lo] = initial[lo:hi]
        i = hi - lo
        k = queued_head[r]
        while k >= 0:
            todo[i] = pool_pos[k]
            i += 1
            k = pool_next[k]
        # todo: the initial positions and the queued ones, sorted: leftmost occurrence first, so
        # in 'a a a' the pair at 0 is merged and the one at 1 is then stale.
        if m > 0:
            todo.sort()
        a, b, new = merge_a[r], merge_b[r], merge_new[r]
        for p in todo:
            q = nxt[p]
            if sym[p] != a or q < 0 or sym[q] != b:
                continue  # already consumed by an earlier merge (e.g. the middle of "a a a")
            # Merge: p takes the new id, q leaves the list.
            sym[p] = new
            sym[q] = -1
            nxt[p] = nxt[q]
            if nxt[q] >= 0:
                prv[nxt[q]] = p
            # The merge made two new pairs, (left, new) and (new, right); a pair of a later rank
            # is queued for that rank (an earlier rank is done: its merge can no longer apply).
            left = prv[p]
            if left >= 0:
                r2 = _rank(ranks, pair_key(sym[left], new))
                if r2 > r:
                    pool_pos[pool_used] = left
                    pool_next[pool_used] = queued_head[r2]
                    queued_head[r2] = pool_used
                    pool_used += 1
            right = nxt[p]
            if right >= 0:
                r2 = _rank(ranks, pair_key(new, sym[right]))
                if r2 > r:
                    pool_pos[pool_used] = p
                    pool_next[pool_used] = queued_head[r2]
                    queued_head[r2] = pool_used
                    pool_used += 1
    return _gather(sym, nxt, starts)


@njit(cache=True)
def apply_ranks(seq, starts, pairs, limits):
    """Encode each chunk ``seq[starts[c]:starts[c+1]]`` the way tiktoken does: while two
    neighbours join into a token, join the pair whose token has the lowest rank (a token's rank
    is its id), the leftmost among equals.  Only tokens below ``limits[c]`` are made (recovering
    a token's parts uses its own rank as the limit).  A heap of ``(rank, position)`` keeps long
    chunks (a run of a million spaces) ``O(n log n)``; an entry whose pair changed is skipped.
    Returns ``(ids, out_starts)``.
    """
    total = len(seq)
    sym = seq.copy()
    nxt = np.empty(total, dtype=np.int64)
    prv = np.empty(total, dtype=np.int64)
    for c in range(len(starts) - 1):
        lo, hi = starts[c], starts[c + 1]
        limit = limits[c]
        # Nearly every chunk is a word of a few symbols: a scan of an array beats a heap there.
        if hi - lo <= SHORT:
            _merge_short(sym, nxt, lo, hi, pairs, limit)
            continue
        # A typed empty list of (rank, position): numba infers the element type from the first.
        heap = [(np.int64(0), np.int64(0))]
        heap.pop()
        for p in range(lo, hi):
            nxt[p] = p + 1 if p + 1 < hi else -1
            prv[p] = p - 1 if p > lo else -1
            if p + 1 < hi:
                r = _rank(pairs, pair_key(sym[p], sym[p + 1]))
                if 0 <= r < limit:
                    heap.append((r, np.int64(p)))
        # The textbook step, tiktoken's order: join the lowest-ranked pair (leftmost among equals:
        # the heap compares positions second), until no neighbours join into a token.
        heapq.heapify(heap)
        while heap:
            r, p = heapq.heappop(heap)
            q = nxt[p]
            if sym[p] < 0 or q < 0 or _rank(pairs, pair_key(sym[p], sym[q])) != r:
                continue  # p was merged away, or its pair changed since this entry was pushed
            # Merge: the joined token's id is its rank; q leaves the list.
            sym[p] = r
            sym[q] = -1
            nxt[p] = nxt[q]
            if nxt[q] >= 0:
                prv[nxt[q]] = p
            # Push the two pairs the merge made; entries for the pairs it broke stay in the heap
            # and are skipped when popped (the check above).
            left, right = prv[p], nxt[p]
            if left >= 0:
                r2 = _rank(pairs, pair_key(sym[left], r))
                if 0 <= r2 < limit:
                    heapq.heappush(heap, (r2, left))
            if right >= 0:
                r2 = _rank(pairs, pair_key(r, sym[right]))
                if 0 <= r2 < limit:
                    heapq.heappush(heap, (r2, p))
    return _gather(sym, nxt, starts)


@njit(cache=True)
def _merge_short(sym, ranks, lo, hi, pairs, limit):
    """:func:`apply_ranks` on one short chunk, tiktoken's way: the pair ranks in an array, scanned
    for the lowest (leftmost among equals), the merged pair removed by shifting.  Quicker than a
    heap below ``SHORT`` symbols.  ``ranks`` is scratch space, left as the ``nxt`` links of the result."""
    # sym[lo:lo + m] holds the chunk's m symbols, packed to the left; ranks[k] the rank of the
    # pair (sym[k], sym[k + 1]), ``limit`` meaning none.
    m = hi - lo
    for k in range(lo, hi - 1):
        ranks[k] = _limited(pairs, sym[k], sym[k + 1], limit)
    # Find the lowest rank (leftmost among equals), join that pair, shift the rest left by one and
    # rerank the two pairs beside the join.
    while m > 1:
        best, at = limit, -1
        for k in range(lo, lo + m - 1):
            if ranks[k] < best:
                best, at = ranks[k], k
        if at < 0:
            break
        sym[at] = best
        for k in range(at + 1, lo + m - 1):
            sym[k] = sym[k + 1]
            ranks[k] = ranks[k + 1]
        m -= 1
        if at > lo:
            ranks[at - 1] = _limited(pairs, sym[at - 1], sym[at], limit)
        if at < lo + m - 1:
            ranks[at] = _limited(pairs, sym[at], sym[at + 1], limit)
    # Leave the result in _gather's form: a linked list (here, consecutive) ending at lo + m.
    for k in range(lo, hi):
        ranks[k] = k + 1 if k + 1 < lo + m else -1
    for k in range(lo + m, hi):
        sym[k] = -1


@njit(cache=True, inline="always")
def _limited(pairs, a, b, limit):
    """The rank of the token ``a`` and ``b`` join into, or ``limit`` when they join into none below it."""
    r = _rank(pairs, pair_key(a, b))
    return r if 0 <= r < limit else limit


@njit(cache=True)
def _gather(sym, nxt, starts):
    """The surviving symbols of every chunk, in order: ``(ids, out_starts)``."""
    out = np.empty(len(sym), dtype=np.int32)
    out_starts = np.empty(len(starts), dtype=np.int64)
    written = 0
    for c in range(len(starts) - 1):
        out_starts[c] = written
        p = starts[c] if starts[c + 1] > starts[c] else -1
        while p >= 0:
            out[written] = sym[p]
            written += 1
            p = nxt[p]
    out_starts[len(starts) - 1] = written
    return out[:written], out_starts
