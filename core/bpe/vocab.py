"""A tokenizer's vocabulary, built and checked from its base, its merges and its special tokens:
every id's bytes, with the sizes refused before a byte is joined.

Leaves out: what a token means to a variant (``core.bpe.variants``) and encoding.
"""

from __future__ import annotations

from .checks import MAX_SPECIAL_CHARS, ArgumentError, VocabularyTooLargeError, check_id, token_lengths

# All tokens together may spell at most this many bytes: a tokenizer trained on any corpus stays
# far below (each token occurs in the corpus); a forged one whose merges double a token 40 times
# (2**40 bytes) is refused before a single byte is joined.
MAX_VOCAB_BYTES = 1 << 28


def token_bytes_of(base: dict[int, bytes], merges: list[tuple[int, int, int]]) -> dict[int, bytes]:
    """Token bytes of every id; the lengths are checked as integers first, so forged merges
    cannot make it join gigabytes."""
    total = sum(token_lengths({i: len(v) for i, v in base.items()}, merges).values())
    if total > MAX_VOCAB_BYTES:
        raise VocabularyTooLargeError(
            f"These merges would make tokens of {total:,} bytes in all; a tokenizer may hold at "
            f"most {MAX_VOCAB_BYTES:,}.")
    vocab = dict(base)
    for a, b, new in merges:
        vocab[new] = vocab[a] + vocab[b]
    return vocab


def special_ids(special_tokens, vocab: dict[int, bytes]) -> dict[str, int]:
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
