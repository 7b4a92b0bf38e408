"""The three BPE variants as small objects, so the library asks a variant instead of testing
its name: how text is cut into chunks, the alphabet of a corpus, how a token is shown, how a
text is encoded and what decode joins with.

- ``char``: the whole text is one chunk; base symbols are the corpus's characters (seed 002).
- ``word``: whitespace-separated words, each ending with an end-of-word marker (seeds 000/003);
  ``decode`` gives the words joined by single spaces.
- ``byte``: the 256 byte values, an optional regex pre-split and special tokens (seed 004).

The names stay the user-facing API (``variant="word"``); :func:`variant_rules` gives the object.
Leaves out: merges and training (``core.bpe.trainer``), the vocabulary (``core.bpe.tokenizer``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import numpy as np

from . import encoding
from .alphabet import Alphabet, SymbolBytes, characters
from .checks import ArgumentError, check_id
from .pretokenize import RegexClock, byte_chunks, word_counts
from .split import known_patterns

VARIANTS = ("char", "word", "byte")


class Variant:
    """What every variant answers; the defaults are the char variant's answers."""

    name = "char"
    marker = 0  # symbols appended to every chunk (the end-of-word marker)
    has_alphabet = True  # base symbols are characters (``False``: the 256 bytes)

    def end_of_word(self, marker: str | None) -> str | None:
        return None

    def check_end_of_word(self, marker) -> None:
        """Refuse a marker this variant cannot train with (only the word variant has one)."""

    def split_pattern(self, pattern: str | None) -> str | None:
        return None

    def special_tokens(self, tokens) -> tuple[str, ...]:
        return ()

    def base(self, symbols, byte_ids) -> tuple[Alphabet | None, list[int] | None]:
        """The base of a tokenizer: an alphabet of characters, or the 256 bytes' ids."""
        return Alphabet(symbols), None

    def base_bytes(self, alphabet: Alphabet | None, byte_ids) -> Mapping[int, bytes]:
        return SymbolBytes(alphabet)

    def corpus_alphabet(self, text: str, end_of_word: str | None) -> list[str] | None:
        """The base symbols of training on ``text``: its characters, sorted."""
        return characters(text)

    def units(self, text: str) -> int:
        """What training memory grows with: characters, or UTF-8 bytes for ``byte``."""
        return len(text)

    def corpus_chunks(self, text: str, pattern, specials, timeout) -> list[tuple[str, int]] | None:
        """Unique chunks with their frequencies, first-appearance order; ``None``: one chunk."""
        return None

    def chunk_ids(self, block: list[str], alphabet: Alphabet | None, byte_ids) -> np.ndarray:
        """Base ids of the chunks in ``block``, concatenated (no markers)."""
        return alphabet.ids("".join(block), "error", 0)

    def chunk_lengths(self, chunks: list[tuple[str, int]]) -> np.ndarray:
        return np.fromiter((len(c) for c, _ in chunks), dtype=np.int64, count=len(chunks))

    def merge_label(self, tok, token_id: int):
        """How ``tok.merges`` shows a part of a merge: the token's text."""
        return tok.token_str(token_id)

    def vocab_entry(self, tok, token_id: int):
        return tok.token_str(token_id)

    def unknown_characters(self, tok, text: str) -> list[tuple[int, str]]:
        return tok.alphabet.unknown(text)

    def encode(self, tok, text: str, unknown: str, specials: list[str]) -> list[int]:
        """Ids of ``text``: the char hot path skips Token objects for a whole corpus."""
        return tok.encoder.whole(tok.alphabet.ids(text, unknown, 0)) if text else []

    def encode_tokens(self, tok, text: str, unknown: str, specials: list[str], offsets: bool):
        return encoding.char_tokens(tok, text, unknown, offsets)

    def decode(self, tok, ids: list[int]) -> str:
        return tok.decode_bytes(ids).decode("utf-8", errors="replace")


class Word(Variant):
    name = "word"
    marker = 1

    def end_of_word(self, marker):
        return marker

    def check_end_of_word(self, marker) -> None:
        if not isinstance(marker, str) or not marker:
            raise ArgumentError("The word variant needs a non-empty end-of-word marker (a string).")

    def corpus_alphabet(self, text, end_of_word):
        """The characters that occur inside words (``str.split()`` cuts where ``str.isspace()``),
        then the marker."""
        alphabet = [ch for ch in characters(text) if not ch.isspace()]
        if not alphabet:
            raise ValueError("The corpus has no words (only whitespace): nothing to learn.")
        return alphabet + [end_of_word]

    def corpus_chunks(self, text, pattern, specials, timeout):
        return list(word_counts(text).items())  # the seeds' text.split(), exactly

    def encode(self, tok, text, unknown, specials):
        return [t.id for t in self.encode_tokens(tok, text, unknown, specials, False)]

    def encode_tokens(self, tok, text, unknown, specials, offsets):
        return encoding.word_tokens(tok, text, unknown, offsets)

    def decode(self, tok, ids):
        """Words joined by single spaces.  A token ends a word when its last base symbol is the
        marker (by id: a literal "</w>" typed inside a word is text, and stays)."""
        cut = len(tok.end_of_word)
        ends = {}
        for i in set(ids):
            last = i
            while (parts := tok.merge_parts(last)) is not None:
                last = parts[1]
            ends[i] = last == tok.base_size - 1
        words = (tok.token_str(i)[:-cut] + " " if ends[i] else tok.token_str(i) for i in ids)
        return "".join(words).rstrip(" ")


class Byte(Variant):
    name = "byte"
    has_alphabet = False

    def split_pattern(self, pattern):
        return pattern

    def special_tokens(self, tokens):
        return tuple(dict.fromkeys(tokens))

    def base(self, symbols, byte_ids):
        ids = list(range(256)) if byte_ids is None else [check_id(i, "A byte id") for i in byte_ids]
        if len(set(ids)) != 256 or len(ids) != 256:
            raise ValueError("A byte-level tokenizer needs 256 distinct ids for the 256 bytes.")
        return None, ids

    def base_bytes(self, alphabet, byte_ids):
        return {i: bytes([byte]) for byte, i in enumerate(byte_ids)}

    def corpus_alphabet(self, text, end_of_word):
        return None

    def units(self, text):
        if text.isascii():
            return len(text)
        block = 1 << 20  # measured a block at a time: temporaries stay a few MB
        return sum(len(text[i:i + block].encode("utf-8", "surrogatepass"))
                   for i in range(0, len(text), block))

    def corpus_chunks(self, text, pattern, specials, timeout):
        data = _utf8(text) if known_patterns.has_scanner(pattern) else None
        if data is not None:  # a compiled scanner, in linear time: no clock
            return list(known_patterns.chunk_counts(text, data, pattern, specials).items())
        clock = RegexClock(len(text), timeout)
        return list(Counter(text[s:e] for s, e, special in byte_chunks(text, pattern, specials, clock)
                            if special is None).items())

    def chunk_ids(self, block, alphabet, byte_ids):
        table = np.asarray(byte_ids, dtype=np.int32)
        return table[np.frombuffer("".join(block).encode("utf-8"), dtype=np.uint8)]

    def chunk_lengths(self, chunks):
        lengths = (len(c.encode("utf-8")) for c, _ in chunks)
        return np.fromiter(lengths, dtype=np.int64, count=len(chunks))

    def merge_label(self, tok, token_id):
        return token_id

    def vocab_entry(self, tok, token_id):
        return tok.token_bytes(token_id)

    def unknown_characters(self, tok, text):
        return []

    def encode(self, tok, text, unknown, specials):
        return encoding.byte_ids(tok, text, specials)

    def encode_tokens(self, tok, text, unknown, specials, offsets):
        return encoding.byte_tokens(tok, text, specials, offsets)


_RULES = {rules.name: rules for rules in (Variant(), Word(), Byte())}


def variant_rules(name: str) -> Variant:
    """The variant called ``name``, or a ``ValueError`` listing the choices."""
    if not isinstance(name, str) or name not in _RULES:
        raise ValueError(f"Unknown BPE variant {name!r}: choose one of {', '.join(VARIANTS)}.")
    return _RULES[name]


def _utf8(text: str) -> bytes | None:
    """``text`` as UTF-8, or ``None`` where a lone surrogate has none (``regex`` then cuts it)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return None
