"""The computations of the three "why are language models weird" stations, each answered by
``core.insights`` as the Tokenizer questions page answers it: how many tokens a real tokenizer cuts
a word into (``spelling``), how it groups a number's digits (``numbers``), which way of writing
the same records costs it the fewest tokens (``formats``).

Their feedback names the tokens, drawn as the page draws them (``·`` between tokens, whitespace
made visible), so a wrong prediction is answered with what the model is actually given.

    >>> data = StationData(args={"word": "strawberry"})
    >>> answer = COMPUTATIONS["word_tokens"].run(data)
    >>> answer.value, answer.facts["tokens"], answer.facts["spaced"]
    (3, 'str · aw · berry', '␣strawberry')
"""

from __future__ import annotations

from ..bpe import BPETokenizer
from ..bpe.display import visible
from ..insights.cuts import Cut, cut
from ..insights.formats import FORMATS, SAMPLE_RECORDS, written
from ..insights.numbers import grouping, number_groupings, units_alone_share
from ..insights.spelling import letter_places, spelling
from ..insights.whitespace import whitespace_cost
from .computations import COMPUTATIONS, Answer, StationData, computation, format_number
from .errors import LessonError

COMPARE = "qwen3"  # the numbers station's second tokenizer: one digit per token, a contrast to GPT-4's
EXAMPLE_NUMBER = "2024"


def joined(found: Cut) -> str:
    """A cut's tokens as the Tokenizer questions page writes them: visible whitespace, ``·`` between."""
    return " · ".join(visible(t) for t in found.tokens)


def _tokenizer(data: StationData, name: str = "tokenizer") -> BPETokenizer:
    return BPETokenizer.from_pretrained(str(data.arg(name)))


# -- spelling ------------------------------------------------------------------------------------
@computation("number", ("tokens", "spaced", "capital", "upper", "reversed", "letters", "hidden",
                        "letter", "places"),
             {"tokenizer": str, "word": str, "letter": str}, needs=(), integer=True)
def word_tokens(data: StationData) -> Answer:
    """How many tokens ``args.tokenizer`` (GPT-4's by default) cuts ``args.word`` into, alone at
    the start of a text; its other forms and where ``args.letter`` (its most frequent letter by
    default) sits."""
    word = str(data.arg("word") or "")
    letters = sorted({c for c in word.lower() if c.isalpha()})
    letter = str(data.arg("letter") or min(letters, key=lambda c: -word.lower().count(c), default=""))
    tok = _tokenizer(data)
    try:
        found, places = spelling(tok, word), letter_places(tok, word, letter)
    except ValueError as exc:
        raise LessonError(f"args.word and args.letter: {exc}") from None
    return Answer(len(found.forms["word"].ids), {
        "tokens": joined(found.forms["word"]), "spaced": joined(found.forms[" word"]),
        "capital": joined(found.forms["Word"]), "upper": joined(found.forms["WORD"]),
        "reversed": joined(found.forms["reversed"]), "letters": format_number(len(word)),
        "hidden": format_number(found.letters_in_longer_tokens), "letter": letter,
        "places": " · ".join(f"{visible(t)}: {n}" for t, n in places)})


# -- numbers -------------------------------------------------------------------------------------
def _groups(tok: BPETokenizer, number: str) -> tuple[Cut, str]:
    found = cut(tok, number)
    return found, "-".join(map(str, grouping(tok, found, number)))


@computation("choice", ("tokens", "spaced", "example", "example_tokens", "upto", "units_alone",
                        "compare_tokens"),
             {"tokenizer": str, "number": str, "example": str, "compare": str}, needs=())
def digit_groups(data: StationData) -> Answer:
    """How ``args.tokenizer`` (GPT-4's by default) groups the digits of ``args.number``, as digits
    per token (``3-3-2``), and ``args.example``'s; how often the units digit of an integer up to
    four digits is a token of its own; ``args.number`` cut by ``args.compare``."""
    number, example = str(data.arg("number") or ""), str(data.arg("example") or EXAMPLE_NUMBER)
    if not (number.isascii() and number.isdigit() and example.isascii() and example.isdigit()):
        raise LessonError("args.number and args.example are numbers written with the digits 0-9.")
    tok, compare = _tokenizer(data), BPETokenizer.from_pretrained(str(data.arg("compare") or COMPARE))
    found, groups = _groups(tok, number)
    every = number_groupings(tok)
    return Answer(groups, {
        "tokens": joined(found), "spaced": joined(cut(tok, " " + number)), "example": example,
        "example_tokens": joined(cut(tok, example)), "upto": format_number(every.upto),
        "units_alone": f"{units_alone_share(every.groupings):.0%}",
        "compare_tokens": joined(cut(compare, number))})


# -- formats -------------------------------------------------------------------------------------
FORMAT_FACTS = tuple(f"{fmt}_{what}" for fmt in FORMATS for what in ("tokens", "whitespace", "record"))


@computation("choice", ("table", "records", "tokens", *FORMAT_FACTS),
             {"tokenizer": str, "formats": list}, needs=())
def cheapest_format(data: StationData) -> Answer:
    """Which of ``args.formats`` costs ``args.tokenizer`` (GPT-4's by default) the fewest tokens
    for the built-in sample of records (``core.insights.formats.SAMPLE_RECORDS``), every format's
    cost (named as the page's chart names it: ``json_compact``), and one record in each, cut."""
    tok = _tokenizer(data)
    asked = [str(f) for f in data.arg("formats") or []]
    if len(asked) < 2 or not set(asked) <= set(FORMATS):
        raise LessonError(f"args.formats must be at least two of {', '.join(FORMATS)}.")
    costs = {fmt: whitespace_cost(tok, written(SAMPLE_RECORDS, fmt)) for fmt in FORMATS}
    best = min(asked, key=lambda fmt: costs[fmt].tokens)
    ranked = sorted(FORMATS, key=lambda fmt: costs[fmt].tokens)
    facts = {"table": ", ".join(f"{fmt} {costs[fmt].tokens:,}" for fmt in ranked),
             "records": format_number(len(SAMPLE_RECORDS)), "tokens": format_number(costs[best].tokens)}
    for fmt, cost in costs.items():
        facts[f"{fmt}_tokens"] = format_number(cost.tokens)
        facts[f"{fmt}_whitespace"] = format_number(cost.whitespace_tokens)
        facts[f"{fmt}_record"] = joined(cut(tok, written(SAMPLE_RECORDS[:1], fmt)))
    return Answer(best, facts)


__all__ = ["COMPUTATIONS", "cheapest_format", "digit_groups", "word_tokens"]
