"""How each BPE variant cuts text into *chunks*: the spans that no merge may cross.

- ``char``: the whole text is one chunk (seed 002: merges cross word boundaries freely).
- ``word``: whitespace-separated words, each followed by an end-of-word marker (seeds 000/003).
- ``byte``: UTF-8 bytes, optionally pre-split by a regex (GPT-2, GPT-4 or the user's own), with
  special tokens such as ``<|endoftext|>`` cut out first so they are never split (seed 004).

This module knows nothing about merges; it only says where chunks start and end, in characters.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import regex

VARIANTS = ("char", "word", "byte")

# The split patterns of GPT-2 and of GPT-4's cl100k_base, as published with tiktoken.
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
GPT4_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*"""
    r"""|\s*[\r\n]|\s+(?!\S)|\s+"""
)
NAMED_PATTERNS = {"gpt2": GPT2_PATTERN, "gpt4": GPT4_PATTERN}

_WORD = regex.compile(r"\S+")


def resolve_pattern(pattern: str | None) -> str | None:
    """Turn ``None``/``"gpt2"``/``"gpt4"``/a regex into the regex itself, checking it compiles."""
    if pattern is None or pattern == "":
        return None
    source = NAMED_PATTERNS.get(pattern, pattern)
    try:
        regex.compile(source)
    except regex.error as exc:
        raise ValueError(f"The split pattern is not a valid regular expression: {exc}") from None
    return source


def check_variant(variant: str) -> str:
    if variant not in VARIANTS:
        raise ValueError(f"Unknown BPE variant {variant!r}: choose one of {', '.join(VARIANTS)}.")
    return variant


def word_spans(text: str) -> Iterator[tuple[int, int]]:
    """Character spans of the whitespace-separated words (what ``str.split()`` returns)."""
    for match in _WORD.finditer(text):
        yield match.span()


def regex_spans(text: str, pattern: str | None, start: int = 0, end: int | None = None):
    """Spans of the regex pre-split of ``text[start:end]``; one span when there is no pattern."""
    end = len(text) if end is None else end
    if start >= end:
        return
    if pattern is None:
        yield start, end
        return
    compiled = _compiled(pattern)
    position = start
    for match in compiled.finditer(text, start, end):
        s, e = match.span()
        if s > position:  # a pattern that skips characters must not lose them
            yield position, s
        if e > s:
            yield s, e
        position = e
    if position < end:
        yield position, end


def regex_pieces(text: str, pattern: str | None) -> list[str]:
    """The pieces of the regex pre-split as strings: ``findall`` when it provably covers the whole
    text (the fast path for encoding a corpus), the span walk otherwise."""
    if pattern is None:
        return [text] if text else []
    compiled = _compiled(pattern)
    if compiled.groups == 0:
        pieces = compiled.findall(text)
        if sum(map(len, pieces)) == len(text):
            return pieces
    return [text[s:e] for s, e in regex_spans(text, pattern)]


_PATTERN_CACHE: dict[str, regex.Pattern] = {}


def _compiled(pattern: str) -> regex.Pattern:
    compiled = _PATTERN_CACHE.get(pattern)
    if compiled is None:
        compiled = _PATTERN_CACHE[pattern] = regex.compile(pattern)
    return compiled


def special_split(text: str, special_tokens: Sequence[str]) -> Iterator[tuple[int, int, str | None]]:
    """Split around special tokens: yields ``(start, end, special_or_None)`` in text order."""
    if not special_tokens:
        if text:
            yield 0, len(text), None
        return
    # Longest first, so that "<|a|><|b|>" style overlaps pick the longer token.
    alternation = "|".join(regex.escape(s) for s in sorted(special_tokens, key=len, reverse=True))
    position = 0
    for match in _compiled(f"({alternation})").finditer(text):
        s, e = match.span()
        if s > position:
            yield position, s, None
        yield s, e, match.group(0)
        position = e
    if position < len(text):
        yield position, len(text), None


def byte_chunks(text: str, pattern: str | None, special_tokens: Sequence[str] = ()):
    """Chunks of the byte variant: ``(start, end, special_or_None)`` character spans."""
    for s, e, special in special_split(text, special_tokens):
        if special is not None:
            yield s, e, special
        else:
            for cs, ce in regex_spans(text, pattern, s, e):
                yield cs, ce, None
