"""How each BPE variant cuts text into *chunks*: the spans that no merge may cross.

- ``char``: the whole text is one chunk (seed 002: merges cross word boundaries freely).
- ``word``: whitespace-separated words, each followed by an end-of-word marker (seeds 000/003).
- ``byte``: UTF-8 bytes, optionally pre-split by a regex (GPT-2, GPT-4 or the user's own), with
  special tokens such as ``<|endoftext|>`` cut out first so they are never split (seed 004).

This module knows nothing about merges; it only says where chunks start and end, in characters
(which variant uses which cut is ``core.bpe.variants``).  The built-in and pretrained patterns
are also cut by compiled scanners (``core.bpe.split.known_patterns``), for long texts; ``regex``
here is what those are tested against, and what cuts every other pattern.

A split pattern typed by a user may backtrack for ever (``(a+)+$`` on "aaaa...ab"), so every
pattern that is not one of the built-in ones runs with a timeout (:func:`regex_timeout`) and a
slow one raises :class:`PatternTimeoutError` instead of holding a server thread.  The GPT-2 and
GPT-4 patterns run without one: they match in linear time, and the ``regex`` module's timeout
check makes matching several times slower with ``findall``.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterator, Sequence

import regex

# The split patterns of GPT-2 and of GPT-4's cl100k_base, as published with tiktoken.
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
GPT4_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*"""
    r"""|\s*[\r\n]|\s+(?!\S)|\s+"""
)
NAMED_PATTERNS = {"gpt2": GPT2_PATTERN, "gpt4": GPT4_PATTERN}
# The pretrained vocabularies' patterns (``core.bpe.pretrained``): tiktoken's current cl100k_base
# (possessive, ``\s++$``), o200k_base (case-aware words, contractions kept), Llama 3 and Qwen 3.
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
O200K_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])
LLAMA3_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
QWEN3_PATTERN = LLAMA3_PATTERN.replace(r"\p{N}{1,3}", r"\p{N}")  # Qwen: numbers as single digits

_WORD = regex.compile(r"[^\s\x1c-\x1f]+")  # str.split(): \s plus the separators \x1c-\x1f
_BUILT_IN = frozenset(NAMED_PATTERNS.values())

# Seconds a custom pattern may take per started million characters of text: 2 s for anything up
# to 1 MB, 20 s for 10 MB (many times what GPT-2's pattern needs).  Change with
# ``set_regex_timeout`` (the app passes ``ServerSettings.regex_timeout_s``), or per call.
REGEX_TIMEOUT_S = 2.0
MAX_PATTERN_CHARS = 10_000


class PatternError(ValueError):
    """A split pattern that is not a usable regular expression."""


class PatternTimeoutError(ValueError):
    """A split pattern that took longer than its timeout (it backtracks too much)."""

    def __init__(self, pattern: str, seconds: float, characters: int) -> None:
        shown = pattern if len(pattern) <= 60 else pattern[:57] + "..."
        super().__init__(
            f"The split pattern {shown!r} was stopped after {seconds:g} s on {characters:,} "
            f"characters: it backtracks too much (nested repeats such as (a+)+ are the usual "
            f"cause). Simplify it, or use the GPT-2 or GPT-4 pattern.")


def set_regex_timeout(seconds: float) -> None:
    """Set the default time budget of custom patterns (seconds per started million characters)."""
    global REGEX_TIMEOUT_S
    REGEX_TIMEOUT_S = _check_timeout(seconds)


def _check_timeout(seconds) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
        raise ValueError(f"The regex timeout must be a positive number of seconds, not {seconds!r}.")
    return float(seconds)


def regex_timeout(characters: int, timeout: float | None = None) -> float:
    """Seconds a custom pattern gets on ``characters`` of text: ``timeout`` (default
    ``REGEX_TIMEOUT_S``) per started million characters, so long texts are not refused for
    being long."""
    per_million = REGEX_TIMEOUT_S if timeout is None else _check_timeout(timeout)
    return per_million * max(1, -(-characters // 1_000_000))


class RegexClock:
    """One time budget for every match over one text.  The ``regex`` module times each call on
    its own, so a walk of many matches, or many chunks, is bounded here; pass the same clock to
    each call over pieces of one text."""

    def __init__(self, characters: int, timeout: float | None = None) -> None:
        self.characters = characters
        self.seconds = regex_timeout(characters, timeout)
        self.deadline = time.monotonic() + self.seconds

    def left(self, pattern: str) -> float:
        """Seconds left, or :class:`PatternTimeoutError` when none are."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise PatternTimeoutError(pattern, self.seconds, self.characters)
        return remaining


def _clock(characters: int, timeout: float | RegexClock | None) -> RegexClock:
    return timeout if isinstance(timeout, RegexClock) else RegexClock(characters, timeout)


def resolve_pattern(pattern: str | None) -> str | None:
    """Turn ``None``/``"gpt2"``/``"gpt4"``/a regex into the regex itself, checking it compiles."""
    if pattern is None or pattern == "":
        return None
    if not isinstance(pattern, str):
        raise PatternError(f"The split pattern must be text (a regular expression), not "
                           f"{type(pattern).__name__}.")
    return check_pattern(NAMED_PATTERNS.get(pattern, pattern))


def check_pattern(pattern: str | None) -> str | None:
    """``pattern`` itself if it is ``None`` or a regex that compiles, else :class:`PatternError`."""
    if pattern is None:
        return None
    if not isinstance(pattern, str):
        raise PatternError(f"The split pattern must be text, not {type(pattern).__name__}.")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"The split pattern is {len(pattern):,} characters long; the limit is "
                           f"{MAX_PATTERN_CHARS:,}.")
    try:
        _compiled(pattern)
    except regex.error as exc:
        raise PatternError(f"The split pattern is not a valid regular expression: {exc}") from None
    return pattern


def word_spans(text: str) -> Iterator[tuple[int, int]]:
    """Character spans of the whitespace-separated words (what ``str.split()`` returns)."""
    for match in _WORD.finditer(text):
        yield match.span()


_SPACE = re.compile(r"\s")  # the standard library's \s is str.isspace(), where str.split() cuts


def word_counts(text: str, block: int = 1 << 20) -> Counter:
    """``Counter(text.split())`` (first appearance first), split a block at a time, each block
    cut at whitespace: the list of every word of a large corpus (~8 bytes of it per byte of
    text) never exists at once, only the distinct words."""
    counts: Counter = Counter()
    start = 0
    while start < len(text):
        found = _SPACE.search(text, start + block) if start + block < len(text) else None
        end = found.start() if found else len(text)
        counts.update(text[start:end].split())
        start = end
    return counts


def regex_spans(text: str, pattern: str | None, start: int = 0, end: int | None = None,
                timeout: float | RegexClock | None = None):
    """Spans of the regex pre-split of ``text[start:end]``; one span when there is no pattern.
    A custom pattern gets ``regex_timeout(end - start, timeout)`` seconds for the whole walk
    (or what is left of a shared :class:`RegexClock`)."""
    end = len(text) if end is None else end
    if start >= end:
        return
    if pattern is None:
        yield start, end
        return
    position = start
    for match in _finditer(pattern, text, start, end, timeout):
        s, e = match.span()
        if s > position:  # a pattern that skips characters must not lose them
            yield position, s
        if e > s:
            yield s, e
        position = e
    if position < end:
        yield position, end


def regex_pieces(text: str, pattern: str | None, timeout: float | RegexClock | None = None) -> list[str]:
    """The pieces of the regex pre-split as strings: ``findall`` when it provably covers the whole
    text (the fast path for encoding a corpus), the span walk otherwise."""
    if pattern is None:
        return [text] if text else []
    compiled = _compiled(pattern)
    if compiled.groups == 0:
        if pattern in _BUILT_IN:
            pieces = compiled.findall(text)
        else:
            clock = timeout = _clock(len(text), timeout)
            try:
                pieces = compiled.findall(text, timeout=clock.left(pattern))
            except TimeoutError:
                raise PatternTimeoutError(pattern, clock.seconds, clock.characters) from None
        if sum(map(len, pieces)) == len(text):
            return pieces
    return [text[s:e] for s, e in regex_spans(text, pattern, timeout=timeout)]


def _finditer(pattern: str, text: str, start: int, end: int, timeout: float | RegexClock | None):
    """``finditer`` over ``text[start:end]``; a custom pattern must finish the whole walk within
    its clock's budget."""
    compiled = _compiled(pattern)
    if pattern in _BUILT_IN:
        yield from compiled.finditer(text, start, end)
        return
    clock = _clock(end - start, timeout)
    matches = compiled.finditer(text, start, end, timeout=clock.left(pattern))
    while True:
        try:
            match = next(matches)
        except StopIteration:
            return
        except TimeoutError:
            raise PatternTimeoutError(pattern, clock.seconds, clock.characters) from None
        yield match
        clock.left(pattern)


_PATTERN_CACHE: dict[str, regex.Pattern] = {}


def _compiled(pattern: str) -> regex.Pattern:
    compiled = _PATTERN_CACHE.get(pattern)
    if compiled is None:
        compiled = _PATTERN_CACHE[pattern] = regex.compile(pattern)
    return compiled


def special_split(text: str, special_tokens: Sequence[str], timeout: float | RegexClock | None = None
                  ) -> Iterator[tuple[int, int, str | None]]:
    """Split around special tokens: yields ``(start, end, special_or_None)`` in text order.
    The tokens are matched as escaped literals, under the same timeout as a custom pattern."""
    if not special_tokens:
        if text:
            yield 0, len(text), None
        return
    # Longest first, so that "<|a|><|b|>" style overlaps pick the longer token.
    alternation = "|".join(regex.escape(s) for s in sorted(special_tokens, key=len, reverse=True))
    position = 0
    for match in _finditer(f"({alternation})", text, 0, len(text), timeout):
        s, e = match.span()
        if s > position:
            yield position, s, None
        yield s, e, match.group(0)
        position = e
    if position < len(text):
        yield position, len(text), None


def byte_chunks(text: str, pattern: str | None, special_tokens: Sequence[str] = (),
                timeout: float | RegexClock | None = None):
    """Chunks of the byte variant: ``(start, end, special_or_None)`` character spans; one
    clock bounds the pattern's time over the whole text."""
    timeout = _clock(len(text), timeout)
    for s, e, special in special_split(text, special_tokens, timeout):
        if special is not None:
            yield s, e, special
        else:
            for cs, ce in regex_spans(text, pattern, s, e, timeout):
                yield cs, ce, None
