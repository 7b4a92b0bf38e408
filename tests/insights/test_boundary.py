"""A prompt's last tokens (core.insights.boundary): the prompt and the joined text equal tiktoken's
and quicktok's tokens, and ``kept`` is the prompt's tokens found unchanged at the joined text's start."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from core.bpe import BPETokenizer
from core.insights.boundary import prompt_boundary, trailing_space_prompt
from tests.insights.references import REAL, real_tokenizer, reference_encoding, reference_tokens, weird_texts


def _kept(a: list[int], b: list[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@pytest.mark.parametrize("name", REAL)
@settings(max_examples=30, deadline=None)
@given(prompt=weird_texts(4), continuation=weird_texts(3))
def test_the_boundary_equals_the_library(name, prompt, continuation):
    tok, enc = real_tokenizer(name), reference_encoding(name)
    found = prompt_boundary(tok, prompt, continuation)
    alone, joined = enc.encode_ordinary(prompt), enc.encode_ordinary(prompt + continuation)
    assert found.prompt.tokens == reference_tokens(enc, alone)
    assert found.joined.tokens == reference_tokens(enc, joined)
    assert found.kept == _kept(alone, joined)
    assert found.to_dict()["kept"] == found.kept and found.lost == found.prompt.tokens[found.kept:]


@pytest.mark.parametrize("name", REAL)
def test_a_trailing_space_is_lost_before_a_word(name):
    found = prompt_boundary(real_tokenizer(name), "Hello ", "world")
    assert found.prompt.tokens == ("Hello", " ") and found.joined.tokens == ("Hello", " world")
    assert found.kept == 1 and found.lost == (" ",)


def test_a_prompt_is_taken_from_the_text_ending_in_a_space():
    assert trailing_space_prompt("First Citizen:\nBefore we proceed") == ("First ", "Citizen:")
    assert trailing_space_prompt("Act\nBefore we proceed") == ("Before we ", "proceed")
    assert trailing_space_prompt("one\ntwo") == ("", "")
    prompt, word = trailing_space_prompt("a " * 50 + "tail", max_chars=10)
    assert prompt.endswith(" ") and len(prompt) <= 10 and word == "a"


def test_nothing_kept_when_the_first_token_changes():
    tok = BPETokenizer(variant="byte", merges=[(97, 98, 256)])
    assert prompt_boundary(tok, "a", "b").kept == 0
