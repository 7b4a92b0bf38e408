"""The files a training run keeps in its folder, and how they are written and read.

Shared by the trainer (``core.train``), the run manager (``core.runs``) and the scheduler
(``core.scheduler``) without importing PyTorch, so the scheduler process stays small.  Writes are
atomic (a temporary file, then ``os.replace``): a reader in another process sees the old file or
the new one, never half of it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

METRICS_FILE, SAMPLES_FILE, STATUS_FILE, CONFIG_FILE = (
    "metrics.jsonl", "samples.jsonl", "status.json", "config.json")
TRAIN_LOCK_FILE = "train.lock"   # held by the one process training in this folder


def write_text_atomic(path: Path, text: str) -> None:
    tmp = Path(path).with_name(Path(path).name + f".{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_json(path: Path, data: dict) -> None:
    write_text_atomic(path, json.dumps(data, ensure_ascii=False, indent=1))


def read_json(path: Path) -> dict:
    """A JSON object from ``path``; a missing, unreadable or non-object file reads as ``{}``."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def read_jsonl(path) -> list[dict]:
    """Records of a JSON-lines file; a half-written last line (a run still writing) is skipped."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def append_jsonl(path: Path, record: dict) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record, ensure_ascii=False) + "\n")
