"""The textbook BPE, written as plainly as the seeds write it: the oracle the fast engine must match.

Each merge recounts every pair from scratch (seed 002's ``from_text``, seed 004's ``get_stats``)
and rewrites every chunk (seed 000's ``merge_pair``).  Chunks are (symbols, frequency): the whole
text for ``char``, the distinct words for ``word``, the distinct regex pieces for ``byte``.
Slow on purpose, and short enough to check by eye (tiktoken ships its ``_educational.py`` the same
way).  Leaves out: speed (``core.bpe.kernels``) and tokenizer objects.
"""

from __future__ import annotations

import collections


def train(chunks: list[tuple[tuple, int]], num_merges: int, first_new_id: int):
    """Textbook training on id chunks.  Returns ``[(left, right, new_id, count), ...]``."""
    merges = []
    for step in range(num_merges):
        pairs = collections.Counter()
        for symbols, freq in chunks:
            for a, b in zip(symbols, symbols[1:]):
                pairs[(a, b)] += freq
        if not pairs:
            break
        best = max(pairs, key=pairs.get)  # ties: first counted = first in the sequence
        new = first_new_id + step
        merges.append((best[0], best[1], new, pairs[best]))
        chunks = [(merge(symbols, best, new), freq) for symbols, freq in chunks]
    return merges


def merge(symbols, pair, new):
    """Replace every adjacent ``pair`` by ``new``, left to right, non-overlapping."""
    out, i = [], 0
    while i < len(symbols):
        if i < len(symbols) - 1 and (symbols[i], symbols[i + 1]) == pair:
            out.append(new)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


def encode(symbols, merges):
    """The book's encoder: apply every merge, in creation order, over the whole sequence."""
    for a, b, new, *_ in merges:
        symbols = merge(symbols, (a, b), new)
    return list(symbols)


def char_chunks(text: str, alphabet: list[str]):
    stoi = {c: i for i, c in enumerate(alphabet)}
    return [(tuple(stoi[c] for c in text), 1)]


def word_chunks(text: str, alphabet: list[str]):
    """Alphabet ends with the marker; words keep their first-appearance order (a Counter does)."""
    stoi = {c: i for i, c in enumerate(alphabet)}
    marker = len(alphabet) - 1
    words = collections.Counter(text.split())
    return [(tuple(stoi[c] for c in w) + (marker,), f) for w, f in words.items()]


def byte_chunks(pieces: list[str]):
    counts = collections.Counter(pieces)
    return [(tuple(p.encode("utf-8")), f) for p, f in counts.items()]
