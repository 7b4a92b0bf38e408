"""How a tokenizer turns text into ids: each chunk's base ids, then the merges applied in rank
order by the compiled kernel, each unique chunk once (a per-tokenizer cache), and the character
span of every token.

Owns: :class:`Token`, :class:`ChunkEncoder` (ranks, cache, the kernel call), its tiktoken-rule
sibling :class:`RankEncoder` (pretrained vocabularies) and the three ways of
encoding a text into tokens (``char_tokens``, ``word_tokens``, ``byte_tokens``) that the variants
pick from.  Leaves out: the vocabulary and decoding (``core.bpe.tokenizer``), where chunks start
and end (``core.bpe.pretokenize``).  The functions take the tokenizer as ``tok`` and use its
public fields (``alphabet``, ``byte_ids``, ``token_str``, ...), so this module never imports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np

from . import _encode_kernels
from .errors import UnknownCharacterError
from .pretokenize import RegexClock, byte_chunks, regex_pieces, special_split, word_spans

_MAX_CACHE = 200_000


@dataclass(frozen=True)
class Token:
    """One encoded token and the characters ``text[start:end]`` it came from."""

    id: int
    start: int
    end: int
    chunk: int  # tokens in different chunks were never candidates for a merge together


class ChunkEncoder:
    """Merges ``(left, right, new)`` in rank order, applied to sequences of base ids."""

    def __init__(self, merges: list[tuple[int, int, int]]) -> None:
        self._merges = merges
        self._ranks = None
        self._cache: dict[str, tuple[int, ...]] = {}

    def apply(self, seq: np.ndarray, starts: np.ndarray):
        """Encode the chunks ``seq[starts[c]:starts[c + 1]]``: ``(ids, out_starts)``."""
        if not self._merges or len(seq) == 0:
            return seq.astype(np.int32), starts
        if self._ranks is None:
            merges = np.array(self._merges, dtype=np.int32).reshape(-1, 3)
            a, b, new = merges[:, 0].copy(), merges[:, 1].copy(), merges[:, 2].copy()
            self._ranks = (_encode_kernels.build_ranks(a, b), a, b, new)
        return _encode_kernels.apply_merges(seq.astype(np.int32), starts, *self._ranks)

    def whole(self, base: np.ndarray) -> list[int]:
        """One chunk encoded (the char variant's whole text)."""
        return self.apply(base, np.array([0, len(base)], dtype=np.int64))[0].tolist()

    def chunks(self, pieces: list[str], to_base) -> list[tuple[int, ...]]:
        """Encode many short chunks, each unique chunk once.  ``to_base`` gives a chunk's base
        ids, or is an int32 table byte -> id, to encode its UTF-8 bytes (vectorised)."""
        cache = self._cache
        if len(cache) > _MAX_CACHE:  # before looking up, so every piece is found after
            cache.clear()
        todo = list(set(pieces).difference(cache))  # each chunk is encoded alone: order is free
        if todo:
            cache.update(zip(todo, self._encode_new(todo, to_base)))
        return list(map(cache.__getitem__, pieces))

    def _encode_new(self, todo: list[str], to_base) -> list[tuple[int, ...]]:
        if isinstance(to_base, np.ndarray):
            encoded = [p.encode("utf-8") for p in todo]
            lengths = list(map(len, encoded))
            flat = to_base[np.frombuffer(b"".join(encoded), dtype=np.uint8)]
        else:
            bases = [to_base(p) for p in todo]
            lengths = list(map(len, bases))
            flat = np.fromiter(chain.from_iterable(bases), dtype=np.int32, count=sum(lengths))
        starts = np.zeros(len(todo) + 1, dtype=np.int64)
        np.cumsum(lengths, out=starts[1:])
        out, out_starts = self.apply(flat, starts)
        out, out_starts = out.tolist(), out_starts.tolist()
        return [tuple(out[out_starts[k]:out_starts[k + 1]]) for k in range(len(todo))]


class RankEncoder(ChunkEncoder):
    """tiktoken's rule, for vocabularies given as ranks (the pretrained ones): two neighbours
    join whenever their joined bytes are a token, lowest rank (= id) first, and a chunk that is
    itself a token is that token.  ``pairs`` is ``(keys, merged)``: every way to split every
    token into two tokens (``core.bpe.ranks.pair_table``); ``token_ids()`` gives the
    ``{bytes: id}`` of the ordinary tokens, asked for on the first encode."""

    def __init__(self, pairs: tuple[np.ndarray, np.ndarray], token_ids) -> None:
        super().__init__([])
        self._pair_arrays = self.pairs = pairs  # ``pairs``: read by ``core.bpe.extend``
        self._token_ids_of = token_ids
        self._token_ids: dict[bytes, int] | None = None

    def apply(self, seq: np.ndarray, starts: np.ndarray, limits: np.ndarray | None = None):
        """Like :meth:`ChunkEncoder.apply`; ``limits[c]``: make only tokens below that id."""
        if len(seq) == 0:
            return seq.astype(np.int32), starts
        if self._ranks is None:
            self._ranks = _encode_kernels.build_pairs(*self._pair_arrays)
        if limits is None:
            limits = np.full(len(starts) - 1, np.iinfo(np.int64).max, dtype=np.int64)
        return _encode_kernels.apply_ranks(seq.astype(np.int32), starts, self._ranks, limits)

    def _encode_new(self, todo: list[str], to_base) -> list[tuple[int, ...]]:
        if self._token_ids is None:
            self._token_ids = self._token_ids_of()
        found = [self._token_ids.get(p.encode("utf-8")) for p in todo]
        rest = [p for p, i in zip(todo, found) if i is None]
        encoded = iter(super()._encode_new(rest, to_base) if rest else ())
        return [(i,) if i is not None else next(encoded) for i in found]


def char_tokens(tok, text: str, unknown: str, offsets: bool) -> list[Token]:
    base = tok.alphabet.ids(text, unknown, 0)
    ids = tok.encoder.whole(base)
    if not offsets:
        return [Token(i, 0, 0, 0) for i in ids]
    if unknown == "skip" and len(base) != len(text):
        raise ValueError("Offsets are not available when unseen characters are skipped.")
    return _spans(ids, [0] * len(ids), [0], lambda i: len(tok.token_str(i)))


def word_tokens(tok, text: str, unknown: str, offsets: bool) -> list[Token]:
    spans = list(word_spans(text))
    words = [text[s:e] for s, e in spans]
    try:
        per_word = tok.encoder.chunks(words, lambda w: tok.base_ids(w, unknown) + [tok.base_size - 1])
    except UnknownCharacterError as exc:  # say where in the whole text, not in the word
        where = spans[words.index(exc.word)][0] + exc.position
        unseen = sum(1 for _, ch in tok.unknown_characters("".join(words)) if not ch.isspace())
        raise UnknownCharacterError(exc.char, where, unseen) from None
    marker = tok.end_of_word
    ids, chunk = [], []
    for c, word_ids in enumerate(per_word):
        ids.extend(word_ids)
        chunk.extend([c] * len(word_ids))
    if not offsets:
        return [Token(i, 0, 0, c) for i, c in zip(ids, chunk)]

    def width(i):
        s = tok.token_str(i)
        return len(s) - len(marker) if s.endswith(marker) else len(s)

    return _spans(ids, chunk, [s for s, _ in spans], width)


def byte_tokens(tok, text: str, specials: list[str], offsets: bool) -> list[Token]:
    chunks = list(byte_chunks(text, tok.pattern, specials))
    ordinary = [text[s:e] for s, e, sp in chunks if sp is None]
    encoded = iter(tok.encoder.chunks(ordinary, _byte_table(tok)))
    tokens: list[Token] = []
    for c, (s, e, special) in enumerate(chunks):
        if special is not None:
            tokens.append(Token(tok.special_tokens[special], s, e, c))
            continue
        ids = next(encoded)
        if not offsets:
            tokens.extend(Token(i, 0, 0, c) for i in ids)
            continue
        tokens.extend(_byte_offsets(text[s:e], ids, tok, s, c))
    return tokens


def byte_ids(tok, text: str, specials: list[str]) -> list[int]:
    """The byte variant's hot path: ids only, no Token objects for a whole corpus."""
    ids: list[int] = []
    clock = RegexClock(len(text))  # one budget for a custom pattern over the whole text
    table = _byte_table(tok)
    for s, e, special in special_split(text, specials, clock):
        if special is not None:
            ids.append(tok.special_tokens[special])
        else:
            pieces = regex_pieces(text[s:e], tok.pattern, clock)
            ids.extend(chain.from_iterable(tok.encoder.chunks(pieces, table)))
    return ids


def _byte_table(tok) -> np.ndarray:
    return np.asarray(tok.byte_ids, dtype=np.int32)


def _spans(ids, chunk, chunk_starts, width) -> list[Token]:
    tokens, pos, current = [], chunk_starts[0], 0
    for i, c in zip(ids, chunk):
        if c != current:
            current, pos = c, chunk_starts[c]
        w = width(i)
        tokens.append(Token(i, pos, pos + w, c))
        pos += w
    return tokens


def _byte_offsets(piece: str, ids, tok, start: int, chunk: int) -> list[Token]:
    """Character spans of byte-level tokens; a token ending inside a character covers it."""
    char_of_byte = []
    for k, ch in enumerate(piece):
        char_of_byte.extend([k] * len(ch.encode("utf-8")))
    char_of_byte.append(len(piece))
    tokens, b = [], 0
    for i in ids:
        n = len(tok.token_bytes(i))
        first, last = char_of_byte[b], char_of_byte[b + n - 1]
        tokens.append(Token(i, start + first, start + last + 1, chunk))
        b += n
    return tokens
