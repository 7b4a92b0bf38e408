"""What the person who starts the server decides: who is the instructor, which caps hold, which
server folder (if any) visitors may read corpora from.

Read from environment variables (``BPE_EXPLORER_*``) or, in the app, from ``.streamlit/secrets.toml``
(the same names in lower case, without the prefix: ``instructor_key = "..."``); the environment
wins.  Library code takes a :class:`ServerSettings` argument instead of reading the environment
itself, so a script or a test can pass its own.

A setting that cannot be used never stops the server: it is named in ``problems`` and left unset
(its default holds), so one typo cannot break every page.  A script that prefers to fail passes
``strict=True``.

    >>> s = ServerSettings.from_env({"BPE_EXPLORER_MAX_RUNNING": "3",
    ...                              "BPE_EXPLORER_INSTRUCTOR_KEY": "short"})
    >>> s.max_running, s.instructor_key, len(s.problems)
    (3, None, 1)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path

PREFIX = "BPE_EXPLORER_"


class SettingsError(ValueError):
    """A server setting that cannot be used (named, with the value it had)."""


# The range each number may take: past it a value is a typo, not a choice (a cap of 0 runs would
# refuse every launch; 10**15 bytes would let one upload take the server's memory).
RANGES: dict[str, tuple[float, float]] = {
    "max_running": (1, 1024),
    "max_runs_per_owner": (1, 1000),
    "max_corpus_bytes": (1, 2**31),
    "max_train_memory": (2**20, 2**40),
    "regex_timeout_s": (0.01, 600.0),
    "job_workers": (1, 256),
    "job_time_s": (1.0, 3600.0),
}
MIN_KEY_CHARS = 8


@dataclass(frozen=True)
class ServerSettings:
    instructor_key: str | None = None       # sees and manages every run; None: no instructor
    corpus_dir: Path | None = None          # visitors may load corpora by path from here only
    max_running: int | None = None          # runs training at once; None: from the device
    max_runs_per_owner: int = 2             # one visitor's queued + running runs
    max_corpus_bytes: int = 64 * 2**20      # uploads, pastes and files larger than this are refused
    max_train_memory: int = 2 * 2**30       # bytes one tokenizer training may take, or it is refused
    regex_timeout_s: float = 2.0            # a custom split pattern gets this long per text
    job_workers: int | None = None          # processes for the room's heavy work; None: cores - 1
    job_time_s: float = 120.0               # one heavy job's time (a training), or it is stopped
    problems: tuple[str, ...] = ()          # settings that could not be used, each left unset

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None,
                 secrets: Mapping[str, object] | None = None, strict: bool = False) -> ServerSettings:
        """Settings from ``env`` (default ``os.environ``), then ``secrets`` for names unset there.
        A value that cannot be used is named in ``problems`` and left unset, or raises
        :class:`SettingsError` with ``strict``."""
        env = os.environ if env is None else env
        values, problems = {}, []
        for name in SETTING_NAMES:
            raw = env.get(PREFIX + name.upper())
            if raw is None and secrets is not None:
                raw = secrets.get(name)
            if raw is None or str(raw).strip() == "":
                continue
            try:
                values[name] = _parse(name, str(raw).strip())
            except SettingsError as exc:
                if strict:
                    raise
                problems.append(str(exc))
        return cls(**values, problems=tuple(problems))


SETTING_NAMES = tuple(f.name for f in fields(ServerSettings) if f.name != "problems")


def _parse(name: str, raw: str):
    if name == "instructor_key":
        if len(raw) < MIN_KEY_CHARS:
            raise SettingsError(f"{PREFIX}INSTRUCTOR_KEY is too short ({len(raw)} characters, at least "
                                f"{MIN_KEY_CHARS}), so there is no instructor.")
        return raw
    if name == "corpus_dir":
        path = Path(raw).expanduser().resolve()
        if not path.is_dir():
            raise SettingsError(f"{PREFIX}CORPUS_DIR={raw!r} is not a folder, so no server folder "
                                f"is readable.")
        return path
    low, high = RANGES[name]
    try:
        value = float(raw) if name in ("regex_timeout_s", "job_time_s") else int(raw)
    except ValueError:
        raise SettingsError(f"{PREFIX}{name.upper()}={raw!r} is not a number; the default holds.") from None
    if not low <= value <= high:
        raise SettingsError(f"{PREFIX}{name.upper()}={raw!r} is out of range ({low:g} to {high:g}); "
                            f"the default holds.")
    return value
