"""A run folder's layout, owned in one place: the name of every file a run keeps, JSON and
JSON-lines records.

Shared by the training loop (``core.gpt.loop``), the checkpoint writer, the run manager
(``core.room.runs``) and the engine (``core.room.engine``) without importing PyTorch, so the
engine process stays small.  Leaves out what the files mean to a run's life (queueing,
permissions: ``core.room.runs``) and what a checkpoint holds (``core.gpt.checkpoint``).

Every write goes through the project's one atomic writer, ``core.atomic.atomic_write``: a
temporary file beside the target, flushed and ``fsync``-ed, then ``os.replace``-d over it; a reader
in another process sees the old file or the new one, never half of it.

The runs folder holds one folder per owner, and in it one per run: ``runs_dir/<owner>/<run>/``.
``status.json`` and its values are ``core.runfolder.status``'s.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

from ..atomic import atomic_write, write_json

# written by the training loop (core.gpt.loop), in a GPT worker or python -m core.train
CONFIG_FILE = "config.json"            # the training and model config, device, data statistics
METRICS_FILE = "metrics.jsonl"         # one record per logged step
SAMPLES_FILE = "samples.jsonl"         # text generated at every evaluation, with its bits per char
CHECKPOINT_FILE = "ckpt.pt"            # the latest checkpoint (core.gpt.checkpoint)
TRAIN_LOCK_FILE = "train.lock"         # held by the one process training in this folder
# written when a run is launched from the page (core.room.runs)
TRAIN_CONFIG_FILE = "train_config.json"  # the TrainConfig the GPT worker trains with
CORPUS_FILE = "corpus.txt"
TOKENIZER_FILE = "tokenizer.json"
IDENTITY_FILE = "identity.json"        # what makes two launches the same run (core.room.identical)
LAUNCH_FILE = "launch.json"            # runs of an older version: the process that trained them
LOG_FILE = "train.log"
SHARE_FILE = "shared.json"
JOIN_FILE = "joined.json"              # a launcher's folder for an identical run trained once
STOP_FILE = "stop.request"             # asks the GPT worker that has the run's turn to stop it
# in the runs folder itself, beside the owners' folders
QUEUE_LOCK = ".queue.lock"             # taken by every change to the queue (core.room.runs)
ENGINE_LOCK = ".engine.lock"           # held by the folder's one engine (core.room.engine)
ENGINE_FILE = ".engine.json"           # where its link listens, and the link's key (owner-only)
QUEUE_FILE = ".queue.json"             # the queue's caps (write_queue_settings)
ENGINE_LOG = ".engine.log"             # the engine's and its worker processes' output
TURNS_FILE = ".turns.json"             # the owners' training time so far (core.room.turns)



def default_runs_dir() -> Path:
    """Where runs live unless a caller says: ``$BPE_EXPLORER_RUNS_DIR``, else ``runs/`` in the
    repository (an absolute path either way)."""
    repository = Path(__file__).resolve().parents[2]
    return Path(os.environ.get("BPE_EXPLORER_RUNS_DIR") or repository / "runs").absolute()


def file_stamp(path) -> tuple:
    """A file as it is now (modification time and size; empty when missing): another writer
    changes it."""
    try:
        stat = Path(path).stat()
    except OSError:
        return ()
    return (stat.st_mtime_ns, stat.st_size)


def now() -> str:
    """The time stamps a run's files carry: UTC, to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def write_text(path, text: str) -> None:
    with atomic_write(path) as f:
        f.write(text)


def read_json(path) -> dict:
    """A JSON object from ``path``; a missing, unreadable or non-object file reads as ``{}``."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


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


def append_jsonl(path, record: dict) -> None:
    """One record more: an append of one line, which readers take whole or skip (read_jsonl)."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(_jsonl([record]))


def keep_records_until(path, step: int) -> None:
    """Drop the records a killed run logged after its last checkpoint: the resumed run logs
    those steps again, and a step must not appear twice on a chart."""
    if Path(path).is_file():
        write_text(path, _jsonl([r for r in read_jsonl(path) if r.get("step", 0) <= step]))


def write_queue_settings(runs_dir, max_running: int, gpus: int, runs_per_gpu: int = 1) -> None:
    """The server's caps for this runs folder, read by its engine before every turn: whoever
    starts the engine, and whenever, it keeps the caps of the server that queued last.
    ``max_running``: runs trained at the same moment (one per GPT worker); ``gpus`` and
    ``runs_per_gpu``: how those GPT workers spread over this machine's GPUs."""
    write_json(Path(runs_dir) / QUEUE_FILE, {"max_running": max(1, int(max_running)),
                                             "gpus": max(0, int(gpus)),
                                             "runs_per_gpu": max(1, int(runs_per_gpu))})


def queue_settings(runs_dir) -> dict:
    """``{"max_running": N, "gpus": G, "runs_per_gpu": R}`` as last written (one run at a time,
    no GPU, if never)."""
    saved = read_json(Path(runs_dir) / QUEUE_FILE)
    return {"max_running": max(1, int(saved.get("max_running") or 1)),
            "gpus": max(0, int(saved.get("gpus") or 0)),
            "runs_per_gpu": max(1, int(saved.get("runs_per_gpu") or 1))}
