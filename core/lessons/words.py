"""A station's words as the page shows them before the attendee answers: its text, its question,
its tool's button and directions, with the ``{facts}`` they quote filled from what ``core``
computes about the tool (``core.lessons.tool_facts``), so they say what the tool shows.

    >>> from core.lessons import load_path
    >>> station = load_path().station("02_first_merge")
    >>> words = station_words(station, station_facts(station))
    >>> "{" in words.do
    False
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .content import BEFORE_ANSWER, Station, quoted_facts, station_texts
from .tool_facts import TOOL_FACTS, tool_facts


@dataclass(frozen=True)
class Words:
    text: str
    ask: str
    label: str
    do: str


def quoted_tool_facts(station: Station, wheres: tuple[str, ...] | None = None) -> list[str]:
    """The tool facts the station's texts (those of ``wheres``; all by default) quote."""
    texts = station_texts(station)
    names = [n for where in (wheres or tuple(texts)) for n in quoted_facts(texts[where])]
    return list(dict.fromkeys(n for n in names if n in TOOL_FACTS))


def station_facts(station: Station, runs_dir=None) -> dict[str, str]:
    """The tool facts the station's words quote, computed (may raise ``LessonError``)."""
    return tool_facts(station.data(runs_dir), quoted_tool_facts(station))


def station_words(station: Station, facts: dict[str, str], escape: Callable[[str], str] = str) -> Words:
    """The words read before answering, each quoted fact passed through ``escape``."""
    texts = station_texts(station)
    filled = {where: texts[where].format_map({k: escape(v) for k, v in facts.items()})
              for where in BEFORE_ANSWER}
    return Words(filled["text"], filled["question.ask"], filled["tool.label"], filled["tool.do"])
