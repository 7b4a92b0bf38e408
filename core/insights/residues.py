"""Residues: tokens a tokenizer minted while merging its corpus that encoding that corpus never
emits.  A merge ``(a, b) -> ab`` counts ``ab``; a later merge ``(ab, c) -> abc`` may take every
one of them, and ``ab`` then lives in the vocabulary as a step on the way, never as output.

    >>> from core.bpe import BPETokenizer
    >>> tok = BPETokenizer.from_text("abc abc abc", 2)
    >>> [tok.token_str(i) for i in residues(tok, "abc abc abc")]
    ['ab']

Leaves out: tokens never reachable from any text (``core.insights.unreachable``).
"""

from __future__ import annotations

import numpy as np

from ..bpe import BPETokenizer


def token_counts(tok: BPETokenizer, text: str) -> np.ndarray:
    """How often each id occurs in ``text`` encoded by ``tok`` (indexed by id; special ids too)."""
    ids = np.asarray(tok.encode(text), dtype=np.int64)
    size = max(tok.ids) + 1
    return np.bincount(ids, minlength=size)


def residues(tok: BPETokenizer, text: str, counts: np.ndarray | None = None) -> list[int]:
    """The ids made by ``tok``'s merges (in merge order) that ``text`` encoded never holds;
    ``counts`` (from :func:`token_counts`) saves encoding ``text`` again."""
    counts = token_counts(tok, text) if counts is None else counts
    return [new for _, _, new in tok.merge_triples if counts[new] == 0]
