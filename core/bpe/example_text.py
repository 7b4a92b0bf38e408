"""Char vs BPE's first test text, made from the corpus: its opening words, then one word it never
contained, so the page opens on BPE cutting a word it never saw, with no character it lacks.

The page says how the text was made (:class:`ExampleText` keeps the parts): an attendee who pasted
a French paragraph saw a word that was not in it ("déjeuener") listed as unseen, with nothing
saying where it came from.

    >>> made = example_text("the lower newest widest lowest", limit=14)
    >>> made.opening, made.new_word, made.halves
    ('the lower', 'loweest', ('lowest', 'newest'))
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SCANNED = 50_000  # characters of the corpus whose words the new word is made from


@dataclass(frozen=True)
class ExampleText:
    """``opening``: the corpus's first words, cut at the end of a word; ``new_word``: a word the
    corpus never contains, the first half of one of its longest words and the second half of the
    next (``halves``), or ``None`` where no such word can be made."""

    opening: str
    new_word: str | None = None
    halves: tuple[str, str] | None = None

    @property
    def text(self) -> str:
        return f"{self.opening} {self.new_word}" if self.new_word else self.opening


def opening_words(corpus: str, limit: int) -> str:
    """At most ``limit`` characters from the start of ``corpus``, ending at the end of a word where
    the cut would fall inside one (a text without spaces is cut at ``limit``)."""
    opening = corpus[:limit]
    if len(corpus) > limit and not corpus[limit].isspace():
        whole = re.match(r"(?s)(.*\S)\s+\S*$", opening)
        opening = whole.group(1) if whole else opening
    return opening.strip()


def example_text(corpus: str, limit: int = 100) -> ExampleText:
    opening = opening_words(corpus, limit)
    words = set(re.findall(r"\w+", corpus[:SCANNED]))
    longest = sorted(words, key=lambda w: (-len(w), w)) + ["", ""]  # "": fewer than two words
    a, b = longest[:2]
    new = a[: len(a) // 2 + 1] + b[len(b) // 2:]
    if len(new) < 3 or new in corpus or " " not in corpus:
        return ExampleText(opening)
    return ExampleText(opening, new, (a, b))
