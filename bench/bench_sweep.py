"""How long the vocabulary sweep takes (issue 28): small GPTs at a few vocabulary sizes, launched as
the Tokenizer questions page launches them (``core.insights.sweep.launch_sweep``: the room's runs,
queued, trained in turns by the room's engine and its GPT workers), timed from the click to the last
run's final evaluation, read back as the page reads it (``sweep_points``).

    python bench/bench_sweep.py                       # the page's default: 320, 512, 1024, quick
    python bench/bench_sweep.py --corpus ../shared/corpora/tinyshakespeare.txt

Runs in a fresh runs folder (its engine stopped at the end), so nothing is joined from an
earlier sweep; a second launch of the same sweep is then timed too (the room's identical runs:
joined, not trained again).  Prints the machine, ``uptime`` at each end, and one row per run.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.insights.sweep import corpus_tag, launch_sweep, sweep_points  # noqa: E402
from core.samples import python_docs_corpus  # noqa: E402
from core.runfolder.status import ENDED, RunStatus  # noqa: E402



def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def wait_for_sweep(text: str, sizes: list[int], owner: str, runs_dir: Path, bound: float) -> float:
    """Seconds until every run of the sweep has ended, polling the files as the page does."""
    start = time.perf_counter()
    last = ""
    while time.perf_counter() - start < bound:
        points = sweep_points(corpus_tag(text), sizes, owner, runs_dir)
        shown = " · ".join(f"{p.vocab_size}: {p.status} {p.step}/{p.max_steps}" for p in points)
        if shown != last:
            print(f"  {time.perf_counter() - start:6.1f} s  {shown}", flush=True)
            last = shown
        if len(points) == len(sizes) and all(p.status in ENDED for p in points):
            return time.perf_counter() - start
        if any(p.status == RunStatus.FAILED for p in points):
            raise RuntimeError(f"a run failed: see {runs_dir / owner}")
        time.sleep(1.0)
    raise TimeoutError(f"the sweep did not end within {bound:.0f} s")


def stop_engine(runs_dir: Path) -> None:
    """The folder's engine (and the workers it started, in its session) are ours to stop."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if b"core.room.engine" in cmd and str(runs_dir).encode() in cmd:
            try:
                os.killpg(int(proc.name), signal.SIGTERM)
            except ProcessLookupError:
                pass


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", help="a UTF-8 file (default: the app's English sample, 200,000 "
                                    "characters of the Python docs)")
    p.add_argument("--sizes", default="320,512,1024", help="vocabulary sizes, comma-separated")
    p.add_argument("--preset", default="quick")
    p.add_argument("--bound", type=float, default=600.0, help="seconds before giving up")
    args = p.parse_args()
    text = Path(args.corpus).read_text(encoding="utf-8") if args.corpus else python_docs_corpus()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    print(f"machine: nproc {os.cpu_count()}; corpus {len(text):,} characters; sizes {sizes}; "
          f"preset {args.preset}\nat start: {uptime()}", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        runs_dir = Path(folder).resolve()
        try:
            clicked = time.perf_counter()
            launch_sweep(text, sizes, "bench-a", runs_dir, preset=args.preset)
            launched = time.perf_counter() - clicked
            print(f"launched (tokenizers cut, runs queued) in {launched:.1f} s", flush=True)
            total = launched + wait_for_sweep(text, sizes, "bench-a", runs_dir, args.bound)
            print(f"\nthe sweep, click to last evaluation: {total:.1f} s")
            for point in sweep_points(corpus_tag(text), sizes, "bench-a", runs_dir):
                print(f"  vocab {point.vocab_size:>5,}: {point.status}, {point.step} steps, "
                      f"val {point.val_bpc:.3f} bits/char, {point.n_params:,} parameters, "
                      f"embeddings {point.embedding_share:.0%}")
            again = time.perf_counter()
            launch_sweep(text, sizes, "bench-b", runs_dir, preset=args.preset)
            joined = wait_for_sweep(text, sizes, "bench-b", runs_dir, args.bound)
            print(f"a second attendee's same sweep: ended {time.perf_counter() - again:.1f} s after "
                  f"the click (joined: {joined:.1f} s of waiting)")
        finally:
            stop_engine(runs_dir)
    print(f"at end: {uptime()}")


if __name__ == "__main__":
    main()
