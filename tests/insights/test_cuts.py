"""A text cut as ordinary text (core.insights.cuts): tokens and ids equal tiktoken's and quicktok's,
many texts encoded alone in one call equal to encoding each, and char tokenizers' unseen characters."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings

from core.bpe import BPETokenizer
from core.insights.cuts import UNSEEN_ID, characters_started, cut, cuts_of_each, encode_each
from tests.insights.references import (REAL, library_cut, real_tokenizer, reference_encoding,
                                       reference_ids_each, weird_texts)

SAMPLES = sorted((Path(__file__).resolve().parents[2] / "sample_corpora").glob("*.txt"))


@pytest.mark.parametrize("name", REAL)
@settings(max_examples=30, deadline=None)
@given(text=weird_texts())
def test_a_cut_equals_the_library_as_ordinary_text(name, text):
    found = cut(real_tokenizer(name), text)
    assert (found.tokens, found.ids) == library_cut(reference_encoding(name), text)


@pytest.mark.parametrize("name", REAL)
def test_lines_encoded_each_alone_equal_the_library_in_batch(name):
    tok, enc = real_tokenizer(name), reference_encoding(name)
    lines = [line for path in SAMPLES for line in path.read_text(encoding="utf-8").splitlines()[:200]]
    lines += ["", " ", "  2024", "<|endoftext|>", "\n\n  x"]
    assert encode_each(tok, lines) == reference_ids_each(enc, lines)
    assert [c.ids for c in cuts_of_each(tok, lines[:50])] == [cut(tok, t).ids for t in lines[:50]]


def test_a_char_tokenizer_keeps_an_unseen_character_as_one_token():
    tok = BPETokenizer.from_text("aaab aaab", 2)
    found = cut(tok, "abz")
    assert found.tokens[-1] == "z" and found.ids[-1] == UNSEEN_ID
    assert "".join(found.tokens) == "abz"
    assert encode_each(tok, ["abz", ""]) == [list(found.ids), []]


def test_characters_started_counts_a_split_character_once():
    tok = BPETokenizer.byte_level()
    found = cut(tok, "hé!")
    assert found.tokens == ("h", "\\xc3", "\\xa9", "!")
    assert characters_started(tok, found) == [1, 1, 0, 1]
    word = BPETokenizer.from_text("low low lower", 3, variant="word")
    found = cut(word, "low")
    assert sum(characters_started(word, found)) == 3 and found.tokens[-1].endswith("</w>")
