"""Identical runs train once: what makes two launches the same run, and the launchers who joined
a run instead of training it again.

Two launches are the same run when they would train the same model: the same corpus bytes, the
same tokenizer, the same settings and seed (``TrainConfig`` less the fields that say only how a
run is executed: threads, compilation, CUDA graphs, resuming) on the same kind of device.  Their
:func:`run_identity` is then equal.  A later launcher gets a *join*: a folder of their own,
``runs_dir/<owner>/<name>/joined.json``, naming the run trained once (``core.room.runs`` makes it;
``core.room.queries`` reads the run through it, read-only for them).

Torch-free.  Leaves out which runs a viewer sees and what they may do (``core.room.queries``,
``core.room.owners``) and how a run's training time is shared out (``core.room.turns``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..atomic import write_json
from ..runfolder.layout import IDENTITY_FILE, JOIN_FILE, read_json

# TrainConfig fields that change how a run is executed, not what it learns
EXECUTION_ONLY = ("threads", "resume", "compile", "cuda_graph", "device")


def run_identity(text: str | bytes, tokenizer, settings: dict, device: str) -> str:
    """A SHA-256 of everything that decides what a run learns: ``settings`` (a ``TrainConfig``'s
    ``to_dict()``, execution fields left out), the tokenizer's saved form, the kind of device
    (``"cpu"``, ``"cuda"``, ``"mps"``) and the corpus as UTF-8 bytes (``text``, or those bytes
    where the caller has them: a launch writes them too).

    >>> from core.bpe import CharTokenizer
    >>> a = run_identity("abc", CharTokenizer.from_text("abc"), {"seed": 1, "threads": 1}, "cpu")
    >>> a == run_identity("abc", CharTokenizer.from_text("abc"), {"seed": 1, "threads": 2}, "cpu:0")
    True
    >>> a == run_identity("abc", CharTokenizer.from_text("abc"), {"seed": 2, "threads": 1}, "cpu")
    False
    """
    learned = {k: v for k, v in settings.items() if k not in EXECUTION_ONLY}
    head = {"settings": learned, "tokenizer": tokenizer.to_dict(), "device": device.split(":")[0]}
    digest = hashlib.sha256(json.dumps(head, sort_keys=True, ensure_ascii=False).encode())
    digest.update(b"\0")
    digest.update(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def write_identity(run_dir, identity: str) -> None:
    write_json(Path(run_dir) / IDENTITY_FILE, {"identity": identity})


def read_identity(run_dir) -> str | None:
    return read_json(Path(run_dir) / IDENTITY_FILE).get("identity")


def write_join(join_dir, run_dir, runs_dir) -> None:
    """Make ``join_dir`` a launcher's view of ``run_dir`` (stored relative to ``runs_dir``, so
    the runs folder can move)."""
    relative = Path(run_dir).relative_to(runs_dir)
    write_json(Path(join_dir) / JOIN_FILE, {"run": relative.as_posix()})


def is_join(path) -> bool:
    return (Path(path) / JOIN_FILE).is_file()


def joined_run(join_dir) -> Path | None:
    """The run a join folder views: ``runs_dir/<owner>/<name>``, never outside the runs folder
    (None for a missing or damaged join file)."""
    join_dir = Path(join_dir)
    parts = str(read_json(join_dir / JOIN_FILE).get("run") or "").split("/")
    if len(parts) != 2 or any(p in ("", ".", "..") for p in parts):
        return None
    return join_dir.parent.parent / parts[0] / parts[1]
