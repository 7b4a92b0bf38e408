"""Benchmark (not a test): the page's "Estimate time per step" against the run it predicts, for
each preset on this machine.

    python bench/bench_estimate.py [--presets tiny small] [--device cpu] [--busy 1] [--spin]
    python bench/bench_estimate.py --presets tiny --full   # the preset's steps, evaluation included
    python bench/bench_estimate.py --launched --presets quick tiny \
        --custom n_layer=2,n_head=2,n_embd=64,block_size=32,batch_size=16,max_steps=400 ...

For each preset: the estimate (``core.room.probe.estimate_step``, a child process, with the torch
threads a run launched from the page gets), then a real run of the same settings in a child
process with the engine's environment (``core.room.spawn.child_env``, ``core.gpt.loop``), then the
estimate again.  The run's figure is the median of its logged blocks of steps, settle steps left out
(``core.room.probe.run_step_seconds``).  ``--busy N`` keeps N other processes busy meanwhile (a
loaded machine); ``--spin`` gives the children OpenMP's spinning wait, as before
``core.room.cpu_policy.CPU_SHARING_ENV``, to show why the estimate once missed by 4x.  ``--full`` trains
the preset's default steps with its evaluations and prints the wall time, for the Model size help.
``--launched`` compares what the page states before Launch (``StepEstimate.run_seconds``: start,
steps, evaluations, checkpoints and samples, for a run alone) with a run launched as the page's Launch
does (``core.room.runs.launch_run``, trained in turns by the runs folder's engine), timed from the
launch to its ``finished`` status: what an attendee waits; beside it, when its first step was logged
and the seconds its training loop counted (``elapsed_s``), where the time went (``--records``: the
estimate's parts, and each logged step's ``elapsed_s``).  ``--custom`` adds
a model of settings of its own (``name=value`` pairs over the quick preset).
The load average is printed with each row: these figures mean little without it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.bpe import CharTokenizer  # noqa: E402
from core.corpus import read_corpus, shared_file  # noqa: E402
from core.gpt.config import make_config  # noqa: E402
from core.gpt.device import detect_device  # noqa: E402
from core.room.limits import default_max_running, threads_per_run  # noqa: E402
from core.room.probe import estimate_step, run_step_seconds  # noqa: E402
from core.room.queries import read_metrics  # noqa: E402
from core.room.spawn import child_env  # noqa: E402

SHORT_STEPS = {"quick": 100, "tiny": 200, "small": 12}  # a short run: enough logged blocks for a median


@contextmanager
def busy(processes: int):
    """``processes`` busy loops beside the measurement (ended by their pids)."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait()


def train_in_child(preset: str, corpus: Path, device: str, threads: int, run_dir: Path,
                   env: dict, steps: int | None) -> float:
    """Train as the page's worker does (same loop, environment and threads); wall seconds."""
    args = ["--corpus", str(corpus), "--preset", preset, "--device", device,
            "--threads", str(threads), "--run-dir", str(run_dir)]
    if steps:  # a short run: log often, no evaluation until its last step, no samples
        args += ["--max-steps", str(steps), "--log-interval", str(max(1, steps // 20)),
                 "--eval-interval", str(steps), "--eval-iters", "1", "--sample-tokens", "0"]
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "core.train", *args], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def compare(preset: str, corpus: Path, vocab: int, device: str, threads: int, env: dict,
            steps: int | None) -> dict:
    """One row: the estimate before and after, and the run between them."""
    config = make_config(preset, device=device, threads=threads)
    row = {"preset": preset, "threads": threads, "load before": load()}
    before = estimate_step(config, vocab, timeout=600, memory=None)
    with tempfile.TemporaryDirectory() as run_dir:
        wall = train_in_child(preset, corpus, device, threads, Path(run_dir), env, steps)
        metrics = read_metrics(Path(run_dir))
    after = estimate_step(config, vocab, timeout=600, memory=None)
    run = run_step_seconds(metrics, config.batch_size * config.block_size)
    estimate = statistics.mean([before.seconds, after.seconds])
    both = f"{before.seconds * 1e3:,.0f} / {after.seconds * 1e3:,.0f}"
    row.update({"estimate ms (before / after)": both,
                "run ms/step": f"{run * 1e3:,.0f}", "run / estimate": f"{run / estimate:.2f}",
                "steps": metrics[-1]["step"], "run wall s": f"{wall:,.1f}", "load after": load()})
    return row


def launched(config, text: str, tokenizer, runs_dir: Path, name: str, records: bool = False) -> dict:
    """One ``--launched`` row: the page's figure before Launch, the launched run's wall time."""
    from core.room.queries import run_info
    from core.room.runs import launch_run
    from core.settings import ServerSettings

    est = estimate_step(config, tokenizer.vocab_size, timeout=600, memory=None)
    stated = est.run_seconds(config)
    row = {"model": name, "load before": load(), "step ms": f"{est.seconds * 1e3:,.0f}",
           "start s": f"{est.start_s:,.1f}", "stated s": f"{stated:,.1f}"}
    t0, first_log = time.monotonic(), None
    run = launch_run(config, name, runs_dir, text=text, tokenizer=tokenizer, settings=ServerSettings())
    while run.active:
        time.sleep(0.2)
        run = run_info(run.path)
        if first_log is None and read_metrics(run.path):
            first_log = time.monotonic() - t0
    wall = time.monotonic() - t0
    metrics = read_metrics(run.path)
    if records:  # where the run's own time went, and the estimate's parts
        print(est)
        for record in metrics:
            print({k: record[k] for k in ("step", "elapsed_s", "tokens_per_s", "val_loss") if k in record})
    row.update({"status": run.status, "launch to finished s": f"{wall:,.1f}",
                "finished / stated": f"{wall / stated:.2f}", "load after": load(),
                "checkpoint s": f"{est.checkpoint_s:.2f}", "first log s": f"{first_log or 0:,.1f}",
                "trained s": f"{metrics[-1]['elapsed_s']:,.1f}" if metrics else "-"})
    return row


def custom_config(text: str, device: str, threads: int):
    """A ``--custom`` model: ``name=value`` pairs (integers) over the quick preset."""
    sizes = {k: int(v) for k, _, v in (item.partition("=") for item in text.split(","))}
    return make_config("quick", device=device, threads=threads, **sizes)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--presets", nargs="+", default=["tiny", "small"])
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=0, help="0: what the page gives a run")
    p.add_argument("--busy", type=int, default=0, help="busy processes beside the measurement")
    p.add_argument("--spin", action="store_true", help="OpenMP threads spin while waiting (old)")
    p.add_argument("--full", action="store_true", help="the presets' default steps, with evaluation")
    p.add_argument("--steps", type=int, default=0, help="a short run's steps (0: tiny 200, small 12)")
    p.add_argument("--launched", action="store_true",
                   help="the page's whole-run figure against a run launched as the page does")
    p.add_argument("--custom", nargs="*", default=[], help="with --launched: name=value,... models")
    p.add_argument("--records", action="store_true", help="with --launched: the estimate's parts and "
                   "each logged step's elapsed_s")
    args = p.parse_args()
    device = detect_device(args.device)
    threads = args.threads or threads_per_run(default_max_running(device))
    corpus = shared_file("corpora", "tinyshakespeare.txt")
    if corpus is None:
        sys.exit("needs ../shared/corpora/tinyshakespeare.txt")
    vocab = CharTokenizer.from_text(read_corpus(corpus)).vocab_size
    if args.spin:  # for the probes too: their environment is this one, CPU_SHARING_ENV under it
        os.environ["OMP_WAIT_POLICY"] = "ACTIVE"
    env = child_env()
    print(f"device {device}, {os.cpu_count()} cores, busy neighbours {args.busy}, "
          f"OMP_WAIT_POLICY {env.get('OMP_WAIT_POLICY')}, char tokenizer (vocab {vocab})")
    rows = []
    with busy(args.busy):
        if args.launched:
            text = read_corpus(corpus)
            tokenizer = CharTokenizer.from_text(text)
            models = [(p, make_config(p, device=device, threads=threads)) for p in args.presets]
            models += [(item, custom_config(item, device, threads)) for item in args.custom]
            with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as runs_dir:  # its engine's log
                for i, (name, config) in enumerate(models):
                    row = launched(config, text, tokenizer, Path(runs_dir), f"model-{i}", args.records)
                    rows.append({**row, "model": name})
                    print(rows[-1], flush=True)
        for preset in ([] if args.launched else args.presets):
            steps = None if args.full else args.steps or SHORT_STEPS.get(preset, 100)
            rows.append(compare(preset, corpus, vocab, device, threads, env, steps))
            print(rows[-1], flush=True)
    print("\n| " + " | ".join(rows[0]) + " |\n|" + "---|" * len(rows[0]))
    for row in rows:
        print("| " + " | ".join(str(v) for v in row.values()) + " |")


if __name__ == "__main__":
    main()
