"""What a station says, checked against what its tool states and shows: the kinds of contradiction
an attendee walking the path met, each a rule of ``python -m core.lessons check``
(``core.lessons.claims`` holds the rules about typed figures and steps).

- **answer and tool**: the answer a station computes is the one its tool's own words state (the
  script station's answer against Compare tokenizers' ranking caption);
- **unseen characters**: words saying a character the tokenizer never saw is one token, for a tool
  whose tokenizer reads bytes (it costs that character's UTF-8 bytes);
- **terms**: a term the feedback uses (a language's *premium*) is defined in the station's text;
- **hints**: ordered choices with wrong ones on both sides of the answer get a hint for each side
  (``hint = { lower = "...", higher = "..." }``), never one hint that argues for one side;
- **the tool's corpus**: a Tokenizer questions tool opens on a corpus on which the page's first
  curve reaches the size it asks (a 56-character sample stops far short of it);
- **plain text**: a message shown as plain text (a live answer not ready yet) has no Markdown, and
  every figure of four digits or more in what a station shows has its thousands separators.

    >>> unseen_problems("Yours counts a character it never saw as one token.", "byte")
    ['says a character never seen is one token, but a byte-level tokenizer reads it as its UTF-8 bytes']
"""

from __future__ import annotations

import re

from .content import Station, station_texts
from .errors import LessonError

UNSEEN_ONE_TOKEN = re.compile(r"never (?:saw|seen|had)\b[^.]*?\bone token", re.I)
TERMS = {"premium": re.compile(r"\*?premium\*?,?\s+(?:their|its|a language's)\s+tokens\s+over", re.I)}
MARKUP = re.compile(r"\*\*?[^*\s][^*]*\*|`[^`]+`|(?<!\w)_[^_\s][^_]*_(?!\w)")
BARE_FIGURE = re.compile(r"(?<![\w.,\-{])\d{4,}(?![\w,.]\d|\})")
ANSWER_STATED = {"costliest_script": "tool_costliest_script"}  # computation -> the tool fact stating it


def answer_problems(station: Station, value: str, facts: dict[str, str]) -> list[str]:
    """The computed answer against what the tool's words state of the same data."""
    fact = ANSWER_STATED.get(station.question.compute)
    stated = facts.get(fact) if fact else None
    if stated is None or stated == value:
        return []
    return [f"{station.file}: core answers {value!r}, but the tool ({station.tool.page}) states {stated!r} "
            f"({{{fact}}}): the question's args and the tool must rank the same things."]


def unseen_problems(words: str, variant: str) -> list[str]:
    """A claim that an unseen character is one token, where the tokenizer reads bytes."""
    if variant == "byte" and UNSEEN_ONE_TOKEN.search(words):
        return ["says a character never seen is one token, but a byte-level tokenizer reads it as its "
                "UTF-8 bytes"]
    return []


def word_problems(station: Station) -> list[str]:
    """Unseen-character claims against the tool's variant, and terms used but never defined."""
    texts = station_texts(station)
    variant = station.tool.params.get("variant", "char")
    problems = [f"{station.file}: {where} {p}" for where, words in texts.items()
                for p in unseen_problems(words, variant)]
    for term, definition in TERMS.items():
        used = [where for where, words in texts.items() if re.search(rf"\b{term}", words, re.I)]
        if used and not definition.search(station.text):
            problems.append(f"{station.file}: {', '.join(used)} use {term!r}, which the station's text "
                            f"never defines (say what it is there, e.g. \"a *{term}*, its tokens over "
                            f"English's\").")
    return problems


def hint_problems(station: Station) -> list[str]:
    """One hint for wrong answers on both sides of an ordered question's answer."""
    q = station.question
    try:
        values = [float(v) for v in q.choices]
    except ValueError:
        return []
    if len(values) < 3 or q.hints:
        return []
    return [f"{station.file}: question.hint is one text for wrong answers below and above the answer "
            f"(the choices are ordered): give hint = {{ lower = \"...\", higher = \"...\" }}, each "
            f"pointing the way the answer lies."]


def corpus_problems(station: Station, facts: dict[str, str]) -> list[str]:
    """The tool's corpus too small for the first curve Tokenizer questions draws."""
    from ..insights.vocab_curve import CURVE_TOP

    reached = facts.get("curve_top_reached")
    if reached is None or int(reached.replace(",", "")) >= CURVE_TOP:
        return []
    corpus = station.tool.params.get("corpus", "the attendee's corpus (a new attendee's sample)")
    return [f"{station.file}: on {corpus}, the tool's vocabulary curve stops at {reached} tokens of the "
            f"{CURVE_TOP:,} the page asks: set tool.params.corpus to a longer text."]


def plain_text_problems(where: str, text: str, markdown: bool) -> list[str]:
    """Markdown in a text shown as plain text, and figures without thousands separators."""
    problems = []
    if not markdown and (found := MARKUP.search(text)):
        problems.append(f"{where} is shown as plain text but has Markdown ({found.group(0)!r}).")
    problems += [f"{where} writes {m.group(0)} without thousands separators."
                 for m in BARE_FIGURE.finditer(text) if not 1900 <= int(m.group(0)) <= 2100]  # a year: as is
    return problems


def not_ready_problems(station: Station, exc: LessonError) -> list[str]:
    """A live answer's message while it is not ready (shown as plain text)."""
    return plain_text_problems(f"{station.file}: the message while its answer is not ready", str(exc),
                               markdown=False)
