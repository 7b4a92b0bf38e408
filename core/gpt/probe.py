"""Model work the web server must not do itself: timing a training step, and sampling from a
checkpoint, each in a child process with a time limit and a memory limit.

``python -m core.gpt.probe estimate --config JSON --vocab N`` prints ``{"seconds": ...}``;
``python -m core.gpt.probe sample --run-dir DIR --prompt ... --tokens N`` prints ``{"text": ...}``;
either prints ``{"error": ...}`` for bad input.  A forward pass of a big model in the server
process would stall every visitor's page (and once took 7.6 GB); here it costs a short-lived
process, killed at ``timeout`` seconds, whose address space is capped (on CPU: CUDA maps far
more virtual memory than it uses, so there the model bounds of ``core.gpt.limits`` are the guard).
The estimate uses the run's own settings, device and thread count, so it times what the run
will do.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path

import torch

from ..bpe import UnknownCharacterError
from .checkpoint import checkpoint_path, load_checkpoint
from .config import TrainConfig
from .device import detect_device
from .evaluate import sample_text
from .spawn import PROBE, ROOT, child_env, module_command
from .step import time_step

DEFAULT_MEMORY = 4 * 2**30   # bytes of address space; importing torch alone maps ~1.5 GB


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


def estimate_step_seconds(config, vocab_size: int, *, timeout: float = 120.0,
                          memory: int | None = DEFAULT_MEMORY) -> float:
    """Seconds one optimizer step of ``config`` (a ``TrainConfig``, its device and ``threads``
    included) takes on this machine, measured in a child process."""
    device = detect_device(config.device)
    memory = None if device.startswith("cuda") else memory
    return float(_run(["estimate", "--config", json.dumps({**config.to_dict(), "device": device}),
                       "--vocab", str(int(vocab_size))], timeout, memory)["seconds"])


def sample_checkpoint(run_dir, prompt: str, max_new_tokens: int, temperature: float = 0.8,
                      top_k: int | None = None, *, timeout: float = 60.0,
                      memory: int | None = DEFAULT_MEMORY) -> str:
    """Text generated on the CPU from the run's checkpoint (verified, see core.gpt.checkpoint)."""
    return _run(["sample", "--run-dir", str(Path(run_dir).resolve()), "--prompt", prompt,
                 "--tokens", str(int(max_new_tokens)), "--temperature", str(float(temperature)),
                 "--top-k", str(int(top_k or 0))], timeout, memory)["text"]


# -- in the child ---------------------------------------------------------------------------------
def _estimate(args) -> dict:
    config = TrainConfig(**json.loads(args.config))
    if config.threads:
        torch.set_num_threads(config.threads)
    return {"seconds": time_step(config, args.vocab, config.device)}


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
    p = argparse.ArgumentParser(prog="python -m core.gpt.probe")
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
    sys.exit(main())
