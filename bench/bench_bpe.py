"""BPE speed, as ratios against reference implementations timed in the same process.

    python bench/bench_bpe.py                 # everything (the textbook trainer alone takes minutes)
    python bench/bench_bpe.py --skip-textbook # only the library comparisons

Rows: the textbook trainer/encoder (``core.bpe._educational``, the seeds' algorithm), Hugging Face
``tokenizers``' BpeTrainer and single-threaded ``tiktoken``.  Compile time is excluded by a warm-up
call on a small text (numba caches compiled code on disk, so a user pays it once per install).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("RAYON_NUM_THREADS", "1")  # tiktoken/tokenizers: single-threaded

from core import BPETokenizer  # noqa: E402
from core.bpe.pretokenize import GPT2_PATTERN  # noqa: E402

SHARED = ROOT.parent / "shared"


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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-textbook", action="store_true")
    args = parser.parse_args()
    text = (SHARED / "corpora" / "tinyshakespeare.txt").read_text(encoding="utf-8")
    BPETokenizer.from_text(text[:5000], 20).encode(text[:5000])  # warm-up: load compiled kernels
    BPETokenizer.from_text(text[:5000], 20, variant="byte", pattern="gpt2").encode(text[:5000])

    print("| task | ours | reference | speed-up | target |")
    print("|---|---|---|---|---|")
    t512, tok = timed(lambda: BPETokenizer.from_text(text, 512), repeat=3)
    t1024, _ = timed(lambda: BPETokenizer.from_text(text, 1024), repeat=3)
    t_enc, ids = timed(lambda: tok.encode(text), repeat=3)
    assert len(ids) == 487_961
    if not args.skip_textbook:
        from core.bpe import _educational as oracle

        alphabet = sorted(set(text))
        chunks = oracle.char_chunks(text, alphabet)
        t_book, merges = timed(lambda: oracle.train(chunks, 512, len(alphabet)))
        assert [m[:3] for m in merges] == tok.merge_triples
        t_book_enc, book_ids = timed(lambda: oracle.encode(chunks[0][0], merges))
        assert book_ids == ids
        row("char train, 512 merges", t512, t_book, "textbook", ">= 100x, < 2 s")
        row("char encode, Tiny Shakespeare", t_enc, t_book_enc, "textbook", ">= 50x")
    else:
        print(f"| char train, 512 merges | {t512:.3f} s | (textbook skipped) | | < 2 s |")
        print(f"| char encode, Tiny Shakespeare | {t_enc:.3f} s | (textbook skipped) | | |")
    print(f"| char train, 1024 merges | {t1024:.3f} s | | | < 3 s |")

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
    t_byte, byte_tok = timed(lambda: BPETokenizer.from_text(text, 1024, variant="byte", pattern="gpt2"), repeat=3)
    assert byte_tok.vocab_size == hf.get_vocab_size() == 1280
    row("byte + GPT-2 regex train, vocab 1280", t_byte, t_hf, "tokenizers BpeTrainer", "within 3x (ratio >= 0.33)")

    vocab, encoder = SHARED / "gpt2" / "vocab.bpe", SHARED / "gpt2" / "encoder.json"
    gpt2 = BPETokenizer.from_gpt2(vocab, encoder)
    gpt2.encode(text[:5000])
    t_cold, ours_ids = timed(lambda: BPETokenizer.from_gpt2(vocab, encoder).encode(text))
    t_load, _ = timed(lambda: BPETokenizer.from_gpt2(vocab, encoder))
    t_warm, _ = timed(lambda: gpt2.encode(text), repeat=3)
    from core.bpe.interop import tiktoken_encoding

    enc = tiktoken_encoding(gpt2, name="gpt2-local")
    t_tik, tik_ids = timed(lambda: enc.encode_ordinary(text), repeat=3)
    assert tik_ids == ours_ids
    row("GPT-2 encode Tiny Shakespeare (fresh tokenizer)", t_cold - t_load, t_tik, "tiktoken", "within 3x (ratio >= 0.33)")
    row("GPT-2 encode Tiny Shakespeare (warm chunk cache)", t_warm, t_tik, "tiktoken", "")


if __name__ == "__main__":
    main()
