"""What every layer of the tokenizer library checks its arguments against: the shared errors, the
argument checks (token lengths added up from merges included), and the limits on ids.

Owns: :class:`ArgumentError`, :class:`EmptyCorpusError`, :class:`UnknownCharacterError`,
:class:`VocabularyTooLargeError`, ``check_count`` / ``check_text`` / ``check_id`` / ``token_lengths``
and the id limits.
Leaves out: the errors of one module (``PatternError`` in ``pretokenize``, ``CorpusTooLargeError``
in ``trainer``, ``TokenizerFileError`` in ``files``, ``GPT2FileError`` in ``gpt2``, ``ExportError``
in ``interop``).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

# Ids are below MAX_ID (16.7 M, 300x GPT-4's vocabulary), far under ``alphabet.UNSEEN``, so no id
# can collide with an unseen character or overflow the int32 arrays of the kernels.
MAX_ID = 1 << 24
MAX_SPECIAL_CHARS = 256


class ArgumentError(ValueError):
    """An argument of the wrong type or out of range (the message names it and what is allowed)."""


class EmptyCorpusError(ValueError):
    """A training asked of an empty text: a page says so as a message, never as a failure."""

    def __init__(self, message: str = "The corpus is empty: paste or load some text first.") -> None:
        super().__init__(message)


class VocabularyTooLargeError(ValueError):
    """Merges whose tokens would spell more bytes than a tokenizer may hold."""


class UnknownCharacterError(ValueError):
    """The text holds a character the tokenizer's alphabet never saw."""

    def __init__(self, char: str, position: int, count: int) -> None:
        self.char = char
        self.position = position
        self.count = count
        more = f" ({count - 1} more unseen character(s) follow)" if count > 1 else ""
        super().__init__(
            f"Character {char!r} (U+{ord(char):04X}) at position {position} is not in this "
            f"tokenizer's alphabet{more}. Use encode(text, unknown='skip') to drop unseen "
            f"characters, or train a byte-level tokenizer, which can encode any text."
        )


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
        hint = ""
        if isinstance(text, (bytes, bytearray)):
            hint = " (decode bytes first, e.g. data.decode('utf-8'))"
        raise ArgumentError(f"{what} must be a str, not {type(text).__name__}{hint}.")
    return text


def check_id(value, what: str) -> int:
    """A token id as an int below ``MAX_ID``: a bool, a float or a huge number is refused."""
    return check_count(value, what, 0, MAX_ID - 1)


def check_id_list(ids) -> list:
    """``ids`` as a list, refusing text and non-iterables (``decode("abc")`` is a mistake)."""
    if isinstance(ids, (str, bytes, bytearray)) or not isinstance(ids, Iterable):
        raise ArgumentError(f"Ids to decode must be a list of whole numbers, not {type(ids).__name__}.")
    return list(ids)


def token_lengths(base_lengths: dict[int, int], merges) -> dict[int, int]:
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
