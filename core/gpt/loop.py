"""The training loop: ``train(config, text, tokenizer, run_dir, hooks)`` trains a GPT on ``text``
with ``tokenizer`` and writes the run folder as it goes (rank 0 only when distributed):

- ``config.json``   the training config, the model config, device and data statistics;
- ``metrics.jsonl`` one JSON object per logged step: ``step, train_loss, lr, tokens_per_s,
  elapsed_s`` and, on evaluation steps, ``val_loss, train_loss_est, val_bpc, val_bpb``;
- ``samples.jsonl`` text generated at every evaluation (and every ``sample_interval`` steps):
  ``{"step": ..., "text": ...}``, with the evaluation's ``val_bpc``;
- ``status.json``   running, then finished / stopped / failed, with ``pid``, ``started``,
  ``ended``, ``error`` (``core.runfolder.status.StatusRecord``);
- ``ckpt.pt``       the latest checkpoint (see ``core.gpt.checkpoint``).

:class:`Training` holds one run in memory and trains it a turn at a time (a call of ``advance``):
``train`` is one turn to the end; the page's GPT workers (``core.room.turn_runner``) keep several
runs and give each a few seconds in turn, checkpointing after every turn, so any GPT worker can
carry on from there.

File names and writes are ``core.runfolder.layout``'s; the data, the step and the evaluation are
``core.gpt.data``, ``core.gpt.optimizer_step`` and ``core.gpt.evaluate``.  Leaves out where the corpus and
the tokenizer come from: the command line (``core.gpt.cli``) and the page's GPT worker
(``core.room.turn_runner``) choose them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from .checkpoint import (CheckpointError, checkpoint_path, load_checkpoint, load_optimizer_state,
                         save_checkpoint)
from .config import TrainConfig
from .data import Data, get_batch, prepare_data
from .ddp import Dist, setup_distributed
from .device import describe_device, detect_device, should_compile
from .evaluate import estimate_loss, eval_windows, sample_text
from ..runfolder.locks import FileLock
from .model import GPT
from ..atomic import write_json
from ..runfolder.layout import (CONFIG_FILE, METRICS_FILE, SAMPLES_FILE, TRAIN_LOCK_FILE, append_jsonl,
                           keep_records_until, now)
from ..runfolder.status import RunStatus, TurnOutcome, write_status
from .optimizer_step import get_lr, make_optimizer, make_optimizer_step


class RunLockedError(ValueError):
    """Another process is already training in this run folder."""


@dataclass
class Hooks:
    """How a caller follows and ends a run: ``on_step(record)`` gets every logged metrics record;
    ``should_stop()`` is asked before each step and, when True, ends the run cleanly (final
    checkpoint, ``RunStatus.STOPPED``)."""

    on_step: Callable[[dict], None] | None = None
    should_stop: Callable[[], bool] | None = None
    before_step: Callable[[], None] | None = None  # may wait: a turn gives way there (core.room.limits)


@dataclass
class TrainResult:
    status: TurnOutcome    # FINISHED or STOPPED (a RunStatus too)
    step: int
    val_loss: float | None
    val_bpc: float | None
    checkpoint: Path | None
    records: list = field(default_factory=list)


def train(config: TrainConfig, text: str, tokenizer, run_dir, hooks: Hooks | None = None) -> TrainResult:
    """Train a GPT as ``config`` says on ``text`` encoded by ``tokenizer``, writing to
    ``run_dir``; see the module docstring.  Errors (bad settings, a too-short corpus, a mismatched
    checkpoint) raise ``ValueError``; a folder another process trains in raises
    :class:`RunLockedError` before anything in it changes."""
    run_dir = Path(run_dir)
    if config.threads:
        torch.set_num_threads(config.threads)
    dist = setup_distributed(detect_device(config.device))
    if config.batch_size % dist.world_size:
        raise ValueError(f"batch_size {config.batch_size} must be divisible by the number of "
                         f"processes ({dist.world_size}).")
    lock = FileLock(run_dir / TRAIN_LOCK_FILE)
    if dist.master:
        run_dir.mkdir(parents=True, exist_ok=True)
        if not lock.acquire():  # before any write: a second GPT worker leaves the folder untouched
            raise RunLockedError(f"Another process is already training in {run_dir}; "
                                 f"nothing was changed.")
        write_status(run_dir, RunStatus.RUNNING, fresh=True, pid=os.getpid(), started=now(), ended=None,
                     error=None, max_steps=config.max_steps)
    try:
        data = prepare_data(text, tokenizer, config.block_size)
        training = Training(config, tokenizer, data, run_dir, dist)
        status = training.advance(hooks)
        training.save()
        result = training.result(status)
    except BaseException as exc:
        if dist.master:
            write_status(run_dir, RunStatus.FAILED, ended=now(), error=str(exc) or type(exc).__name__)
        raise
    else:
        if dist.master:
            write_status(run_dir, result.status, ended=now(), step=result.step)
    finally:
        dist.close()
        lock.release()  # after the last write: the next GPT worker sees the final status
    return result


class Training:
    """One run in memory: its data (``core.gpt.data.prepare_data``), model and optimizer on the
    device, at ``step``.

    Built from the folder's checkpoint when ``config.resume`` (the metrics logged after that
    checkpoint are dropped: those steps are trained again), else from scratch.  :meth:`advance`
    trains on from ``step``, for as long as it is let; :meth:`save` checkpoints where it stands.
    Status files and the folder's lock are the caller's (:func:`train`, ``core.room.turn_runner``).
    """

    def __init__(self, config: TrainConfig, tokenizer, data: Data, run_dir, dist: Dist | None = None) -> None:
        self.config = config
        self.tokenizer = tokenizer
        self.run_dir = Path(run_dir)
        self.dist = dist or Dist(detect_device(config.device))
        self.device = self.dist.device
        self.data = data
        self.model_config = config.model_config(tokenizer.vocab_size)
        torch.manual_seed(config.seed)  # the same initial weights on every rank
        self.raw_model = GPT(self.model_config).to(self.device)
        self.optimizer = make_optimizer(self.raw_model, config, self.device)
        self.ckpt_file = checkpoint_path(self.run_dir)
        self.saved_step = None
        self.step, self.elapsed = self._resume() if config.resume else self._start_fresh()
        compile_it = should_compile(self.device, config.compile)
        self.model = self.dist.wrap(torch.compile(self.raw_model) if compile_it else self.raw_model)
        if self.dist.master:
            self._write_config()
        self.records = []
        self.last_val = None
        self.last_bpc = None
        self.train_ids = self.data.train.to(self.device)
        self.val_ids = self.data.val.to(self.device)
        self.n_eval = eval_windows(config, len(self.val_ids))
        self.batch_gen = torch.Generator(device=self.device)
        self.run_step = make_optimizer_step(self.model, self.optimizer, config, self.device,
                                            self.dist.enabled)

    def _resume(self) -> tuple[int, float]:
        """Load the folder's checkpoint into the model and optimizer: (its step, its seconds)."""
        if not self.ckpt_file.is_file():
            raise ValueError(f"Cannot resume: there is no checkpoint at {self.ckpt_file}.")
        ckpt = load_checkpoint(self.ckpt_file, tokenizer=self.tokenizer, device=self.device)
        if ckpt.model_config != self.model_config:
            raise CheckpointError(f"{self.ckpt_file} holds a model of another shape "
                                  f"({ckpt.model_config}); resume with the same model settings.")
        self.raw_model.load_state_dict(ckpt.model.state_dict())
        if ckpt.optimizer_state:
            load_optimizer_state(self.optimizer, ckpt.optimizer_state)
        if self.dist.master:
            for name in (METRICS_FILE, SAMPLES_FILE):
                keep_records_until(self.run_dir / name, ckpt.step)
        self.saved_step = ckpt.step
        return ckpt.step, float(ckpt.extra.get("elapsed_s", 0.0))

    def _start_fresh(self) -> tuple[int, float]:
        if self.dist.master:
            for name in (METRICS_FILE, SAMPLES_FILE):
                (self.run_dir / name).unlink(missing_ok=True)
        return 0, 0.0

    def _write_config(self) -> None:
        write_json(self.run_dir / CONFIG_FILE, {
            "train_config": self.config.to_dict(), "model_config": self.model_config.to_dict(),
            "tokenizer_kind": _tokenizer_kind(self.tokenizer),
            "vocab_size": self.tokenizer.vocab_size, "n_params": self.raw_model.num_params(),
            "device": self.device, "device_description": describe_device(self.device),
            "world_size": self.dist.world_size, **self.data.stats(self.config.block_size)})

    @property
    def done(self) -> bool:
        return self.step >= self.config.max_steps

    def save(self) -> None:
        """Checkpoint the model and optimizer where they stand, between turns."""
        self._checkpoint(self.elapsed)

    def _checkpoint(self, elapsed: float) -> None:
        """Rank 0 writes the checkpoint of this step, once."""
        if self.dist.master and self.saved_step != self.step:
            save_checkpoint(self.ckpt_file, self.raw_model, self.tokenizer, self.step,
                            self.config.to_dict(), self.optimizer,
                            extra={"elapsed_s": elapsed, **self.data.stats(self.config.block_size)})
            self.saved_step = self.step

    def result(self, status: TurnOutcome) -> TrainResult:
        checkpoint = self.ckpt_file if self.dist.master else None
        return TrainResult(status, self.step, self.last_val, self.last_bpc, checkpoint, self.records)

    def _stop_requested(self, hooks: Hooks) -> bool:
        """Rank 0 asks the hook; every rank stops at the same step."""
        asked = hooks.should_stop is not None and self.dist.master and bool(hooks.should_stop())
        return self.dist.any(asked)

    def advance(self, hooks: Hooks | None = None, until: float | None = None) -> TurnOutcome:
        """Train on from ``step``: to ``max_steps`` (``TurnOutcome.FINISHED``), to a stop asked for
        by ``hooks.should_stop`` (``STOPPED``), or until ``time.monotonic()`` passes ``until`` (``PAUSED``,
        single process only: ranks would not agree on the moment)."""
        hooks = hooks or Hooks()
        config = self.config
        torch.manual_seed(config.seed + self.dist.rank + self.step)  # dropout differs per rank and turn
        self.model.train()
        self.t_start = self.t_log = time.perf_counter()
        self.tokens_since_log = 0
        outcome = TurnOutcome.FINISHED
        try:
            while self.step < config.max_steps:
                if hooks.before_step is not None:
                    hooks.before_step()
                if self._stop_requested(hooks):
                    outcome = TurnOutcome.STOPPED
                    break
                if until is not None and time.monotonic() >= until:
                    outcome = TurnOutcome.PAUSED
                    break
                self._train_step(hooks)
        finally:
            self.elapsed += time.perf_counter() - self.t_start
        return outcome

    def _train_step(self, hooks: Hooks) -> None:
        config = self.config
        self.batch_gen.manual_seed(config.seed * 1_000_003 + self.step)  # the batch depends on the step alone
        x, y = get_batch(self.train_ids, config.batch_size, config.block_size, self.batch_gen,
                         self.dist.rank, self.dist.world_size)
        lr = get_lr(self.step, config)
        loss = self.run_step(x, y, lr)
        self.step += 1
        self.tokens_since_log += config.batch_size * config.block_size
        if self.dist.master and (self._evaluates(self.step) or self.step % config.log_interval == 0):
            self._log(self.step, loss, lr, hooks)

    def _evaluates(self, step: int) -> bool:
        return step % self.config.eval_interval == 0 or step == self.config.max_steps

    def _elapsed(self, clock: float) -> float:
        """Training seconds so far, across turns and resumes."""
        return self.elapsed + clock - self.t_start

    def _log(self, step: int, loss: torch.Tensor, lr: float, hooks: Hooks) -> None:
        """Record a logged step (evaluating and checkpointing on evaluation steps), then a sample
        when one is due."""
        train_loss = loss.item()  # waits for the device: only now is the clock below honest
        clock = time.perf_counter()
        record = {"step": step, "train_loss": train_loss, "lr": lr,
                  "tokens_per_s": self.tokens_since_log / max(clock - self.t_log, 1e-9),
                  "elapsed_s": self._elapsed(clock)}
        evaluates = self._evaluates(step)
        if evaluates:
            record.update(self._evaluate())
        append_jsonl(self.run_dir / METRICS_FILE, record)
        if evaluates:  # after its record: a GPT worker killed between the two resumes from the checkpoint
            self._checkpoint(record["elapsed_s"])  # before, which drops the record and logs it again
        self.records.append(record)
        if hooks.on_step is not None:
            hooks.on_step(record)
        config = self.config
        if config.sample_tokens and (evaluates or step % config.sample_interval == 0):
            self._sample(record)
        self.t_log = time.perf_counter()  # evaluation time is not training time
        self.tokens_since_log = 0

    def _sample(self, record: dict) -> None:
        """A sample at every evaluation (and every ``sample_interval`` steps), with the bits per
        character just measured: the page's history of samples sets what the model wrote beside how
        well it predicts, step after step (one sample at 150 could not be set beside one at 2,000)."""
        sample = {"step": record["step"], "text": sample_text(
            self.raw_model, self.tokenizer, self.device, self.config.sample_tokens, top_k=None)}
        if "val_bpc" in record:
            sample["val_bpc"] = record["val_bpc"]
        append_jsonl(self.run_dir / SAMPLES_FILE, sample)

    def _evaluate(self) -> dict:
        val = estimate_loss(self.raw_model, self.val_ids, self.config, self.device, self.n_eval)
        self.last_val = val
        self.last_bpc = self.data.bits_per_char(val)
        train_est = estimate_loss(self.raw_model, self.train_ids, self.config, self.device, self.n_eval)
        return {"val_loss": val, "train_loss_est": train_est, "val_bpc": self.last_bpc,
                "val_bpb": self.data.bits_per_byte(val)}


def _tokenizer_kind(tokenizer) -> str:
    """``"char"``, or e.g. ``"bpe-char+200"`` (variant and number of merges)."""
    merges = len(tokenizer.merge_triples)
    if not merges and tokenizer.variant == "char":
        return "char"
    return f"bpe-{tokenizer.variant}+{merges}"
