"""How a tokenizer turns text into ids: each chunk's base ids, then the merges applied in rank
order, each unique chunk once (a per-tokenizer cache), and the character span of every token.
The merges run in compiled kernels or, for a few short chunks in a process that has not loaded
them, in plain Python (``merge_python``); a long byte-level text with a known split pattern is
cut and encoded in compiled kernels over the whole of it (which pays: ``core.bpe.split.piece_encoding``).

Owns: :class:`Token` (and :class:`PackedTokens`, many of them kept compactly), :class:`ChunkEncoder`
(ranks, cache, the kernel call), its tiktoken-rule sibling :class:`RankEncoder` (pretrained
vocabularies) and the three ways of encoding a text into tokens (``char_tokens``, ``word_tokens``,
``byte_tokens``) that the variants pick from.  Leaves out: the vocabulary and decoding
(``core.bpe.tokenizer``), where chunks start and end (``core.bpe.pretokenize``).  The functions
take the tokenizer as ``tok`` and use its public fields (``alphabet``, ``byte_ids``, ``token_str``,
...), so this module never imports it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from .kernels import encode as kernels
from .checks import UnknownCharacterError
from .pretokenize import RegexClock, byte_chunks, regex_pieces, special_split, word_spans
from .kernels import piece_table
from .split import known_patterns, piece_encoding

_MAX_CACHE = 200_000


@dataclass(frozen=True)
class Token:
    """One encoded token and the characters ``text[start:end]`` it came from."""

    id: int
    start: int
    end: int
    chunk: int  # tokens in different chunks were never candidates for a merge together


class PackedTokens(Sequence[Token]):
    """Tokens kept for long (the room's caches of encoded texts) as the rows of one integer array,
    each read back as a :class:`Token`.  A list holds a Python object per token, and every full
    garbage collection walks each of them while it holds the interpreter, every page waiting: a
    cache of attendees' own texts doubled a collection's walk (why: docs/benchmarks.md, "What a
    session leaves for the collector")."""

    __slots__ = ("rows",)

    def __init__(self, tokens: Sequence[Token] = ()) -> None:
        # a column at a time: a tuple a token would be as many new objects for the collector
        columns = [[t.id for t in tokens], [t.start for t in tokens], [t.end for t in tokens],
                   [t.chunk for t in tokens]]
        self.rows = np.array(columns, dtype=np.int32).reshape(4, -1).T.copy()

    @classmethod
    def _of_rows(cls, rows: np.ndarray) -> PackedTokens:
        packed = cls.__new__(cls)
        packed.rows = rows
        return packed

    @property
    def ids(self) -> np.ndarray:
        """Every token's id, in order (a view: no Token is made)."""
        return self.rows[:, 0]

    def bounds(self) -> tuple[list[int], list[int]]:
        """Every token's start and every token's end, with no Token made."""
        return self.rows[:, 1].tolist(), self.rows[:, 2].tolist()

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self._of_rows(self.rows[index])
        return Token(*self.rows[index].tolist())

    def __iter__(self) -> Iterator[Token]:
        return (Token(*row) for row in self.rows.tolist())

    def __eq__(self, other) -> bool:
        return isinstance(other, (PackedTokens, list, tuple)) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # equal to a list, which has none

    def __repr__(self) -> str:
        return f"PackedTokens({list(self)!r})"


class ChunkEncoder:
    """Merges ``(left, right, new)`` in rank order, applied to sequences of base ids."""

    def __init__(self, merges: list[tuple[int, int, int]]) -> None:
        self._merges = merges
        self._ranks = None
        self._python_ranks: dict[tuple[int, int], tuple[int, int]] | None = None
        self._cache: dict[str, tuple[int, ...]] = {}

    def apply(self, seq: np.ndarray, starts: np.ndarray):
        """Encode the chunks ``seq[starts[c]:starts[c + 1]]``: ``(ids, out_starts)``."""
        if not self._merges or len(seq) == 0:
            return seq.astype(np.int32), starts
        piece_encoding.loaded()
        if self._ranks is None:
            merges = np.array(self._merges, dtype=np.int32).reshape(-1, 3)
            a = merges[:, 0].copy()  # each column contiguous, as the kernels take them
            b = merges[:, 1].copy()
            new = merges[:, 2].copy()
            self._ranks = (kernels.build_ranks(a, b), a, b, new)
        return kernels.apply_merges(seq.astype(np.int32), starts, *self._ranks)

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
            if piece_encoding.python_pays(lengths):
                return [tuple(self.merge_python(to_base[list(data)].tolist())) for data in encoded]
            flat = to_base[np.frombuffer(b"".join(encoded), dtype=np.uint8)]
        else:
            bases = [to_base(p) for p in todo]
            lengths = list(map(len, bases))
            if piece_encoding.python_pays(lengths):
                return [tuple(self.merge_python(base)) for base in bases]
            flat = np.fromiter(chain.from_iterable(bases), dtype=np.int32, count=sum(lengths))
        starts = np.zeros(len(todo) + 1, dtype=np.int64)
        np.cumsum(lengths, out=starts[1:])
        out, out_starts = self.apply(flat, starts)
        out, out_starts = out.tolist(), out_starts.tolist()
        return [tuple(out[out_starts[k]:out_starts[k + 1]]) for k in range(len(todo))]

    def merge_python(self, ids: list[int]) -> list[int]:
        """One chunk's base ids merged in plain Python, as :meth:`apply` merges them."""
        if self._python_ranks is None:  # the last of two equal pairs wins, as in build_ranks
            self._python_ranks = {(a, b): (r, new) for r, (a, b, new) in enumerate(self._merges)}
        return piece_encoding.lowest_first(ids, lambda a, b: self._python_ranks.get((a, b)))

    def encode_ranges(self, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, table: np.ndarray):
        """Encode the chunks ``buf[starts[k]:ends[k]]`` (UTF-8 bytes, ``table``: byte -> id):
        ``(ids, out_starts)``, the kernel over all of them at once."""
        offsets = np.zeros(len(starts) + 1, dtype=np.int64)
        np.cumsum(ends - starts, out=offsets[1:])
        return self.apply(table[buf[known_patterns.ranges(starts, ends)]], offsets)


class RankEncoder(ChunkEncoder):
    """tiktoken's rule, for vocabularies given as ranks (the pretrained ones): two neighbours
    join whenever their joined bytes are a token, lowest rank (= id) first, and a chunk that is
    itself a token is that token.  ``pairs`` is ``(keys, merged)``: every way to split every
    token into two tokens (``core.bpe.ranks.pair_table``); ``token_ids()`` gives the
    ``{bytes: id}`` of the ordinary tokens, asked for on the first encode."""

    def __init__(self, pairs: tuple[np.ndarray, np.ndarray], token_ids) -> None:
        super().__init__([])
        self._pair_arrays = pairs
        self._token_ids_of = token_ids
        self._token_ids: dict[bytes, int] | None = None
        self._index: tuple | None = None
        self._bytes_of: dict[int, bytes] | None = None  # byte id -> its byte, for merge_python

    def apply(self, seq: np.ndarray, starts: np.ndarray, limits: np.ndarray | None = None):
        """Like :meth:`ChunkEncoder.apply`; ``limits[c]``: make only tokens below that id."""
        if len(seq) == 0:
            return seq.astype(np.int32), starts
        piece_encoding.loaded()
        if self._ranks is None:
            self._ranks = kernels.build_pairs(*self._pair_arrays)
        if limits is None:
            limits = np.full(len(starts) - 1, np.iinfo(np.int64).max, dtype=np.int64)
        return kernels.apply_ranks(seq.astype(np.int32), starts, self._ranks, limits)

    def _encode_new(self, todo: list[str], to_base) -> list[tuple[int, ...]]:
        token_ids = self.token_ids()
        found = [token_ids.get(p.encode("utf-8")) for p in todo]
        rest = [p for p, i in zip(todo, found) if i is None]
        encoded = iter(super()._encode_new(rest, to_base) if rest else ())
        return [(i,) if i is not None else next(encoded) for i in found]

    def token_ids(self) -> dict[bytes, int]:
        if self._token_ids is None:
            self._token_ids = self._token_ids_of()
        return self._token_ids

    def merge_python(self, ids: list[int]) -> list[int]:
        """tiktoken's rule in plain Python: parts are joined while their bytes make a token."""
        token_ids = self.token_ids()
        if self._bytes_of is None:
            self._bytes_of = {i: data for data, i in token_ids.items() if len(data) == 1}

        def joined(a: bytes, b: bytes):
            rank = token_ids.get(a + b)
            return None if rank is None else (rank, a + b)

        parts = piece_encoding.lowest_first([self._bytes_of[i] for i in ids], joined)
        return [token_ids[part] for part in parts]

    def encode_ranges(self, buf, starts, ends, table):
        """Like :meth:`ChunkEncoder.encode_ranges`; a chunk that is a token is that token."""
        vocab_ids, *index = self._vocab_index()
        found = piece_table.find_keys(buf, starts, ends, *index)
        whole, rest = np.flatnonzero(found >= 0), np.flatnonzero(found < 0)
        ids, out_starts = super().encode_ranges(buf, starts[rest], ends[rest], table)
        lengths = np.ones(len(starts), dtype=np.int64)
        lengths[rest] = np.diff(out_starts)
        offsets = np.zeros(len(starts) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat = np.empty(offsets[-1], dtype=np.int32)
        flat[offsets[whole]] = vocab_ids[found[whole]]
        flat[known_patterns.ranges(offsets[rest], offsets[rest + 1])] = ids
        return flat, offsets

    def _vocab_index(self):
        """The ordinary tokens' bytes in a compiled hash table: ``(ids, bytes, starts, ends,
        slots, hashes)``, built on first use."""
        if self._index is None:
            token_ids = self.token_ids()
            data = np.frombuffer(b"".join(token_ids), dtype=np.uint8)
            lengths = np.fromiter(map(len, token_ids), dtype=np.int64, count=len(token_ids))
            ends = np.cumsum(lengths)
            starts = ends - lengths
            ids = np.fromiter(token_ids.values(), dtype=np.int32, count=len(token_ids))
            self._index = (ids, data, starts, ends, *piece_table.index_keys(data, starts, ends))
        return self._index


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
    encoded = iter(tok.encoder.chunks(ordinary, byte_table(tok)))
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
    """The byte variant's hot path: ids only, no Token objects for a whole corpus; a long text
    with a known pattern is cut and encoded by compiled kernels (``core.bpe.split.piece_encoding``)."""
    if piece_encoding.compiled_pays(tok.pattern, text):
        return piece_encoding.byte_ids(tok, text, specials, byte_table(tok))
    ids: list[int] = []
    clock = RegexClock(len(text))  # one budget for a custom pattern over the whole text
    table = byte_table(tok)
    for s, e, special in special_split(text, specials, clock):
        if special is not None:
            ids.append(tok.special_tokens[special])
        else:
            pieces = regex_pieces(text[s:e], tok.pattern, clock)
            ids.extend(chain.from_iterable(tok.encoder.chunks(pieces, table)))
    return ids


def byte_table(tok) -> np.ndarray:
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
