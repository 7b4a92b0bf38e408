"""Server time of a Learn BPE page run, the server's only work on that page now that every step
is drawn by the browser: a full AppTest rerun (what a click on a token, a page switch or a new
window costs), on a 20 KB English corpus with 300 merges, training cached; and the first run of a
tokenizer, which trains it and builds the step view's payload.

    python bench/bench_app.py [--chars 20000] [--merges 300] [--variant char] [--runs 15]
    python bench/bench_app.py --chars 100000 --start cl100k_base   # GPT-4 learning the corpus
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's core and ui, not an installed copy

from core.samples import python_docs_corpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=20_000)
    parser.add_argument("--merges", type=int, default=300)
    parser.add_argument("--variant", default="char", choices=["char", "word", "byte"])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--start", default="chars", help="what BPE starts from: chars, or a real "
                        "tokenizer (gpt2, cl100k_base, o200k_base, llama3, qwen3)")
    args = parser.parse_args()

    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120)
    at.switch_page("app_pages/learn_bpe.py").run()
    start = time.perf_counter()
    paste_box = next(t for t in at.sidebar.text_area if t.label == "Or paste your own text")
    paste_box.set_value(python_docs_corpus(args.chars)).run()
    at.radio(key="w_variant").set_value(args.variant).run()
    at.number_input(key="w_num_merges").set_value(args.merges).run()
    print(f"paste, training, payload and first render: {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    at.radio(key="w_start").set_value(args.start).run()  # a real tokenizer: its merges learned here
    if args.start != "chars":
        merges = at.session_state["kept_num_merges"]
        print(f"{args.start} loaded, corpus encoded, {merges} merges learned + first render: "
              f"{time.perf_counter() - start:.2f} s")
    times, server = [], []
    for _ in range(args.runs):
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
        server.append(at.session_state["learn_run_ms"])
        assert not at.exception, [e.message for e in at.exception]
    what = args.variant if args.start == "chars" else f"from {args.start}"
    print(f"{what}, {args.chars:,} chars, {args.merges} merges: page run (AppTest) median "
          f"{statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms; the page's own "
          f"server time median {statistics.median(server):.0f} ms, max {max(server):.0f} ms")


if __name__ == "__main__":
    main()
