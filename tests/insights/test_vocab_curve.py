"""The vocabulary curve (core.insights.vocab_curve): from one training, the token counts of the
training and held-out parts at every size equal training and encoding at that size alone."""

from __future__ import annotations

import pytest

from core.bpe import BPETokenizer
from core.bpe.checks import ArgumentError
from core.corpus import sample_corpora
from core.insights import split_held_out, vocabulary_curve

SAMPLES = sample_corpora()


def _length(tok: BPETokenizer, text: str) -> int:
    """Tokens of ``text``, a character the alphabet lacks one token (as the curve counts it)."""
    return len(tok.encode_tokens(text, unknown="keep", offsets=False))


@pytest.mark.parametrize("variant", ["char", "word", "byte"])
@pytest.mark.parametrize("sample", ["sennrich", "multilingual and emoji", "python source"])
def test_every_size_equals_a_training_of_that_size(variant, sample):
    text = SAMPLES[sample].read_text(encoding="utf-8")
    pattern = "gpt4" if variant == "byte" else None
    train, held = split_held_out(text)
    top = BPETokenizer.from_text(train, 0, variant, pattern=pattern).vocab_size + 120
    curve = vocabulary_curve(text, top, variant, pattern=pattern)
    for k in range(0, len(curve.train_tokens), 7):
        alone = BPETokenizer.from_text(train, k, variant, pattern=pattern)
        assert alone.merge_triples == curve.tokenizer.merge_triples[:k]
        size = alone.vocab_size
        row = curve.row(size)
        assert row["train_chars_per_token"] == len(train) / _length(alone, train)
        assert row["held_out_chars_per_token"] == len(held) / _length(alone, held)


def test_the_held_out_part_is_the_one_a_gpt_run_validates_on():
    from core.gpt.split import split_text

    text = SAMPLES["sennrich"].read_text(encoding="utf-8")
    assert split_held_out(text) == split_text(text)


def test_rows_come_in_the_order_asked_and_sizes_outside_are_refused():
    text = SAMPLES["python source"].read_text(encoding="utf-8")
    base = BPETokenizer.from_text(split_held_out(text)[0], 0).vocab_size
    curve = vocabulary_curve(text, base + 40, "char")
    asked = [base + 30, base, base + 10]
    assert [r["vocab_size"] for r in curve.rows(asked)] == asked
    assert curve.rows([base])[0]["train_chars_per_token"] == 1.0
    with pytest.raises(ArgumentError, match="outside"):
        curve.row(base + 41)
    with pytest.raises(ArgumentError, match="base symbols"):
        vocabulary_curve(text, 3, "char")


@pytest.mark.slow
def test_tiny_shakespeare_to_4096_matches_trainings_at_a_few_sizes(shakespeare):
    curve = vocabulary_curve(shakespeare, 4096, "byte", pattern="gpt4")
    train, held = split_held_out(shakespeare)
    assert curve.vocab_sizes[-1] == 4096
    for size in (300, 1024, 4096):
        tok = curve.tokenizer.truncated(size - 256)
        assert curve.row(size) == {"vocab_size": size,
                                   "train_chars_per_token": len(train) / len(tok.encode(train)),
                                   "held_out_chars_per_token": len(held) / len(tok.encode(held))}
    rows = curve.rows([4096])
    assert rows[0]["train_chars_per_token"] > rows[0]["held_out_chars_per_token"]  # merges fit their text
