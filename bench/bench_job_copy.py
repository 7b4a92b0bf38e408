"""What a heavy job costs the server's own threads: pickling what it sends (the attendee's corpus
and tokenizer), unpickling the tokenizer a job trained and the answers Tokenizer questions reads
from the corpus (under every real tokenizer and the attendee's).  Each is one C call that holds the GIL,
while every other attendee's page run in the process waits for it.  The reference, timed in the
same run, is the corpus itself, which the job must carry whatever the tokenizer costs.

    python bench/bench_job_copy.py [--cases unicode docs line] [--merges 300] [--repeat 5]

The texts are ``bench_hostile_room.py``'s heavy attendees' (2 MB of random Unicode, the first 8 MB
of the Debian docs, a 1 MB line), each trained as Learn BPE trains it (char variant, ``--merges``)
and used once to encode (its lookup table built, as on a page).  Best of ``--repeat``.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_hostile_room import CASES, heavy_texts  # noqa: E402
from bench_server import machine  # noqa: E402
from core import PRETRAINED_NAMES, BPETokenizer  # noqa: E402
from core.insights.question_jobs import questions  # noqa: E402


def best_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return 1000 * min(times)


def row(what: str, text: str, merges: int, repeat: int) -> str:
    tok = BPETokenizer.from_text(text, merges, "char")
    tok.encode(text[:1000])
    tok_blob, text_blob = pickle.dumps(tok, protocol=5), pickle.dumps(text, protocol=5)
    send = best_ms(lambda: pickle.dumps(tok, protocol=5), repeat)
    receive = best_ms(lambda: pickle.loads(tok_blob), repeat)
    corpus = (best_ms(lambda: pickle.dumps(text, protocol=5), repeat)
              + best_ms(lambda: pickle.loads(text_blob), repeat))
    answers_blob = pickle.dumps(questions(text, {**{n: n for n in PRETRAINED_NAMES}, "yours": tok},
                                          ("<|endoftext|>",)), protocol=5)
    answers = best_ms(lambda: pickle.loads(answers_blob), repeat)
    mb = len(tok_blob) / 2**20, len(text_blob) / 2**20, len(answers_blob) / 2**20
    return (f"| {what} | {len(tok.alphabet):,} | {send:.1f} / {receive:.1f} ms, {mb[0]:.2f} MB "
            f"| {answers:.1f} ms, {mb[2]:.2f} MB | {corpus:.1f} ms, {mb[1]:.2f} MB "
            f"| {(send + receive) / corpus:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--merges", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print("| corpus | base symbols | tokenizer pickled / unpickled | questions' answers unpickled "
          "| the corpus, both ways | tokenizer / corpus |")
    print("|---|---|---|---|---|---|")
    for what, text in heavy_texts(args.cases, 1.0):
        print(row(what, text, args.merges, args.repeat), flush=True)


if __name__ == "__main__":
    main()
