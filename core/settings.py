"""What the person who starts the server decides: who is the instructor, which caps hold, which
server folder (if any) visitors may read corpora from.

Read from environment variables (``BPE_EXPLORER_*``) or, in the app, from ``.streamlit/secrets.toml``
(the same names in lower case, without the prefix: ``instructor_key = "..."``); the environment
wins.  Library code takes a :class:`ServerSettings` argument instead of reading the environment
itself, so a script or a test can pass its own.

    >>> s = ServerSettings.from_env({"BPE_EXPLORER_MAX_RUNS": "3"})
    >>> s.max_running, s.corpus_dir is None
    (3, True)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path

PREFIX = "BPE_EXPLORER_"


class SettingsError(ValueError):
    """A server setting that cannot be used (named, with the value it had)."""


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

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None,
                 secrets: Mapping[str, object] | None = None) -> ServerSettings:
        """Settings from ``env`` (default ``os.environ``), then ``secrets`` for names unset there."""
        env = os.environ if env is None else env
        values = {}
        for f in fields(cls):
            raw = env.get(PREFIX + f.name.upper())
            if raw is None and secrets is not None:
                raw = secrets.get(f.name)
            if raw is None or str(raw).strip() == "":
                continue
            values[f.name] = _parse(f.name, str(raw).strip())
        return cls(**values)


def _parse(name: str, raw: str):
    if name == "instructor_key":
        if len(raw) < 8:
            make_one = 'python -c "import secrets; print(secrets.token_urlsafe())"'
            raise SettingsError(f"{PREFIX}INSTRUCTOR_KEY is too short ({len(raw)} characters); use "
                                f"at least 8, e.g. `{make_one}`.")
        return raw
    if name == "corpus_dir":
        path = Path(raw).expanduser().resolve()
        if not path.is_dir():
            raise SettingsError(f"{PREFIX}CORPUS_DIR={raw!r} is not a folder.")
        return path
    try:
        value = float(raw) if name in ("regex_timeout_s", "job_time_s") else int(raw)
    except ValueError:
        raise SettingsError(f"{PREFIX}{name.upper()}={raw!r} is not a number.") from None
    if value <= 0:
        raise SettingsError(f"{PREFIX}{name.upper()}={raw!r} must be positive.")
    return value
