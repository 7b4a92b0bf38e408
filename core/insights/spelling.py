"""Why a model cannot spell: a word as a tokenizer gives it to the model, in the forms it meets
it in (with a leading space, capitalised, in capitals, reversed), and how many of its letters
are hidden inside a token of several characters (the model is given that token's id, not its
letters).

    >>> from core.bpe import BPETokenizer
    >>> found = spelling(BPETokenizer.byte_level(), "ab")
    >>> found.forms[" Word"].tokens, found.letters_in_longer_tokens
    ((' ', 'A', 'b'), 0)

:func:`letter_places` answers "how many r's are in strawberry?" with what the model is given;
:func:`words_cut_differently` counts the words of a text whose cut changes with a leading space
or a capital.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import regex

from ..bpe import BPETokenizer
from ..bpe.checks import ArgumentError
from .cuts import Cut, characters_started, cut, cuts_of_each

FORMS = ("word", " word", "Word", " Word", "WORD", "reversed")
MAX_WORD_CHARS = 100
WORD = regex.compile(r"\p{L}+")


@dataclass(frozen=True)
class Spelling:
    """``forms``: each of :data:`FORMS` cut by the tokenizer; ``letters_in_longer_tokens``: the
    letters of the word itself that sit in a token of two or more characters."""

    word: str
    forms: dict[str, Cut]
    letters_in_longer_tokens: int

    def to_dict(self) -> dict:
        return {"forms": {form: c.to_dict() for form, c in self.forms.items()},
                "letters_in_longer_tokens": self.letters_in_longer_tokens}


def word_forms(word: str) -> dict[str, str]:
    """The word in each of :data:`FORMS` (``"Word"``: its first letter in capitals)."""
    if not isinstance(word, str) or not word or len(word) > MAX_WORD_CHARS or any(c.isspace() for c in word):
        raise ArgumentError(f"Give one word of 1 to {MAX_WORD_CHARS} characters without spaces, "
                            f"not {word!r}.")
    title = word[0].upper() + word[1:]
    return {"word": word, " word": " " + word, "Word": title, " Word": " " + title,
            "WORD": word.upper(), "reversed": word[::-1]}


def spelling(tok: BPETokenizer, word: str) -> Spelling:
    """``word`` in every form, as ``tok`` cuts it (as ordinary text)."""
    forms = {form: cut(tok, text) for form, text in word_forms(word).items()}
    return Spelling(word, forms, letters_in_longer_tokens(tok, word, forms["word"]))


def letters_in_longer_tokens(tok: BPETokenizer, word: str, found: Cut) -> int:
    """Letters of ``word`` whose first byte lies in a token that starts two or more characters."""
    widths = characters_started(tok, found)
    hidden, at = 0, 0
    for width in widths:
        if width >= 2:
            hidden += sum(ch.isalpha() for ch in word[at:at + width])
        at += width
    return hidden


def letter_places(tok: BPETokenizer, word: str, letter: str) -> list[tuple[str, int]]:
    """Each token of ``word`` with how many times it holds ``letter`` (case-insensitive): what a
    model would have to know about each id to count the letter."""
    if len(letter) != 1:
        raise ArgumentError(f"Give one letter, not {letter!r}.")
    found = cut(tok, word)
    widths = characters_started(tok, found)
    places, at = [], 0
    for token, width in zip(found.tokens, widths):
        places.append((token, word[at:at + width].casefold().count(letter.casefold())))
        at += width
    return places


@dataclass(frozen=True)
class WordCuts:
    """Distinct words (letters only, lower-cased) of a text: ``words``; those whose cut changes
    with a leading space (``by_space``), with a capital first letter (``by_capital``), with
    either (``either``); ``examples``: the most frequent of those, most frequent first."""

    words: int
    by_space: int
    by_capital: int
    either: int
    examples: tuple[str, ...]


def words_cut_differently(tok: BPETokenizer, text: str, max_words: int = 20_000,
                          examples: int = 8) -> WordCuts:
    """Of the ``max_words`` most frequent lower-case words of ``text``: which are cut into other
    pieces when a space comes before them (``" word"``, the space taken off its first token) or
    when they start with a capital (``"Word"``, its tokens lower-cased)."""
    counts = Counter(w.lower() for w in WORD.findall(text))
    words = [w for w, _ in counts.most_common(max_words) if w[:1].upper() + w[1:] != w]
    plain = _splits(cuts_of_each(tok, words))
    spaced = _splits(cuts_of_each(tok, [" " + w for w in words]), strip=" ")
    capital = _splits(cuts_of_each(tok, [w[0].upper() + w[1:] for w in words]), lower=True)
    space_differs = [p != s for p, s in zip(plain, spaced)]
    capital_differs = [p != c for p, c in zip(plain, capital)]
    either = [w for w, s, c in zip(words, space_differs, capital_differs) if s or c]
    return WordCuts(len(words), sum(space_differs), sum(capital_differs), len(either),
                    tuple(either[:examples]))


def _splits(cuts: list[Cut], strip: str = "", lower: bool = False) -> list[tuple[str, ...]]:
    """Each cut's token texts, the first one's leading ``strip`` taken off (dropped if nothing is
    left), lower-cased when asked: what two forms of a word are compared by."""
    out = []
    for found in cuts:
        tokens = [t.lower() for t in found.tokens] if lower else list(found.tokens)
        if strip and tokens:
            tokens[0] = tokens[0].removeprefix(strip)
            tokens = tokens if tokens[0] else tokens[1:]
        out.append(tuple(tokens))
    return out
