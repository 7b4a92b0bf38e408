"""Why GPT-2 struggled with code: the tokens a tokenizer spends on whitespace (indentation, runs
of spaces, new lines).  A *whitespace token* is one whose text is whitespace only; GPT-2 has no
token for a run of spaces longer than one, GPT-4's pattern keeps a run together.

    >>> from core.bpe import BPETokenizer
    >>> whitespace_cost(BPETokenizer.byte_level(), "if x:\\n    y").whitespace_tokens
    6

:data:`PYTHON_SAMPLE` is Python every installation has: this project's textbook BPE
(``core/bpe/_educational.py``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..bpe import BPETokenizer
from .cuts import cut

PYTHON_SAMPLE = Path(__file__).resolve().parent.parent / "bpe" / "_educational.py"


@dataclass(frozen=True)
class WhitespaceCost:
    """``tokens`` of a text; ``whitespace_tokens`` of them whitespace only, of which
    ``line_breaks`` hold a new line (with the next line's indentation, where the pattern keeps
    it) and the rest are spaces or tabs."""

    tokens: int
    whitespace_tokens: int
    line_breaks: int

    @property
    def share(self) -> float:
        return self.whitespace_tokens / self.tokens if self.tokens else 0.0

    def to_dict(self) -> dict:
        return {"tokens": self.tokens, "whitespace_tokens": self.whitespace_tokens}


def whitespace_cost(tok: BPETokenizer, text: str) -> WhitespaceCost:
    """``text`` encoded by ``tok`` as ordinary text, its whitespace tokens counted (each distinct
    token looked at once)."""
    if tok.alphabet is None or not tok.unknown_characters(text):
        ids, counts = np.unique(np.asarray(tok.encode(text, allowed_special="none"), dtype=np.int64),
                                return_counts=True)
        texts = [tok.token_bytes(int(i)).decode("utf-8", errors="replace") for i in ids]
    else:  # characters a char or word tokenizer never saw are tokens too
        seen = Counter(cut(tok, text).tokens)
        texts, counts = list(seen), list(seen.values())
    kinds = [_kind(t.removesuffix(tok.end_of_word or "")) for t in texts]
    white = sum(int(n) for n, kind in zip(counts, kinds) if kind)
    breaks = sum(int(n) for n, kind in zip(counts, kinds) if kind == "line break")
    return WhitespaceCost(int(np.sum(counts)), white, breaks)


def _kind(text: str) -> str:
    """``"line break"``, ``"spaces"`` or ``""`` (not whitespace only) for one token's text."""
    if not text or not text.isspace():
        return ""
    return "line break" if "\n" in text or "\r" in text else "spaces"


def python_sample() -> str:
    """:data:`PYTHON_SAMPLE`'s text."""
    return PYTHON_SAMPLE.read_text(encoding="utf-8")
