"""Counting the chunks of a large byte-level corpus: a file or an iterator of texts, streamed in
slices and counted in worker processes, giving exactly the ``{chunk: count}`` of the serial path
(``Byte.corpus_chunks`` on the whole text, same counts, same first-appearance order) in bounded
memory.  ``BPETrainer.from_chunk_counts`` then merges on the counts:

    >>> counts = count_chunks(["the cat sat", " on the mat"], "gpt2", workers=1)
    >>> counts
    {'the': 1, ' cat': 1, ' sat': 1, ' on': 1, ' the': 1, ' mat': 1}

Why it is exact.  A *safe cut* is a byte position ``p`` where the byte before is printable ASCII
(``!`` to ``~``) and the byte at ``p`` is a space, ``\\t``, ``\\v`` or ``\\f`` (not ``\\r``, ``\\n``:
GPT-4 joins punctuation with the newlines after it).  For the GPT-2 and GPT-4 patterns (no
look-behind), every match that reaches ``p-1`` ends at ``p`` and decides the same whether the text
goes on or ends there, and a match starting at ``p`` only looks forward; so the pieces of the text
are the pieces of ``text[:p]`` followed by those of ``text[p:]``.  Slices are cut at safe cuts
(bytes at ``p`` are whole characters), and so are *segments* inside a slice; distinct segments
joined end to end meet at safe cuts again (each ends in printable ASCII, each but the first starts
with one of those four), so one regex pass over them gives each segment's pieces.  A special token
holding no ASCII whitespace never straddles a safe cut.

Why it is fast.  A slice is cut into segments (mostly ``" word"``) by a compiled kernel, which
also tallies equal segments in a hash table (byte-exact, first-appearance order).  Only the
distinct segments, about a quarter of the text, go through the regex; their pieces are tallied
again, weighted by their segment's count.  Python touches each distinct segment, never each
occurrence.

When to use what (figures in docs/benchmarks.md, "Byte BPE at scale"): ``BPETrainer(text)`` for a
corpus that fits comfortably in memory as one ``str`` (up to a few tens of MB); ``count_chunks``
with worker processes from about 50 MB on 2 cores (each worker first loads the compiled kernels,
~1 s), with ``workers=1`` below that or for a file you would rather not read whole: memory is
``2 * workers`` slices plus the distinct chunks, whatever the corpus length; and
``core.bpe.distributed`` when the corpus lives on several machines or exceeds one machine's disk.
A custom split pattern (or none) cannot be cut provably, so it is counted serially on the whole text.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor

import numba
import numpy as np

from .errors import ArgumentError, check_count, check_text
from .pretokenize import GPT2_PATTERN, GPT4_PATTERN, regex_pieces, resolve_pattern, special_split
from .variants import variant_rules

SLICE_BYTES = 8 * 2**20  # bytes counted per task: large enough to amortise, small enough to stream
_CUTTABLE = (GPT2_PATTERN, GPT4_PATTERN)  # the patterns the safe-cut argument is made for
_ASCII_SPACE = "\t\n\x0b\x0c\r "


@numba.njit(cache=True, inline="always")
def _is_cut(buf, p):
    """Whether byte position ``p`` (>= 1) is a safe cut."""
    return 33 <= buf[p - 1] <= 126 and (buf[p] == 32 or buf[p] == 9 or buf[p] == 11 or buf[p] == 12)


@numba.njit(cache=True)
def _segment_bounds(buf):
    """Start of every segment, then ``len(buf)``: the safe cuts of ``buf``."""
    n = len(buf)
    count = 1
    for p in range(1, n):
        count += _is_cut(buf, p)
    bounds = np.empty(count + 1, np.int64)
    bounds[0], bounds[count], k = 0, n, 1
    for p in range(1, n):
        if _is_cut(buf, p):
            bounds[k] = p
            k += 1
    return bounds


@numba.njit(cache=True)
def _tally(buf, bounds, weights):
    """Equal byte ranges ``buf[bounds[i]:bounds[i+1]]`` summed: the index of each distinct range's
    first occurrence, in order, and its total weight (open addressing, FNV-1a, bytes compared)."""
    m = len(bounds) - 1
    size = 1024
    while size < 2 * m:
        size *= 2
    table = np.full(size, -1, np.int32)
    first = np.empty(m, np.int64)
    total = np.zeros(m, np.int64)
    distinct = 0
    for i in range(m):
        s, e = bounds[i], bounds[i + 1]
        h = np.uint64(14695981039346656037)
        for p in range(s, e):
            h = (h ^ np.uint64(buf[p])) * np.uint64(1099511628211)
        slot = np.int64(h & np.uint64(size - 1))
        while True:
            d = table[slot]
            if d == -1:
                table[slot], first[distinct], total[distinct] = distinct, i, weights[i]
                distinct += 1
                break
            r = bounds[first[d]]
            same = bounds[first[d] + 1] - r == e - s
            for j in range(e - s if same else 0):
                if buf[r + j] != buf[s + j]:
                    same = False
                    break
            if same:
                total[d] += weights[i]
                break
            slot = (slot + 1) & (size - 1)
    return first[:distinct], total[:distinct]


@numba.njit(cache=True)
def _gather(buf, bounds, chosen):
    """The ranges ``chosen`` concatenated, and each one's length in characters (UTF-8 lead bytes)."""
    size = 0
    for i in chosen:
        size += bounds[i + 1] - bounds[i]
    out = np.empty(size, np.uint8)
    chars = np.zeros(len(chosen), np.int64)
    q = 0
    for k, i in enumerate(chosen):
        for p in range(bounds[i], bounds[i + 1]):
            out[q] = buf[p]
            q += 1
            chars[k] += (buf[p] & 0xC0) != 0x80
    return out, chars


@numba.njit(cache=True)
def _byte_bounds(buf, char_lengths):
    """Byte bounds of consecutive pieces of UTF-8 ``buf`` given their lengths in characters."""
    bounds = np.empty(len(char_lengths) + 1, np.int64)
    bounds[0], p = 0, 0
    for k in range(len(char_lengths)):
        left = char_lengths[k]
        while left > 0:  # step over one character: its lead byte and continuation bytes
            p += 1
            while p < len(buf) and (buf[p] & 0xC0) == 0x80:
                p += 1
            left -= 1
        bounds[k + 1] = p
    return bounds


@numba.njit(cache=True)
def _cut_near(buf, limit):
    """The last safe cut at or before ``limit``, else the first after it, else 0 (none)."""
    for p in range(min(limit, len(buf) - 1), 0, -1):
        if _is_cut(buf, p):
            return p
    for p in range(limit + 1, len(buf)):
        if _is_cut(buf, p):
            return p
    return 0


def _decode(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{what} is not UTF-8 text: {exc.reason} at a byte "
                         f"{data[exc.start:exc.start + 4]!r}.") from None


def _count_plain(data: bytes, pattern: str) -> dict[str, int]:
    """Chunks of special-free ``data`` and their counts: distinct segments through the regex."""
    if not data:
        return {}
    buf = np.frombuffer(data, np.uint8)
    segments = _segment_bounds(buf)
    seg_first, seg_count = _tally(buf, segments, np.ones(len(segments) - 1, np.int64))
    joined, seg_chars = _gather(buf, segments, seg_first)
    pieces = regex_pieces(_decode(joined.tobytes(), "The corpus"), pattern)
    lengths = np.fromiter(map(len, pieces), np.int64, len(pieces))
    weights = seg_count[np.searchsorted(np.cumsum(seg_chars), np.cumsum(lengths))]
    piece_first, piece_count = _tally(joined, _byte_bounds(joined, lengths), weights)
    return dict(zip([pieces[i] for i in piece_first.tolist()], piece_count.tolist()))


def count_slice(data: bytes, pattern: str, special_tokens: Sequence[str] = ()) -> dict[str, int]:
    """The chunks of one slice (UTF-8 bytes cut at safe cuts) with their counts, first-appearance
    order; special tokens are cut out first and not counted.  A worker process's task."""
    if not special_tokens:
        return _count_plain(data, pattern)
    text, total = _decode(data, "The corpus"), {}
    for s, e, special in special_split(text, special_tokens):
        if special is None:
            merge_counts(total, _count_plain(text[s:e].encode("utf-8"), pattern))
    return total


def merge_counts(total: dict[str, int], part: dict[str, int]) -> dict[str, int]:
    """Add ``part`` (counted on the text after ``total``'s) into ``total``, new chunks last."""
    get = total.get
    for chunk, count in part.items():
        total[chunk] = get(chunk, 0) + count
    return total


def checked_chunk_counts(counts) -> list[tuple[str, int]]:
    """``counts`` as ``(chunk, count)`` pairs, refusing what training cannot use: not a mapping,
    a chunk that is not non-empty text, a count that is not a whole number from 1 to 2**31 - 1."""
    if not isinstance(counts, Mapping):
        raise ArgumentError(f"Chunk counts must be a mapping {{chunk: count}}, not {type(counts).__name__}.")
    chunks = list(counts.items())
    if not chunks:
        raise ValueError("The corpus is empty: there are no chunks to learn from.")
    for chunk, count in chunks:
        if not isinstance(chunk, str) or not chunk:
            raise ArgumentError(f"Each chunk must be non-empty text, not {chunk!r}.")
        check_count(count, f"The count of {chunk!r}", 1, 2**31 - 1)
    return chunks


def _blocks(corpus, block: int) -> Iterator[bytes]:
    """The corpus as UTF-8 blocks: a file read as it is stored (no newline translation), or each
    text of an iterator encoded ``block`` characters at a time."""
    if isinstance(corpus, (str, os.PathLike)):
        if not os.path.isfile(corpus):
            raise ArgumentError(f"No file {os.fspath(corpus)!r}: pass a path, or texts ([text]).")
        with open(corpus, "rb") as file:
            while data := file.read(block):
                yield data
        return
    if not isinstance(corpus, Iterable) or isinstance(corpus, (bytes, bytearray)):
        raise ArgumentError(f"The corpus must be a file path or texts, not {type(corpus).__name__}.")
    for text in corpus:
        check_text(text, "Each text of the corpus")
        for i in range(0, len(text), block):
            yield text[i:i + block].encode("utf-8")


def corpus_slices(corpus, slice_bytes: int = SLICE_BYTES) -> Iterator[bytes]:
    """The corpus's UTF-8 bytes cut at safe cuts into slices of about ``slice_bytes`` (longer only
    where no safe cut comes sooner), streamed: at most about two slices are held at a time."""
    slice_bytes = check_count(slice_bytes, "slice_bytes", 1)
    buf = bytearray()
    for block in _blocks(corpus, slice_bytes):
        buf += block
        while len(buf) > slice_bytes and (cut := int(_cut_near(np.frombuffer(buf, np.uint8), slice_bytes))):
            yield bytes(buf[:cut])
            del buf[:cut]
    if buf:
        yield bytes(buf)


def _context():
    """Worker processes are started fresh ('forkserver' where there is one, else 'spawn'), never
    forked from a process that may hold threads; the fork server imports this module once."""
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload([__name__])
    return context


def _count_parallel(slices: Iterator[bytes], pattern: str, specials, workers: int) -> dict[str, int]:
    """Slices counted by ``workers`` processes, at most two per worker in flight, merged in order."""
    total: dict[str, int] = {}
    with ProcessPoolExecutor(workers, mp_context=_context()) as pool:
        pending = deque()
        for data in slices:
            pending.append(pool.submit(count_slice, data, pattern, specials))
            if len(pending) >= 2 * workers:
                merge_counts(total, pending.popleft().result())
        while pending:
            merge_counts(total, pending.popleft().result())
    return total


def cuttable(pattern: str | None, special_tokens: Sequence[str] = ()) -> bool:
    """Whether a corpus can be counted in slices with this (resolved) pattern and these tokens."""
    return pattern in _CUTTABLE and not any(c in _ASCII_SPACE for t in special_tokens for c in t)


def count_chunks(corpus, pattern: str | None, special_tokens: Sequence[str] = (), *,
                 workers: int | None = None, slice_bytes: int = SLICE_BYTES) -> dict[str, int]:
    """``{chunk: count}`` of the byte variant over ``corpus`` (a file path, or an iterator of texts
    counted as if joined), in first-appearance order: what ``BPETrainer(text, variant="byte",
    pattern=..., special_tokens=...)`` counts on the whole text.  ``workers`` processes count
    slices (default: one per core; 1 counts in this process).  A pattern other than GPT-2's or
    GPT-4's, or a special token holding ASCII whitespace, is counted serially on the whole text."""
    pattern = resolve_pattern(pattern)
    if isinstance(special_tokens, str):
        raise ArgumentError("special_tokens must be a list of strings, e.g. ['<|endoftext|>'].")
    specials = variant_rules("byte").special_tokens(special_tokens)
    workers = check_count(workers if workers is not None else os.cpu_count() or 1, "workers", 1, 1024)
    if not cuttable(pattern, specials):
        text = _decode(b"".join(_blocks(corpus, slice_bytes)), "The corpus")
        return dict(variant_rules("byte").corpus_chunks(text, pattern, specials, None))
    slices = corpus_slices(corpus, slice_bytes)
    if workers == 1:
        total: dict[str, int] = {}
        for data in slices:
            merge_counts(total, count_slice(data, pattern, specials))
        return total
    return _count_parallel(slices, pattern, specials, workers)
