"""What a heavy attendee's session leaves for the garbage collector: one AppTest session, in this
process, pastes a text and opens every page; after each page, the objects the collector tracks
(what a full collection walks, holding the interpreter while every other page waits) beyond those
of the session's first view, then the types that grew most.

    python bench/bench_session_objects.py [--chars 300000] [--top 12] [--texts 64]

The text mixes CJK characters and Latin letters at random (a large alphabet, many tokens), as the
hostile room's heavy attendees paste; its tokenizers are trained as the pages train them, through
the runs folder's engine.  The figure to compare between two versions is the last page's total.
Then the room's case: ``--texts`` attendees each compare a text of their own (20,000 characters,
Compare's most) under GPT-4's tokenizer, as Compare's shared cache keeps them; a full collection
is timed (median of 5) with those encodings kept, and after they are dropped.
"""

from __future__ import annotations

import argparse
import collections
import gc
import os
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "app"), str(ROOT / "tests")]

PAGES = ["learn_bpe", "char_vs_bpe", "compare_tokenizers", "insights", "train_gpt", "chat"]


def tracked() -> collections.Counter:
    """The collector's objects now, by type (after a collection, so only what is held)."""
    gc.collect()
    return collections.Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.get_objects())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--chars", type=int, default=300_000)
    p.add_argument("--top", type=int, default=12)
    p.add_argument("--texts", type=int, default=64, help="attendees' own texts in Compare's cache")
    args = p.parse_args()
    os.environ.setdefault("BPE_EXPLORER_RUNS_DIR", tempfile.mkdtemp(prefix="bench-objects-"))
    from app_helpers import open_page, paste_box, poll_until_done

    rng = random.Random(1)
    text = "".join(chr(rng.randint(0x4E00, 0x9FFF)) if rng.random() < 0.5 else rng.choice("abcdefgh ")
                   for _ in range(args.chars))
    at = open_page(PAGES[0])
    poll_until_done(at)
    first = tracked()
    print(f"a session's first view: {sum(first.values()):,} objects tracked in this process")
    paste_box(at).set_value(text).run()
    for page in PAGES:
        at.switch_page(f"app_pages/{page}.py").run()
        poll_until_done(at)
        at.run()
        print(f"after {page:<20} +{sum(tracked().values()) - sum(first.values()):>8,}")
    for name, n in (tracked() - first).most_common(args.top):
        print(f"{n:>10,}  {name}")
    time_full_collections(args.texts, rng)


def time_full_collections(texts: int, rng: random.Random) -> None:
    """A full collection's time with Compare's cache holding ``texts`` attendees' encodings."""
    import statistics
    import time

    from core import BPETokenizer
    from ui.views import compare_view

    def collection_s() -> float:
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            gc.collect()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    tok = BPETokenizer.from_pretrained("cl100k_base")
    words = [w for w in (ROOT / "README.md").read_text(encoding="utf-8").split() if w.isalpha()]
    kept = []
    for _ in range(texts):
        text = " ".join(rng.choice(words) for _ in range(4_000))[:20_000]
        kept.append(compare_view._encoded("cl100k_base", "GPT-4", tok, text))
    held = sum(len(e.tokens) for e in kept)
    with_them = collection_s()
    del kept
    print(f"a full collection, {texts} texts' encodings kept ({held:,} tokens): {with_them * 1e3:,.0f} ms; "
          f"without them: {collection_s() * 1e3:,.0f} ms")


if __name__ == "__main__":
    main()
