"""``python -m core.lessons check``: what a teacher runs before a workshop.  Every station file is
read and checked, its answer computed by ``core`` on its data and its feedback filled; the report
lists each station with that answer, and any problem makes it fail.

A live answer (the room's GPT runs) that is not ready yet is reported, not a failure: the runs are
trained during the workshop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..corpus import CorpusError
from .computations import COMPUTATIONS
from .content import LessonPath, Station, load_path
from .errors import AnswerNotReady, LessonError, StationFileError
from .verdict import compute_answer, explanation


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


def check_station(station: Station, runs_dir=None) -> tuple[list[str], str | None]:
    """The report's lines for one station, and its problem (``None`` when it is fine)."""
    q = station.question
    lines = [station.file, f"  Station {station.number} · {station.title}  [{q.compute}]",
             f"  asks:   {_one_line(q.ask)}"]
    try:
        answer = compute_answer(station, runs_dir)
    except AnswerNotReady as exc:
        return [*lines, f"  answer: not yet: {exc}"], None
    except (LessonError, CorpusError, OSError, ImportError) as exc:
        return lines, f"{station.file}: {q.compute} could not compute the answer: {exc}"
    lines.append(f"  answer: {answer.shown}" + (f"  (choices: {', '.join(q.choices)})" if q.choices else
                                                  f"  {q.unit}, ± {q.tolerance:.0%} accepted"))
    if q.choices and answer.value not in q.choices:
        return lines, (f"{station.file}: question.choices: core computes {answer.shown!r}, which is not "
                       f"one of the choices; add it (as the value) or change the data.")
    return [*lines, f"  why:    {_one_line(explanation(station, answer))}"], None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def check_path(folder=None, runs_dir=None, path: LessonPath | None = None) -> Report:
    path = path or load_path(folder)
    report = Report(problems=[str(p) for p in path.problems])
    report.lines.append(f"{path.title}: {len(path.stations)} station(s)")
    for station in path.stations:
        lines, problem = check_station(station, runs_dir)
        report.lines += ["", *lines]
        if problem:
            report.problems.append(problem)
    return report


def computations_text() -> str:
    """The registry, as the teacher choosing ``compute =`` needs it."""
    out = []
    for c in COMPUTATIONS.values():
        out += [f"{c.name} ({c.kind}{', live' if c.live else ''}): {c.summary}",
                f"  args: {', '.join(c.args) or '-'}; tool params read: {', '.join(c.needs) or '-'}",
                f"  facts: {', '.join('{' + f + '}' for f in c.fields)}"]
    return "\n".join(out)


__all__ = ["Report", "StationFileError", "check_path", "check_station", "computations_text"]
