"""Model work the web server must not do itself: timing a training step, and sampling from a
checkpoint, each in a child process with a time limit and a memory limit.

``python -m core.room.probe estimate --config JSON --vocab N`` prints ``{"seconds": ...}``;
``python -m core.room.probe sample --run-dir DIR --prompt ... --tokens N`` prints ``{"text": ...}``;
either prints ``{"error": ...}`` for bad input.  A forward pass of a big model in the server
process would stall every visitor's page (a big one takes several GB); here it costs a short-lived
process, killed at ``timeout`` seconds, whose address space is capped (on CPU: CUDA maps far
more virtual memory than it uses, so there the model bounds of ``core.room.limits`` are the guard).

Why the estimate is timed the way it is: on a machine shared with other busy processes a step takes
anywhere from its time to many times it from one second to the next (torch threads that spin while
they wait: ``core.room.limits.CPU_SHARING_ENV``; why: docs/benchmarks.md, "Time-per-step estimate"),
so no single moment, nor a figure cached from one, may decide.  The child starts like a GPT
worker (same environment, threads and device), runs the loop's own iteration (``get_batch``,
``get_lr``, ``make_optimizer_step``) past its untimed settle steps (``settle_steps``: allocation,
kernel loading), and reports the median of several blocks of steps, each ended by reading the loss
as the loop does when it logs: the figure the run's metrics will show
(``tokens_per_s``), measured now, never cached.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from ..bpe import UnknownCharacterError
from ..gpt.checkpoint import checkpoint_path, load_checkpoint
from ..gpt.config import TrainConfig
from ..gpt.data import get_batch
from ..gpt.device import detect_device, should_compile
from ..gpt.evaluate import sample_text
from .limits import yield_cpu_to_server
from ..gpt.model import GPT
from .spawn import PROBE, ROOT, child_env, module_command
from ..gpt.optimizer_step import get_lr, make_optimizer, make_optimizer_step

DEFAULT_MEMORY = 4 * 2**30   # bytes of address space; importing torch alone maps a good part of it
BLOCK_S = 0.25               # a timed block of steps lasts at least this long
BLOCKS = 9                   # the estimate is the median of this many blocks,
BUDGET_S = 8.0               # or of fewer (3 at least) where their steps would take longer


class ProbeError(ValueError):
    """The probe failed, ran out of time or memory, or was given bad input (the message says)."""


def _run(args: list[str], timeout: float, memory: int | None) -> dict:
    cmd = module_command(PROBE, *args, "--memory", str(memory or 0))
    try:
        out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                             stdin=subprocess.DEVNULL, env=child_env())
    except subprocess.TimeoutExpired:
        raise ProbeError(f"This took longer than {timeout:.0f} s and was stopped; try a smaller "
                         f"model or fewer tokens.") from None
    lines = out.stdout.strip().splitlines()
    try:
        result = json.loads(lines[-1]) if lines else {}
    except ValueError:
        result = {}
    if "error" in result:
        raise ProbeError(result["error"])
    if out.returncode != 0 or not result:
        tail = (out.stderr.strip().splitlines() or ["no output"])[-1][:200]
        hint = " (out of memory?)" if "MemoryError" in out.stderr or out.returncode < 0 else ""
        raise ProbeError(f"The helper process failed{hint}: {tail}")
    return result


@dataclass(frozen=True)
class StepEstimate:
    """A step time measured now: what a page needs to say what the figure assumes."""

    seconds: float    # per optimizer step, the median of the timed blocks
    device: str       # e.g. "cpu" or "cuda"
    threads: int      # torch's CPU threads in the measuring process (the run's own count)
    steps: int        # steps timed after the settle steps


def estimate_step(config, vocab_size: int, *, timeout: float = 120.0,
                  memory: int | None = DEFAULT_MEMORY) -> StepEstimate:
    """How long one optimizer step of ``config`` (a ``TrainConfig``: its model, batch, device and
    ``threads``, which should be the run's, see ``core.room.limits.threads_per_run``) takes on this
    machine now, with a vocabulary of ``vocab_size``, measured in a child process.  Whatever else
    runs on the machine meanwhile (other runs, other work) is in the figure, as it will be in the
    run's; nothing that starts later is."""
    device = detect_device(config.device)
    memory = None if device.startswith("cuda") else memory
    out = _run(["estimate", "--config", json.dumps({**config.to_dict(), "device": device}),
                "--vocab", str(int(vocab_size))], timeout, memory)
    return StepEstimate(float(out["seconds"]), out["device"], int(out["threads"]), int(out["steps"]))


def run_step_seconds(metrics: list[dict], tokens_per_step: int) -> float | None:
    """A run's steady-state seconds per step, read back from its metrics: the median over its
    logged blocks of steps (``tokens_per_s`` leaves evaluation out), the first block, which holds
    the settle steps, left out.  The figure :func:`estimate_step` predicts; None before two blocks."""
    blocks = [tokens_per_step / r["tokens_per_s"] for r in metrics[1:] if r.get("tokens_per_s")]
    return statistics.median(blocks) if blocks else None


MAX_PROMPT_CHARS = 10_000


def sample_checkpoint(run_dir, prompt: str, max_new_tokens: int, temperature: float = 0.8,
                      top_k: int | None = None, *, timeout: float = 60.0,
                      memory: int | None = DEFAULT_MEMORY) -> str:
    """Text generated on the CPU from the run's checkpoint (verified, see core.gpt.checkpoint).
    A prompt over ``MAX_PROMPT_CHARS`` is refused (``ValueError``): it travels on the child's
    command line, which the system bounds, and the model reads only its last ``block_size``
    tokens anyway."""
    if len(prompt) > MAX_PROMPT_CHARS:
        raise ValueError(f"The prompt is {len(prompt):,} characters long; at most {MAX_PROMPT_CHARS:,} "
                         "are sent to the model (it reads only its last few hundred tokens).")
    return _run(["sample", "--run-dir", str(Path(run_dir).resolve()), "--prompt", prompt,
                 "--tokens", str(int(max_new_tokens)), "--temperature", str(float(temperature)),
                 "--top-k", str(int(top_k or 0))], timeout, memory)["text"]


# -- in the child ---------------------------------------------------------------------------------
def time_steps(config: TrainConfig, vocab_size: int, device: str) -> tuple[float, int]:
    """(median seconds per step, steps timed): ``config`` trained on random tokens by the
    training loop's own iteration (``core.gpt.loop``), in blocks of steps that each end by reading
    the loss, as the loop's logging does, so the device has really finished them."""
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
    first = block(1)
    n = max(1, math.ceil(BLOCK_S / first))
    blocks = max(3, min(BLOCKS, int(BUDGET_S / (n * first))))
    return statistics.median(block(n) for _ in range(blocks)), n * blocks


def _estimate(args) -> dict:
    config = TrainConfig(**json.loads(args.config))
    if config.threads:  # as core.gpt.loop.train does
        torch.set_num_threads(config.threads)
    seconds, steps = time_steps(config, args.vocab, config.device)
    return {"seconds": seconds, "device": config.device, "threads": torch.get_num_threads(),
            "steps": steps}


def _sample(args) -> dict:
    torch.set_num_threads(1)
    ckpt = load_checkpoint(checkpoint_path(args.run_dir))
    try:
        text = sample_text(ckpt.model, ckpt.tokenizer, "cpu", args.tokens, prompt=args.prompt or "\n",
                           temperature=args.temperature, top_k=args.top_k or None)
    except UnknownCharacterError as exc:
        raise ValueError(f"The prompt cannot be encoded with this run's tokenizer: {exc}") from None
    return {"text": text}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m core.room.probe")
    p.add_argument("what", choices=("estimate", "sample"))
    p.add_argument("--memory", type=int, default=0, help="address-space limit in bytes (0: none)")
    p.add_argument("--config")
    p.add_argument("--vocab", type=int, default=0)
    p.add_argument("--run-dir")
    p.add_argument("--prompt", default="\n")
    p.add_argument("--tokens", type=int, default=200)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--top-k", type=int, default=0)
    args = p.parse_args(argv)
    if args.memory:
        resource.setrlimit(resource.RLIMIT_AS, (args.memory, args.memory))
    try:
        result = (_estimate if args.what == "estimate" else _sample)(args)
    except (ValueError, OSError) as exc:
        result = {"error": str(exc)}
    except (MemoryError, RuntimeError) as exc:  # torch's allocator raises RuntimeError
        if not isinstance(exc, MemoryError) and "allocate" not in str(exc):
            raise
        result = {"error": "This needs more memory than the server allows for it; try a smaller "
                           "model or fewer tokens."}
    print(json.dumps(result, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["estimate"]:
        yield_cpu_to_server()  # at the GPT worker's priority, which it times; a sample has someone waiting
    sys.exit(main())
