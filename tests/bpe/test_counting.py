"""core.bpe.counting: streamed, sliced, parallel chunk counts equal the serial path's exactly
(same counts, same first-appearance order), and so do the merges trained on them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.bpe import BPETrainer, count_chunks
from core.bpe import counting
from core.bpe.kernels import count as count_kernels
from core.bpe.checks import ArgumentError
from core.bpe.variants import variant_rules
from tests.conftest import need_module

SPECIAL = "<|e|>"
# Letters, digits, punctuation, every kind of whitespace (ASCII and not), accents, Hangul, emoji,
# and the pieces of a special token: what the safe-cut argument is about.
ALPHABET = st.sampled_from(list("ab'sZ09.,!*(` \t\n\r\x0b\x0c\x1c\xa0\u3000éü한😀<|e>")
                           + [SPECIAL, "'ll"])
TEXTS = st.lists(ALPHABET, max_size=80).map("".join)


def serial(text: str, pattern, specials=()) -> list[tuple[str, int]]:
    """What BPETrainer counts on the whole text."""
    return variant_rules("byte").corpus_chunks(text, counting.resolve_pattern(pattern), specials, None)


def cut_into(text: str, cuts: list[int]) -> list[str]:
    bounds = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


@settings(max_examples=300, deadline=None)
@given(text=TEXTS, cuts=st.lists(st.integers(0, 80), max_size=5), slice_bytes=st.integers(1, 40),
       pattern=st.sampled_from(["gpt2", "gpt4"]), specials=st.sampled_from([(), (SPECIAL,)]))
def test_sliced_counts_equal_the_serial_counts_in_order(text, cuts, slice_bytes, pattern, specials):
    counts = count_chunks(cut_into(text, cuts), pattern, specials, processes=1, slice_bytes=slice_bytes)
    assert list(counts.items()) == serial(text, pattern, specials)


@settings(max_examples=40, deadline=None)
@given(text=TEXTS.filter(lambda t: t.strip()), slice_bytes=st.integers(1, 40),
       pattern=st.sampled_from(["gpt2", "gpt4"]))
def test_merges_from_counts_equal_the_serial_merges(text, slice_bytes, pattern):
    expected = BPETrainer(text, variant="byte", pattern=pattern, special_tokens=[SPECIAL])
    counts = count_chunks([text], pattern, [SPECIAL], processes=1, slice_bytes=slice_bytes)
    if not counts:  # the text is special tokens only: nothing to learn either way
        return
    trainer = BPETrainer.from_chunk_counts(counts, pattern=pattern, special_tokens=[SPECIAL])
    assert list(trainer.run(40)) == list(expected.run(40))
    assert trainer.fields() == expected.fields()


@pytest.mark.slow
def test_worker_processes_give_the_serial_counts_and_merges():
    words = ["alpha", " beta", "  gamma", ".\n", " 12345", "\t(x)", " été", "\r\n", "'s"]
    rng = np.random.default_rng(13)
    texts = ["".join(rng.choice(words, 500)) for _ in range(8)]
    counts = count_chunks(iter(texts), "gpt4", processes=2, slice_bytes=1000)
    assert list(counts.items()) == serial("".join(texts), "gpt4")
    steps = list(BPETrainer.from_chunk_counts(counts, pattern="gpt4").run(50))
    assert steps == list(BPETrainer("".join(texts), variant="byte", pattern="gpt4").run(50))


def test_a_file_is_counted_as_stored(tmp_path):
    text = "one two\r\nthree  four\n\n five\u3000six 😀 seven.\r\n" * 50
    path = tmp_path / "corpus.txt"
    path.write_bytes(text.encode("utf-8"))
    assert list(count_chunks(path, "gpt2", processes=1, slice_bytes=64).items()) == serial(text, "gpt2")
    assert count_chunks(str(path), "gpt4", processes=1) == dict(serial(text, "gpt4"))


@pytest.mark.parametrize("pattern, specials", [(r"\w+|\W+", ()), (None, ()), ("gpt2", ("< >",))])
def test_what_cannot_be_cut_is_counted_serially(pattern, specials):
    text = "a b< >c  d\n" * 20
    counts = count_chunks([text[:7], text[7:]], pattern, specials, processes=1, slice_bytes=8)
    assert list(counts.items()) == serial(text, pattern, specials)


def test_the_kernels_readable_reference_is_the_kernel_uncompiled():
    data = np.frombuffer("It's 2024: le café   coûte 3€.\n\tOK ok ok!\x0c".encode() * 3, np.uint8)
    for limit in (0, 5, 40, 1000):
        assert count_kernels.cut_near(data, limit) == count_kernels.cut_near.py_func(data, limit)


def test_bad_corpora_and_counts_are_refused_with_a_message(tmp_path):
    with pytest.raises(ArgumentError, match="No file"):
        count_chunks(str(tmp_path / "missing.txt"), "gpt2")
    with pytest.raises(ArgumentError, match="file path or texts"):
        count_chunks(b"bytes", "gpt2")
    with pytest.raises(ArgumentError, match="must be a str"):
        count_chunks(["ok", 3], "gpt2", processes=1)
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9 ok".encode("latin-1"))
    with pytest.raises(ValueError, match="not UTF-8"):
        count_chunks(bad, "gpt2", processes=1)
    for counts, message in [([("a", 1)], "mapping"), ({"": 1}, "non-empty"), ({"a": 0}, "count"),
                            ({}, "empty")]:
        with pytest.raises(ValueError, match=message):
            BPETrainer.from_chunk_counts(counts, pattern="gpt2")


def test_a_dask_cluster_of_two_dask_workers_gives_the_serial_counts_and_merges():
    distributed = need_module("dask.distributed", "the dist extra: pip install -r requirements-dev.txt")
    from core.bpe.dask_counting import count_chunks_on

    text = "It's a test, isn't it?  Yes:\n\tthe 2 tests pass. 😀 " * 200
    with distributed.Client(n_workers=2, threads_per_worker=1, processes=False,
                            dashboard_address=None) as client:
        counts = count_chunks_on(client, [text[:333], text[333:]], "gpt4", slice_bytes=500)
    assert list(counts.items()) == serial(text, "gpt4")
    steps = list(BPETrainer.from_chunk_counts(counts, pattern="gpt4").run(30))
    assert steps == list(BPETrainer(text, variant="byte", pattern="gpt4").run(30))
