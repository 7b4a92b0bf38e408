"""Training the GPT: an importable ``train(config, run_dir, on_step, should_stop)`` and its thin
command-line front, ``python -m core.train``.

What a run writes to ``run_dir`` (rank 0 only when distributed):

- ``config.json``   the training config, the model config, device and data statistics;
- ``metrics.jsonl`` one JSON object per logged step: ``step, train_loss, lr, tokens_per_s,
  elapsed_s`` and, on evaluation steps, ``val_loss, train_loss_est, val_bpc, val_bpb``;
- ``samples.jsonl`` text generated at intervals: ``{"step": ..., "text": ...}``;
- ``status.json``   ``status`` (running / finished / stopped / failed), ``pid``, ``started``,
  ``ended``, ``error``;
- ``ckpt.pt``       the latest checkpoint (see ``core.checkpoint``).

Comparing tokenizers fairly: loss per token is not comparable between a character tokenizer and
a BPE one (a BPE token carries more text), so every evaluation also reports validation **bits per
character** and **bits per byte**: ``val_loss * val_tokens / val_chars / ln 2`` (and ``/ val_bytes``).
The text is split 90/10 *by characters* before tokenizing, so every tokenizer is scored on the very
same validation text.

Distributed: started under ``torchrun --nproc_per_node N``, the same entry point uses DDP (nccl on
CUDA, gloo on CPU).  Each step draws one global batch of ``batch_size`` windows from a generator
seeded by ``(seed, step)``; rank r trains on its ``batch_size / N`` slice, so N processes take the
same step one process would (up to float rounding, with dropout 0).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path

import torch

from .checkpoint import (CheckpointError, checkpoint_path, load_checkpoint, load_optimizer_state,
                         save_checkpoint)
from .corpus import read_corpus
from .device import autocast, describe_device, detect_device, should_compile, should_graph
from .locks import FileLock
from .model import GPT, GPTConfig
from .runfiles import (CONFIG_FILE, METRICS_FILE, SAMPLES_FILE, STATUS_FILE, TRAIN_LOCK_FILE,
                       append_jsonl, read_jsonl, write_json, write_text_atomic)
from .step import EagerStep, GraphStep
from .storage import load_tokenizer
from .tokenizer import BPETokenizer, CharTokenizer

TOKENIZERS = ("char", "bpe")


class RunLockedError(ValueError):
    """Another process is already training in this run folder."""


# tiny: a laptop CPU learns something in about a minute.  small: nanoGPT's shakespeare_char shape;
# its cosine schedule ends at 2,000 steps, not nanoGPT's 5,000: on Tiny Shakespeare validation loss
# is lowest near step 1,750 and only rises after (measured on an H100, docs/benchmarks.md).
PRESETS: dict[str, dict] = {
    "tiny": dict(n_layer=4, n_head=4, n_embd=128, block_size=64, batch_size=32, dropout=0.0,
                 lr=1e-3, min_lr=1e-4, max_steps=1000, warmup_steps=50, eval_interval=100,
                 eval_iters=20, log_interval=10, sample_interval=250),
    "small": dict(n_layer=6, n_head=6, n_embd=384, block_size=256, batch_size=64, dropout=0.2,
                  lr=1e-3, min_lr=1e-4, max_steps=2000, warmup_steps=100, eval_interval=250,
                  eval_iters=200, log_interval=10, sample_interval=500),
}


@dataclass
class TrainConfig:
    """Everything a run needs; saved as JSON in ``config.json`` and in every checkpoint."""

    corpus: str | None = None          # path of a UTF-8 text file (or pass ``text=`` to train())
    tokenizer: str = "char"            # "char" or "bpe" (trained on the corpus), or tokenizer_file
    merges: int = 200                  # BPE merges when tokenizer == "bpe"
    tokenizer_file: str | None = None  # a saved tokenizer JSON; overrides ``tokenizer``
    preset: str = "tiny"
    # the model
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    block_size: int = 64
    dropout: float = 0.0
    bias: bool = True
    # optimisation
    batch_size: int = 32               # the global batch, split across processes under DDP
    max_steps: int = 1000
    lr: float = 1e-3
    min_lr: float = 1e-4
    warmup_steps: int = 50             # capped at a fifth of max_steps, so short runs still peak
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.99
    grad_clip: float = 1.0             # 0 turns clipping off
    # reporting
    eval_interval: int = 100
    eval_iters: int = 20
    log_interval: int = 10
    sample_interval: int = 250
    sample_tokens: int = 200
    # where and how
    device: str = "auto"
    compile: bool | None = None        # torch.compile; None: see core.device.should_compile
    cuda_graph: bool | None = None     # replay steps as a CUDA graph; None: on CUDA, one process
    seed: int = 1337
    threads: int = 0                   # CPU threads for torch; 0 leaves torch's default
    resume: bool = False

    def __post_init__(self) -> None:
        if self.tokenizer not in TOKENIZERS:
            raise ValueError(f"tokenizer must be one of {', '.join(TOKENIZERS)}, not {self.tokenizer!r}.")
        for name in ("max_steps", "batch_size", "eval_interval", "eval_iters", "log_interval",
                     "sample_interval", "n_layer", "n_head", "n_embd", "block_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive whole number, not {value!r}.")
        for name in ("merges", "warmup_steps", "sample_tokens"):
            if int(getattr(self, name)) < 0:
                raise ValueError(f"{name} must not be negative, not {getattr(self, name)!r}.")
        if not (self.lr > 0 and 0 <= self.min_lr <= self.lr):
            raise ValueError(f"Need lr > 0 and 0 <= min_lr <= lr (got lr={self.lr}, min_lr={self.min_lr}).")
        GPTConfig(vocab_size=1, block_size=self.block_size, n_layer=self.n_layer,
                  n_head=self.n_head, n_embd=self.n_embd, dropout=self.dropout)  # same checks

    def model_config(self, vocab_size: int) -> GPTConfig:
        return GPTConfig(vocab_size=vocab_size, block_size=self.block_size, n_layer=self.n_layer,
                         n_head=self.n_head, n_embd=self.n_embd, dropout=self.dropout, bias=self.bias)

    def to_dict(self) -> dict:
        return asdict(self)


def make_config(preset: str = "tiny", **overrides) -> TrainConfig:
    """A preset's config with any field overridden: ``make_config("tiny", n_layer=2)``."""
    if preset not in PRESETS:
        raise ValueError(f"Unknown preset {preset!r}: choose one of {', '.join(PRESETS)}.")
    known = {f.name for f in fields(TrainConfig)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise ValueError(f"Unknown training setting(s): {', '.join(unknown)}.")
    return TrainConfig(**{**PRESETS[preset], "preset": preset, **overrides})


# -- data ---------------------------------------------------------------------------------------
@dataclass
class Data:
    train: torch.Tensor  # token ids, int64, on the CPU
    val: torch.Tensor
    val_chars: int
    val_bytes: int

    @property
    def chars_per_token(self) -> float:
        return self.val_chars / max(1, len(self.val))

    def bits_per_char(self, val_loss: float) -> float:
        return val_loss * len(self.val) / self.val_chars / math.log(2)

    def bits_per_byte(self, val_loss: float) -> float:
        return val_loss * len(self.val) / self.val_bytes / math.log(2)

    def stats(self, block_size: int) -> dict:
        return {"train_tokens": len(self.train), "val_tokens": len(self.val),
                "val_chars": self.val_chars, "val_bytes": self.val_bytes,
                "chars_per_token": self.chars_per_token,
                "context_chars": self.chars_per_token * block_size}


def build_tokenizer(config: TrainConfig, text: str):
    if config.tokenizer_file:
        return load_tokenizer(config.tokenizer_file)
    if config.tokenizer == "bpe":
        return BPETokenizer.from_text(text, config.merges)
    return CharTokenizer.from_text(text)


def _tokenizer_kind(tokenizer) -> str:
    """``"char"``, or e.g. ``"bpe-char+200"`` (variant and number of merges)."""
    merges = len(tokenizer.merge_triples)
    if not merges and tokenizer.variant == "char":
        return "char"
    return f"bpe-{tokenizer.variant}+{merges}"


def prepare_data(text: str, tokenizer, block_size: int, val_fraction: float = 0.1) -> Data:
    """Split the text 90/10 by characters, then tokenize each part."""
    if not text:
        raise ValueError("The corpus is empty: there is nothing to train on.")
    cut = int(len(text) * (1 - val_fraction))
    train_text, val_text = text[:cut], text[cut:]
    train_ids = torch.tensor(tokenizer.encode(train_text), dtype=torch.long)
    val_ids = torch.tensor(tokenizer.encode(val_text), dtype=torch.long)
    for name, ids in (("training", train_ids), ("validation", val_ids)):
        if len(ids) < block_size + 1:
            raise ValueError(
                f"The {name} part of the corpus is only {len(ids)} tokens long; block_size "
                f"{block_size} needs at least {block_size + 1}. Use a longer corpus or a smaller "
                f"block size.")
    return Data(train_ids, val_ids, len(val_text), len(val_text.encode("utf-8")))


def get_batch(ids: torch.Tensor, batch_size: int, block_size: int, generator: torch.Generator,
              rank: int = 0, world_size: int = 1):
    """``batch_size`` random windows (x, y = x shifted by one); rank r gets its slice of them.

    The start positions are drawn on ``ids``' own device (``generator`` must live there too) and the
    windows gathered there in one indexing operation, so a GPU step never waits for the host."""
    ix = torch.randint(len(ids) - block_size, (batch_size,), generator=generator, device=ids.device)
    per_rank = batch_size // world_size
    ix = ix[rank * per_rank:(rank + 1) * per_rank]
    windows = ids[ix[:, None] + torch.arange(block_size + 1, device=ids.device)]  # (b, T + 1)
    return windows[:, :-1], windows[:, 1:]


def get_lr(step: int, config: TrainConfig) -> float:
    """Linear warmup, then cosine decay from ``lr`` to ``min_lr`` at ``max_steps``."""
    warmup = min(config.warmup_steps, config.max_steps // 5)
    if step < warmup:
        return config.lr * (step + 1) / (warmup + 1)
    if step >= config.max_steps:
        return config.min_lr
    ratio = (step - warmup) / max(1, config.max_steps - warmup)
    return config.min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (config.lr - config.min_lr)


def eval_windows(config: TrainConfig, val_tokens: int) -> int:
    """How many windows an evaluation scores: ``eval_iters`` batches' worth, but never more than
    the validation split holds, so a small split is scored whole and the train estimate costs the
    same as the validation one."""
    return max(1, min(config.eval_iters * config.batch_size, (val_tokens - 1) // config.block_size))


@torch.no_grad()
def estimate_loss(model: GPT, ids: torch.Tensor, config: TrainConfig, device: str,
                  n_windows: int) -> float:
    """Mean loss over ``n_windows`` evenly spaced, non-overlapping windows of ``ids``.

    The same windows every time, so the curve moves only when the model does; each token is scored
    at a context position spread evenly over 0..T-1, as random windows would on average."""
    model.eval()
    T = config.block_size
    available = (len(ids) - 1) // T
    n = min(n_windows, available)
    starts = torch.arange(n, device=ids.device) * available // n * T
    total = 0.0
    for batch in starts.split(config.batch_size):
        windows = ids[batch[:, None] + torch.arange(T + 1, device=ids.device)]
        with autocast(device):
            _, loss = model(windows[:, :-1].to(device), windows[:, 1:].to(device))
        total += loss.float() * len(batch)
    model.train()
    return float(total) / n


def sample_text(model: GPT, tokenizer, device: str, max_new_tokens: int, prompt: str = "\n",
                temperature: float = 0.8, top_k: int | None = None) -> str:
    """Generate from ``prompt`` (may raise UnknownCharacterError); returns prompt + continuation."""
    ids = tokenizer.encode(prompt, unknown="skip") if prompt == "\n" else tokenizer.encode(prompt)
    if not ids:
        ids = [0]
    was_training = model.training
    model.eval()
    with autocast(device):
        out = model.generate(torch.tensor([ids], dtype=torch.long, device=device), max_new_tokens,
                             temperature=temperature, top_k=top_k)
    model.train(was_training)
    return tokenizer.decode(out[0].tolist())


# -- files --------------------------------------------------------------------------------------
def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _keep_records_until(path: Path, step: int) -> None:
    """Drop the records a killed run logged after its last checkpoint: the resumed run logs
    those steps again, and a step must not appear twice on a chart."""
    if path.is_file():
        kept = [r for r in read_jsonl(path) if r.get("step", 0) <= step]
        write_text_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept))


# -- distributed --------------------------------------------------------------------------------
@dataclass
class _Dist:
    rank: int = 0
    local_rank: int = 0
    world_size: int = 1

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def master(self) -> bool:
        return self.rank == 0


def _setup_distributed(device: str) -> tuple[_Dist, str]:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1 or "RANK" not in os.environ:
        return _Dist(), device
    import torch.distributed as dist

    dist_info = _Dist(int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0")), world)
    if device.startswith("cuda"):
        device = f"cuda:{dist_info.local_rank}"
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.startswith("cuda") else "gloo")
    return dist_info, device


# -- the loop -----------------------------------------------------------------------------------
@dataclass
class TrainResult:
    status: str            # "finished" or "stopped"
    step: int
    val_loss: float | None
    val_bpc: float | None
    checkpoint: Path | None
    records: list = field(default_factory=list)


def train(config: TrainConfig, run_dir, on_step=None, should_stop=None, *, text: str | None = None,
          tokenizer=None) -> TrainResult:
    """Train a GPT as ``config`` says, writing to ``run_dir``; see the module docstring.

    ``on_step(record)`` gets every logged metrics record; ``should_stop()`` is asked before each
    step and, when True, ends the run cleanly (final checkpoint, status "stopped").  ``text`` and
    ``tokenizer`` replace reading ``config.corpus`` and building ``config.tokenizer``.  Errors
    (bad settings, a too-short corpus, a mismatched checkpoint) raise ``ValueError``.
    """
    run_dir = Path(run_dir)
    if config.threads:
        torch.set_num_threads(config.threads)
    device = detect_device(config.device)
    dist_info, device = _setup_distributed(device)
    master = dist_info.master
    if config.batch_size % dist_info.world_size:
        raise ValueError(f"batch_size {config.batch_size} must be divisible by the number of "
                         f"processes ({dist_info.world_size}).")
    status = {"status": "running", "pid": os.getpid(), "started": _now(), "ended": None,
              "error": None, "max_steps": config.max_steps}
    lock = FileLock(run_dir / TRAIN_LOCK_FILE)
    if master:
        run_dir.mkdir(parents=True, exist_ok=True)
        if not lock.acquire():  # before any write: a second trainer leaves the folder untouched
            raise RunLockedError(f"Another process is already training in {run_dir}; "
                                 f"nothing was changed.")
        write_json(run_dir / STATUS_FILE, status)
    try:
        result = _train(config, run_dir, device, dist_info, on_step, should_stop, text, tokenizer)
    except BaseException as exc:
        if master:
            message = str(exc) or type(exc).__name__
            write_json(run_dir / STATUS_FILE, {**status, "status": "failed", "ended": _now(),
                                               "error": message})
        raise
    else:
        if master:
            write_json(run_dir / STATUS_FILE, {**status, "status": result.status, "ended": _now(),
                                               "step": result.step})
    finally:
        if dist_info.enabled:
            import torch.distributed as dist

            if dist.is_initialized():
                dist.destroy_process_group()
        lock.release()  # after the last write: the next trainer sees the final status
    return result


def _train(config, run_dir, device, dist_info, on_step, should_stop, text, tokenizer) -> TrainResult:
    master, rank, world = dist_info.master, dist_info.rank, dist_info.world_size
    if text is None:
        if not config.corpus:
            raise ValueError("No corpus: give a corpus file (--corpus PATH).")
        text = read_corpus(config.corpus)
    if tokenizer is None:
        tokenizer = build_tokenizer(config, text)
    data = prepare_data(text, tokenizer, config.block_size)
    model_config = config.model_config(tokenizer.vocab_size)

    torch.manual_seed(config.seed)  # the same initial weights on every rank
    model = GPT(model_config).to(device)
    optimizer = make_optimizer(model, config, device)
    start_step, elapsed_before = 0, 0.0
    ckpt_file = checkpoint_path(run_dir)
    if config.resume:
        if not ckpt_file.is_file():
            raise ValueError(f"Cannot resume: there is no checkpoint at {ckpt_file}.")
        ckpt = load_checkpoint(ckpt_file, tokenizer=tokenizer, device=device)
        if ckpt.model_config != model_config:
            raise CheckpointError(f"{ckpt_file} holds a model of another shape "
                                  f"({ckpt.model_config}); resume with the same model settings.")
        model.load_state_dict(ckpt.model.state_dict())
        if ckpt.optimizer_state:
            load_optimizer_state(optimizer, ckpt.optimizer_state)
        start_step = ckpt.step
        elapsed_before = float(ckpt.extra.get("elapsed_s", 0.0))
        if master:
            for name in (METRICS_FILE, SAMPLES_FILE):
                _keep_records_until(run_dir / name, start_step)
    elif master:
        for name in (METRICS_FILE, SAMPLES_FILE):
            (run_dir / name).unlink(missing_ok=True)
    torch.manual_seed(config.seed + rank + start_step)  # dropout differs per rank and per resume

    raw_model = model
    if should_compile(device, config.compile):
        model = torch.compile(model)
    if dist_info.enabled:
        from torch.nn.parallel import DistributedDataParallel

        model = DistributedDataParallel(model, device_ids=[dist_info.local_rank]
                                        if device.startswith("cuda") else None)
    if master:
        write_json(run_dir / CONFIG_FILE, {
            "train_config": config.to_dict(), "model_config": model_config.to_dict(),
            "tokenizer_kind": _tokenizer_kind(tokenizer),
            "vocab_size": tokenizer.vocab_size, "n_params": raw_model.num_params(),
            "device": device, "device_description": describe_device(device),
            "world_size": world, **data.stats(config.block_size)})

    def checkpoint(step: int, elapsed: float) -> Path:
        return save_checkpoint(ckpt_file, raw_model, tokenizer, step, config.to_dict(), optimizer,
                               extra={"elapsed_s": elapsed, **data.stats(config.block_size)})

    def stop_requested() -> bool:
        flag = bool(should_stop()) if (should_stop is not None and master) else False
        if dist_info.enabled:  # rank 0 decides; everyone stops at the same step
            import torch.distributed as dist

            t = torch.tensor([1.0 if flag else 0.0], device=device)
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            flag = bool(t.item())
        return flag

    train_ids, val_ids = data.train.to(device), data.val.to(device)
    n_eval = eval_windows(config, len(val_ids))
    batch_gen = torch.Generator(device=device)
    model.train()
    t_start = time.perf_counter()
    t_log, tokens_since_log, step = t_start, 0, start_step
    records, last_val, last_bpc, saved_step, status = [], None, None, None, "finished"
    tokens_per_step = config.batch_size * config.block_size
    run_step = make_step(model, optimizer, config, device, dist_info.enabled)
    while step < config.max_steps:
        if stop_requested():
            status = "stopped"
            break
        batch_gen.manual_seed(config.seed * 1_000_003 + step)  # the batch depends on the step alone
        x, y = get_batch(train_ids, config.batch_size, config.block_size, batch_gen, rank, world)
        lr = get_lr(step, config)
        loss = run_step(x, y, lr)
        step += 1
        tokens_since_log += tokens_per_step

        last = step == config.max_steps
        evaluate = step % config.eval_interval == 0 or last
        if not (master and (evaluate or step % config.log_interval == 0)):
            continue
        train_loss = loss.item()  # waits for the device: only now is the clock below honest
        now = time.perf_counter()
        record = {"step": step, "train_loss": train_loss, "lr": lr,
                  "tokens_per_s": tokens_since_log / max(now - t_log, 1e-9),
                  "elapsed_s": elapsed_before + now - t_start}
        if evaluate:
            val = estimate_loss(raw_model, val_ids, config, device, n_eval)
            last_val, last_bpc = val, data.bits_per_char(val)
            record.update(val_loss=val, train_loss_est=estimate_loss(raw_model, train_ids, config,
                                                                     device, n_eval),
                          val_bpc=last_bpc, val_bpb=data.bits_per_byte(val))
            checkpoint(step, record["elapsed_s"])
            saved_step = step
        append_jsonl(run_dir / METRICS_FILE, record)
        records.append(record)
        if on_step is not None:
            on_step(record)
        if config.sample_tokens and (step % config.sample_interval == 0 or last):
            append_jsonl(run_dir / SAMPLES_FILE, {"step": step, "text": sample_text(
                raw_model, tokenizer, device, config.sample_tokens, top_k=None)})
        t_log, tokens_since_log = time.perf_counter(), 0  # evaluation time is not training time

    if master and saved_step != step:
        checkpoint(step, elapsed_before + time.perf_counter() - t_start)
    return TrainResult(status, step, last_val, last_bpc, ckpt_file if master else None, records)


def make_optimizer(model: GPT, config: TrainConfig, device: str) -> torch.optim.AdamW:
    return torch.optim.AdamW(model.optimizer_groups(config.weight_decay), lr=config.lr,
                             betas=(config.beta1, config.beta2), fused=device.startswith("cuda"))


def make_step(model, optimizer, config: TrainConfig, device: str, distributed: bool = False):
    """The step runner a run uses here: replayed from a CUDA graph, or eager (see core.step)."""
    kind = GraphStep if should_graph(device, config.cuda_graph, distributed) else EagerStep
    return kind(model, optimizer, config.grad_clip, device)


def time_step(config: TrainConfig, vocab_size: int, device: str = "auto", repeats: int = 2) -> float:
    """Seconds one optimizer step of ``config`` takes here, once steady (random data).  A quick
    estimate for "how long will this run take", before launching it."""
    device = detect_device(device)
    model = GPT(config.model_config(vocab_size)).to(device)
    run_step = make_step(model, make_optimizer(model, config, device), config, device)
    x = torch.randint(vocab_size, (config.batch_size, config.block_size), device=device)
    for _ in range(run_step.warmup_steps):
        run_step(x, x, config.lr)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(repeats):
        loss = run_step(x, x, config.lr)
    loss.item()  # waits for the device
    return (time.perf_counter() - t0) / repeats


# -- command line -------------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m core.train",
                                description="Train a small GPT on a text corpus.")
    p.add_argument("--run-dir", required=True, help="folder for metrics, samples and checkpoints")
    p.add_argument("--corpus", help="UTF-8 text file to train on")
    p.add_argument("--tokenizer", choices=TOKENIZERS, help="char (default) or bpe")
    p.add_argument("--merges", type=int, help="BPE merges (with --tokenizer bpe)")
    p.add_argument("--tokenizer-file", help="a saved tokenizer JSON instead of --tokenizer")
    p.add_argument("--preset", choices=sorted(PRESETS), help="tiny (default) or small")
    p.add_argument("--config", help="JSON file of training settings (flags given here win)")
    p.add_argument("--device", help="auto (default), cpu, cuda or mps")
    p.add_argument("--resume", action="store_true", default=None,
                   help="continue from the checkpoint in --run-dir")
    for name, kind in (("n_layer", int), ("n_head", int), ("n_embd", int), ("block_size", int),
                       ("dropout", float), ("batch_size", int), ("max_steps", int), ("lr", float),
                       ("min_lr", float), ("warmup_steps", int), ("weight_decay", float),
                       ("grad_clip", float), ("eval_interval", int), ("eval_iters", int),
                       ("log_interval", int), ("sample_interval", int), ("sample_tokens", int),
                       ("seed", int), ("threads", int)):
        p.add_argument("--" + name.replace("_", "-"), type=kind, dest=name)
    p.add_argument("--bias", action=argparse.BooleanOptionalAction, default=None)
    p.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None,
                   help="torch.compile the model (default: off; it pays only on long runs)")
    p.add_argument("--cuda-graph", action=argparse.BooleanOptionalAction, default=None,
                   help="record each step once as a CUDA graph and replay it (default: on CUDA)")
    return p


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """Preset defaults, then the --config file, then the flags given explicitly."""
    settings = {}
    if args.config:
        try:
            settings = json.loads(Path(args.config).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"Cannot read the config file {args.config}: {exc}") from None
    flags = {k: v for k, v in vars(args).items() if v is not None and k not in ("run_dir", "config")}
    settings.update(flags)
    preset = settings.pop("preset", None) or "tiny"
    return make_config(preset, **settings)


def _format(record: dict, max_steps: int) -> str:
    line = (f"step {record['step']:>6}/{max_steps}  loss {record['train_loss']:.4f}  "
            f"lr {record['lr']:.2e}  {record['tokens_per_s']:,.0f} tok/s  {record['elapsed_s']:.1f}s")
    if "val_loss" in record:
        line += f"  | val {record['val_loss']:.4f}  {record['val_bpc']:.3f} bits/char"
    return line


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    stop = {"flag": False}

    def request_stop(signum, frame):
        stop["flag"] = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    master = int(os.environ.get("RANK", "0")) == 0
    try:
        config = config_from_args(args)
        if config.corpus is None:
            raise ValueError("No corpus: give a corpus file with --corpus PATH.")
        if master:
            print(f"training {config.preset} GPT on {config.corpus} -> {args.run_dir}", flush=True)
        result = train(config, args.run_dir,
                       on_step=(lambda r: print(_format(r, config.max_steps), flush=True)) if master else None,
                       should_stop=lambda: stop["flag"])
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 1
    if master:
        print(f"{result.status} at step {result.step}; checkpoint {result.checkpoint}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
