"""Byte BPE at scale, against rustbpe, bpeasy and Hugging Face tokenizers in the same run.

    python bench/bench_scale.py    # 20 MB at vocabulary 4,096 (GPT-4, GPT-2 splits), 100 MB at 8,192
    python bench/bench_scale.py --sizes 20 --repeat 3 --peers rustbpe

Decompresses ``../shared/corpora/debian-docs-100mb.txt.xz`` to a temporary folder (never into the
repository); the 20 MB corpus is its first 20,000,000 characters cut at the last newline before.
Each row runs in a fresh subprocess, so its peak memory (VmHWM; for ours also the largest counting process's)
is its own, and its time includes starting counting processes.  rustbpe and tokenizers use every
core (their threads); ours counts with ``count_chunks``' default, one process below 512 MB (a
counting process costs more to start than it saves at these sizes: docs/benchmarks.md, "Byte BPE at
scale"; ``--processes`` asks for more).  Ours is timed as ``count_chunks`` (counting) plus
``from_chunk_counts`` and the merges (merging), shown apart.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpora" / "debian-docs-100mb.txt.xz"
VOCAB = {20: 4096, 100: 8192}


def vm_hwm_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def lines(path: Path):
    with open(path, encoding="utf-8", newline="") as file:
        yield from file


def train_ours(path: Path, pattern: str, vocab: int, processes: int | None = None) -> dict:
    sys.path.insert(0, str(ROOT))
    from core.bpe import BPETrainer, count_chunks

    start = time.perf_counter()
    counts = count_chunks(path, pattern, processes=processes)
    counted = time.perf_counter()
    trainer = BPETrainer.from_chunk_counts(counts, pattern=pattern)
    steps = sum(1 for _ in trainer.run(vocab - 256))
    assert steps == vocab - 256
    end = time.perf_counter()
    children_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return dict(
        seconds=end - start,
        counting=counted - start,
        merging=end - counted,
        chunks=len(counts),
        counting_mb=children_mb,
    )


def train_rustbpe(path: Path, pattern: str, vocab: int) -> dict:
    import rustbpe

    from_pattern = _pattern(pattern)
    start = time.perf_counter()
    rustbpe.Tokenizer().train_from_iterator(lines(path), vocab, pattern=from_pattern)
    return dict(seconds=time.perf_counter() - start)


def train_bpeasy(path: Path, pattern: str, vocab: int) -> dict:
    import bpeasy

    start = time.perf_counter()
    bpeasy.train_bpe(lines(path), _pattern(pattern), 64, vocab)
    return dict(seconds=time.perf_counter() - start)


def train_hf(path: Path, pattern: str, vocab: int) -> dict:
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    start = time.perf_counter()
    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(_pattern(pattern)), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    trainer = trainers.BpeTrainer(vocab_size=vocab, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    hf.train_from_iterator(lines(path), trainer)
    return dict(seconds=time.perf_counter() - start)


def _pattern(name: str) -> str:
    sys.path.insert(0, str(ROOT))
    from core.bpe.pretokenize import NAMED_PATTERNS

    return NAMED_PATTERNS[name]


TRAINERS = {
    "ours": train_ours,
    "rustbpe": train_rustbpe,
    "bpeasy": train_bpeasy,
    "tokenizers": train_hf,
}


def one(args) -> None:
    """The child: train once and print a JSON line with the time and peak memory."""
    extra = {"processes": args.processes} if args.one == "ours" else {}
    result = TRAINERS[args.one](Path(args.path), args.pattern, args.vocab, **extra)
    print(json.dumps(dict(result, peak_mb=vm_hwm_mb())))


def run_child(name: str, path: Path, pattern: str, vocab: int, processes: int | None) -> dict:
    cmd = [sys.executable, __file__, "--one", name, "--path", str(path), "--pattern", pattern,
           "--vocab", str(vocab)] + (["--processes", str(processes)] if processes else [])
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def corpus_files(folder: Path, sizes: list[int]) -> dict[int, Path]:
    text = lzma.open(CORPUS, "rt", encoding="utf-8", newline="").read()
    files = {}
    for mb in sizes:
        part = text if mb == 100 else text[:text.rfind("\n", 0, mb * 1_000_000) + 1]
        files[mb] = folder / f"debian-{mb}mb.txt"
        files[mb].write_text(part, encoding="utf-8", newline="")
    return files


def best(name, path, pattern, vocab, repeat, processes=None) -> dict:
    runs = [run_child(name, path, pattern, vocab, processes) for _ in range(repeat)]
    return min(runs, key=lambda r: r["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 100], choices=sorted(VOCAB))
    parser.add_argument("--patterns", nargs="+", default=["gpt4", "gpt2"])
    parser.add_argument("--peers", nargs="+", default=["rustbpe", "bpeasy", "tokenizers"])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--one", choices=sorted(TRAINERS))
    parser.add_argument("--path")
    parser.add_argument("--pattern")
    parser.add_argument("--vocab", type=int)
    parser.add_argument("--processes", "--workers", type=int,
                        help="ours: count_chunks' counting processes (default: its own; "
                             "--workers: its old name)")
    args = parser.parse_args()
    if args.one:
        return one(args)
    with tempfile.TemporaryDirectory() as folder:
        files = corpus_files(Path(folder), args.sizes)
        print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}")
        print("| corpus | split | vocab | trainer | seconds | peak MB | ours is |")
        print("|---|---|---|---|---|---|---|")
        for mb in args.sizes:
            for pattern in args.patterns if mb == 20 else args.patterns[:1]:
                ours = best("ours", files[mb], pattern, VOCAB[mb], args.repeat, args.processes)
                print(f"| {mb} MB | {pattern} | {VOCAB[mb]} | ours (count {ours['counting']:.2f} s + "
                      f"merge {ours['merging']:.2f} s; {ours['chunks']:,} chunks) | {ours['seconds']:.2f} | "
                      f"{ours['peak_mb']:.0f} (+ counting {ours['counting_mb']:.0f}) | |", flush=True)
                for peer in args.peers:
                    r = best(peer, files[mb], pattern, VOCAB[mb], args.repeat)
                    print(f"| {mb} MB | {pattern} | {VOCAB[mb]} | {peer} | {r['seconds']:.2f} | "
                          f"{r['peak_mb']:.0f} | {r['seconds'] / ours['seconds']:.2f}x faster |", flush=True)
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
