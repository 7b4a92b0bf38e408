"""Why arithmetic is hard for a model: how a tokenizer groups a number's digits.  A *grouping*
is the digits per token in order (GPT-4 cuts ``2024`` as ``202 · 4``: grouping ``(3, 1)``), so
whether a digit's place value (units, tens, ...) sits alone, or with which others, changes from
one number to the next.

    >>> from core.bpe import BPETokenizer
    >>> number_groupings(BPETokenizer.byte_level(), upto=12).tokens_per_number
    {1: 10, 2: 3}

A number here is a run of the ASCII digits 0-9; in a text, with the space before it when there is
one (GPT-2 makes ``" 2024"`` its own tokens; GPT-4 cuts the space off).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import regex

from ..bpe import BPETokenizer
from ..bpe.checks import ArgumentError
from .cuts import Cut, characters_started, cuts_of_each

MAX_UPTO = 1_000_000
NUMBER = regex.compile(r" ?[0-9]+")


@dataclass(frozen=True)
class NumberGroupings:
    """Of the integers ``0..upto`` written plainly: how many take 1, 2, ... tokens, and how many
    times each grouping occurs."""

    upto: int
    tokens_per_number: dict[int, int]
    groupings: Counter

    def to_dict(self) -> dict:
        return {"tokens_per_number": {str(n): c for n, c in sorted(self.tokens_per_number.items())},
                "groupings": len(self.groupings)}


def grouping(tok: BPETokenizer, found: Cut, text: str) -> tuple[int, ...]:
    """The digits of ``text`` in each token of ``found`` (its cut), tokens without a digit left
    out: ``(3, 1)`` for ``202 · 4``."""
    widths = characters_started(tok, found)
    groups, at = [], 0
    for width in widths:
        digits = sum(ch.isdigit() for ch in text[at:at + width])
        if digits:
            groups.append(digits)
        at += width
    return tuple(groups)


def number_groupings(tok: BPETokenizer, upto: int = 9_999) -> NumberGroupings:
    """Every integer from 0 to ``upto`` encoded alone (all in one call where the tokenizer has a
    compiled split pattern)."""
    if isinstance(upto, bool) or not isinstance(upto, int) or not 0 <= upto <= MAX_UPTO:
        raise ArgumentError(f"upto is a whole number from 0 to {MAX_UPTO:,}, not {upto!r}.")
    texts = [str(n) for n in range(upto + 1)]
    groups = [grouping(tok, c, t) for c, t in zip(cuts_of_each(tok, texts), texts)]
    return NumberGroupings(upto, dict(sorted(Counter(map(len, groups)).items())), Counter(groups))


@dataclass(frozen=True)
class NumberCut:
    """One number as a text holds it (``text``, with the space before it if any), how often, its
    cut and its grouping."""

    text: str
    count: int
    cut: Cut
    grouping: tuple[int, ...]


def numbers_in_text(tok: BPETokenizer, text: str, max_numbers: int = 5_000) -> list[NumberCut]:
    """The ``max_numbers`` most frequent numbers of ``text``, each encoded alone, most frequent
    first."""
    counts = Counter(NUMBER.findall(text)).most_common(max_numbers)
    numbers = [n for n, _ in counts]
    return [NumberCut(n, k, c, grouping(tok, c, n))
            for (n, k), c in zip(counts, cuts_of_each(tok, numbers))]


def place_values(groups: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The place values (powers of ten: 0 for units) of each group's digits, from the left:
    ``place_values((3, 1)) == [(3, 2, 1), (0,)]``."""
    left = sum(groups)
    out = []
    for size in groups:
        out.append(tuple(range(left - 1, left - 1 - size, -1)))
        left -= size
    return out


def units_alone_share(groupings: Counter) -> float:
    """The share of numbers whose units digit is a token of its own (grouping ending in 1), among
    those of two digits or more."""
    longer = {g: n for g, n in groupings.items() if sum(g) >= 2}
    total = sum(longer.values())
    return sum(n for g, n in longer.items() if g[-1] == 1) / total if total else 0.0
