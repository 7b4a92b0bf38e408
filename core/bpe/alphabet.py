"""The alphabet of a char or word tokenizer: its base symbols and the fast lookup from text to
their ids, shared by the trainer (to lay out a corpus) and the tokenizer (to encode).

    >>> Alphabet(["a", "b", " "]).ids("ab a", "error", 0).tolist()
    [0, 1, 2, 0]

Leaves out: byte-level tokenizers (their base is the 256 bytes, no lookup needed) and merges.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from .checks import UnknownCharacterError

# ``tokenize`` gives an unseen character the id UNSEEN + its code point: it never merges and maps
# back to itself.  Far above any real vocabulary, and still fits the 32-bit halves of a pair key.
UNSEEN = 1 << 30
_BLOCK = 1 << 16  # characters read at a time: 256 KB of code points, whatever the text's length


def characters(text: str) -> list[str]:
    """The distinct characters of ``text`` in code point order, as ``sorted(set(text))`` gives
    them, in time linear in the text: one flag per possible code point, set a block at a time
    (sorting the distinct characters as strings is slow for a pasted alphabet of random Unicode)."""
    seen = np.zeros(0x110000, dtype=bool)
    for i in range(0, len(text), _BLOCK):
        seen[_code_points(text[i:i + _BLOCK])] = True
    return list(map(chr, np.flatnonzero(seen).tolist()))


def _code_points(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


class Alphabet:
    """Base symbols in id order; a symbol's id is its position."""

    def __init__(self, symbols: Sequence[str]) -> None:
        if not symbols or isinstance(symbols, str) or not all(isinstance(c, str) and c for c in symbols):
            raise ValueError("A character tokenizer needs a non-empty list of non-empty strings.")
        self.symbols = list(symbols)
        if len(set(self.symbols)) != len(self.symbols):
            raise ValueError("The alphabet lists a character twice.")
        self._array: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.symbols)

    def __getstate__(self) -> dict:
        """Single characters travel as one string, without the lookup table (built again on first
        use): a pasted corpus of random Unicode has some 180,000 of them, and a tokenizer goes to a
        job and back whole, pickled on the server's threads."""
        joined = self._single_characters()
        return {"symbols": self.symbols} if joined is None else {"chars": joined}

    def __setstate__(self, state: dict) -> None:
        self.symbols = list(state["chars"]) if "chars" in state else state["symbols"]
        self._array = None

    def _single_characters(self) -> str | None:
        """The symbols joined, when every one is a single character (none is empty, so the
        lengths tell), else ``None``."""
        joined = "".join(self.symbols)
        return joined if len(joined) == len(self.symbols) else None

    def ids(self, text: str, unknown: str, offset: int) -> np.ndarray:
        """int32 ids of the characters of ``text``.  An unseen character raises
        :class:`UnknownCharacterError` at ``offset`` + its position (``unknown='error'``), is
        dropped (``'skip'``) or becomes ``UNSEEN`` + its code point (``'keep'``)."""
        if unknown not in ("error", "skip", "keep"):
            raise ValueError("unknown must be 'error' or 'skip'.")
        table = self._table()
        points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        inside = points < len(table)
        ids = np.full(len(points), -1, dtype=np.int32)
        ids[inside] = table[points[inside]]
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

    def unknown(self, text: str) -> list[tuple[int, str]]:
        """``(position, character)`` of every character of ``text`` outside the alphabet."""
        try:
            self.ids(text, "error", 0)
            return []
        except UnknownCharacterError:
            table = self._table()
            points = _code_points(text)
            missing = points >= len(table)
            missing[~missing] = table[points[~missing]] < 0
            return [(int(i), text[i]) for i in np.flatnonzero(missing)]

    def _table(self) -> np.ndarray:
        """Code point -> id (``-1`` where none), built on first use: single characters only."""
        if self._array is None:
            joined = self._single_characters()
            if joined is not None:  # read at C speed
                ids, points = np.arange(len(joined)), _code_points(joined)
            else:
                ids = [i for i, c in enumerate(self.symbols) if len(c) == 1]
                points = np.fromiter((ord(self.symbols[i]) for i in ids), dtype=np.int64, count=len(ids))
            self._array = np.full(int(points.max(initial=0)) + 2, -1, dtype=np.int32)
            self._array[points] = ids
        return self._array


class SymbolBytes(Mapping):
    """A base symbol's UTF-8 by its id, spelled when asked: the bytes of a large alphabet's every
    symbol are never held (``core.bpe.vocab.TokenBytes`` reads a tokenizer's base from here)."""

    def __init__(self, alphabet: Alphabet) -> None:
        self.alphabet = alphabet

    def __getitem__(self, symbol_id: int) -> bytes:
        if not isinstance(symbol_id, (int, np.integer)) or not 0 <= symbol_id < len(self.alphabet):
            raise KeyError(symbol_id)
        return self.alphabet.symbols[symbol_id].encode("utf-8")

    def __len__(self) -> int:
        return len(self.alphabet)

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.alphabet)))

    def items(self) -> Iterator[tuple[int, bytes]]:
        """Every ``(id, bytes)``, spelled in one pass at C speed (a tokenizer's construction checks
        their lengths); an iterator, read once."""
        return zip(range(len(self.alphabet)), map(str.encode, self.alphabet.symbols))
