"""Residues (core.insights.residues): minted tokens that encoding the training corpus never emits,
equal to a textbook count (every merge applied over the corpus in order, core.bpe._educational)."""

from __future__ import annotations

import pytest

from core.bpe import BPETokenizer
from core.corpus import sample_corpora
from core.insights import residues, token_counts
from tests.insights.references import textbook_counts

SAMPLES = sample_corpora()


@pytest.mark.parametrize("variant", ["char", "word", "byte"])
@pytest.mark.parametrize("sample", ["sennrich", "low lower newest widest", "python source", "the cat sat"])
def test_residues_equal_a_textbook_count(variant, sample):
    text = SAMPLES[sample].read_text(encoding="utf-8")
    tok = BPETokenizer.from_text(text, 150, variant, pattern="gpt4" if variant == "byte" else None)
    slow = textbook_counts(tok, text)
    counts = token_counts(tok, text)
    assert {i: int(n) for i, n in enumerate(counts) if n} == dict(slow)
    assert residues(tok, text) == [new for _, _, new in tok.merge_triples if slow[new] == 0]


def test_a_token_every_later_merge_consumes_is_a_residue():
    tok = BPETokenizer.from_text("abc abc abc", 2)
    assert [tok.token_str(i) for i in residues(tok, "abc abc abc")] == ["ab"]
    assert [tok.token_str(i) for i in residues(tok, "ab")] == ["abc"]  # residues are of a text


def test_a_large_vocabulary_on_a_small_corpus_leaves_many():
    text = SAMPLES["sennrich"].read_text(encoding="utf-8")
    tok = BPETokenizer.from_text(text, 400, "byte", pattern="gpt4")
    found = residues(tok, text)
    assert 0 < len(found) < len(tok.merges)
    assert all(token_counts(tok, text)[i] == 0 for i in found)
