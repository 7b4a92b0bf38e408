"""A run's turn, in a GPT worker process: :func:`run_turn` trains a run launched from the page for a
few seconds with ``core.gpt.loop.Training`` and checkpoints it, so that its next turn can be in
any GPT worker of the engine (``core.room.jobs``, set up by ``core.room.gpt_workers``), or on a Dask
worker, which takes a GPT worker's place on a cluster (``core.room.dask_jobs``).

Everything a run needs is in its folder, written at launch: the config (``train_config.json``,
read straight into a ``TrainConfig``), the corpus and the tokenizer; so a run depends neither on
the session that launched it nor on the process that trained its last turn.  A GPT worker keeps the
runs it trained in memory (``HELD_BYTES`` at most, corpora included, the least recently trained
dropped first): when a run's next turn comes back to the same process and the run's status says
that the last turn it finished was this process's (nobody trained it since, no turn was lost), it
carries on from memory; otherwise it loads the checkpoint.  The encoded corpus is kept apart, by
the run's identity (it never changes), within ``HELD_DATA`` corpora and ``HELD_DATA_BYTES``.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from ..bpe import load_tokenizer
from ..corpus import read_corpus
from ..gpt.config import TrainConfig
from ..gpt.data import Data, prepare_data
from .identical import read_identity
from .cpu_policy import give_way_to_jobs
from ..runfolder.locks import FileLock
from ..gpt.loop import Hooks, Training
from ..runfolder.layout import (CHECKPOINT_FILE, CORPUS_FILE, STOP_FILE, TOKENIZER_FILE, TRAIN_CONFIG_FILE,
                     TRAIN_LOCK_FILE, file_stamp, read_json)
from ..runfolder.status import TurnOutcome
from .turns import claim_turn

HELD_BYTES = 1 << 30       # runs one GPT worker keeps between turns: models, optimizer states, corpora
HELD_DATA = 64             # encoded corpora one GPT worker keeps
HELD_DATA_BYTES = 1 << 30  # and their bytes (a 64 MB corpus of characters is 512 MB of int64 ids)


@dataclass
class _Held:
    training: Training
    turn_id: str           # the turn that left the run as it is here
    identity: str | None
    nbytes: int
    checkpoint: tuple      # the checkpoint file as this process wrote it (``file_stamp``)


_held: OrderedDict[str, _Held] = OrderedDict()
_data: OrderedDict[str, Data] = OrderedDict()
_memory = threading.Lock()  # a Dask worker may run turns of different runs in threads


def run_turn(run_dir, turn_id: str, seconds: float) -> dict:
    """Train the run in ``run_dir`` for up to ``seconds`` if turn ``turn_id`` is still its turn
    (``core.room.turns``), then checkpoint it.  Returns ``{"outcome": ..., "step": ...,
    "seconds": ...}``, the outcome a ``TurnOutcome``: ``PAUSED`` (its time is up), ``FINISHED``,
    ``STOPPED`` (asked to, by ``core.room.runs.stop_run``), ``FAILED`` (with ``error``: a setting,
    corpus or checkpoint that cannot be trained), ``BUSY`` (another process trains this folder) or
    ``REVOKED``."""
    run_dir = Path(run_dir).absolute()
    lock = FileLock(run_dir / TRAIN_LOCK_FILE)
    if not lock.acquire():
        return {"outcome": TurnOutcome.BUSY}
    try:
        status = claim_turn(run_dir, turn_id, os.getpid(), os.uname().nodename,
                            os.environ.get("CUDA_VISIBLE_DEVICES"))
        if status is None:
            return {"outcome": TurnOutcome.REVOKED}
        return _train_turn(run_dir, turn_id, status.get("last_turn_id"), seconds)
    except (ValueError, OSError) as exc:  # a bad setting, a too-short corpus, a damaged file
        _forget(run_dir)
        return {"outcome": TurnOutcome.FAILED, "error": str(exc) or type(exc).__name__}
    finally:
        lock.release()


def _train_turn(run_dir: Path, turn_id: str, last_turn_id: str | None, seconds: float) -> dict:
    start = time.monotonic()
    training = _training(run_dir, last_turn_id)
    until = start + seconds
    hooks = Hooks(should_stop=(run_dir / STOP_FILE).exists,
                  before_step=lambda: give_way_to_jobs(until))  # the room's CPU policy
    outcome = training.advance(hooks, until=until)
    training.save()
    if outcome == TurnOutcome.PAUSED:
        _hold(run_dir, training, turn_id)
    else:
        _forget(run_dir)
    return {"outcome": outcome, "step": training.step, "seconds": time.monotonic() - start}


def _training(run_dir: Path, last_turn_id: str | None) -> Training:
    """The run as its last turn left it: from memory when this process trained that turn, else
    from the folder (its checkpoint, or from scratch before the first one)."""
    identity = read_identity(run_dir)
    with _memory:
        held = _held.pop(str(run_dir), None)
    if (held is not None and last_turn_id and held.turn_id == last_turn_id and held.identity == identity
            and held.checkpoint == file_stamp(run_dir / CHECKPOINT_FILE)):
        return held.training  # else someone trained it since (e.g. Dask ran a dead GPT worker's turn again)
    settings = read_json(run_dir / TRAIN_CONFIG_FILE)
    if not settings:
        raise ValueError(f"{run_dir / TRAIN_CONFIG_FILE} is missing or unreadable.")
    config = replace(TrainConfig.from_dict(settings), resume=(run_dir / CHECKPOINT_FILE).is_file())
    if config.threads and torch.get_num_threads() != config.threads:
        torch.set_num_threads(config.threads)
    tokenizer = load_tokenizer(run_dir / TOKENIZER_FILE)
    return Training(config, tokenizer, _encoded(run_dir, identity, tokenizer, config), run_dir)


def _encoded(run_dir: Path, identity: str | None, tokenizer, config: TrainConfig) -> Data:
    with _memory:
        data = _data.get(identity) if identity else None
    if data is None:
        data = prepare_data(read_corpus(run_dir / CORPUS_FILE), tokenizer, config.block_size)
        if identity:
            with _memory:
                _data[identity] = data
                while len(_data) > 1 and (len(_data) > HELD_DATA
                                          or sum(map(_data_bytes, _data.values())) > HELD_DATA_BYTES):
                    _data.popitem(last=False)
    return data


def _data_bytes(data: Data) -> int:
    return data.train.nbytes + data.val.nbytes


def _hold(run_dir: Path, training: Training, turn_id: str) -> None:
    """Keep the run in memory for its next turn, within ``HELD_BYTES`` (weights, gradients and
    AdamW's two moments: four copies of the parameters; and its encoded corpus, which it keeps
    alive, counted with each run that holds it)."""
    nbytes = 4 * sum(p.numel() * p.element_size() for p in training.raw_model.parameters())
    nbytes += _data_bytes(training.data) * (2 if training.train_ids is not training.data.train else 1)
    with _memory:
        _held[str(run_dir)] = _Held(training, turn_id, read_identity(run_dir), nbytes,
                                    file_stamp(run_dir / CHECKPOINT_FILE))
        while sum(h.nbytes for h in _held.values()) > HELD_BYTES and len(_held) > 1:
            _held.popitem(last=False)


def _forget(run_dir: Path) -> None:
    with _memory:
        _held.pop(str(run_dir), None)
