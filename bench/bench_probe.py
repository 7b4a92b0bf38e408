"""Benchmark (not a test): how long a visitor of Train GPT waits for the probe, a one-call worker
process (``core.room.probe`` on ``core.room.worker_process.call``).

    python bench/bench_probe.py [--repeat 7] [--tokens 50]

Times, in turn and ``--repeat`` times: the reference, the least any child process that loads
torch costs (``python -c "import torch"``); a sample of ``--tokens`` tokens from a small run's
checkpoint (``sample_checkpoint``: what "Sample" waits for); and a step-time estimate of the same
small model (``estimate_step``: what "Estimate time per step" waits for, mostly its timed steps).
Prints each median and the sample's ratio to the reference: what the probe costs beyond loading
torch.  This script's main module imports Streamlit's command line, as the app's does under
``streamlit run``, because a spawned child imports its parent's main module first.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import streamlit.web.cli  # noqa: F401  (the main module the app has: see the docstring)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.bpe import CharTokenizer  # noqa: E402
from core.gpt.config import make_config  # noqa: E402
from core.gpt.loop import train  # noqa: E402
from core.room.probe import estimate_step, sample_checkpoint  # noqa: E402

CONFIG = make_config("tiny", n_layer=2, n_head=2, n_embd=64, block_size=32, batch_size=16,
                     max_steps=20, warmup_steps=5, eval_interval=10_000, eval_iters=2,
                     log_interval=10, sample_interval=10_000, sample_tokens=0, device="cpu")


def seconds(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--tokens", type=int, default=50)
    args = p.parse_args()
    text = (ROOT / "sample_corpora" / "sennrich.txt").read_text(encoding="utf-8") * 20
    tokenizer = CharTokenizer.from_text(text)
    run_dir = Path(tempfile.mkdtemp()) / "run"
    train(CONFIG, text, tokenizer, run_dir)
    prompt = text[:20]
    times: dict[str, list[float]] = {"import torch": [], "sample": [], "estimate": []}
    load = os.getloadavg()[0]
    for _ in range(args.repeat):
        times["import torch"].append(seconds(lambda: subprocess.run(
            [sys.executable, "-c", "import torch"], check=True)))
        times["sample"].append(seconds(lambda: sample_checkpoint(run_dir, prompt, args.tokens)))
        times["estimate"].append(seconds(lambda: estimate_step(CONFIG, tokenizer.vocab_size)))
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    print(f"{os.cpu_count()} cores, load {load:.1f} -> {os.getloadavg()[0]:.1f}, {args.repeat} repeats")
    for name, median in medians.items():
        print(f"{name:>12}: median {median:.2f} s  ({', '.join(f'{t:.2f}' for t in times[name])})")
    print(f"sample / import torch: {medians['sample'] / medians['import torch']:.2f}")


if __name__ == "__main__":
    main()
