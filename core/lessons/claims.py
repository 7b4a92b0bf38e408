"""What a station's words claim, checked against what its tool computes: ``python -m core.lessons
check`` refuses a station that says what its tool does not show.

- **settings**: the merges the tool asks for are the merges it learns (a corpus whose pairs run
  out learns fewer, and the tool says so: a station asking about "10 new merges" would be wrong);
- **typed figures**: a figure the tool computes (a number of merges, characters per token, how
  many presses of Next, the number of stations), or any figure equal to one of the station's
  facts, is quoted as its ``{fact}``, never typed, so it follows the tool when the data changes;
- **steps**: words that send the attendee through Learn BPE's steps (**Next ▶**, **◀ Previous**)
  quote the step facts, which step highlights what (``core.bpe.explain``'s rule, the one the step
  view applies), rather than say it themselves.

Each rule names the file, where in it, what it says and what the tool computes.

    >>> literal_claims("Press **Next ▶** once: the pair lights up.")
    [('how many presses of Next or Previous', 'Next ▶** once')]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .content import Station, quoted_facts, station_texts
from .tool_facts import STEP_PAGES, fact_names

NUMBER = (r"(?<![\w.\-])(?:\d[\d,]*(?:\.\d+)?|two|three|four|five|six|seven|eight|nine|ten|eleven|"
          r"twelve)(?![\w\-])")


@dataclass(frozen=True)
class Claim:
    what: str                 # what the typed figure says, as the message names it
    pattern: re.Pattern
    facts: tuple[str, ...]    # the facts that say it instead


CLAIMS = (
    Claim("a number of merges", re.compile(rf"{NUMBER}\s+(?:new\s+|more\s+)?merges?\b", re.I),
          ("merges_asked", "merges_learned", "opens_at", "first_pair_step", "first_token_step")),
    Claim("how many presses of Next or Previous",
          re.compile(rf"\b(?:Next|Previous)\b\W{{0,6}}(?:once|twice|{NUMBER}\s+times)\b", re.I),
          ("first_pair_step", "first_token_step", "highlighted_next")),
    Claim("characters per token", re.compile(rf"{NUMBER}\s+(?:characters|chars)\s+per\s+token", re.I),
          ("corpus_chars_per_token",)),
    Claim("the number of stations", re.compile(rf"{NUMBER}\s+(?:short\s+)?stations\b", re.I), ("stations",)),
)
STEP_FACTS = ("opens_at", "first_pair_step", "first_token_step", "highlighted_next")
STEP_BUTTONS = re.compile(r"Next\s*▶|◀\s*Previous")
DIGITS = re.compile(r"(?<![\w.\-{])\d[\d,]*(?:\.\d+)?(?![\w\-}])")


def literal_claims(template: str) -> list[tuple[str, str]]:
    """(what, the words) for each figure ``template`` types where a fact should be quoted."""
    return [(c.what, m.group(0)) for c in CLAIMS for m in c.pattern.finditer(template)]


def _claimed(template: str) -> set[int]:
    return {i for c in CLAIMS for m in c.pattern.finditer(template) for i in range(*m.span())}


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def settings_problems(station: Station, facts: dict[str, str]) -> list[str]:
    """The tool set to more merges than it learns on its corpus."""
    asked, learned = facts.get("merges_asked"), facts.get("merges_learned")
    if asked is None or learned is None or _number(learned) >= _number(asked):
        return []
    return [f"{station.file}: tool.params.merges asks for {asked} merges, but on "
            f"{station.tool.params.get('corpus')} the tool learns only {learned} (its pairs run out, and "
            f"the tool says so): set merges to {learned} or fewer, or use a longer corpus."]


def text_problems(station: Station, facts: dict[str, str]) -> list[str]:
    """Typed figures and step words in the station's texts (``facts``: every fact core could
    compute for it, the tool's and the answer's)."""
    problems = []
    steps = station.tool.page in STEP_PAGES
    for where, template in station_texts(station).items():
        said = f"{station.file}: {where}"
        problems += [f"{said} types {what} ({words!r}); {_instead(station, what, facts)}"
                     for what, words in literal_claims(template)]
        problems += [f"{said} types {m.group(0)}, which core computes as {{{name}}}: quote it instead."
                     for m in DIGITS.finditer(template)
                     if m.start() not in _claimed(template) and (name := _equal_fact(m.group(0), facts))]
        if steps and STEP_BUTTONS.search(template) and not set(quoted_facts(template)) & set(STEP_FACTS):
            problems.append(f"{said} sends the attendee through Learn BPE's steps without saying which step "
                            f"shows what: quote {', '.join('{' + f + '}' for f in STEP_FACTS)} "
                            "(core.bpe.explain's rule: step k highlights the pair of merge k + 1).")
    return problems


def _instead(station: Station, what: str, facts: dict[str, str]) -> str:
    claim = next(c for c in CLAIMS if c.what == what)
    names = [f for f in claim.facts if f in facts or f in fact_names(station.tool.page, station.tool.params)]
    if not names:
        return "the tool does not compute it here: leave the figure out."
    shown = ", ".join(f"{{{n}}}" + (f" = {facts[n]}" if n in facts else "") for n in names)
    return f"the tool computes it: quote {' or '.join('{' + n + '}' for n in names)} ({shown})."


def _equal_fact(literal: str, facts: dict[str, str]) -> str | None:
    """The fact a typed figure equals: figures of two digits or more, or with decimals (a small
    count such as "2 bytes" is too common to be a fact's by chance)."""
    value = _number(literal)
    if value is None or (value < 10 and "." not in literal):
        return None
    return next((name for name, fact in facts.items() if _number(fact) == value), None)
