"""The tokenizer: an alphabet of base symbols plus ordered merges ``(left, right) -> new``.

One class serves every variant, the way seed 002's ``BPETokenizer`` and ``CharTokenizer`` share a
shape (``from_text``/``encode``/``decode``/``save``/``load``):

- ``char``: base symbols are the corpus's characters, sorted; ids follow the book exactly.
- ``word``: characters plus the end-of-word marker; text is split on whitespace and every word
  ends with the marker, so ``decode`` gives the words joined by single spaces.
- ``byte``: the 256 byte values (in any id order: GPT-2 permutes them), an optional regex
  pre-split and special tokens.  Every Unicode string round-trips exactly.

Training lives in ``core.trainer``; files in ``core.storage``; the compiled loops in
``core.kernels``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from . import kernels
from .pretokenize import (RegexClock, byte_chunks, check_pattern, check_variant, regex_pieces,
                          special_split, word_spans)

_MAX_CACHE = 200_000
# ``tokenize`` gives an unseen character the id UNSEEN + its code point: it never merges and maps
# back to itself.  Far above any real vocabulary, and still fits the 32-bit halves of a pair key.
UNSEEN = 1 << 30
# Ids are below MAX_ID (16.7 M, 300x GPT-4's vocabulary), far under UNSEEN, so no id can collide
# with an unseen character or overflow the int32 arrays of the kernels.
MAX_ID = 1 << 24
# All tokens together may spell at most this many bytes: a tokenizer trained on any corpus stays
# far below (each token occurs in the corpus); a forged one whose merges double a token 40 times
# (2**40 bytes) is refused before a single byte is joined.
MAX_VOCAB_BYTES = 1 << 28
MAX_SPECIAL_CHARS = 256


class ArgumentError(ValueError):
    """An argument of the wrong type or out of range (the message names it and what is allowed)."""


class VocabularyTooLargeError(ValueError):
    """Merges whose tokens would spell more bytes than a tokenizer may hold."""


def check_count(value, name: str, low: int = 0, high: int | None = None) -> int:
    """``value`` as an int in ``[low, high]``; ``True``, ``1.5`` or ``"10"`` are refused (a bool
    is an int to Python, but ``num_merges=True`` is a mistake, not one merge)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ArgumentError(f"{name} must be a whole number, not {type(value).__name__} {value!r}.")
    value = int(value)
    if value < low or (high is not None and value > high):
        allowed = f"{low} or more" if high is None else f"between {low} and {high:,}"
        raise ArgumentError(f"{name} must be {allowed}, not {value:,}.")
    return value


def check_text(text, what: str = "The text") -> str:
    if not isinstance(text, str):
        hint = " (decode bytes first, e.g. data.decode('utf-8'))" if isinstance(text, (bytes, bytearray)) else ""
        raise ArgumentError(f"{what} must be a str, not {type(text).__name__}{hint}.")
    return text


def token_lengths(base_lengths: dict[int, int], merges: Sequence[tuple[int, int, int]]) -> dict[int, int]:
    """Byte length of every token, computed as integers from the merges (nothing is joined), so
    a caller can refuse a vocabulary before building it.  Raises ``ValueError`` for a merge
    whose parts do not exist yet or whose new id is taken."""
    lengths = dict(base_lengths)
    for a, b, new in merges:
        if a not in lengths or b not in lengths:
            raise ValueError(f"Merge ({a}, {b}) -> {new} uses an id that does not exist yet.")
        if new in lengths:
            raise ValueError(f"Merge ({a}, {b}) -> {new} reuses id {new}.")
        lengths[new] = lengths[a] + lengths[b]
    return lengths


class UnknownCharacterError(ValueError):
    """The text holds a character the tokenizer's alphabet never saw."""

    def __init__(self, char: str, position: int, count: int) -> None:
        self.char, self.position, self.count = char, position, count
        more = f" ({count - 1} more unseen character(s) follow)" if count > 1 else ""
        super().__init__(
            f"Character {char!r} (U+{ord(char):04X}) at position {position} is not in this "
            f"tokenizer's alphabet{more}. Use encode(text, unknown='skip') to drop unseen "
            f"characters, or train a byte-level tokenizer, which can encode any text."
        )


@dataclass(frozen=True)
class Token:
    """One encoded token and the characters ``text[start:end]`` it came from."""

    id: int
    start: int
    end: int
    chunk: int  # tokens in different chunks were never candidates for a merge together


class BPETokenizer:
    def __init__(
        self,
        *,
        variant: str = "char",
        base: Sequence[str] | None = None,
        merges: Iterable[tuple[int, int, int]] = (),
        end_of_word: str | None = None,
        pattern: str | None = None,
        special_tokens: dict[str, int] | Sequence[str] = (),
        byte_ids: Sequence[int] | None = None,
    ) -> None:
        self.variant = check_variant(variant)
        self.end_of_word = end_of_word if variant == "word" else None
        self.pattern = check_pattern(pattern) if variant == "byte" else None
        if variant == "byte":
            self.byte_ids = list(range(256)) if byte_ids is None else [_id(i, "A byte id") for i in byte_ids]
            if sorted(self.byte_ids) != sorted(set(self.byte_ids)) or len(self.byte_ids) != 256:
                raise ValueError("A byte-level tokenizer needs 256 distinct ids for the 256 bytes.")
            self._base = None
        else:
            if not base or isinstance(base, str) or not all(isinstance(c, str) and c for c in base):
                raise ValueError("A character tokenizer needs a non-empty list of non-empty strings.")
            self._base = list(base)
            if len(set(self._base)) != len(self._base):
                raise ValueError("The alphabet lists a character twice.")
            self.byte_ids = None
        self._merges = [(_id(a, "A merge id"), _id(b, "A merge id"), _id(n, "A merge id"))
                        for a, b, n in merges]
        self._build_vocab()
        self._set_special(special_tokens)
        self.trace: tuple = ()
        self.initial_length: int | None = None
        self.exhausted = False
        self._ranks = None
        self._chunk_cache: dict[str, tuple[int, ...]] = {}
        self._lookup = None

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def from_text(cls, text: str, num_merges: int, variant: str = "char", *,
                  end_of_word: str = "</w>", pattern: str | None = None,
                  special_tokens: Sequence[str] = (), top_k: int = 10, progress=None,
                  regex_timeout: float | None = None, max_memory: int | None = None) -> BPETokenizer:
        """Train on ``text`` for ``num_merges`` merges (fewer if the corpus runs out of pairs;
        then ``tok.exhausted`` is True and ``len(tok.merges)`` says how many were possible).
        ``regex_timeout`` and ``max_memory`` are ``BPETrainer``'s limits."""
        from .trainer import BPETrainer

        check_count(num_merges, "The number of merges")
        trainer = BPETrainer(text, variant=variant, end_of_word=end_of_word, pattern=pattern,
                             special_tokens=special_tokens, top_k=top_k, regex_timeout=regex_timeout,
                             max_memory=max_memory)
        for _ in trainer.run(num_merges, progress=progress):
            pass
        return trainer.tokenizer()

    @classmethod
    def byte_level(cls, pattern: str | None = None, special_tokens: Sequence[str] = ()) -> BPETokenizer:
        return cls(variant="byte", pattern=pattern, special_tokens=special_tokens)

    @classmethod
    def from_gpt2(cls, vocab_bpe_path, encoder_json_path) -> BPETokenizer:
        """GPT-2's own tokenizer from its ``vocab.bpe`` and ``encoder.json``."""
        from .gpt2 import load_gpt2

        return load_gpt2(vocab_bpe_path, encoder_json_path)

    def with_merges(self, merges: Iterable[tuple[int, int, int]]) -> BPETokenizer:
        """A tokenizer with the same alphabet and settings but these merges."""
        return type(self)(variant=self.variant, base=self._base, merges=merges,
                          end_of_word=self.end_of_word, pattern=self.pattern,
                          special_tokens=list(self.special_tokens), byte_ids=self.byte_ids)

    def truncated(self, num_merges: int) -> BPETokenizer:
        """The tokenizer after its first ``num_merges`` merges: merges are a prefix sequence, so
        one training run serves every smaller vocabulary without retraining."""
        num_merges = check_count(num_merges, "num_merges", 0, len(self._merges))
        tok = self.with_merges(self._merges[:num_merges])
        tok.trace = self.trace[:num_merges]
        tok.initial_length = self.initial_length
        return tok

    # -- vocabulary -----------------------------------------------------------------------------
    def _build_vocab(self) -> None:
        """Token bytes of every id; the lengths are checked as integers first, so forged merges
        cannot make it join gigabytes."""
        vocab: dict[int, bytes] = {}
        if self.variant == "byte":
            for byte, i in enumerate(self.byte_ids):
                vocab[i] = bytes([byte])
            self.base_size = 256
        else:
            for i, s in enumerate(self._base):
                vocab[i] = s.encode("utf-8")
            self.base_size = len(self._base)
        total = sum(token_lengths({i: len(v) for i, v in vocab.items()}, self._merges).values())
        if total > MAX_VOCAB_BYTES:
            raise VocabularyTooLargeError(
                f"These merges would make tokens of {total:,} bytes in all; a tokenizer may hold at "
                f"most {MAX_VOCAB_BYTES:,}.")
        for a, b, new in self._merges:
            vocab[new] = vocab[a] + vocab[b]
        self._bytes = vocab

    def _set_special(self, special_tokens) -> None:
        if isinstance(special_tokens, str):
            raise ArgumentError("special_tokens must be a list of strings (or a dict string -> id), "
                                "not one string.")
        if isinstance(special_tokens, dict):
            pairs = [(s, _id(i, f"The id of special token {s!r}")) for s, i in special_tokens.items()]
        else:
            nxt = max(self._bytes) + 1
            pairs = [(s, nxt + i) for i, s in enumerate(dict.fromkeys(special_tokens))]
        for s, i in pairs:
            if not isinstance(s, str) or not s:
                raise ArgumentError(f"A special token must be a non-empty string, not {s!r}.")
            if len(s) > MAX_SPECIAL_CHARS:
                raise ArgumentError(f"Special token {s[:20]!r}... is {len(s):,} characters long; the "
                                    f"limit is {MAX_SPECIAL_CHARS}.")
            if i in self._bytes:
                raise ValueError(f"Special token {s!r} wants id {i}, which a normal token has.")
        if len({i for _, i in pairs}) != len(pairs):
            raise ValueError("Two special tokens share one id.")
        self.special_tokens: dict[str, int] = dict(pairs)
        self._special_by_id = {i: s for s, i in pairs}

    @property
    def vocab_size(self) -> int:
        return len(self._bytes) + len(self.special_tokens)

    @property
    def merges(self) -> list:
        """Merges in creation order: ``(str, str)`` pairs for char/word, ``(int, int)`` for byte."""
        if self.variant == "byte":
            return [(a, b) for a, b, _ in self._merges]
        return [(self.token_str(a), self.token_str(b)) for a, b, _ in self._merges]

    @property
    def merge_triples(self) -> list[tuple[int, int, int]]:
        """``(left_id, right_id, new_id)`` in creation order, for every variant."""
        return list(self._merges)

    @property
    def ids(self) -> list[int]:
        return sorted(self._bytes) + sorted(self._special_by_id)

    @property
    def chars(self) -> list[str]:
        """The alphabet of a char tokenizer (the book's ``tok.chars``)."""
        if self._base is None:
            raise AttributeError("A byte-level tokenizer has no character alphabet.")
        return list(self._base)

    @property
    def vocab(self) -> list:
        """Token of every id, in id order: ``str`` for char/word (the book's ``tok.vocab``)."""
        if self.variant == "byte":
            return [self.token_bytes(i) for i in self.ids]
        return [self.token_str(i) for i in self.ids]

    @property
    def stoi(self) -> dict[str, int]:
        """String -> id for char/word tokenizers (a later token wins, as in the book)."""
        return {self.token_str(i): i for i in self.ids}

    def token_bytes(self, token_id: int) -> bytes:
        if isinstance(token_id, bool) or not isinstance(token_id, (int, np.integer)):
            raise ArgumentError(f"A token id must be a whole number, not {type(token_id).__name__} "
                                f"{token_id!r}.")
        if token_id in self._bytes:
            return self._bytes[token_id]
        if token_id in self._special_by_id:
            return self._special_by_id[token_id].encode("utf-8")
        raise ValueError(f"Token id {token_id} is not in this vocabulary (size {self.vocab_size}).")

    def token_str(self, token_id: int) -> str:
        """Readable text of a token; bytes that are not whole UTF-8 characters show as ``\\xNN``."""
        return self.token_bytes(token_id).decode("utf-8", errors="backslashreplace")

    def is_special(self, token_id: int) -> bool:
        return token_id in self._special_by_id

    def merge_parts(self, token_id: int) -> tuple[int, int] | None:
        """The two ids a merged token was built from, or ``None`` for a base or special token."""
        if not hasattr(self, "_parts"):
            self._parts = {new: (a, b) for a, b, new in self._merges}
        return self._parts.get(token_id)

    # -- encoding -------------------------------------------------------------------------------
    def base_ids(self, text: str, unknown: str = "error") -> list[int]:
        """Ids of the single characters of ``text`` (char/word alphabets)."""
        try:
            return self._char_ids(text, unknown, 0).tolist()
        except UnknownCharacterError as exc:
            exc.word = text
            raise

    def _char_ids(self, text: str, unknown: str, offset: int) -> np.ndarray:
        if unknown not in ("error", "skip", "keep"):
            raise ValueError("unknown must be 'error' or 'skip'.")
        if self._lookup is None:
            self._lookup = {ord(c): i for i, c in enumerate(self._base) if len(c) == 1}
            table = np.full(max(self._lookup) + 2, -1, dtype=np.int32)
            table[list(self._lookup)] = list(self._lookup.values())
            self._table = table
        points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        inside = points < len(self._table)
        ids = np.full(len(points), -1, dtype=np.int32)
        ids[inside] = self._table[points[inside]]
        missing = np.flatnonzero(ids < 0)
        if len(missing):
            if unknown == "keep":
                ids[missing] = UNSEEN + points[missing].astype(np.int64)
                return ids
            if unknown == "error":
                first = int(missing[0])
                raise UnknownCharacterError(text[first], offset + first, len(missing))
            ids = ids[ids >= 0]
        return ids

    def unknown_characters(self, text: str) -> list[tuple[int, str]]:
        """``(position, character)`` of every character a char/word tokenizer cannot encode."""
        if self.variant == "byte":
            return []
        try:
            self._char_ids(text, "error", 0)
            return []
        except UnknownCharacterError:
            return [(i, ch) for i, ch in enumerate(text) if ord(ch) not in self._lookup]

    def tokenize(self, text: str) -> list[str]:
        """Token strings of ``text``; unlike ``encode`` it accepts characters the alphabet never saw,
        which stay single tokens (seed 000: ``slow`` -> ``['s', 'low</w>']``)."""
        tokens = self.encode_tokens(check_text(text), unknown="keep", offsets=False)
        return [chr(t.id - UNSEEN) if t.id >= UNSEEN else self.token_str(t.id) for t in tokens]

    def encode(self, text: str, *, unknown: str = "error", allowed_special: str = "all") -> list[int]:
        """Text to ids.  ``unknown='skip'`` drops characters outside a char/word alphabet
        (otherwise :class:`UnknownCharacterError` names the first one and its position).
        ``allowed_special='none'`` treats special-token text as ordinary text."""
        check_text(text)
        if self.variant == "char" and text:  # the hot paths: no Token objects for a whole corpus
            base = self._char_ids(text, unknown, 0)
            return self._apply(base, np.array([0, len(base)], dtype=np.int64))[0].tolist()
        if self.variant == "byte":
            return self._encode_byte_ids(text, allowed_special)
        return [t.id for t in self.encode_tokens(text, unknown=unknown, allowed_special=allowed_special,
                                                 offsets=False)]

    def encode_tokens(self, text: str, *, unknown: str = "error", allowed_special: str = "all",
                      offsets: bool = True) -> list[Token]:
        """Like ``encode`` but each token says which characters of ``text`` it covers."""
        check_text(text)
        if unknown == "keep" and offsets:
            raise ValueError("unknown must be 'error' or 'skip'.")
        if allowed_special not in ("all", "none"):
            raise ValueError("allowed_special must be 'all' or 'none'.")
        if not text:
            return []
        if self.variant == "char":
            return self._encode_char(text, unknown, offsets)
        if self.variant == "word":
            return self._encode_word(text, unknown, offsets)
        specials = list(self.special_tokens) if allowed_special == "all" else []
        return self._encode_byte(text, specials, offsets)

    def _encode_char(self, text: str, unknown: str, offsets: bool) -> list[Token]:
        base = self._char_ids(text, unknown, 0)
        ids = self._apply(base, np.array([0, len(base)], dtype=np.int64))[0].tolist()
        if not offsets:
            return [Token(i, 0, 0, 0) for i in ids]
        if unknown == "skip" and len(base) != len(text):
            raise ValueError("Offsets are not available when unseen characters are skipped.")
        return self._spans(ids, [0] * len(ids), [0], lambda i: len(self.token_str(i)))

    def _encode_word(self, text: str, unknown: str, offsets: bool) -> list[Token]:
        spans = list(word_spans(text))
        words = [text[s:e] for s, e in spans]
        try:
            per_word = self._encode_chunks(words, lambda w: self.base_ids(w, unknown) + [self.base_size - 1])
        except UnknownCharacterError as exc:  # say where in the whole text, not in the word
            where = spans[words.index(exc.word)][0] + exc.position
            unseen = sum(1 for _, ch in self.unknown_characters("".join(words)) if not ch.isspace())
            raise UnknownCharacterError(exc.char, where, unseen) from None
        marker = len(self.end_of_word)
        ids, chunk = [], []
        for c, word_ids in enumerate(per_word):
            ids.extend(word_ids)
            chunk.extend([c] * len(word_ids))
        if not offsets:
            return [Token(i, 0, 0, c) for i, c in zip(ids, chunk)]

        def width(i):
            s = self.token_str(i)
            return len(s) - marker if s.endswith(self.end_of_word) else len(s)

        return self._spans(ids, chunk, [s for s, _ in spans], width)

    def _encode_byte(self, text: str, specials: list[str], offsets: bool) -> list[Token]:
        chunks = list(byte_chunks(text, self.pattern, specials))
        ordinary = [text[s:e] for s, e, sp in chunks if sp is None]
        encoded = iter(self._encode_chunks(ordinary, None))
        tokens: list[Token] = []
        for c, (s, e, special) in enumerate(chunks):
            if special is not None:
                tokens.append(Token(self.special_tokens[special], s, e, c))
                continue
            ids = next(encoded)
            if not offsets:
                tokens.extend(Token(i, 0, 0, c) for i in ids)
                continue
            tokens.extend(_byte_offsets(text[s:e], ids, self, s, c))
        return tokens

    def _encode_byte_ids(self, text: str, allowed_special: str) -> list[int]:
        if allowed_special not in ("all", "none"):
            raise ValueError("allowed_special must be 'all' or 'none'.")
        specials = list(self.special_tokens) if allowed_special == "all" else []
        ids: list[int] = []
        clock = RegexClock(len(text))  # one budget for a custom pattern over the whole text
        for s, e, special in special_split(text, specials, clock):
            if special is not None:
                ids.append(self.special_tokens[special])
            else:
                pieces = regex_pieces(text[s:e], self.pattern, clock)
                self._fill_cache(pieces, None)
                ids.extend(chain.from_iterable(map(self._chunk_cache.__getitem__, pieces)))
        return ids

    def _spans(self, ids, chunk, chunk_starts, width) -> list[Token]:
        tokens, pos, current = [], chunk_starts[0], 0
        for i, c in zip(ids, chunk):
            if c != current:
                current, pos = c, chunk_starts[c]
            w = width(i)
            tokens.append(Token(i, pos, pos + w, c))
            pos += w
        return tokens

    def _encode_chunks(self, pieces: list[str], to_base) -> list[tuple[int, ...]]:
        """Encode many short chunks, each unique chunk once (a per-tokenizer cache)."""
        self._fill_cache(pieces, to_base)
        return [self._chunk_cache[p] for p in pieces]

    def _fill_cache(self, pieces: list[str], to_base) -> None:
        """Encode the chunks not cached yet, all in one compiled call.  ``to_base`` gives a
        chunk's base ids; ``None`` means its UTF-8 bytes (vectorised)."""
        cache = self._chunk_cache
        todo = list({p: None for p in pieces if p not in cache})
        if todo:
            if to_base is None:
                encoded = [p.encode("utf-8") for p in todo]
                lengths = list(map(len, encoded))
                table = np.asarray(self.byte_ids, dtype=np.int32)
                flat = table[np.frombuffer(b"".join(encoded), dtype=np.uint8)]
            else:
                bases = [to_base(p) for p in todo]
                lengths = list(map(len, bases))
                flat = np.fromiter(chain.from_iterable(bases), dtype=np.int32, count=sum(lengths))
            starts = np.zeros(len(todo) + 1, dtype=np.int64)
            np.cumsum(lengths, out=starts[1:])
            out, out_starts = self._apply(flat, starts)
            out, out_starts = out.tolist(), out_starts.tolist()
            if len(cache) > _MAX_CACHE:
                cache.clear()
            for k, p in enumerate(todo):
                cache[p] = tuple(out[out_starts[k]:out_starts[k + 1]])

    def _apply(self, seq: np.ndarray, starts: np.ndarray):
        if not self._merges or len(seq) == 0:
            return seq.astype(np.int32), starts
        if self._ranks is None:
            merges = np.array(self._merges, dtype=np.int32).reshape(-1, 3)
            a, b, new = merges[:, 0].copy(), merges[:, 1].copy(), merges[:, 2].copy()
            self._ranks = (kernels.build_ranks(a, b), a, b, new)
        return kernels.apply_merges(seq.astype(np.int32), starts, *self._ranks)

    # -- decoding -------------------------------------------------------------------------------
    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        return b"".join(map(self.token_bytes, _id_list(ids)))

    def decode(self, ids: Iterable[int]) -> str:
        """Ids to text.  Byte-level ids that end inside a character decode to U+FFFD there;
        the word variant gives its words joined by single spaces."""
        ids = _id_list(ids)
        if self.variant == "word":
            marker = self.end_of_word
            return "".join(self.token_str(i) for i in ids).replace(marker, " ").rstrip(" ")
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    # -- files ----------------------------------------------------------------------------------
    def save(self, path) -> None:
        from .storage import save_tokenizer

        save_tokenizer(self, path)

    @classmethod
    def load(cls, path) -> BPETokenizer:
        from .storage import load_tokenizer

        return load_tokenizer(path)

    def to_dict(self) -> dict:
        from .storage import tokenizer_to_dict

        return tokenizer_to_dict(self)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(variant={self.variant!r}, vocab_size={self.vocab_size}, "
                f"merges={len(self._merges)})")

    def __eq__(self, other) -> bool:
        return isinstance(other, BPETokenizer) and self.to_dict() == other.to_dict()

    __hash__ = None


class CharTokenizer(BPETokenizer):
    """One token per character (seed 002's comparison baseline): a BPE tokenizer with no merges."""

    def __init__(self, chars: Sequence[str] | None = None, **kwargs) -> None:
        kwargs.setdefault("variant", "char")
        if chars is not None:
            kwargs["base"] = chars
        super().__init__(**kwargs)
        if self._merges or self.variant != "char":
            raise ValueError("A CharTokenizer has no merges; use BPETokenizer for merges.")

    @classmethod
    def from_text(cls, text: str, *args, **kwargs) -> CharTokenizer:
        if not text:
            raise ValueError("The corpus is empty: paste or load some text first.")
        return cls(sorted(set(text)))


def _id(value, what: str) -> int:
    """A token id as an int below ``MAX_ID``: a bool, a float or a huge number is refused."""
    return check_count(value, what, 0, MAX_ID - 1)


def _id_list(ids) -> list:
    """``ids`` as a list, refusing text and non-iterables (``decode("abc")`` is a mistake)."""
    if isinstance(ids, (str, bytes, bytearray)) or not isinstance(ids, Iterable):
        raise ArgumentError(f"Ids to decode must be a list of whole numbers, not {type(ids).__name__}.")
    return list(ids)


def _byte_offsets(piece: str, ids, tok: BPETokenizer, start: int, chunk: int) -> list[Token]:
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
