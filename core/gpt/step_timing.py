"""How long a training step of a config takes on this device, and an evaluation batch and a sampled
token beside it: the training loop's own iteration (``core.gpt.loop``) timed on random tokens.  Run
in a child process by ``core.room.probe``, which says why the figure is taken this way.
"""

from __future__ import annotations

import math
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from ..bpe import CharTokenizer
from .checkpoint import save_checkpoint
from .config import TrainConfig
from .data import get_batch
from .device import should_compile
from .evaluate import estimate_loss
from .model import GPT
from .optimizer_step import get_lr, make_optimizer, make_optimizer_step

BLOCK_S = 0.25               # a timed block of steps lasts at least this long
BLOCKS = 9                   # the estimate is the median of this many blocks,
BUDGET_S = 8.0               # or of fewer (3 at least) where their steps would take longer
SAMPLE_TIMED = 32            # tokens sampled to time one (a sample is ``sample_tokens`` of them)


@dataclass(frozen=True)
class TimedSteps:
    """What :func:`time_steps` measured, and the model and optimizer it trained."""

    seconds: float     # median seconds per step
    steps: int         # steps timed after the settle steps
    ready_s: float     # from the model's making to its first steady step: the model on its device
                       # (a GPU's context started), the settle steps (a CUDA graph recorded)
    model: GPT
    optimizer: torch.optim.Optimizer


def time_steps(config: TrainConfig, vocab_size: int, device: str) -> TimedSteps:
    """``config`` trained on random tokens by the training loop's own iteration (``core.gpt.loop``),
    in blocks of steps that each end by reading the loss, as the loop's logging does, so the device
    has really finished them."""
    began = time.perf_counter()
    model = GPT(config.model_config(vocab_size)).to(device)
    optimizer = make_optimizer(model, config, device)
    compiled = torch.compile(model) if should_compile(device, config.compile) else model
    run_step = make_optimizer_step(compiled, optimizer, config, device)
    ids = torch.randint(vocab_size, (8 * config.block_size + 1,), device=device)
    batch_gen = torch.Generator(device=device)
    step = 0
    model.train()

    def block(n: int) -> float:
        nonlocal step
        t0 = time.perf_counter()
        for _ in range(n):
            batch_gen.manual_seed(config.seed * 1_000_003 + step)
            x, y = get_batch(ids, config.batch_size, config.block_size, batch_gen)
            loss = run_step(x, y, get_lr(step, config))
            step += 1
        loss.item()
        return (time.perf_counter() - t0) / n

    block(run_step.settle_steps)  # allocation, kernel loading, a CUDA graph's recording
    ready_s = time.perf_counter() - began
    first = block(1)
    n = max(1, math.ceil(BLOCK_S / first))
    blocks = max(3, min(BLOCKS, int(BUDGET_S / (n * first))))
    seconds = statistics.median(block(n) for _ in range(blocks))
    return TimedSteps(seconds, n * blocks, ready_s, model, optimizer)


def time_checkpoint(timed: TimedSteps, config: TrainConfig) -> float:
    """Seconds to write a checkpoint of the timed model and its optimizer, as a run does at each
    evaluation (``core.gpt.checkpoint.save_checkpoint``: copied off the device, hashed, written), to
    the system's temporary folder.  A one-character tokenizer stands in for the run's: its share of
    the file is small beside the tensors', whose embedding holds a row for each of its tokens."""
    tokenizer = CharTokenizer(["a"])
    with tempfile.TemporaryDirectory() as folder:
        t0 = time.perf_counter()
        save_checkpoint(Path(folder) / "checkpoint.pt", timed.model, tokenizer, 0, config.to_dict(),
                        timed.optimizer)
        return time.perf_counter() - t0


def time_reading(model: GPT, config: TrainConfig, vocab_size: int, device: str) -> tuple[float, float, float]:
    """(seconds for one evaluation batch, seconds for one sampled token, what the first evaluation
    and sample cost once beyond those): the loop's own ``estimate_loss`` and ``sample_text`` on
    random tokens, each the median of three after a first call.  The first call's excess is paid
    once by a run, at its first evaluation: on a GPU, seconds of kernels loaded for the model's
    evaluation shapes, which the median leaves out (why: docs/benchmarks.md, "Time-per-step estimate")."""
    ids = torch.randint(vocab_size, (4 * config.batch_size * config.block_size + 1,), device=device)
    windows = min(config.batch_size, (len(ids) - 1) // config.block_size)

    def evaluation() -> float:
        t0 = time.perf_counter()
        estimate_loss(model, ids, config, device, windows)
        return time.perf_counter() - t0

    tokens = min(SAMPLE_TIMED, config.sample_tokens or SAMPLE_TIMED)
    prompt = torch.zeros((1, 1), dtype=torch.long, device=device)

    def sample() -> float:
        t0 = time.perf_counter()
        with torch.no_grad():
            model.generate(prompt, tokens, temperature=1.0)
        return (time.perf_counter() - t0) / tokens

    model.eval()
    first_evaluation, first_token = evaluation(), sample()
    eval_s = statistics.median(evaluation() for _ in range(3))
    token_s = statistics.median(sample() for _ in range(3))
    model.train()
    return eval_s, token_s, max(0.0, first_evaluation - eval_s) + max(0.0, first_token - token_s) * tokens
