"""Who a run belongs to, and who may see or change it: owner ids, :class:`Viewer`, and safe run
names.

An owner lists, stops, resumes, deletes, shares and samples their own runs; a run they share is
listed for everyone, read-only; a run they launched that someone had launched already (the same
corpus, tokenizer, settings and seed: ``core.room.identical``) is theirs to watch, read-only; an
instructor sees and manages every run.  The room's runs (``ROOM_OWNER``) belong to no attendee.
Owner ids and run names are checked to a safe character set, so neither can point outside the
runs folder.  Leaves out the runs themselves (``core.room.queries``, ``core.room.runs``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..runfolder.layout import default_runs_dir

LOCAL_OWNER = "local"
ROOM_OWNER = "room"   # runs trained once for the room (core.room.runs.launch_run(room=True))
OWNER_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")


class RunAccessError(ValueError):
    """This viewer may not see, or may not change, this run."""


def validate_owner(owner: str) -> str:
    """``owner`` if it is 1-64 letters, digits, ``_`` or ``-`` (a folder name, never a path)."""
    if not isinstance(owner, str) or not OWNER_PATTERN.fullmatch(owner):
        raise RunAccessError(f"{owner!r} is not a valid owner id (letters, digits, _ and - only).")
    return owner


@dataclass(frozen=True)
class Viewer:
    """Who is asking: an owner id, and whether they hold the instructor key."""

    owner: str
    instructor: bool = False

    def __post_init__(self) -> None:
        validate_owner(self.owner)

    def can_manage(self, run) -> bool:
        """``run``: anything with ``owner`` and ``shared`` (a ``RunInfo``)."""
        return self.instructor or run.owner == self.owner

    def can_view(self, run) -> bool:
        """Its own runs, shared ones, and a run trained once for everyone who launched the same
        (``run.joined_by``: this owner's join of it)."""
        return self.can_manage(run) or run.shared or getattr(run, "joined_by", None) == self.owner


SERVER = Viewer(LOCAL_OWNER, instructor=True)  # scripts and tests at the server's own keyboard


def sanitize_run_name(name: str) -> str:
    """A safe folder name: letters, digits, ``. _ -``; anything else becomes ``-``.

    >>> sanitize_run_name("../../etc/passwd")
    'etc-passwd'
    """
    clean = re.sub(r"[^A-Za-z0-9._-]+", "-", name or "").strip(".-_")[:64].strip(".-_")
    if not clean:
        raise ValueError(f"Run name {name!r} has no letters or digits; pick a name like 'char-tiny'.")
    return clean


def unique_run_name(name: str, runs_dir=None, owner: str = LOCAL_OWNER) -> str:
    """``name`` made safe, with ``-2``, ``-3``... added while the owner already has a run so named."""
    folder = (Path(runs_dir) if runs_dir else default_runs_dir()) / validate_owner(owner)
    base = sanitize_run_name(name)
    candidate = base
    k = 2
    while (folder / candidate).exists():
        candidate = f"{base}-{k}"
        k += 1
    return candidate
