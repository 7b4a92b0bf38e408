"""Tokens spent on whitespace (core.insights.whitespace): counts equal those of tiktoken's and
quicktok's tokens on the built-in Python sample and random texts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from core.bpe import BPETokenizer
from core.insights.whitespace import python_sample, whitespace_cost
from tests.insights.references import REAL, real_tokenizer, reference_encoding, weird_texts


def _library_cost(enc, text: str) -> tuple[int, int]:
    ids = enc.encode_ordinary(text)
    texts = [enc.decode_single_token_bytes(i).decode("utf-8", "replace") for i in ids]
    return len(ids), sum(1 for t in texts if t.isspace())


@pytest.mark.parametrize("name", REAL)
def test_the_python_sample_equals_the_library(name):
    found = whitespace_cost(real_tokenizer(name), python_sample())
    assert (found.tokens, found.whitespace_tokens) == _library_cost(reference_encoding(name), python_sample())
    assert 0 < found.line_breaks < found.whitespace_tokens
    assert found.to_dict() == {"tokens": found.tokens, "whitespace_tokens": found.whitespace_tokens}


@pytest.mark.parametrize("name", REAL)
@settings(max_examples=25, deadline=None)
@given(text=weird_texts())
def test_random_texts_equal_the_library(name, text):
    found = whitespace_cost(real_tokenizer(name), text)
    assert (found.tokens, found.whitespace_tokens) == _library_cost(reference_encoding(name), text)


def test_gpt2_spends_more_on_indentation_than_gpt4():
    gpt2 = whitespace_cost(real_tokenizer("gpt2"), python_sample())
    gpt4 = whitespace_cost(real_tokenizer("cl100k_base"), python_sample())
    assert gpt2.share > 2 * gpt4.share


def test_a_char_tokenizer_counts_an_unseen_space_and_an_empty_text():
    tok = BPETokenizer.from_text("ab ab", 1)
    found = whitespace_cost(tok, "ab\tab \n")
    assert (found.tokens, found.whitespace_tokens, found.line_breaks) == (5, 3, 1)
    assert whitespace_cost(tok, "").share == 0.0
