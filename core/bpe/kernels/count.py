"""The compiled loop of chunk counting (numba) that finds where a corpus may be cut into slices
(a safe cut; what that is, and why counting slices is exact: ``core.bpe.counting``).  The
slices themselves are cut and counted by ``scanners``.  ``function.py_func`` runs the same
source uncompiled.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, inline="always")
def _is_cut(buf, p):
    """Whether byte position ``p`` (>= 1) is a safe cut."""
    # buf: the corpus's UTF-8 bytes.  The byte before is printable ASCII ('!'..'~', so no piece
    # can join it across the cut) and the byte at p is a space, tab, VT or FF (32, 9, 11, 12):
    # the piece that reaches p - 1 ends there whether the text goes on or not.
    return 33 <= buf[p - 1] <= 126 and (buf[p] == 32 or buf[p] == 9 or buf[p] == 11 or buf[p] == 12)


@njit(cache=True)
def cut_near(buf, limit):
    """The last safe cut at or before ``limit``, else the first after it, else 0 (none)."""
    # Backwards first, so a slice stays under ``limit`` bytes when it can.
    for p in range(min(limit, len(buf) - 1), 0, -1):
        if _is_cut(buf, p):
            return p
    for p in range(limit + 1, len(buf)):
        if _is_cut(buf, p):
            return p
    return 0
