"""How long the tokenizer questions take (core.insights): the vocabulary curve of the whole Tiny
Shakespeare up to 4,096 (one training, both parts counted at every size), the unreachable tokens of
each real tokenizer, and the cost of the 38 parallel texts per tokenizer; with ``--questions``, each
section of "Why are language models weird?" as the page computes it on a text of about 1 MB (Tiny
Shakespeare), for the five real tokenizers together: the figure the issue bounds at 1 s a section.

    python bench/bench_insights.py            # best of 3 runs each, in a warm process
    python bench/bench_insights.py --questions

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


def questions(text: str, repeat: int) -> None:
    """Each section's computations over the five real tokenizers, as the page's first view makes
    them (nothing cached): the corpus scanned whole where the page scans it (its words, its numbers,
    its special tokens' texts), the example read where it reads one; the best of ``repeat`` runs,
    tokenizers loaded and kernels warm."""
    from core.insights.boundary import prompt_boundary
    from core.insights.formats import SAMPLE_RECORDS, format_costs
    from core.insights.numbers import number_groupings, numbers_in_text
    from core.insights.specials import special_readings, specials_in
    from core.insights.spelling import spelling, words_cut_differently
    from core.insights.whitespace import python_sample, whitespace_cost

    toks = {name: named_tokenizer(name) for name in PRETRAINED_NAMES}
    special_example = "The first story ends here.<|endoftext|>The next one begins."
    first = next(iter(toks.values()))  # the page counts the corpus's words for one tokenizer at a time
    each = lambda work: lambda: [work(t) for t in toks.values()]  # noqa: E731
    sections = {  # the page's own bounds: 5,000 words, 12 numbers
        "spelling": lambda: (each(lambda t: spelling(t, "strawberry"))(),
                             words_cut_differently(first, text, 5_000)),
        "numbers": each(lambda t: (numbers_in_text(t, text, 12), number_groupings(t))),
        "whitespace": each(lambda t: (whitespace_cost(t, text), whitespace_cost(t, python_sample()))),
        "special tokens": each(lambda t: (specials_in(t, text), special_readings(t, special_example))),
        "the prompt's last token": each(lambda t: prompt_boundary(t, "Hello ", "world")),
        "formats": each(lambda t: format_costs(SAMPLE_RECORDS, {"t": t})),
    }
    for tok in toks.values():  # kernels loaded, each tokenizer's first encode done
        tok.encode(text[:10_000])
    print(f"| section ({len(text):,} characters, {len(toks)} tokenizers) | seconds |\n|---|---|")
    for name, work in sections.items():
        seconds, _ = best(repeat, work)
        print(f"| {name} | {seconds:.2f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--questions", action="store_true", help="time the six question sections")
    args = parser.parse_args()
    text = shared_file("corpora", "tinyshakespeare.txt").read_text(encoding="utf-8")
    if args.questions:
        questions(text, args.repeat)
        return 0
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
