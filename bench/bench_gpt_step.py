"""Benchmark (not a test): one optimizer step of a preset's GPT, in several execution modes, against
plain float32 eager mode in the same process.

    python bench/bench_gpt_step.py [--device cuda] [--preset small] [--steps 60]

For each mode: seconds until the first step is done (this holds torch.compile's compilation),
then the median milliseconds per step in steady state and tokens per second.  A step is what
``core.gpt.loop`` runs (``core.gpt.optimizer_step``): a batch gathered on the device, forward, backward,
gradient clipping and AdamW (fused on CUDA), in bf16 autocast on CUDA.  Modes: eager PyTorch, the
model under ``torch.compile``, the step replayed from a CUDA graph, and both.  Also times one
evaluation and one checkpoint write, the two pauses a run takes at every ``eval_interval``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's core and ui, not an installed copy

from core.bpe import CharTokenizer
from core.gpt.checkpoint import checkpoint_path, save_checkpoint
from core.gpt.config import make_config
from core.gpt.data import get_batch
from core.gpt.device import describe_device, detect_device
from core.gpt.evaluate import estimate_loss, eval_windows
from core.gpt.model import GPT
from core.gpt.optimizer_step import make_optimizer, make_optimizer_step


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


MODES = {  # name: (torch.compile, CUDA graph)
    "eager": (False, False), "compile": (True, False), "graph": (False, True),
    "compile+graph": (True, True)}


def run_mode(config, ids, vocab_size, device, mode, steps):
    """(seconds to the first step's end, median seconds per steady step, model, optimizer)"""
    use_compile, use_graph = MODES[mode]
    config = replace(config, cuda_graph=use_graph)
    torch.manual_seed(0)
    raw = GPT(config.model_config(vocab_size)).to(device)
    optimizer = make_optimizer(raw, config, device)
    run_step = make_optimizer_step(torch.compile(raw) if use_compile else raw, optimizer, config, device)
    gen = torch.Generator(device=device)

    def step(i):
        gen.manual_seed(i)
        x, y = get_batch(ids, config.batch_size, config.block_size, gen)
        return run_step(x, y, config.lr)

    t0 = time.perf_counter()
    step(0)
    sync(device)
    first = time.perf_counter() - t0
    for i in range(1, run_step.settle_steps + 2):
        step(i)
    per_window, windows = max(1, steps // 5), []
    for w in range(5):
        sync(device)
        t0 = time.perf_counter()
        for i in range(per_window):
            step(100 + w * per_window + i)
        sync(device)
        windows.append((time.perf_counter() - t0) / per_window)
    return first, statistics.median(windows), raw, optimizer


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="auto")
    p.add_argument("--preset", default="small")
    p.add_argument("--steps", type=int, default=60, help="timed steps per mode (default 60)")
    p.add_argument("--modes", default=None,
                   help=f"comma-separated, from {', '.join(MODES)} (default: all that apply here)")
    args = p.parse_args()
    device = detect_device(args.device)
    if device.startswith("cuda"):
        torch.set_float32_matmul_precision("high")
    modes = (args.modes.split(",") if args.modes else
             list(MODES) if device.startswith("cuda") else ["eager"])
    from core.corpus import download_tiny_shakespeare, read_corpus

    text = read_corpus(download_tiny_shakespeare(ROOT / ".cache"))
    tok = CharTokenizer.from_text(text)
    ids = torch.tensor(tok.encode(text), dtype=torch.long, device=device)
    config = make_config(args.preset)
    tokens = config.batch_size * config.block_size
    print(f"{args.preset} preset ({config.n_layer} layers x {config.n_embd}, block {config.block_size}, "
          f"batch {config.batch_size}) on {describe_device(device)}, torch {torch.__version__}")
    print(f"{'mode':<14} {'first step s':>12} {'ms/step':>9} {'tokens/s':>12} {'vs eager':>9}")
    reference, last = None, None
    for mode in modes:
        first, per_step, raw, optimizer = run_mode(config, ids, tok.vocab_size, device, mode,
                                                   args.steps)
        reference = reference or per_step
        print(f"{mode:<14} {first:>12.2f} {per_step * 1e3:>9.2f} {tokens / per_step:>12,.0f} "
              f"{reference / per_step:>8.2f}x", flush=True)
        last = raw, optimizer
        torch._dynamo.reset()
    raw, optimizer = last
    n_eval = eval_windows(config, len(ids) // 10)
    val = ids[-len(ids) // 10:]
    for what in ("evaluation", "evaluation"):  # the second is warm
        sync(device)
        t0 = time.perf_counter()
        estimate_loss(raw, val, config, device, n_eval)
        sync(device)
        print(f"{what} of {n_eval} windows: {time.perf_counter() - t0:.3f} s")
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        save_checkpoint(checkpoint_path(tmp), raw, tok, 1, config.to_dict(), optimizer)
        print(f"checkpoint write (model + optimizer): {time.perf_counter() - t0:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
