"""Counting the chunks of a large byte-level corpus: a file or an iterator of texts, streamed in
slices and counted in processes of their own, giving exactly the ``{chunk: count}`` of the serial path
(``Byte.corpus_chunks`` on the whole text, same counts, same first-appearance order) in bounded
memory.  ``BPETrainer.from_chunk_counts`` then merges on the counts:

    >>> counts = count_chunks(["the cat sat", " on the mat"], "gpt2", processes=1)
    >>> counts
    {'the': 1, ' cat': 1, ' sat': 1, ' on': 1, ' the': 1, ' mat': 1}

Why it is exact.  Each slice is cut by the compiled scanner of its pattern
(``core.bpe.split.known_patterns``), which gives exactly ``regex.findall``'s pieces.  Slices end
at *safe cuts*: a byte position ``p`` where the byte before is printable ASCII (``!`` to ``~``)
and the byte at ``p`` is a space, ``\\t``, ``\\v`` or ``\\f`` (not ``\\r``, ``\\n``: GPT-4 joins
punctuation with the newlines after it).  For the GPT-2 and GPT-4 patterns (no look-behind), every
match that reaches ``p-1`` ends at ``p`` and decides the same whether the text goes on or ends
there, and a match starting at ``p`` only looks forward; so the pieces of the text are the pieces
of ``text[:p]`` followed by those of ``text[p:]``.  A special token holding no ASCII whitespace
never straddles a safe cut.

Why it is fast.  The scanner finds equal pieces as it cuts (a hash table of byte ranges), so
Python touches each distinct piece of a slice once, to decode it, never each occurrence.

When to use what (why: docs/benchmarks.md, "Byte BPE at scale"): ``BPETrainer(text)`` for a
corpus that fits comfortably in memory as one ``str`` (up to a few tens of MB); ``count_chunks``
for a file or a stream of texts, in this process; counting processes only for corpora of several
hundred MB, as each first pays to load numba and the kernels what one process counts tens of MB
in (the default asks for them from
``PARALLEL_FROM_BYTES`` of file on).  Memory is ``2 * processes`` slices plus the distinct chunks,
whatever the corpus length; ``core.bpe.dask_counting`` when the corpus lives on several machines
or exceeds one machine's disk.  A custom split pattern (or none) cannot be cut provably, so it
is counted serially on the whole text.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from .kernels import count as kernels
from .checks import ArgumentError, EmptyCorpusError, check_count, check_text
from .pretokenize import GPT2_PATTERN, GPT4_PATTERN, resolve_pattern
from .split import known_patterns
from .variants import variant_rules

SLICE_BYTES = 8 * 2**20  # bytes counted per task: large enough to amortise, small enough to stream
PARALLEL_FROM_BYTES = 512 * 2**20  # a file this large is counted by one counting process per core
_CUTTABLE = (GPT2_PATTERN, GPT4_PATTERN)  # the patterns the safe-cut argument is made for
_ASCII_SPACE = "\t\n\x0b\x0c\r "


def _decode(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{what} is not UTF-8 text: {exc.reason} at a byte "
                         f"{data[exc.start:exc.start + 4]!r}.") from None


def count_slice(data: bytes, pattern: str, special_tokens: Sequence[str] = ()) -> dict[str, int]:
    """The chunks of one slice (UTF-8 bytes; a known ``pattern``) with their counts, in
    first-appearance order; special tokens are cut out first and not counted.  A counting process's
    task."""
    return known_patterns.chunk_counts(_decode(data, "The corpus"), data, pattern, special_tokens)


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
        raise EmptyCorpusError("The corpus is empty: there are no chunks to learn from.")
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
        while len(buf) > slice_bytes:
            cut = int(kernels.cut_near(np.frombuffer(buf, np.uint8), slice_bytes))
            if not cut:  # no safe cut yet: read on
                break
            yield bytes(buf[:cut])
            del buf[:cut]
    if buf:
        yield bytes(buf)


def _context():
    """Counting processes are started fresh ('forkserver' where there is one, else 'spawn'), never
    forked from a process that may hold threads; the fork server imports this module once.  They
    are the standard library's pool, not the room's engine: ``core.bpe`` is a library a script
    uses without a room (the app never starts them, and ``core.bpe`` imports nothing of
    ``core.room``)."""
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload([__name__])
    return context


def _count_parallel(slices: Iterator[bytes], pattern: str, specials, processes: int) -> dict[str, int]:
    """Slices counted by ``processes`` counting processes, at most two per process in flight,
    merged in order."""
    total: dict[str, int] = {}
    with ProcessPoolExecutor(processes, mp_context=_context()) as pool:
        pending = deque()
        for data in slices:
            pending.append(pool.submit(count_slice, data, pattern, specials))
            if len(pending) >= 2 * processes:
                merge_counts(total, pending.popleft().result())
        while pending:
            merge_counts(total, pending.popleft().result())
    return total


def _default_processes(corpus) -> int:
    """One per core for a large file, else 1: a counting process costs several slices' time to start."""
    large = isinstance(corpus, (str, os.PathLike)) and os.path.isfile(corpus) \
        and os.path.getsize(corpus) >= PARALLEL_FROM_BYTES
    return (os.cpu_count() or 1) if large else 1


def cuttable(pattern: str | None, special_tokens: Sequence[str] = ()) -> bool:
    """Whether a corpus can be counted in slices with this (resolved) pattern and these tokens."""
    return pattern in _CUTTABLE and not any(c in _ASCII_SPACE for t in special_tokens for c in t)


def count_chunks(corpus, pattern: str | None, special_tokens: Sequence[str] = (), *,
                 processes: int | None = None, slice_bytes: int = SLICE_BYTES) -> dict[str, int]:
    """``{chunk: count}`` of the byte variant over ``corpus`` (a file path, or an iterator of texts
    counted as if joined), in first-appearance order: what ``BPETrainer(text, variant="byte",
    pattern=..., special_tokens=...)`` counts on the whole text.  ``processes`` counting processes count
    slices (1: this process; default: one per core for a file of ``PARALLEL_FROM_BYTES`` or more,
    else 1).  A pattern other than GPT-2's or
    GPT-4's, or a special token holding ASCII whitespace, is counted serially on the whole text
    (by its compiled scanner if it has one, else by ``regex``)."""
    pattern = resolve_pattern(pattern)
    if isinstance(special_tokens, str):
        raise ArgumentError("special_tokens must be a list of strings, e.g. ['<|endoftext|>'].")
    specials = variant_rules("byte").special_tokens(special_tokens)
    if processes is None:
        processes = _default_processes(corpus)
    processes = check_count(processes, "processes", 1, 1024)
    if not cuttable(pattern, specials):  # one slice: the whole corpus, by scanner or regex
        text = _decode(b"".join(_blocks(corpus, slice_bytes)), "The corpus")
        return dict(variant_rules("byte").corpus_chunks(text, pattern, specials, None))
    slices = corpus_slices(corpus, slice_bytes)
    if processes == 1:
        total: dict[str, int] = {}
        for data in slices:
            merge_counts(total, count_slice(data, pattern, specials))
        return total
    return _count_parallel(slices, pattern, specials, processes)
