"""Checking an attendee's prediction: the answer ``core`` computes for a station, whether the
prediction matches it, the feedback that says why, and the record in their progress.

    >>> from core.lessons import load_path
    >>> station = load_path().station("02_first_merge")
    >>> answer = compute_answer(station)
    >>> is_right(station, read_given(station, "l + o"), answer)
    True

A choice is right when it is the computed value; a number when it is within the question's
``tolerance`` of it (relative; 0: exactly).  Feedback is the station's ``why`` (shown with a right
answer, or when the attendee asks to see it) or, after a wrong one, its ``hint`` (a number also
hears whether the answer is higher or lower), each with ``{facts}`` filled from the computation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from .computations import Answer, format_number
from .content import Station
from .errors import LessonError
from .progress import ProgressStore, StationProgress
from .tool_facts import tool_facts
from .words import quoted_tool_facts

MAX_NUMBER = 1e12


@dataclass(frozen=True)
class Given:
    """A prediction as recorded (a choice's value, or a number written as :func:`format_number`
    does) and, for a number, its value."""

    text: str
    number: float | None = None


@dataclass(frozen=True)
class Verdict:
    given: Given
    right: bool
    answer: Answer
    feedback: str
    progress: StationProgress


def compute_answer(station: Station, runs_dir=None) -> Answer:
    """What ``core`` computes for the station's question on its data (may raise
    :class:`~core.lessons.errors.AnswerNotReady` for the room's runs, or ``LessonError``).  Its
    facts include the tool's facts that ``why`` and ``hint`` quote."""
    data = station.data(runs_dir)
    answer = station.question.computation.run(data)
    quoted = quoted_tool_facts(station, ("question.why", "question.hint"))
    wanted = [n for n in quoted if n not in answer.facts]
    return Answer(answer.value, {**tool_facts(data, wanted), **answer.facts}) if wanted else answer


def read_given(station: Station, raw) -> Given:
    """An attendee's prediction, checked: one of the choices, or a finite number."""
    q = station.question
    if q.computation.kind == "choice":
        if not isinstance(raw, str) or raw not in q.choices:
            raise LessonError("Pick one of the choices.")
        return Given(raw)
    try:
        number = float(raw.strip() if isinstance(raw, str) else raw)
    except (TypeError, ValueError):
        raise LessonError("Give a number, such as 2.5.") from None
    if not math.isfinite(number) or abs(number) > MAX_NUMBER:
        raise LessonError("Give a number between -10¹² and 10¹².")
    return Given(format_number(number), number)


def is_right(station: Station, given: Given, answer: Answer) -> bool:
    if given.number is None:
        return given.text == answer.value
    target = float(answer.value)
    return abs(given.number - target) <= station.question.tolerance * abs(target) + 1e-9 * max(1, abs(target))


def fill(template: str, station: Station, answer: Answer, escape: Callable[[str], str] = str) -> str:
    """``template`` with ``{answer}`` (a choice's label) and the computation's facts filled in,
    each passed through ``escape`` (the page escapes Markdown; the template's own is kept)."""
    shown = station.question.choices.get(answer.shown, answer.shown)
    facts = {**answer.facts, "answer": shown}
    return template.format_map({name: escape(value) for name, value in facts.items()})


def explanation(station: Station, answer: Answer, escape: Callable[[str], str] = str) -> str:
    """Why the answer is what it is: the station's ``why``, filled."""
    return fill(station.question.why, station, answer, escape)


def hint(station: Station, answer: Answer, given: Given, escape: Callable[[str], str] = str) -> str:
    """What a wrong prediction hears: whether the answer is higher or lower (a number), then the
    station's hint."""
    parts, q = [], station.question
    direction = _direction(given, answer)
    if given.number is not None:
        parts.append(f"The answer is {direction}.")
    said = q.hints.get(direction) or q.hint
    if said:
        parts.append(fill(said, station, answer, escape))
    return " ".join(parts)


def _direction(given: Given, answer: Answer) -> str | None:
    """Where the answer lies from a wrong prediction, when both are numbers (a choice may be one)."""
    try:
        mine = given.number if given.number is not None else float(given.text)
        return "lower" if mine > float(answer.value) else "higher"
    except ValueError:
        return None


def answer_station(store: ProgressStore, owner: str, station: Station, raw, answer: Answer | None = None,
                   runs_dir=None, escape: Callable[[str], str] = str) -> Verdict:
    """Check ``raw`` against the station's computed answer (``answer`` when the caller has it
    already), record it in ``owner``'s progress, and say why (or give the hint)."""
    given = read_given(station, raw)
    answer = answer if answer is not None else compute_answer(station, runs_dir)
    right = is_right(station, given, answer)
    progress = store.record_answer(owner, station.id, given.text, right)
    text = explanation(station, answer, escape) if right else hint(station, answer, given, escape)
    return Verdict(given, right, answer, text, progress)
