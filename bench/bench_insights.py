"""How long the tokenizer questions take (core.insights): the vocabulary curve of the whole Tiny
Shakespeare up to 4,096 (one training, both parts counted at every size), the unreachable tokens of
each real tokenizer, and the cost of the 38 parallel texts per tokenizer.

    python bench/bench_insights.py            # best of 3 runs each, in a warm process

A warm process: the compiled kernels are loaded by a first run (numba compiles or loads them from
its cache once per process); a tokenizer's vocabulary is loaded before its check is timed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.bpe import PRETRAINED_NAMES  # noqa: E402
from core.corpus import shared_file  # noqa: E402
from core.insights import (UDHR_DIR, language_costs, named_tokenizer, read_parallel,  # noqa: E402
                           unreachable_tokens, vocabulary_curve)


def best(repeat: int, work) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    text = shared_file("corpora", "tinyshakespeare.txt").read_text(encoding="utf-8")
    for variant in ("char", "byte", "word"):
        vocabulary_curve(text[:50_000], 400, variant)  # load the kernels
        seconds, curve = best(args.repeat, lambda: vocabulary_curve(text, 4096, variant))
        last = curve.row(int(curve.vocab_sizes[-1]))
        print(f"vocab curve, Tiny Shakespeare, {variant} to {last['vocab_size']}: {seconds:.2f} s "
              f"(chars/token train {last['train_chars_per_token']:.2f}, "
              f"held out {last['held_out_chars_per_token']:.2f})")
    texts = read_parallel(UDHR_DIR)
    for name in PRETRAINED_NAMES:
        tok = named_tokenizer(name)
        seconds, found = best(args.repeat, lambda: unreachable_tokens(tok))
        costs = language_costs(texts, {name: tok})
        premiums = ", ".join(f"{code} {costs[code][name]['premium']:.2f}"
                             for code in ("hin", "arb", "kor", "amh"))
        print(f"{name}: {len(found.unreachable)} unreachable, {len(found.partial)} part of a character "
              f"({seconds:.2f} s); premium over eng: {premiums}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
