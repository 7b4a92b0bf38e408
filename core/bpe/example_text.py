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
import unicodedata
from dataclasses import dataclass

SCANNED = 50_000  # characters of the corpus whose words the new word is made from
# Scripts written without spaces between words (the first word of a letter's Unicode name): there a
# run of letters is a phrase or a sentence, and half of one joined to half of another is no word.
UNSPACED = frozenset({"CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "THAI", "LAO", "KHMER",
                      "MYANMAR", "TIBETAN"})


@dataclass(frozen=True)
class ExampleText:
    """``opening``: the corpus's first words, cut at the end of a word; ``new_word``: a word the
    corpus never contains, the first half of one of its longest words and the second half of the
    next (``halves``), or ``None`` where no such word can be made (a corpus of Japanese or Thai,
    which puts no spaces between its words)."""

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


def _script(ch: str) -> str:
    return unicodedata.name(ch, "").split(" ")[0]  # "LATIN", "CYRILLIC", "CJK"


def longest_pair(words: set[str]) -> tuple[str, str]:
    """The longest word and the next longest in its script (``("", "")``: no two such words), each
    a run of letters of a script that puts spaces between words: elsewhere (Japanese, Thai) a run
    of letters is a phrase, and half a Greek word joined to half a Russian one reads as no word."""
    by_script: dict[str, list[str]] = {}
    for w in sorted(words, key=lambda w: (-len(w), w)):
        if not any(_script(ch) in UNSPACED for ch in w):
            by_script.setdefault(_script(w[0]), []).append(w)
    pairs = [(ws[0], ws[1]) for ws in by_script.values() if len(ws) > 1]
    return min(pairs, key=lambda p: (-len(p[0]), p[0]), default=("", ""))


def example_text(corpus: str, limit: int = 100) -> ExampleText:
    opening = opening_words(corpus, limit)
    a, b = longest_pair(set(re.findall(r"\w+", corpus[:SCANNED])))
    new = a[: len(a) // 2 + 1] + b[len(b) // 2:]
    if len(new) < 3 or new in corpus or " " not in corpus:
        return ExampleText(opening)
    return ExampleText(opening, new, (a, b))
