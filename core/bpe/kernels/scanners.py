"""The known split patterns as compiled scanners (numba) over UTF-8 bytes: the same pieces as
``regex.findall`` with the pattern, at tiktoken's speed or better, with no Python object per piece.

Three scanners cover six patterns (``known_patterns`` says which runs which):

- GPT-2's: ``'(?:[sdmt]|ll|ve|re)| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+``
- the GPT-4 family (GPT-4's published pattern, tiktoken's current cl100k_base, Llama 3, Qwen 3):
  a contraction (letters matched case-insensitively), an optional non-letter, non-digit, non-newline
  character then letters, 1 to ``digits`` digits, an optional space then other characters and any
  newlines after them, then whitespace; cl100k's ``\\s++$`` (``end_first``) takes whitespace that
  runs to the end before the newline rule.
- o200k's: a word whose case the two first alternatives decide (their backtracking is replayed
  below, alternative by alternative, with and without the optional prefix), digits, other
  characters with the newlines and slashes after them, then whitespace.

Whitespace (``_space_end``), the last alternatives of all of them: the run up to its last ``\\r``
or ``\\n`` (``\\s*[\\r\\n]``, GPT-4 and o200k); else the run, less its last character when it has
two or more and is not at the end (``\\s+(?!\\S)``: that space goes with the next word); else
the one character.  Character classes come from ``char_classes`` (taken from ``regex``).
Equal pieces are found as they are cut, in ``piece_table``' table of byte ranges.

The kernels allocate nothing and are compiled without numba's reference counting
(``_nrt=False``): a call between compiled functions otherwise costs two atomic operations per
array argument, which made cutting a text several times slower (the many small calls per piece;
why: docs/benchmarks.md, "Encoding real tokenizers");
:func:`scan` returns when an array is full, and ``known_patterns`` grows it.
``function.py_func`` runs the same source uncompiled.  Leaves out: which pattern is which
scanner, and what is done with the pieces (``known_patterns``, ``core.bpe.encoding``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..split.char_classes import LETTER, LOWER, NEWLINE, NUMBER, OTHER, PREFIX, SPACE, UPPER
from .piece_table import find_slot, hash_bytes

# The scanners, by the number ``known_patterns.SCANNERS`` gives each pattern.
GPT2 = 0
GPT4 = 1
O200K = 2


@njit(cache=True, _nrt=False)
def _char(buf, p):
    """The code point starting at byte ``p`` of valid UTF-8, and the position after it."""
    b = np.int64(buf[p])
    if b < 0x80:
        return b, p + 1
    if b < 0xE0:
        return ((b & 0x1F) << 6) | (np.int64(buf[p + 1]) & 0x3F), p + 2
    if b < 0xF0:
        return (((b & 0x0F) << 12) | ((np.int64(buf[p + 1]) & 0x3F) << 6)
                | (np.int64(buf[p + 2]) & 0x3F)), p + 3
    return (((b & 0x07) << 18) | ((np.int64(buf[p + 1]) & 0x3F) << 12)
            | ((np.int64(buf[p + 2]) & 0x3F) << 6) | (np.int64(buf[p + 3]) & 0x3F)), p + 4


@njit(cache=True, _nrt=False)
def _flags(buf, p, hi, table):
    """The class flags of the character at ``p``; none past ``hi``."""
    if p >= hi:
        return 0
    c, _ = _char(buf, p)
    return table[c]


@njit(cache=True, _nrt=False)
def _run(buf, p, hi, table, flag):
    """The end of the run of characters with ``flag`` that starts at ``p``."""
    while p < hi:
        c, q = _char(buf, p)
        if not table[c] & flag:
            break
        p = q
    return p


@njit(cache=True, _nrt=False)
def _letter(buf, p, hi, fold_cp, fold_to):
    """The contraction letter the character at ``p`` stands for (0 for none), and the position after it."""
    if p >= hi:
        return 0, p
    c, q = _char(buf, p)
    k = np.searchsorted(fold_cp, c)
    return (fold_to[k] if k < len(fold_cp) and fold_cp[k] == c else 0), q


@njit(cache=True, _nrt=False)
def _contraction(buf, p, hi, fold_cp, fold_to):
    """Bytes of the contraction at ``p`` ('s 'd 'm 't 'll 've 're), else 0."""
    if p >= hi or buf[p] != 39:
        return 0
    a, q = _letter(buf, p + 1, hi, fold_cp, fold_to)
    if a == 115 or a == 100 or a == 109 or a == 116:  # s d m t
        return q - p
    b, r = _letter(buf, q, hi, fold_cp, fold_to)
    if (a == 108 and b == 108) or (a == 118 and b == 101) or (a == 114 and b == 101):  # ll ve re
        return r - p
    return 0


@njit(cache=True, _nrt=False)
def _space_end(buf, p, hi, table, newline_first, end_first):
    """The end of the whitespace piece at ``p`` (see the module's docstring)."""
    j, last, after_newline = p, p, -1
    while j < hi:
        c, q = _char(buf, j)
        if not table[c] & SPACE:
            break
        if table[c] & NEWLINE:
            after_newline = q
        last, j = j, q
    if newline_first and after_newline >= 0 and not (end_first and j == hi):
        return after_newline
    if j == hi:
        return hi
    return last if last > p else j


@njit(cache=True, _nrt=False)
def _gpt2_piece(buf, p, hi, table, fold_cp, fold_to):
    n = _contraction(buf, p, hi, fold_cp, fold_to)
    if n:
        return p + n
    c, q = _char(buf, p)
    f = table[c]
    if c == 32 and q < hi:  # " ?X+": the space joins a run of letters, digits or others
        f = _flags(buf, q, hi, table)
    for flag in (LETTER, NUMBER, OTHER):
        if f & flag:
            return _run(buf, q, hi, table, flag)
    return _space_end(buf, p, hi, table, False, False)


@njit(cache=True, _nrt=False)
def _gpt4_piece(buf, p, hi, table, fold_cp, fold_to, digits, end_first):
    n = _contraction(buf, p, hi, fold_cp, fold_to)
    if n:
        return p + n
    c, q = _char(buf, p)
    f = table[c]
    if f & LETTER or (f & PREFIX and _flags(buf, q, hi, table) & LETTER):
        return _run(buf, q, hi, table, LETTER)
    if f & NUMBER:
        e, k = q, 1
        while k < digits and _flags(buf, e, hi, table) & NUMBER:
            e, k = _char(buf, e)[1], k + 1
        return e
    if f & OTHER or (c == 32 and _flags(buf, q, hi, table) & OTHER):
        e = _run(buf, q, hi, table, OTHER)
        while e < hi and (buf[e] == 10 or buf[e] == 13):
            e += 1
        return e
    return _space_end(buf, p, hi, table, True, end_first)


@njit(cache=True, _nrt=False)
def _cased_word(buf, s, hi, table, head_needed):
    """o200k's ``U*L+`` (``head_needed`` false: backtracking the head until a tail character
    follows) or ``U+L*`` at ``s``: its end, or -1."""
    u = _run(buf, s, hi, table, UPPER)
    if head_needed:
        return _run(buf, u, hi, table, LOWER) if u > s else -1
    m = u
    while not _flags(buf, m, hi, table) & LOWER:
        if m == s:
            return -1
        m -= 1
        while buf[m] & 0xC0 == 0x80:  # back to the start of the previous character
            m -= 1
    return _run(buf, m, hi, table, LOWER)


@njit(cache=True, _nrt=False)
def _o200k_piece(buf, p, hi, table, fold_cp, fold_to):
    c, q = _char(buf, p)
    f = table[c]
    for head_needed in (False, True):  # the first alternative, then the second
        for s in (q, p):  # with the optional prefix (greedy), then without
            if s == q and not f & PREFIX:
                continue
            e = _cased_word(buf, s, hi, table, head_needed)
            if e >= 0:
                return e + _contraction(buf, e, hi, fold_cp, fold_to)
    if f & NUMBER:
        e, k = q, 1
        while k < 3 and _flags(buf, e, hi, table) & NUMBER:
            e, k = _char(buf, e)[1], k + 1
        return e
    if f & OTHER or (c == 32 and _flags(buf, q, hi, table) & OTHER):
        e = _run(buf, q, hi, table, OTHER)
        while e < hi and (buf[e] == 10 or buf[e] == 13 or buf[e] == 47):
            e += 1
        return e
    return _space_end(buf, p, hi, table, True, False)


@njit(cache=True, _nrt=False)
def scan(buf, seg_lo, seg_hi, table, fold_cp, fold_to, scanner, digits, end_first,
         at, slots, hashes, starts, ends, which, seg_first):
    """Cut the segments ``buf[seg_lo[g]:seg_hi[g]]`` into pieces, each looked up in the table
    ``slots`` of distinct pieces (``hashes``, ``starts``, ``ends``; added when new), its index
    written to ``which``, and each segment's first piece to ``seg_first``.  ``at`` is
    ``(segment, position, distinct pieces, pieces)`` to start from; returns the same where it
    stopped: at the end, or where an array is full (the caller grows it and calls again)."""
    g, p, d, n = at
    while g < len(seg_lo):
        hi = seg_hi[g]
        if p == seg_lo[g]:
            seg_first[g] = n
        while p < hi:
            if n == len(which) or d == len(starts) or 2 * (d + 1) > len(slots):
                return g, p, d, n
            if scanner == GPT2:
                e = _gpt2_piece(buf, p, hi, table, fold_cp, fold_to)
            elif scanner == GPT4:
                e = _gpt4_piece(buf, p, hi, table, fold_cp, fold_to, digits, end_first)
            else:
                e = _o200k_piece(buf, p, hi, table, fold_cp, fold_to)
            h = np.uint64(hash_bytes(buf, p, e))
            slot = find_slot(slots, hashes, buf, starts, ends, buf, p, e, h)
            k = slots[slot]
            if k < 0:
                k = slots[slot] = d
                hashes[d], starts[d], ends[d] = h, p, e
                d += 1
            which[n] = k
            n += 1
            p = e
        g += 1
        if g < len(seg_lo):
            p = seg_lo[g]
    seg_first[len(seg_lo)] = n
    return g, p, d, n
