"""Tokens a tokenizer can never produce from text: those whose own text does not encode back to
them, and those that are not text on their own (a part of a character's UTF-8 bytes).

    >>> from core.bpe import BPETokenizer
    >>> found = unreachable_tokens(BPETokenizer.from_text("aaab aaab", 3, variant="byte"))
    >>> found.unreachable, len(found.partial)  # bytes 128-255: parts of characters
    ((), 128)

A token's text that the tokenizer's split pattern cuts in two is encoded as at least two tokens
(GPT-4o's ``" I'"``: its pattern cuts ``" I"`` from ``"'"``), and so is one that a normalizing
tokenizer changes (Qwen's NFC).  A text that stays one piece is encoded by the tokenizer's own
rule: a ranked vocabulary (tiktoken's rule) makes a piece that is a token that token, a merge list
may build the piece another way.  The whole vocabulary is cut in one call of the compiled
scanner (where the pattern has one) and encoded in one call of the encoder's kernel, as
``BPETokenizer.encode`` does a long text.  Special tokens are left out: their text is never
ordinary text.

Leaves out: the word variant, whose tokens inside a word have no text of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..bpe import BPETokenizer
from ..bpe.encoding import byte_table
from ..bpe.checks import ArgumentError
from ..bpe.pretokenize import regex_pieces
from ..bpe.split import known_patterns


@dataclass(frozen=True)
class Unreachable:
    """``unreachable``: ids whose text does not encode back to them; ``partial``: ids whose bytes
    are not whole UTF-8 characters (reached only beside the rest of their character)."""

    vocab_size: int
    unreachable: tuple[int, ...]
    partial: tuple[int, ...]


def unreachable_tokens(tok: BPETokenizer) -> Unreachable:
    """Every ordinary token of ``tok`` checked by encoding its own text."""
    if tok.variant == "word":
        raise ArgumentError("A word tokenizer's tokens inside a word have no text of their own: "
                            "reachability is asked of char and byte tokenizers.")
    texts, partial = {}, []
    for i in tok.ids:
        if tok.is_special(i):
            continue
        try:
            texts[i] = tok.token_bytes(i).decode("utf-8")
        except UnicodeDecodeError:
            partial.append(i)
    ids = np.fromiter(texts, dtype=np.int64, count=len(texts))
    whole = (piece_counts(tok, list(texts.values())) == 1) & np.array(
        [tok.normalized(text) == text for text in texts.values()], dtype=bool)
    kept = ids[whole]
    reached = encodes_to_itself(tok, [texts[i] for i in kept.tolist()], kept)
    unreachable = np.concatenate([ids[~whole], kept[~reached]])
    return Unreachable(tok.vocab_size, tuple(sorted(unreachable.tolist())), tuple(partial))


def token_reach(tok: BPETokenizer, token_id: int) -> str | list[int]:
    """One token checked as :func:`unreachable_tokens` checks them all: ``"special"``,
    ``"partial"`` (not whole UTF-8 text), ``"reachable"``, or the ids its own text encodes as."""
    if tok.is_special(token_id):
        return "special"
    try:
        text = tok.token_bytes(token_id).decode("utf-8")
    except UnicodeDecodeError:
        return "partial"
    if tok.variant == "word":
        raise ArgumentError("A word tokenizer's tokens inside a word have no text of their own.")
    ids = tok.encode(text, allowed_special="none")
    return "reachable" if ids == [token_id] else ids


def piece_counts(tok: BPETokenizer, texts: list[str]) -> np.ndarray:
    """How many chunks ``tok`` cuts each of ``texts`` into before merging (a char tokenizer
    encodes a text whole)."""
    if tok.alphabet is not None or tok.pattern is None:
        return np.ones(len(texts), dtype=np.int64)
    if not known_patterns.has_scanner(tok.pattern):
        return np.array([len(regex_pieces(text, tok.pattern)) for text in texts], dtype=np.int64)
    buf, starts, ends = _concatenated(texts)
    *_, seg_first = known_patterns.split_bytes(buf, tok.pattern, np.column_stack([starts, ends]))
    return np.diff(seg_first)


def encodes_to_itself(tok: BPETokenizer, texts: list[str], ids: np.ndarray) -> np.ndarray:
    """Whether each text, encoded by ``tok`` as one chunk, is the one token ``ids[k]``."""
    if not texts:
        return np.zeros(0, dtype=bool)
    if tok.alphabet is None:
        buf, starts, ends = _concatenated(texts)
        flat, offsets = tok.encoder.encode_ranges(buf, starts, ends, byte_table(tok))
    else:
        base = [tok.base_ids(text) for text in texts]
        offsets = np.concatenate([[0], np.cumsum([len(b) for b in base])]).astype(np.int64)
        flat, offsets = tok.encoder.apply(np.concatenate(base).astype(np.int32), offsets)
    one = np.diff(offsets) == 1
    return one & (flat[np.minimum(offsets[:-1], len(flat) - 1)] == ids)


def _concatenated(texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The UTF-8 bytes of ``texts`` end to end, and where each one starts and ends."""
    data = [text.encode("utf-8") for text in texts]
    ends = np.cumsum(np.fromiter(map(len, data), dtype=np.int64, count=len(data)))
    starts = ends - np.fromiter(map(len, data), dtype=np.int64, count=len(data))
    return np.frombuffer(b"".join(data), dtype=np.uint8), starts, ends
