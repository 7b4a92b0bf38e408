"""The known split patterns cut by compiled scanners (``kernels.scanners``) instead of ``regex``:
which pattern is which scanner, and the pieces of a text as byte ranges, equal pieces found once.

A pattern is *known* when it is one of the six strings below, character for character; any other
pattern, or none, goes through ``regex`` (``core.bpe.pretokenize``), where a custom pattern runs
under a timeout.  The scanners run in linear time, so they need none.

    >>> data = "the cat  the hat's 123".encode()
    >>> starts, ends, which, _ = split_bytes(data, GPT4_PATTERN)
    >>> [data[starts[w]:ends[w]] for w in which]
    [b'the', b' cat', b' ', b' the', b' hat', b"'s", b' ', b'123']
    >>> which.tolist()
    [0, 1, 2, 3, 4, 5, 2, 6]

Leaves out: what the pieces become (``core.bpe.encoding``, ``core.bpe.counting``).
"""

from __future__ import annotations

import numpy as np

from ..kernels import piece_table, scanners
from .char_classes import CONTRACTION_LETTERS, case_folds, class_table
from ..pretokenize import (CL100K_PATTERN, GPT2_PATTERN, GPT4_PATTERN, LLAMA3_PATTERN, O200K_PATTERN,
                          QWEN3_PATTERN, special_split)

# pattern -> (scanner: scanners.GPT2, GPT4 or O200K, most digits in a number piece,
# whitespace to the end first, contraction letters in any case); plain numbers, so that reading
# this table loads no numba
SCANNERS = {
    GPT2_PATTERN: (0, 0, False, False),
    GPT4_PATTERN: (1, 3, False, True),
    LLAMA3_PATTERN: (1, 3, False, True),
    QWEN3_PATTERN: (1, 1, False, True),
    CL100K_PATTERN: (1, 3, True, True),
    O200K_PATTERN: (2, 3, False, True),
}
_EXACT_LETTERS = (np.array(sorted(map(ord, CONTRACTION_LETTERS)), dtype=np.int64),) * 2


def has_scanner(pattern: str | None) -> bool:
    """Whether ``pattern`` is cut by a compiled scanner."""
    return pattern in SCANNERS


def split_bytes(data: bytes | np.ndarray, pattern: str, segments: np.ndarray | None = None):
    """The pieces of UTF-8 ``data`` (of each ``(lo, hi)`` row of ``segments``, all of it by
    default), exactly ``regex.findall``'s pieces of each segment's text, equal pieces found once:
    ``(starts, ends, which, seg_first)``, the byte range of each distinct piece's first occurrence
    in order, the distinct piece each piece is, and the index of each segment's first piece."""
    buf = np.frombuffer(data, np.uint8) if isinstance(data, bytes) else data
    if segments is None:
        segments = np.array([[0, len(buf)]], dtype=np.int64)
    scanner, digits, end_first, folded = SCANNERS[pattern]
    fold_cp, fold_to = case_folds() if folded else _EXACT_LETTERS
    lo = np.ascontiguousarray(segments[:, 0])
    hi = np.ascontiguousarray(segments[:, 1])
    fixed = (buf, lo, hi, class_table(), fold_cp, fold_to, scanner, digits, end_first)
    which = np.empty(len(buf) // 4 + 16, np.int32)  # the distinct piece each piece is
    seg_first = np.empty(len(lo) + 1, np.int64)
    slots = np.full(2048, -1, np.int64)  # the table of distinct pieces (``kernels.piece_table``)
    hashes = np.empty(1024, np.uint64)
    starts = np.empty(1024, np.int64)  # each distinct piece's first byte range
    ends = np.empty(1024, np.int64)
    at = (0, int(lo[0]) if len(lo) else 0, 0, 0)
    while True:  # the kernel stops when an array is full: grow it, go on
        at = scanners.scan(*fixed, at, slots, hashes, starts, ends, which, seg_first)
        segment, _, d, n = at
        if segment == len(lo):
            return starts[:d], ends[:d], which[:n], seg_first
        if n == len(which):
            which = _doubled(which)
        if d == len(starts):
            hashes = _doubled(hashes)
            starts = _doubled(starts)
            ends = _doubled(ends)
        if 2 * (d + 1) > len(slots):
            slots = piece_table.rehashed(slots, hashes, d)


def chunk_counts(text: str, data: bytes, pattern: str, special_tokens=()) -> dict[str, int]:
    """The chunks of ``text`` (``data`` is its UTF-8) with their counts, in first-appearance order
    (the order training breaks ties by); special tokens are cut out first and not counted.  The
    one counter of both a text held in memory (the byte variant) and a streamed slice."""
    segments = None
    if special_tokens:
        segments = ordinary_segments(text, special_split(text, special_tokens))
    starts, ends, which, _ = split_bytes(data, pattern, segments)
    counts = np.bincount(which, minlength=len(starts)).tolist()
    return {data[s:e].decode("utf-8"): n for s, e, n in zip(starts.tolist(), ends.tolist(), counts)}


def ordinary_segments(text: str, spans) -> np.ndarray:
    """The byte ranges ``(n, 2)`` of the ordinary spans of ``text`` (``(start, end, special)``
    character spans, as ``special_split`` gives them, special tokens left out)."""
    spans = list(spans)
    bounds = np.cumsum([0] + [len(text[s:e].encode("utf-8")) for s, e, _ in spans])
    rows = [(bounds[k], bounds[k + 1]) for k, (_, _, special) in enumerate(spans) if special is None]
    return np.array(rows, dtype=np.int64).reshape(-1, 2)


def _doubled(array: np.ndarray) -> np.ndarray:
    return np.concatenate((array, np.empty_like(array)))


def ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The positions ``starts[i]:ends[i]`` for every ``i``, concatenated (to gather many slices
    of an array at once: ``array[ranges(starts, ends)]``)."""
    lengths = ends - starts
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(starts - offsets, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)
