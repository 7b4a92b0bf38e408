"""Each attendee's progress on the path, kept on the server for their owner id, and the room's
counts for the instructor.

One small JSON file per owner, ``<runs_dir>/.lessons/<owner>.json`` (the runs folder is where the
app keeps what outlives a session; a name starting with a dot is never taken for an owner's folder
of runs)::

    {"version": 1, "stations": {"02_first_merge": {"opened": 1732400000.0, "tries": 2,
                                                   "answers": [["e + s", false], ["l + o", true]],
                                                   "revealed": 1732400042.0}}}

``revealed``: when the attendee asked to see the answer; kept, so the room view can tell a station
finished by predicting from one finished after reading the answer.

Rules: an owner id is checked (``core.room.owners.validate_owner``) before it names a file; each
owner reads and writes only their own file (:meth:`ProgressStore.of`); the room's counts
(:meth:`ProgressStore.room`) are for an instructor and hold no owner's id.  Writes are atomic
(``core.atomic``) under one lock, so two tabs of one attendee never lose an answer.  Sizes are
bounded: at most ``MAX_STATIONS`` stations a file, each keeping its first answer (the room's
"right at the first try") and its latest ones, each answer cut to ``MAX_ANSWER_CHARS``.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..atomic import atomic_write
from ..room import RunAccessError, Viewer, default_runs_dir, locked, validate_owner
from .content import MAX_STATIONS, STATION_ID

FOLDER = ".lessons"
LOCK = ".lock"
VERSION = 1
MAX_ANSWERS = 12          # kept per station: the first, then the latest
MAX_ANSWER_CHARS = 80
MAX_FILE_BYTES = 64 * 1024
MAX_OWNERS = 5000         # files the room view reads at most


@dataclass(frozen=True)
class StationProgress:
    """One attendee at one station: opened it, their answers in order (``(answer, right)``), and
    whether they asked to see the answer."""

    opened: bool = False
    answers: tuple[tuple[str, bool], ...] = ()
    tries: int = 0
    revealed: bool = False

    @property
    def done(self) -> bool:
        return any(right for _, right in self.answers)

    @property
    def first_try_right(self) -> bool:
        return bool(self.answers) and self.answers[0][1]

    @property
    def last(self) -> tuple[str, bool] | None:
        return self.answers[-1] if self.answers else None


@dataclass(frozen=True)
class RoomRow:
    """The room at one station: how many attendees opened it, answered, got it right at the first
    try, asked to see the answer, and finished it; the wrong answer most of them gave (each
    attendee counted once)."""

    station: str
    reached: int
    answered: int
    first_try_right: int
    revealed: int
    done: int
    common_wrong: str | None
    common_wrong_count: int

    @property
    def first_try_share(self) -> float | None:
        return self.first_try_right / self.answered if self.answered else None


def _station_progress(record: dict) -> StationProgress:
    answers = tuple((str(a), bool(r)) for a, r in record.get("answers", [])[:MAX_ANSWERS])
    return StationProgress(bool(record.get("opened")), answers, int(record.get("tries", len(answers))),
                           revealed=bool(record.get("revealed")))


class ProgressStore:
    """The progress files under a runs folder (``core.gpt``'s default when ``None``)."""

    def __init__(self, runs_dir=None) -> None:
        self.folder = Path(runs_dir or default_runs_dir()) / FOLDER

    def _file(self, owner: str) -> Path:
        return self.folder / f"{validate_owner(owner)}.json"

    def _read(self, path: Path) -> dict:
        """A progress file's stations; a missing, oversized or damaged file reads as empty."""
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                return {}
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        stations = data.get("stations") if isinstance(data, dict) else None
        if not isinstance(stations, dict):
            return {}
        return {k: v for k, v in stations.items() if isinstance(v, dict)}

    def of(self, owner: str) -> dict[str, StationProgress]:
        """``owner``'s progress by station id."""
        return {k: _station_progress(v) for k, v in self._read(self._file(owner)).items()}

    def _update(self, owner: str, station_id: str, change) -> StationProgress:
        """Apply ``change`` to the owner's record of one station, under the lock, atomically."""
        path = self._file(owner)
        if not STATION_ID.fullmatch(station_id):
            raise ValueError(f"{station_id!r} is not a station id.")
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        with locked(self.folder / LOCK):
            stations = self._read(path)
            if station_id not in stations and len(stations) >= MAX_STATIONS:
                return StationProgress()  # a full file keeps what it has; nothing is overwritten
            record = stations.setdefault(station_id, {})
            change(record)
            with atomic_write(path) as f:
                json.dump({"version": VERSION, "stations": stations}, f, ensure_ascii=False)
        return _station_progress(record)

    def open_station(self, owner: str, station_id: str) -> StationProgress:
        """Note that ``owner`` reached the station (once; later visits change nothing)."""
        current = self.of(owner).get(station_id)
        if current is not None and current.opened:
            return current

        def opened(record: dict) -> None:
            record.setdefault("opened", time.time())
        return self._update(owner, station_id, opened)

    def record_answer(self, owner: str, station_id: str, answer: str, right: bool) -> StationProgress:
        """Add an answer; the first is kept for good, later ones up to ``MAX_ANSWERS`` in all."""
        def add(record: dict) -> None:
            record.setdefault("opened", time.time())
            answers = record.get("answers", []) + [[answer[:MAX_ANSWER_CHARS], bool(right)]]
            record["answers"] = answers[:1] + answers[1:][-(MAX_ANSWERS - 1):]
            record["tries"] = int(record.get("tries", 0)) + 1
        return self._update(owner, station_id, add)

    def reveal(self, owner: str, station_id: str) -> StationProgress:
        """Note that ``owner`` asked to see the station's answer (the first time counts)."""
        def revealed(record: dict) -> None:
            record.setdefault("opened", time.time())
            record.setdefault("revealed", time.time())
        return self._update(owner, station_id, revealed)

    def room(self, viewer: Viewer, station_ids: list[str]) -> list[RoomRow]:
        """Per station, the room's counts (see :class:`RoomRow`); only for an instructor."""
        if not viewer.instructor:
            raise RunAccessError("Only the instructor sees the room's progress.")
        files = sorted(self.folder.glob("[!.]*.json"))[:MAX_OWNERS] if self.folder.is_dir() else []
        everyone = [self._read(path) for path in files]
        return [_room_row(sid, [_station_progress(s[sid]) for s in everyone if sid in s])
                for sid in station_ids]


def _room_row(station_id: str, people: list[StationProgress]) -> RoomRow:
    answered = [p for p in people if p.answers]
    wrong = Counter(a for p in answered for a in dict.fromkeys(a for a, right in p.answers if not right))
    common = wrong.most_common(1)
    return RoomRow(station_id, reached=len(people), answered=len(answered),
                   first_try_right=sum(p.first_try_right for p in answered),
                   revealed=sum(p.revealed for p in people),
                   done=sum(p.done for p in answered),
                   common_wrong=common[0][0] if common else None,
                   common_wrong_count=common[0][1] if common else 0)
