"""BPE speed, as ratios against reference implementations timed in the same process.

    python bench/bench_bpe.py                 # everything (the book's trainer alone takes minutes)
    python bench/bench_bpe.py --skip-textbook # only the library comparisons
    python bench/bench_bpe.py --memory        # peak memory of char/word training, in subprocesses
    python bench/bench_bpe.py --hostile       # pasted texts: random Unicode, 8 MB of docs, one long line
    python bench/bench_bpe.py --hostile --quick  # the same on a quarter of each text, 50 merges

Rows: the book's own trainer/encoder (seed 002's ``from_text``/``encode``, ``bench/book_bpe.py``),
Hugging Face ``tokenizers``' BpeTrainer and single-threaded ``tiktoken``; the app's 1 MB case
(``BPETrainer.run`` with a progress callback on 1 MB of the Debian docs).  ``--hostile`` times char
against byte training on the same text for what attendees paste: 2 MB of random Unicode (nearly every
pair ties at a count of 1 or 2, 171 k distinct characters), the first 8 MB of the Debian docs, a 1 MB
line with no space, and Tiny Shakespeare for reference; the target is char within 3x byte.  Compile
time is excluded by a warm-up call on a small text (numba caches compiled code on disk, so a user pays
it once per install).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
os.environ.setdefault("RAYON_NUM_THREADS", "1")  # tiktoken/tokenizers: single-threaded

from core import BPETokenizer, BPETrainer  # noqa: E402
from core.bpe.pretokenize import GPT2_PATTERN  # noqa: E402

SHARED = ROOT.parent / "shared"
WITHIN_3X = "within 3x (ratio >= 0.33)"


def timed(fn, repeat: int = 1):
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def row(task, ours, reference, ref_name, target):
    ratio = reference / ours if reference else float("nan")
    print(f"| {task} | {ours:.3f} s | {ref_name}: {reference:.3f} s | {ratio:.1f}x | {target} |", flush=True)


def debian_file(folder: str) -> Path:
    """The Debian docs corpus, decompressed into ``folder`` (a temporary one, never the repo)."""
    path = Path(folder) / "debian-docs.txt"
    archive = SHARED / "corpora" / "debian-docs-100mb.txt.xz"
    with open(path, "wb") as out:
        subprocess.run(["xz", "-dc", str(archive)], stdout=out, check=True)
    return path


def debian_text(chars: int) -> str:
    with tempfile.TemporaryDirectory() as folder:
        path = debian_file(folder)
        with open(path, encoding="utf-8") as f:
            return f.read(chars)


def app_row() -> None:
    """What the app does with a 1 MB pasted corpus: 512 merges through ``run`` with progress."""
    text = debian_text(1_000_000)

    def train():
        for _ in BPETrainer(text).run(512, progress=lambda done, total: None):
            pass

    t_app, _ = timed(train, repeat=3)
    print(f"| app: char train 1 MB Debian docs, 512 merges | {t_app:.3f} s | | | <= 0.3 s |", flush=True)


MEMORY_CHILD = """
import sys
from core import BPETrainer
def status(field):
    return next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith(field))
path, chars, variant = sys.argv[1], int(sys.argv[2]), sys.argv[3]
text = "a" * chars if path == "repeat" else open(path, encoding="utf-8").read(chars)
list(BPETrainer(text[:5000], variant=variant).run(5))
before = status("VmRSS")
list(BPETrainer(text, variant=variant).run(300))
print((status("VmHWM") - before) / len(text.encode("utf-8")))
"""


def random_unicode(chars: int = 550_000, seed: int = 0) -> str:
    """Code points drawn uniformly from U+0020..U+2BFFF, surrogates left out: 550 k characters are
    2 MB of UTF-8 with about 171 k distinct characters, nearly every pair occurring once."""
    import numpy as np

    points = np.random.default_rng(seed).integers(0x20, 0x2C000 - 0x800, size=chars)
    points = np.where(points >= 0xD800, points + 0x800, points)  # skip U+D800..U+DFFF
    return "".join(map(chr, points.tolist()))


def hostile_table(quick: bool) -> None:
    """Char and byte training timed on the same pasted text, and their ratio (target: <= 3)."""
    scale, merges = (4, 50) if quick else (1, 300)
    docs = debian_text(8_000_000 // scale)
    cases = [
        (f"random Unicode {8 // scale / 4:g} MB", random_unicode(550_000 // scale), merges),
        (f"Debian docs {8 / scale:g} MB", docs, merges),
        (f"one {1 / scale:g} MB line, no space", "".join(docs.split())[:1_000_000 // scale], merges),
        ("Tiny Shakespeare", (SHARED / "corpora" / "tinyshakespeare.txt").read_text(encoding="utf-8"), 512),
    ]
    print("| text | merges | char | byte | char / byte | target |")
    print("|---|---|---|---|---|---|")
    for name, text, n in cases:
        t_char, _ = timed(lambda: list(BPETrainer(text).run(n)))
        t_byte, _ = timed(lambda: list(BPETrainer(text, variant="byte").run(n)))
        target = "<= 3" if name.startswith("random") else ""
        print(f"| {name} | {n} | {t_char:.3f} s | {t_byte:.3f} s | {t_char / t_byte:.1f} | {target} |",
              flush=True)


def memory_table() -> None:
    """Peak RSS growth (VmHWM) of 300 merges, in a fresh subprocess per case, as x the corpus."""
    print("| variant | corpus | peak growth / corpus bytes | target |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        path = debian_file(folder)
        cases = [
            ("Debian docs 1 MB", path, 10**6),
            ("Debian docs 10 MB", path, 10**7),
            ("Debian docs 50 MB", path, 5 * 10**7),
            ("'a' x 10 MB", "repeat", 10**7),
        ]
        for variant in ("char", "word"):
            for name, source, chars in cases:
                command = [sys.executable, "-c", MEMORY_CHILD, str(source), str(chars), variant]
                out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
                print(f"| {variant} | {name} | {float(out.stdout):.1f}x | <= 10x |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-textbook", action="store_true")
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--hostile", action="store_true", help="char vs byte on pasted texts")
    parser.add_argument("--quick", action="store_true", help="with --hostile: a quarter of each text")
    args = parser.parse_args()
    if args.memory:
        return memory_table()
    text = (SHARED / "corpora" / "tinyshakespeare.txt").read_text(encoding="utf-8")
    BPETokenizer.from_text(text[:5000], 20).encode(text[:5000])  # warm-up: load compiled kernels
    BPETokenizer.from_text(text[:5000], 20, variant="byte", pattern="gpt2").encode(text[:5000])
    BPETokenizer.from_text(text[:5000], 20, variant="byte").encode(text[:5000])
    if args.hostile:
        return hostile_table(args.quick)

    print("| task | ours | reference | speed-up | target |")
    print("|---|---|---|---|---|")
    t512, tok = timed(lambda: BPETokenizer.from_text(text, 512), repeat=3)
    t1024, _ = timed(lambda: BPETokenizer.from_text(text, 1024), repeat=3)
    t_enc, ids = timed(lambda: tok.encode(text), repeat=3)
    assert len(ids) == 487_961
    if not args.skip_textbook:
        from book_bpe import BPETokenizer as Book

        t_book, book = timed(lambda: Book.from_text(text, 512))
        assert book.merges == tok.merges
        t_book_enc, book_ids = timed(lambda: book.encode(text))
        assert book_ids.tolist() == ids
        row("char train, 512 merges", t512, t_book, "the book", ">= 300x")
        row("char encode, Tiny Shakespeare", t_enc, t_book_enc, "the book", ">= 50x")
    else:
        print(f"| char train, 512 merges | {t512:.3f} s | (book skipped) | | |")
        print(f"| char encode, Tiny Shakespeare | {t_enc:.3f} s | (book skipped) | | |")
    print(f"| char train, 1024 merges | {t1024:.3f} s | | | <= 0.3 s |")
    app_row()

    from tokenizers import Tokenizer, Regex, models, pre_tokenizers, trainers

    def hf_train():
        hf = Tokenizer(models.BPE())
        hf.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(GPT2_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        trainer = trainers.BpeTrainer(vocab_size=256 + 1024, show_progress=False,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        hf.train_from_iterator([text], trainer)
        return hf

    t_hf, hf = timed(hf_train, repeat=3)
    t_byte, byte_tok = timed(lambda: BPETokenizer.from_text(text, 1024, variant="byte", pattern="gpt2"),
                             repeat=3)
    assert byte_tok.vocab_size == hf.get_vocab_size() == 1280
    row("byte + GPT-2 regex train, vocab 1280", t_byte, t_hf, "tokenizers BpeTrainer", WITHIN_3X)

    vocab = SHARED / "gpt2" / "vocab.bpe"
    encoder = SHARED / "gpt2" / "encoder.json"
    gpt2 = BPETokenizer.from_gpt2(vocab, encoder)
    gpt2.encode(text[:5000])
    t_cold, ours_ids = timed(lambda: BPETokenizer.from_gpt2(vocab, encoder).encode(text))
    t_load, _ = timed(lambda: BPETokenizer.from_gpt2(vocab, encoder))
    t_warm, _ = timed(lambda: gpt2.encode(text), repeat=3)
    from core.bpe.interop import tiktoken_encoding

    enc = tiktoken_encoding(gpt2, name="gpt2-local")
    t_tik, tik_ids = timed(lambda: enc.encode_ordinary(text), repeat=3)
    assert tik_ids == ours_ids
    row("GPT-2 encode Tiny Shakespeare (fresh tokenizer)", t_cold - t_load, t_tik, "tiktoken", WITHIN_3X)
    row("GPT-2 encode Tiny Shakespeare (warm chunk cache)", t_warm, t_tik, "tiktoken", "")


if __name__ == "__main__":
    main()
