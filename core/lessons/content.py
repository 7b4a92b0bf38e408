"""The lessons as data: one TOML file per station in a folder (``lessons/`` in the repository,
or ``$BPE_EXPLORER_LESSONS_DIR``), read and checked here so a teacher can add or translate a
station without touching code.

A station file (the stations are ordered by file name; the name, without ``.toml``, is the
station's id, which attendees' progress is kept under)::

    title = "The BPE loop, one merge at a time"
    short = "First merge"                  # the path's label
    text = "Two to four sentences (Markdown); {facts} about the tool may be quoted."

    [question]
    ask = "Which pair does BPE merge first?"
    compute = "first_merge"                # a computation of core.lessons.computations
    choices = ["e + s", "l + o"]           # or a table: value = "label shown"
    why = "Filled from core's result: {answer} occurs {count} times."
    hint = "Shown after a wrong answer."  # optional

    [tool]
    page = "learn_bpe"                     # the app page it opens
    label = "Step it in Learn BPE"
    do = "What to do there."
    params = { corpus = "sample:low lower newest widest", variant = "word", merges = 10 }

Figures are never typed: ``text``, ``ask``, ``label`` and ``do`` quote what the tool shows as
``{merges_asked}``, ``{first_pair_step}`` ... (``core.lessons.tool_facts``: known before the
attendee answers), ``why`` and ``hint`` also the computation's facts; ``python -m core.lessons
check`` refuses a station whose typed figures or settings disagree with its tool
(``core.lessons.claims``).  ``path.toml``'s intro may quote ``{stations}``, their number.

A number question has ``tolerance`` (relative: 0.1 accepts 10% off; 0 wants it exact) and
``unit`` instead of ``choices``.  ``path.toml`` beside the stations holds the path's ``title``
and ``intro``.

:func:`load_path` never raises for a bad station: it keeps the good ones and returns each
problem as a :class:`StationFileError` naming the file and what is wrong.  What only running
``core`` can tell (is the computed answer one of the choices?) is ``core.lessons.check``'s.
"""

from __future__ import annotations

import hashlib
import os
import re
import string
from dataclasses import dataclass, field
from pathlib import Path

import tomllib

from ..bpe import PRETRAINED_NAMES, VARIANTS
from .computations import COMPUTATIONS, SPLITS, Computation, StationData, corpus_sources
from .errors import StationFileError
from .tool_facts import fact_names

REPOSITORY = Path(__file__).resolve().parents[2]
PATH_FILE = "path.toml"
# the app pages a tool opens
PAGES = ("learn_bpe", "char_vs_bpe", "compare_tokenizers", "train_gpt", "insights", "chat")
MAX_MERGES = 5000  # the app's Merges box maximum (ui.plumbing.state.MAX_MERGES)
MAX_FILE_BYTES = 64 * 1024
MAX_STATIONS = 32
MAX_CHOICES = 8
DIRECTIONS = ("lower", "higher")  # a hint by where the answer lies from a wrong prediction
STATION_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
PARAMS = ("corpus", "variant", "merges", "marker", "split", "start", "step")  # URL keys: ui.plumbing.controls
KEYS = {"": ("title", "short", "text", "question", "tool"),
        "question": ("ask", "compute", "choices", "tolerance", "unit", "why", "hint", "args"),
        "tool": ("page", "label", "do", "params", "any_text")}


@dataclass(frozen=True)
class Question:
    ask: str
    compute: str
    choices: dict[str, str]   # value -> label shown; empty for a number
    tolerance: float          # a number's relative tolerance
    unit: str
    why: str                  # shown with the right answer: {facts} filled from core's result
    hint: str                 # shown after a wrong answer
    args: dict
    hints: dict[str, str] = field(default_factory=dict)  # "lower" / "higher": by where the answer lies

    @property
    def computation(self) -> Computation:
        return COMPUTATIONS[self.compute]


@dataclass(frozen=True)
class Tool:
    page: str
    label: str
    do: str
    params: dict[str, str]    # URL parameters, as ``?name=value`` gives them to the page
    any_text: bool = False    # its question works on any text: params' corpus only for who has none


@dataclass(frozen=True)
class Station:
    id: str
    number: int               # its place on the path, from 1
    file: str                 # the file's path, as messages name it
    digest: str               # the file's hash: what core computed for it stays valid until it changes
    title: str
    short: str
    text: str
    question: Question
    tool: Tool

    def data(self, runs_dir=None) -> StationData:
        """What the computation reads: the tool's corpus and settings, and the question's args."""
        p = self.tool.params
        settings = {k: p[k] for k in ("corpus", "variant", "marker", "split", "start") if k in p}
        settings.update({k: int(p[k]) for k in ("merges", "step") if k in p})
        return StationData(**settings, args=self.question.args, runs_dir=runs_dir, station=self.id)


@dataclass(frozen=True)
class LessonPath:
    title: str
    intro: str
    stations: tuple[Station, ...]
    problems: tuple[StationFileError, ...]
    intro_template: str = ""  # the intro as written, before {stations} is filled

    def station(self, station_id: str | None) -> Station | None:
        return next((s for s in self.stations if s.id == station_id), None)


def default_lessons_dir() -> Path:
    """``$BPE_EXPLORER_LESSONS_DIR`` (a translated or a workshop's own path), else ``lessons/``."""
    return Path(os.environ.get("BPE_EXPLORER_LESSONS_DIR") or REPOSITORY / "lessons").absolute()


def shown_path(path: Path) -> str:
    """A file's path as messages give it: relative to the repository when inside it."""
    try:
        return str(path.relative_to(REPOSITORY))
    except ValueError:
        return str(path)


def station_files(folder=None) -> list[Path]:
    folder = Path(folder) if folder else default_lessons_dir()
    return sorted(p for p in folder.glob("*.toml") if p.name != PATH_FILE) if folder.is_dir() else []


def load_path(folder=None) -> LessonPath:
    """Every station in ``folder`` that can be used, and a message for each that cannot."""
    folder = Path(folder) if folder else default_lessons_dir()
    problems: list[StationFileError] = []
    if not folder.is_dir():
        problems.append(StationFileError(shown_path(folder), "there is no such folder of lessons."))
    title, intro = "Start here", ""
    if (folder / PATH_FILE).is_file():
        try:
            head = _read_toml(folder / PATH_FILE)
            _known_keys(head, ("title", "intro"), "")
            title, intro = _text(head, "title", title), _text(head, "intro", "")
        except ValueError as exc:
            problems.append(StationFileError(shown_path(folder / PATH_FILE), str(exc)))
    stations: list[Station] = []
    for path in station_files(folder)[:MAX_STATIONS]:
        try:
            stations.append(read_station(path, len(stations) + 1))
        except StationFileError as exc:
            problems.append(exc)
    if len(station_files(folder)) > MAX_STATIONS:
        problems.append(StationFileError(shown_path(folder), f"more than {MAX_STATIONS} stations: "
                                                             "only the first ones are used."))
    try:
        shown_intro = intro.format(stations=len(stations))
    except (KeyError, IndexError, ValueError):
        problems.append(StationFileError(shown_path(folder / PATH_FILE), "intro may quote {stations} "
                                         "(their number) only; write {{ and }} for a literal brace."))
        shown_intro = intro
    return LessonPath(title, shown_intro, tuple(stations), tuple(problems), intro)


def read_station(path: Path, number: int = 1) -> Station:
    """One station file, checked; :class:`StationFileError` names the file and the first problem."""
    try:
        if not STATION_ID.fullmatch(path.stem):
            raise ValueError("the file name must be lower-case letters, digits, _ and - (it is the "
                             "station's id), e.g. 03_end_of_word.toml.")
        raw = path.read_bytes()
        table = _read_toml(path, raw)
        return _station(table, path, number, hashlib.blake2b(raw, digest_size=12).hexdigest())
    except (OSError, ValueError) as exc:
        raise StationFileError(shown_path(path), _problem(exc)) from None


def _problem(exc: Exception) -> str:
    return getattr(exc, "strerror", None) or str(exc)


def _read_toml(path: Path, raw: bytes | None = None) -> dict:
    raw = path.read_bytes() if raw is None else raw
    if len(raw) > MAX_FILE_BYTES:
        raise ValueError(f"the file is {len(raw):,} bytes; a station file may have {MAX_FILE_BYTES:,}.")
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte {exc.start}); save it as UTF-8.") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"not valid TOML: {exc}.") from None


def _station(table: dict, path: Path, number: int, digest: str) -> Station:
    _known_keys(table, KEYS[""], "")
    question, tool = _table(table, "question"), _table(table, "tool")
    _known_keys(question, KEYS["question"], "question")
    _known_keys(tool, KEYS["tool"], "tool")
    title = _text(table, "title")
    station = Station(
        id=path.stem, number=number, file=shown_path(path), digest=digest, title=title,
        short=_text(table, "short", title[:24]),
        text=_text(table, "text"), question=_question(question), tool=_tool(tool))
    _check_question(station)
    return station


def _question(q: dict) -> Question:
    compute = _text(q, "compute", where="question")
    if compute not in COMPUTATIONS:
        raise ValueError(f"question.compute = {compute!r} is not a computation core has; choose one of "
                         f"{', '.join(COMPUTATIONS)} (python -m core.lessons computations lists them).")
    choices = q.get("choices", {})
    if isinstance(choices, list):
        choices = {str(c): str(c) for c in choices} if all(isinstance(c, str) for c in choices) else None
    if not isinstance(choices, dict) or not all(isinstance(v, str) for v in choices.values()):
        raise ValueError("question.choices must be a list of texts, or a table of value = \"label\".")
    tolerance = q.get("tolerance", 0.0)
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not 0 <= tolerance <= 1:
        raise ValueError("question.tolerance must be a number from 0 (exact) to 1 (100% off accepted).")
    args = q.get("args", {})
    if not isinstance(args, dict):
        raise ValueError("question.args must be a table, e.g. args = { words = [\"lowest\"] }.")
    return Question(ask=_text(q, "ask", where="question"), compute=compute, choices=choices,
                    tolerance=float(tolerance), unit=_text(q, "unit", "", "question"),
                    why=_text(q, "why", where="question"), args=args, **_hints(q))


def _hints(q: dict) -> dict:
    """``hint`` is one text, or a table by where the answer lies from a wrong prediction:
    ``hint = { lower = "...", higher = "..." }`` (``lower``: the answer is below it)."""
    hint = q.get("hint", "")
    if not isinstance(hint, dict):
        return {"hint": _text(q, "hint", "", "question"), "hints": {}}
    texts = all(isinstance(v, str) and v.strip() for v in hint.values())
    if not hint or set(hint) - set(DIRECTIONS) or not texts:
        raise ValueError("question.hint must be a text, or a table of lower = \"...\" and higher = \"...\".")
    return {"hint": "", "hints": {k: v.strip() for k, v in hint.items()}}


def _check_question(station: Station) -> None:
    """What can be checked without running core: the choices fit the kind, the args and tool
    parameters are the computation's, every {name} in the texts is a fact it gives."""
    q, c = station.question, station.question.computation
    if c.kind == "choice" and not 2 <= len(q.choices) <= MAX_CHOICES:
        raise ValueError(f"question.compute = {c.name!r} picks one of the choices: give 2 to "
                         f"{MAX_CHOICES} of them.")
    if c.kind == "number" and q.choices:
        raise ValueError(f"question.compute = {c.name!r} answers with a number: remove question.choices "
                         "(use tolerance and unit).")
    for name, value in q.args.items():
        if name not in c.args:
            raise ValueError(f"question.args.{name} is not read by {c.name!r}; it reads: "
                             f"{', '.join(c.args) or 'no args'}.")
        if not isinstance(value, c.args[name]):
            raise ValueError(f"question.args.{name} must be a {c.args[name].__name__}.")
    if "corpus" in c.needs and "corpus" not in station.tool.params:
        raise ValueError(f"{c.name!r} reads the tool's corpus: add corpus to tool.params.")
    tool = fact_names(station.tool.page, station.tool.params)
    for where, template in station_texts(station).items():
        known = tool if where in BEFORE_ANSWER else (*c.fields, *tool)
        _check_fields(template, known, where, "the tool's facts" if where in BEFORE_ANSWER else
                      f"{c.name!r} and the tool's facts")


BEFORE_ANSWER = ("text", "question.ask", "tool.label", "tool.do")  # read before answering: no answer


def station_texts(station: Station) -> dict[str, str]:
    """The templates a station shows, by where they are in its file."""
    q, tool = station.question, station.tool
    return {"text": station.text, "question.ask": q.ask, "tool.label": tool.label, "tool.do": tool.do,
            "question.why": q.why, "question.hint": q.hint,
            **{f"question.hint.{direction}": text for direction, text in q.hints.items()}}


def quoted_facts(template: str) -> list[str]:
    """The ``{names}`` a template quotes (a template that is not one raises ``ValueError``)."""
    return [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]


def _check_fields(template: str, known: tuple[str, ...], where: str, whose: str) -> None:
    try:
        fields = [(name, spec, conv) for _, name, spec, conv in string.Formatter().parse(template)
                  if name is not None]
    except ValueError as exc:
        raise ValueError(f"{where}: {exc} (write {{{{ and }}}} for a literal brace).") from None
    for name, spec, conv in fields:
        if name not in known or spec or conv:
            raise ValueError(f"{where} uses {{{name}}}, which {whose} do not give; {where} may quote: "
                             f"{', '.join('{' + f + '}' for f in known) or 'nothing'}.")


def _tool(t: dict) -> Tool:
    page = _text(t, "page", where="tool")
    if page not in PAGES:
        raise ValueError(f"tool.page = {page!r} is not a page of the app; choose one of {', '.join(PAGES)}.")
    params = t.get("params", {})
    if not isinstance(params, dict):
        raise ValueError("tool.params must be a table, e.g. params = { corpus = \"sample:sennrich\" }.")
    any_text = t.get("any_text", False)
    if not isinstance(any_text, bool):
        raise ValueError("tool.any_text must be true or false.")
    return Tool(page=page, label=_text(t, "label", where="tool"), do=_text(t, "do", where="tool"),
                params={name: _param(name, value) for name, value in params.items()}, any_text=any_text)


def _param(name: str, value) -> str:
    """A URL parameter, checked as the page would read it (a value it ignores is a mistake here)."""
    allowed = {"variant": VARIANTS, "split": tuple(SPLITS), "start": ("chars", *PRETRAINED_NAMES),
               "corpus": tuple(corpus_sources())}
    if name not in PARAMS:
        raise ValueError(f"tool.params.{name} is not a parameter the pages understand; they read: "
                         f"{', '.join(PARAMS)}.")
    if name in ("merges", "step"):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_MERGES:
            raise ValueError(f"tool.params.{name} must be a whole number from 0 to {MAX_MERGES:,}.")
        return str(value)
    if not isinstance(value, str):
        raise ValueError(f"tool.params.{name} must be a text in quotes.")
    if name in allowed and value not in allowed[name]:
        raise ValueError(f"tool.params.{name} = {value!r} is not one of: {', '.join(allowed[name])}.")
    if name == "marker" and not 1 <= len(value) <= 10:
        raise ValueError("tool.params.marker must be 1 to 10 characters.")
    return value


# -- small readers with messages a teacher understands ------------------------------------------------
def _known_keys(table: dict, known: tuple[str, ...], where: str) -> None:
    for key in table:
        if key not in known:
            place = f"[{where}] " if where else ""
            raise ValueError(f"{place}has an unknown key {key!r}; the keys are: {', '.join(known)}.")


def _table(table: dict, key: str) -> dict:
    value = table.get(key)
    if not isinstance(value, dict):
        raise ValueError(f"the [{key}] table is missing.")
    return value


def _text(table: dict, key: str, default: str | None = None, where: str = "") -> str:
    name = f"{where}.{key}" if where else key
    value = table.get(key, default)
    if value is None:
        raise ValueError(f"{name} is missing.")
    if not isinstance(value, str) or (default is None and not value.strip()):
        raise ValueError(f"{name} must be a text in quotes, not empty.")
    return value.strip()
