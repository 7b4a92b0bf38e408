"""A text as a tokenizer cuts it, always as ordinary text: the tokens' strings and ids, and many
short texts each encoded alone in one call.

    >>> from core.bpe import BPETokenizer
    >>> cut(BPETokenizer.byte_level(), "hé").tokens   # bytes of a part of a character as \\xNN
    ('h', '\\\\xc3', '\\\\xa9')

Special-token text is never special here (``allowed_special="none"``): the questions are about what
a pasted text becomes.  A character a char or word tokenizer never saw stays one token, with the
id :data:`UNSEEN_ID` (it has no id in that vocabulary).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..bpe import BPETokenizer
from ..bpe.alphabet import UNSEEN
from ..bpe.encoding import byte_table
from ..bpe.kernels import piece_table
from ..bpe.split import known_patterns

UNSEEN_ID = -1


@dataclass(frozen=True)
class Cut:
    """``tokens``: each token's text (``BPETokenizer.token_str``); ``ids``: its id."""

    tokens: tuple[str, ...]
    ids: tuple[int, ...]

    def to_dict(self) -> dict:
        return {"tokens": list(self.tokens), "ids": list(self.ids)}


def cut(tok: BPETokenizer, text: str) -> Cut:
    """``text`` encoded by ``tok`` as ordinary text."""
    if tok.alphabet is None:
        return cut_of_ids(tok, tok.encode(text, allowed_special="none"))
    found = tok.encode_tokens(text, unknown="keep", allowed_special="none", offsets=False)
    tokens = tuple(chr(t.id - UNSEEN) if t.id >= UNSEEN else tok.token_str(t.id) for t in found)
    return Cut(tokens, tuple(t.id if t.id < UNSEEN else UNSEEN_ID for t in found))


def cut_of_ids(tok: BPETokenizer, ids) -> Cut:
    ids = tuple(int(i) for i in ids)
    return Cut(tuple(tok.token_str(i) for i in ids), ids)


def characters_started(tok: BPETokenizer, found: Cut) -> list[int]:
    """How many characters each token of ``found`` starts: a byte token's UTF-8 lead bytes (a
    continuation byte belongs to the character before it), a char token's length, a word token's
    without its end-of-word marker."""
    if tok.alphabet is None:
        return [sum(b & 0xC0 != 0x80 for b in tok.token_bytes(i)) for i in found.ids]
    return [len(t.removesuffix(tok.end_of_word or "")) for t in found.tokens]


def encode_each(tok: BPETokenizer, texts: list[str]) -> list[list[int]]:
    """Each of ``texts`` encoded alone as ordinary text, equal to ``tok.encode(text,
    allowed_special="none")`` for each: for a byte tokenizer with a compiled split pattern, all at
    once (cut by the scanner, each distinct piece encoded once, as a long text is); otherwise one
    by one."""
    fast = (tok.alphabet is None and known_patterns.has_scanner(tok.pattern) and len(texts) > 1
            and all(tok.normalized(t) == t for t in texts))
    if not fast:
        return [list(cut(tok, t).ids) for t in texts]
    data = [t.encode("utf-8") for t in texts]
    lengths = np.fromiter(map(len, data), dtype=np.int64, count=len(data))
    ends = np.cumsum(lengths)
    buf = np.frombuffer(b"".join(data), dtype=np.uint8)
    if not len(buf):
        return [[] for _ in texts]
    starts, stops, which, seg_first = known_patterns.split_bytes(buf, tok.pattern,
                                                                 np.column_stack([ends - lengths, ends]))
    flat, offsets = tok.encoder.encode_ranges(buf, starts, stops, byte_table(tok))
    ids = piece_table.gather(which, flat, offsets).tolist()
    piece_out = np.zeros(len(which) + 1, dtype=np.int64)  # where each piece's ids start in ``ids``
    np.cumsum(np.diff(offsets)[which], out=piece_out[1:])
    bounds = piece_out[seg_first].tolist()
    return [ids[bounds[k]:bounds[k + 1]] for k in range(len(texts))]


def cuts_of_each(tok: BPETokenizer, texts: list[str]) -> list[Cut]:
    """:func:`cut` of each text (an unseen character of a char tokenizer included), at
    :func:`encode_each`'s speed where it has one."""
    if tok.alphabet is not None:
        return [cut(tok, t) for t in texts]
    return [cut_of_ids(tok, ids) for ids in encode_each(tok, texts)]
