"""A tokenizer's vocabulary, built and checked from its base, its merges and its special tokens:
every id's bytes, with the sizes refused before a byte is joined.

Leaves out: what a token means to a variant (``core.bpe.variants``) and encoding.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping

from .checks import MAX_SPECIAL_CHARS, ArgumentError, VocabularyTooLargeError, check_id, token_lengths

# All tokens together may spell at most this many bytes: a tokenizer trained on any corpus stays
# far below (each token occurs in the corpus); a forged one whose merges double a token 40 times
# (2**40 bytes) is refused before a single byte is joined.
MAX_VOCAB_BYTES = 1 << 28


def token_bytes_of(base: Mapping[int, bytes], merges: list[tuple[int, int, int]]) -> Mapping[int, bytes]:
    """Token bytes of every id; the lengths are checked as integers first, so forged merges
    cannot make it join gigabytes.  A base given as a dict (the 256 bytes) is held in one dict
    with the merged tokens (a real model's 200,000 are read there at C speed); any other, an
    alphabet's symbols, stays spelled when asked (:class:`TokenBytes`)."""
    total = sum(token_lengths({i: len(v) for i, v in base.items()}, merges).values())
    if total > MAX_VOCAB_BYTES:
        raise VocabularyTooLargeError(
            f"These merges would make tokens of {total:,} bytes in all; a tokenizer may hold at "
            f"most {MAX_VOCAB_BYTES:,}.")
    if isinstance(base, dict):
        vocab = merged = dict(base)
    else:
        merged = {}
        vocab = TokenBytes(base, merged)
    for a, b, new in merges:
        merged[new] = vocab[a] + vocab[b]
    return vocab


class TokenBytes(Mapping):
    """Every ordinary token's bytes by id: the base's as its mapping spells them (a char
    tokenizer's from its alphabet, when asked) and the merged tokens' as joined once.  A dict of a
    pasted alphabet's every symbol would be most of what a tokenizer costs to copy to a job and
    back, pickled on the server's threads.

    ``token_lengths`` checked that no merged id is a base id, so the two parts never overlap."""

    def __init__(self, base: Mapping[int, bytes], merged: dict[int, bytes]) -> None:
        self.base, self.merged = base, merged

    def __getitem__(self, token_id: int) -> bytes:
        data = self.merged.get(token_id)
        return self.base[token_id] if data is None else data

    def __contains__(self, token_id) -> bool:
        return token_id in self.merged or token_id in self.base

    def __len__(self) -> int:
        return len(self.base) + len(self.merged)

    def __iter__(self) -> Iterator[int]:
        return itertools.chain(self.base, self.merged)


def special_ids(special_tokens, vocab: Mapping[int, bytes]) -> dict[str, int]:
    """Special token -> id: a dict keeps its ids, a list gets the ids after the vocabulary."""
    if isinstance(special_tokens, str):
        raise ArgumentError("special_tokens must be a list of strings (or a dict string -> id), "
                            "not one string.")
    if isinstance(special_tokens, dict):
        pairs = [(s, check_id(i, f"The id of special token {s!r}")) for s, i in special_tokens.items()]
    else:
        nxt = max(vocab) + 1
        pairs = [(s, nxt + i) for i, s in enumerate(dict.fromkeys(special_tokens))]
    for s, i in pairs:
        if not isinstance(s, str) or not s:
            raise ArgumentError(f"A special token must be a non-empty string, not {s!r}.")
        if len(s) > MAX_SPECIAL_CHARS:
            raise ArgumentError(f"Special token {s[:20]!r}... is {len(s):,} characters long; the "
                                f"limit is {MAX_SPECIAL_CHARS}.")
        if i in vocab:
            raise ValueError(f"Special token {s!r} wants id {i}, which a normal token has.")
    if len({i for _, i in pairs}) != len(pairs):
        raise ValueError("Two special tokens share one id.")
    return dict(pairs)
