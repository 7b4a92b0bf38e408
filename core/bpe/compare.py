"""Two or more tokenizers on one text: where their cuts differ, and what each script costs.

Works on the ``Token`` lists of ``encode_tokens`` (character offsets), so any tokenizer of ours
compares with any other, trained or pretrained.

    >>> from core.bpe.encoding import Token
    >>> a = [Token(0, 0, 2, 0), Token(1, 2, 4, 0)]     # "ab" "cd"
    >>> b = [Token(0, 0, 1, 0), Token(1, 1, 4, 0)]     # "a" "bcd"
    >>> sorted(cuts(a) ^ cuts(b))
    [1, 2]
    >>> differing(b, spans(a))
    [0, 1]

A cut is a character offset where a token starts or ends; a token is cut differently from a
reference tokenizer when the reference has no token over exactly its characters.  Byte-level
tokens that split one character share that character's offsets, so cuts inside a character are
not compared.

Cost per script: each token counts as one, spread evenly over the characters it covers
(:func:`char_costs`; the shares sum to the number of tokens), and each character belongs to a
script (:func:`script_of`).  Spaces, punctuation, digits and combining marks have no script of
their own: they go with the script before them (or the one after, at the start of a line), so a
line of Korean with its spaces and commas counts as Hangul.

Leaves out: drawing (``ui.views.compare_view``) and loading tokenizers (``core.bpe.pretrained``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from .encoding import PackedTokens, Token

EMOJI = "Emoji & symbols"
SCRIPT_NAMES = {  # the first word of a letter's Unicode name, and the script's name shown
    "LATIN": "Latin", "CYRILLIC": "Cyrillic", "GREEK": "Greek", "HANGUL": "Hangul (Korean)",
    "CJK": "Han (Chinese, Japanese)", "HIRAGANA": "Kana (Japanese)", "KATAKANA": "Kana (Japanese)",
    "KATAKANA-HIRAGANA": "Kana (Japanese)", "ARABIC": "Arabic", "HEBREW": "Hebrew",
    "DEVANAGARI": "Devanagari", "THAI": "Thai",
}
OTHER = "Other"


def cuts(tokens: list[Token]) -> frozenset[int]:
    """Every character offset where one of ``tokens`` starts or ends."""
    return frozenset(t.start for t in tokens) | frozenset(t.end for t in tokens)


def spans(tokens: Sequence[Token]) -> frozenset[tuple[int, int]]:
    """The ``(start, end)`` character spans of ``tokens``."""
    return frozenset(zip(*_bounds(tokens)))


def differing(tokens: Sequence[Token], reference: frozenset[tuple[int, int]]) -> list[int]:
    """Indices of the tokens over characters that no token of the ``reference`` (its
    :func:`spans`) covers exactly: where the two tokenizers cut differently."""
    return [i for i, span in enumerate(zip(*_bounds(tokens))) if span not in reference]


def _bounds(tokens: Sequence[Token]) -> tuple[list[int], list[int]]:
    """Starts and ends; a ``PackedTokens``' read off its columns (a Token made each is slower)."""
    if isinstance(tokens, PackedTokens):
        return tokens.bounds()
    return [t.start for t in tokens], [t.end for t in tokens]


def char_costs(tokens: list[Token], length: int) -> list[float]:
    """Each character's share of the tokens: a token adds ``1 / n`` to each of its ``n``
    characters (a byte token inside one character adds 1 to it)."""
    costs = [0.0] * length
    for t in tokens:
        end = max(t.end, t.start + 1)
        share = 1.0 / (end - t.start)
        for i in range(t.start, min(end, length)):
            costs[i] += share
    return costs


def script_of(ch: str) -> str | None:
    """The script of a letter (``"Latin"``, ``"Hangul (Korean)"``, ...), ``EMOJI`` for emoji and
    other pictographic symbols, ``None`` for what has no script of its own (spaces, punctuation,
    digits, marks, joiners)."""
    category = unicodedata.category(ch)
    if category == "So" or 0x1F1E6 <= ord(ch) <= 0x1F1FF or 0x1F3FB <= ord(ch) <= 0x1F3FF:
        return EMOJI  # symbols, regional indicators (flags), skin-tone modifiers
    if not category.startswith("L"):
        return None
    first = unicodedata.name(ch, "").split(" ")[0]
    return SCRIPT_NAMES.get(first, first.title() or OTHER)


def char_scripts(text: str) -> list[str]:
    """The script each character counts under: its own, else the one before it on its line,
    else the next one on the line, else the previous line's (``OTHER`` for text with no letter)."""
    own = [script_of(ch) for ch in text]
    out: list[str | None] = list(own)
    last = None
    for i, s in enumerate(own):
        if text[i] == "\n":
            last = None
        if s is not None:
            last = s
        elif last is not None:
            out[i] = last
    following = None
    for i in range(len(text) - 1, -1, -1):
        if out[i] is not None:
            following = out[i]
        elif text[i] != "\n" and following is not None:
            out[i] = following
    fallback = next((s for s in out if s is not None), OTHER)
    for i, s in enumerate(out):
        fallback = s if s is not None else fallback
        out[i] = fallback
    return out


@dataclass(frozen=True)
class ScriptCost:
    """What the characters of one script cost under one tokenizer."""

    script: str
    chars: int
    tokens: float

    @property
    def tokens_per_char(self) -> float:
        return self.tokens / self.chars if self.chars else 0.0


NOT_A_LANGUAGE = ("Emoji & symbols",)  # costs apart from any language's script: left out of rankings


def ranked_scripts(costs: list[ScriptCost], leave_out=NOT_A_LANGUAGE) -> list[ScriptCost]:
    """``costs`` from the costliest script per character to the cheapest, ``leave_out`` left out:
    the one ranking that a station's answer and the page it opens both state."""
    return sorted((c for c in costs if c.script not in set(leave_out)), key=lambda c: -c.tokens_per_char)


def script_costs(text: str, tokens: list[Token], scripts: list[str] | None = None) -> list[ScriptCost]:
    """Tokens per character for each script of ``text`` (in order of first appearance);
    ``scripts`` may pass ``char_scripts(text)`` when comparing several tokenizers."""
    scripts = char_scripts(text) if scripts is None else scripts
    if len(scripts) != len(text):
        raise ValueError("scripts must give one script per character of the text.")
    chars: dict[str, int] = {}
    spent: dict[str, float] = {}
    for script, cost in zip(scripts, char_costs(tokens, len(text))):
        chars[script] = chars.get(script, 0) + 1
        spent[script] = spent.get(script, 0.0) + cost
    return [ScriptCost(s, n, spent[s]) for s, n in chars.items()]
