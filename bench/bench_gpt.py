"""Benchmark (not a test): does a preset, char tokenizer, on Tiny Shakespeare reach a target
validation loss within a time budget?

    python bench/bench_gpt.py [--budget 180] [--device cpu] [--preset tiny] [--eval-interval 50]
                              [--target 2.0] [--set NAME=VALUE ...] [--run-dir /tmp/bench-gpt]

The CPU figure: the defaults (tiny preset, val loss < 2.0 within 3 minutes).  The GPU figure:
``--device cuda --preset small --target 1.47 --eval-interval 250 --eval-iters 200`` (nanoGPT's
shakespeare_char shape, bf16, steps replayed from a CUDA graph).  Prints one row per evaluation:
steps, seconds since training began (model compilation included) and since the process was
launched, val loss, val bits per character, tokens/s; then a verdict.
"""

from __future__ import annotations

import time

LAUNCH = time.perf_counter()  # before torch is imported: "wall from launch" counts everything

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's core and ui, not an installed copy

from core.bpe import CharTokenizer
from core.corpus import download_tiny_shakespeare, read_corpus
from core.gpt.config import make_config
from core.gpt.loop import Hooks, train


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
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="any other training setting, e.g. --set dropout=0.1 (JSON values)")
    args = p.parse_args()

    text = read_corpus(download_tiny_shakespeare(ROOT / ".cache"))
    overrides = {k: v for k, v in {"lr": args.lr, "max_steps": args.max_steps}.items() if v is not None}
    for item in args.set:
        name, _, value = item.partition("=")
        overrides[name] = json.loads(value)
    config = make_config(args.preset, device=args.device, eval_interval=args.eval_interval,
                         eval_iters=args.eval_iters, sample_interval=10**9, sample_tokens=0,
                         threads=args.threads, **overrides)
    run_dir = Path(args.run_dir or tempfile.mkdtemp(prefix="bench-gpt-"))
    rows, t0 = [], None

    def on_step(record):
        if "val_loss" in record:
            now = time.perf_counter()
            rows.append((record["step"], now - t0, record["val_loss"], now - LAUNCH))
            print(f"{record['step']:>6} {now - t0:>8.1f} {now - LAUNCH:>9.1f} {record['val_loss']:>9.4f} "
                  f"{record['val_bpc']:>8.3f} {record['tokens_per_s']:>11,.0f}", flush=True)

    def should_stop():
        nonlocal t0
        if t0 is None:  # the first call comes after encoding the text: the clock starts here
            t0 = time.perf_counter()
            print(f"(ready to train {t0 - LAUNCH:.1f} s after launch: imports, device, data, model)")
        return time.perf_counter() - t0 > args.budget or bool(rows and rows[-1][2] < args.target)

    print(f"{config.preset} preset on {args.device}: {config.n_layer} layers x {config.n_embd}, block "
          f"{config.block_size}, batch {config.batch_size}, lr {config.lr}, "
          f"{args.threads or 'default'} threads; budget {args.budget:.0f} s")
    print(f"{'steps':>6} {'train s':>8} {'launch s':>9} {'val loss':>9} {'val bpc':>8} {'tokens/s':>11}")
    result = train(config, text, CharTokenizer.from_text(text), run_dir, Hooks(on_step, should_stop))
    reached = [r for r in rows if r[2] < args.target]
    if reached:
        step, train_s, val, launch_s = reached[0]
        print(f"YES: val loss {val:.4f} < {args.target} at step {step} after {train_s:.1f} s of "
              f"training, {launch_s:.1f} s from launch")
    else:
        best = min((r[2] for r in rows), default=float("nan"))
        print(f"NO: best val loss {best:.4f} after {result.step} steps within {args.budget:.0f} s")
    print(f"run folder: {run_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
