"""How many small runs one GPU should train at the same moment (``core.room.limits.RUNS_PER_GPU``):
1, 2, ... N runs at once, each in a process of its own as the engine's GPT workers are, each
training the same preset; tokens/s of each and in all, and memory.

    python bench/bench_gpu_turns.py [--preset small] [--most 6] [--seconds 20] [--device cuda]

A small model leaves most of a GPU idle (its step waits on kernel launches, not on arithmetic),
so several processes can share the GPU and get more done together than one alone.  The row to
record is the fewest runs at once whose total reaches 90 % of the best total, memory permitting:
the script prints it, with the name torch gives the GPU (``RUNS_PER_GPU``'s key).  ``--device
cpu`` runs the same measurement on the CPU (a check that the script works; on 2 cores the answer
there is the GPT workers' count, ``core.room.limits.CORES_PER_GPT_WORKER``).
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's core, not an installed copy

SHARE = 0.9  # the fewest runs at once that reach this share of the best total are recorded


def train_for(preset: str, device: str, seconds: float, start_at: float, out) -> None:
    """In a child: train ``preset`` on random tokens for ``seconds`` from ``start_at`` (all runs
    start together), as a GPT worker does (the loop's own step); report tokens/s and memory."""
    import torch

    from core.gpt.config import make_config
    from core.gpt.data import get_batch
    from core.gpt.model import GPT
    from core.gpt.optimizer_step import get_lr, make_optimizer, make_optimizer_step

    config = make_config(preset, device=device, threads=1)
    torch.set_num_threads(1)
    model = GPT(config.model_config(vocab_size=65)).to(device)
    optimizer = make_optimizer(model, config, device)
    run_step = make_optimizer_step(model, optimizer, config, device)
    ids = torch.randint(65, (64 * config.block_size + 1,), device=device)
    generator = torch.Generator(device=device)
    steps = [0]

    def one_step():
        x, y = get_batch(ids, config.batch_size, config.block_size, generator)
        loss = run_step(x, y, get_lr(steps[0], config))
        steps[0] += 1
        return loss

    for _ in range(run_step.settle_steps + 2):  # allocation, kernels, a CUDA graph's recording
        one_step().item()
    time.sleep(max(0.0, start_at - time.time()))
    t0 = time.perf_counter()
    done = 0
    while time.perf_counter() - t0 < seconds:
        for _ in range(10):
            loss = one_step()
        done += 10
        loss.item()  # the device has finished these steps
    elapsed = time.perf_counter() - t0
    memory = torch.cuda.max_memory_allocated() if device.startswith("cuda") else 0
    out.put({"tokens_per_s": done * config.batch_size * config.block_size / elapsed, "memory": memory})


def measure(n: int, preset: str, device: str, seconds: float) -> list[dict]:
    """``n`` runs at once; each one's figures."""
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    start_at = time.time() + 30 + 5 * n  # every process imported torch and settled by then
    procs = [context.Process(target=train_for, args=(preset, device, seconds, start_at, out))
             for _ in range(n)]
    for proc in procs:
        proc.start()
    found = [out.get(timeout=600) for _ in procs]
    for proc in procs:
        proc.join()
    return found


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset", default="small")
    p.add_argument("--most", type=int, default=6, help="the most runs at once to try")
    p.add_argument("--seconds", type=float, default=20.0, help="each measurement's training time")
    p.add_argument("--device", default="cuda")
    args = p.parse_args()
    import torch

    name = torch.cuda.get_device_name(0) if args.device.startswith("cuda") else "cpu"
    total_memory = torch.cuda.get_device_properties(0).total_memory if args.device.startswith("cuda") else 0
    print(f"{name}: {args.preset} preset, 1..{args.most} runs at once, {args.seconds:.0f} s each")
    print("| runs at once | tokens/s each (median) | tokens/s in all | vs one | memory each (peak) |")
    print("|---|---|---|---|---|")
    totals = {}
    for n in range(1, args.most + 1):
        rows = measure(n, args.preset, args.device, args.seconds)
        totals[n] = sum(r["tokens_per_s"] for r in rows)
        memory = max(r["memory"] for r in rows)
        print(f"| {n} | {statistics.median(r['tokens_per_s'] for r in rows):,.0f} | {totals[n]:,.0f} | "
              f"{totals[n] / totals[1]:.2f}x | {memory / 2**20:,.0f} MiB |", flush=True)
        if total_memory and memory * (n + 1) > 0.9 * total_memory:
            break
    best = max(totals.values())
    chosen = min(n for n, total in totals.items() if total >= SHARE * best)
    print(f"\nRUNS_PER_GPU[{name!r}] = {chosen}  # the fewest runs at once within "
          f"{100 * (1 - SHARE):.0f} % of the best total ({best:,.0f} tokens/s)")


if __name__ == "__main__":
    main()
