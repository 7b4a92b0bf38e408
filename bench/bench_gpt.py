"""Benchmark (not a test): does the tiny preset, char tokenizer, on Tiny Shakespeare reach a
validation loss below 2.0 within a time budget on this machine's CPU?

    python bench/bench_gpt.py [--budget 180] [--device cpu] [--preset tiny] [--eval-interval 50]
                              [--lr 1e-3] [--run-dir /tmp/bench-gpt]

Prints one table row per evaluation (steps, wall seconds since training began, val loss, val bits
per character, tokens/s) and a verdict.  On a CUDA machine ``--device cuda --preset small`` runs
nanoGPT's shakespeare_char model with bf16 autocast and torch.compile.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.corpus import download_tiny_shakespeare, read_corpus  # noqa: E402
from core.train import make_config, train  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=float, default=180.0, help="seconds of training (default 180)")
    p.add_argument("--target", type=float, default=2.0, help="val loss to reach (default 2.0)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--preset", default="tiny")
    p.add_argument("--eval-interval", type=int, default=50)
    p.add_argument("--eval-iters", type=int, default=20)
    p.add_argument("--max-steps", type=int, default=None, help="default: the preset's")
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    p.add_argument("--run-dir", default=None)
    args = p.parse_args()

    text = read_corpus(download_tiny_shakespeare(ROOT / ".cache"))
    overrides = {k: v for k, v in {"lr": args.lr, "max_steps": args.max_steps}.items() if v is not None}
    config = make_config(args.preset, device=args.device, eval_interval=args.eval_interval,
                         eval_iters=args.eval_iters, sample_interval=10**9, sample_tokens=0,
                         tokenizer="char", threads=args.threads, **overrides)
    run_dir = Path(args.run_dir or tempfile.mkdtemp(prefix="bench-gpt-"))
    rows, t0 = [], None

    def on_step(record):
        if "val_loss" in record:
            wall = time.perf_counter() - t0
            rows.append((record["step"], wall, record["val_loss"], record["val_bpc"], record["tokens_per_s"]))
            print(f"{record['step']:>6} {wall:>8.1f} {record['val_loss']:>9.4f} {record['val_bpc']:>8.3f} "
                  f"{record['tokens_per_s']:>10,.0f}", flush=True)

    def should_stop():
        nonlocal t0
        if t0 is None:  # the first call comes after tokenizing: the clock starts here
            t0 = time.perf_counter()
        return time.perf_counter() - t0 > args.budget or bool(rows and rows[-1][2] < args.target)

    print(f"{config.preset} preset on {args.device}: {config.n_layer} layers x {config.n_embd}, block "
          f"{config.block_size}, batch {config.batch_size}, lr {config.lr}, "
          f"{args.threads or 'default'} threads; budget {args.budget:.0f} s")
    print(f"{'steps':>6} {'wall s':>8} {'val loss':>9} {'val bpc':>8} {'tokens/s':>10}")
    result = train(config, run_dir, on_step=on_step, should_stop=should_stop, text=text)
    reached = [r for r in rows if r[2] < args.target]
    if reached:
        print(f"YES: val loss {reached[0][2]:.4f} < {args.target} at step {reached[0][0]} after "
              f"{reached[0][1]:.1f} s")
    else:
        best = min((r[2] for r in rows), default=float("nan"))
        print(f"NO: best val loss {best:.4f} after {result.step} steps within {args.budget:.0f} s")
    print(f"run folder: {run_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
