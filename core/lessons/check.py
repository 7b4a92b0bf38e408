"""``python -m core.lessons check``: what a teacher runs before a workshop.  Every station file is
read and checked, its answer computed by ``core`` on its data and its feedback filled, and its
words checked against what its tool computes and states (``core.lessons.claims``,
``core.lessons.agreement``); the report lists each
station with its words and answer, and any problem makes it fail.

A live answer (the room's GPT runs) that is not ready yet is reported, not a failure: the runs are
trained during the workshop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..corpus import CorpusError
from .computations import COMPUTATIONS
from .agreement import (answer_problems, corpus_problems, hint_problems, not_ready_problems,
                        plain_text_problems, word_problems)
from .claims import literal_claims, settings_problems, text_problems
from .content import PATH_FILE, LessonPath, Station, default_lessons_dir, load_path, shown_path
from .errors import AnswerNotReady, LessonError, StationFileError
from .tool_facts import TOOL_FACTS, fact_names, tool_facts
from .verdict import compute_answer, explanation
from .words import quoted_tool_facts, station_words


@dataclass
class Report:
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def text(self) -> str:
        tail = ([f"{len(self.problems)} problem(s):", *(f"  {p}" for p in self.problems)] if self.problems
                else ["No problems."])
        return "\n".join([*self.lines, "", *tail])


def check_station(station: Station, runs_dir=None) -> tuple[list[str], list[str]]:
    """The report's lines for one station, and its problems (none when it is fine): its answer
    computed, and its words checked against its tool (``core.lessons.claims``)."""
    q = station.question
    lines = [station.file, f"  Station {station.number} · {station.title}  [{q.compute}]"]
    facts, unknown = _tool_facts(station, runs_dir)
    if unknown:
        return lines, unknown
    lines += _tool_lines(station, facts)
    settings = (settings_problems(station, facts) + corpus_problems(station, facts) + word_problems(station)
                + hint_problems(station))
    try:
        answer = compute_answer(station, runs_dir)
    except AnswerNotReady as exc:
        return ([*lines, f"  answer: not yet: {exc}"],
                settings + text_problems(station, facts) + not_ready_problems(station, exc))
    except (LessonError, CorpusError, OSError, ImportError) as exc:
        return lines, [f"{station.file}: {q.compute} could not compute the answer: {exc}"]
    lines.append(f"  answer: {answer.shown}" + (f"  (choices: {', '.join(q.choices)})" if q.choices else
                                                  f"  {q.unit}, ± {q.tolerance:.0%} accepted"))
    why = explanation(station, answer)
    problems = (settings + text_problems(station, {**facts, **answer.facts})
                + answer_problems(station, answer.value, facts)
                + plain_text_problems(f"{station.file}: question.why, filled,", why, markdown=True))
    if q.choices and answer.value not in q.choices:
        problems.append(f"{station.file}: question.choices: core computes {answer.shown!r}, which is not "
                        f"one of the choices; add it (as the value) or change the data.")
    return [*lines, f"  why:    {_one_line(why)}"], problems


def _tool_facts(station: Station, runs_dir) -> tuple[dict[str, str], list[str]]:
    """Every fact core can compute about the station's tool, and a problem for each its words
    quote that cannot be computed (the others are only compared with its typed figures)."""
    data, quoted = station.data(runs_dir), quoted_tool_facts(station)
    facts, problems = {}, []
    for name in fact_names(station.tool.page, station.tool.params):
        try:
            facts.update(tool_facts(data, [name]))
        except (LessonError, CorpusError, OSError) as exc:
            if name in quoted:
                problems.append(f"{station.file}: {{{name}}} could not be computed: {exc}")
    return facts, problems


def _tool_lines(station: Station, facts: dict[str, str]) -> list[str]:
    words = station_words(station, facts)
    quoted = quoted_tool_facts(station)
    return [f"  text:   {_one_line(words.text)}", f"  asks:   {_one_line(words.ask)}",
            f"  do:     {_one_line(words.do)}",
            *([f"  tool:   {', '.join(f'{n} = {facts[n]}' for n in quoted)}"] if quoted else [])]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def check_path(folder=None, runs_dir=None, path: LessonPath | None = None) -> Report:
    path = path or load_path(folder)
    report = Report(problems=[str(p) for p in path.problems])
    where = shown_path(Path(folder or default_lessons_dir()) / PATH_FILE)
    report.problems += [f"{where}: intro types {what} ({words!r}); quote {{stations}} instead."
                        for what, words in literal_claims(path.intro_template)]
    report.lines.append(f"{path.title}: {len(path.stations)} station(s)")
    for station in path.stations:
        lines, problems = check_station(station, runs_dir)
        report.lines += ["", *lines]
        report.problems += problems
    return report


def computations_text() -> str:
    """The registry, as the teacher choosing ``compute =`` needs it."""
    out = []
    for c in COMPUTATIONS.values():
        out += [f"{c.name} ({c.kind}{', live' if c.live else ''}): {c.summary}",
                f"  args: {', '.join(c.args) or '-'}; tool params read: {', '.join(c.needs) or '-'}",
                f"  facts: {', '.join('{' + f + '}' for f in c.fields)}"]
    out += ["", "The tool's facts (text, ask, label and do may quote these; why and hint too):"]
    for f in TOOL_FACTS.values():
        where = f"; pages: {', '.join(f.pages)}" if f.pages else ""
        out.append(f"{{{f.name}}}: {f.summary} (tool params read: {', '.join(f.needs) or '-'}{where})")
    return "\n".join(out)


__all__ = ["Report", "StationFileError", "check_path", "check_station", "computations_text"]
