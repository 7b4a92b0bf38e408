"""The fast trainer and encoder against the textbook oracle, on fixed corpora and random text."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import BPETokenizer, BPETrainer
from core.bpe import _educational as oracle
from core.bpe.kernels import training as kernels
from core.bpe.pretokenize import byte_chunks, resolve_pattern, word_counts


FEW_LETTERS = st.text(alphabet="ab c\n", min_size=1, max_size=60)
ANY_TEXT = st.text(min_size=1, max_size=80)


def oracle_merges(text, variant, num_merges, pattern=None):
    """What the textbook trains, as (left, right, new, count) tuples."""
    if variant == "char":
        alphabet = sorted(set(text))
        return oracle.train(oracle.char_chunks(text, alphabet), num_merges, len(alphabet))
    if variant == "word":
        alphabet = sorted(set("".join(text.split()))) + ["</w>"]
        return oracle.train(oracle.word_chunks(text, alphabet), num_merges, len(alphabet))
    pieces = [text[s:e] for s, e, _ in byte_chunks(text, resolve_pattern(pattern))]
    return oracle.train(oracle.byte_chunks(pieces), num_merges, 256)


def ours(tok):
    return [(s.left, s.right, s.new_id, s.count) for s in tok.trace]


@pytest.mark.parametrize("variant", ["char", "word", "byte"])
def test_same_merges_as_textbook_on_the_verdict(verdict, variant):
    text = verdict[:6000]
    tok = BPETokenizer.from_text(text, 120, variant=variant, pattern="gpt2" if variant == "byte" else None)
    assert ours(tok) == oracle_merges(text, variant, 120, "gpt2")


def test_same_merges_as_textbook_on_shakespeare_excerpt(shakespeare):
    text = shakespeare[:20000]
    assert ours(BPETokenizer.from_text(text, 150)) == oracle_merges(text, "char", 150)


@settings(max_examples=150, deadline=None)
@given(text=FEW_LETTERS, num_merges=st.integers(0, 30))
def test_char_variant_matches_textbook_on_random_text(text, num_merges):
    tok = BPETokenizer.from_text(text, num_merges)
    assert ours(tok) == oracle_merges(text, "char", num_merges)
    assert tok.exhausted == (len(tok.merges) < num_merges)
    ids = tok.encode(text)
    assert ids == oracle.encode(oracle.char_chunks(text, tok.chars)[0][0], ours(tok))
    assert tok.decode(ids) == text
    assert (tok.trace[-1].length_after if tok.trace else len(text)) == len(ids)


@settings(max_examples=100, deadline=None)
@given(text=st.text(alphabet="ab c\n\t", min_size=1, max_size=60).filter(lambda t: len(t.split()) > 0),
       num_merges=st.integers(0, 20))
def test_word_variant_matches_textbook_on_random_text(text, num_merges):
    tok = BPETokenizer.from_text(text, num_merges, variant="word")
    assert ours(tok) == oracle_merges(text, "word", num_merges)
    assert tok.decode(tok.encode(text)) == " ".join(text.split())


WORDS_WITH_SEPARATORS = st.lists(st.sampled_from(["a", "b", " ", "\n", "\x1c", "\x1d", "\x1e", "\x1f",
                                                   "\x85", "\xa0", "</w>", "<", "w>"]),
                                  min_size=1, max_size=30).map("".join)


@settings(max_examples=100, deadline=None)
@given(text=WORDS_WITH_SEPARATORS.filter(lambda t: len(t.split()) > 0), num_merges=st.integers(0, 25))
def test_word_variant_splits_as_str_split_and_keeps_a_literal_marker(text, num_merges):
    """\x1c-\x1f separate words for ``str.split()`` (the seeds' split) though not for regex's
    ``\\s``; a literal "</w>" typed in a word is text, not the end of the word."""
    tok = BPETokenizer.from_text(text, num_merges, variant="word")
    assert ours(tok) == oracle_merges(text, "word", num_merges)
    ids = tok.encode(text)
    book = [i for w in text.split() for i in oracle.encode(oracle.word_chunks(w, tok.chars)[0][0], ours(tok))]
    assert ids == book
    assert tok.decode(ids) == " ".join(text.split())


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(WORDS_WITH_SEPARATORS, ANY_TEXT), block=st.integers(1, 8))
def test_words_counted_a_block_at_a_time_are_str_split_in_order(text, block):
    """The word variant counts a large corpus's words a block at a time, each block cut at
    whitespace: the same words, counts and first-appearance order as ``Counter(text.split())``,
    whatever the block size (every whitespace character, \x1c-\x1f and \x85 included)."""
    counted = word_counts(text, block)
    assert list(counted.items()) == list(Counter(text.split()).items())


@settings(max_examples=100, deadline=None)
@given(text=ANY_TEXT, num_merges=st.integers(0, 25), pattern=st.sampled_from([None, "gpt2", "gpt4"]))
def test_byte_variant_matches_textbook_and_round_trips_any_unicode(text, num_merges, pattern):
    tok = BPETokenizer.from_text(text, num_merges, variant="byte", pattern=pattern)
    assert ours(tok) == oracle_merges(text, "byte", num_merges, pattern)
    assert tok.decode(tok.encode(text)) == text


@settings(max_examples=60, deadline=None)
@given(train=FEW_LETTERS, other=st.text(alphabet="abc \n", max_size=80), k=st.integers(0, 15))
def test_encoding_new_text_equals_book_encoder(train, other, k):
    tok = BPETokenizer.from_text(train, k)
    other = "".join(ch for ch in other if ch in tok.chars)
    book = oracle.encode(oracle.char_chunks(other, tok.chars)[0][0], tok.merge_triples)
    assert tok.encode(other) == book


def test_truncated_equals_training_fewer_merges(verdict):
    text = verdict[:5000]
    full = BPETokenizer.from_text(text, 200)
    for k in (0, 1, 57, 200):
        assert full.truncated(k).merge_triples == BPETokenizer.from_text(text, k).merge_triples
        assert full.truncated(k).encode(text) == BPETokenizer.from_text(text, k).encode(text)


def test_trace_reports_competitors_ties_and_lengths():
    tok = BPETokenizer.from_text("abab cdcd", 3, top_k=4)
    first = tok.trace[0]
    assert first.competitors[0] == (first.left, first.right, first.count)
    counts = [c for _, _, c in first.competitors]
    assert counts == sorted(counts, reverse=True)
    assert len(counts) <= 4
    assert first.ties == sum(1 for c in counts[1:] if c == first.count)
    lengths = [len(tok.truncated(k + 1).encode("abab cdcd")) for k in range(3)]
    assert [s.length_after for s in tok.trace] == lengths


def test_generator_can_stop_and_resume_with_progress():
    seen = []
    text = "the cat sat on the mat the cat ran" * 3
    trainer = BPETrainer(text)
    first = list(trainer.run(5, progress=lambda done, total: seen.append((done, total))))
    more = list(trainer.run(5))
    assert [s.index for s in first + more] == list(range(10))
    assert seen[-1] == (5, 5)
    assert BPETokenizer.from_trainer(trainer).merge_triples == BPETokenizer.from_text(text, 10).merge_triples


@pytest.mark.parametrize("weighted", [False, True])
def test_compiled_kernels_equal_their_uncompiled_source(weighted):
    """numba's compiled training loop against the same source run as plain Python (``py_func``),
    merge by merge: the pairs, counts, competitors, the sequence, the position lists and where
    each pair first occurs."""
    rng = np.random.default_rng(0)
    seq = rng.integers(0, 4, size=300).astype(np.int32)
    seq[rng.integers(0, 300, size=20)] = kernels.SEPARATOR
    seq[-1] = kernels.SEPARATOR
    weights = rng.integers(1, 5, size=300).astype(np.int32) if weighted else np.ones(1, dtype=np.int32)
    results = []
    for compiled in (True, False):
        k = {name: getattr(kernels, name) if compiled else getattr(kernels, name).py_func
             for name in ("count_pairs", "build_heap", "list_positions", "train_steps")}
        s = seq.copy()
        table = k["count_pairs"](s, weights)
        heap = k["build_heap"](*table[:3])
        positions = k["list_positions"](s, 40)
        out, top = np.zeros((30, 5), dtype=np.int64), np.zeros((30, 2, 5), dtype=np.int64)
        done, table, heap = k["train_steps"](s, weights, positions, table, heap, 4, 30, 5, out, top)
        live = table[0] != -1
        results.append((done, out.tolist(), top.tolist(), s.tolist(), [a.tolist() for a in positions],
                        dict(zip(table[0][live].tolist(), table[2][live].tolist())), table[3]))
    assert results[0] == results[1]
    assert results[0][0] > 10
