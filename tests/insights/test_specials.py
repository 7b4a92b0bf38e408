"""Special-token text in a text (core.insights.specials): read as text it equals tiktoken's and
quicktok's ``encode_ordinary``, read as special their ``allowed_special="all"``; the libraries'
defaults as the module says them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from core.bpe import BPETokenizer
from core.insights.specials import LIBRARY_DEFAULTS, special_readings, special_strings, specials_in
from tests.conftest import need_module
from tests.insights.references import (REAL, library_cut, quicktok_encoding, real_tokenizer,
                                       reference_encoding, weird_texts)


@pytest.mark.parametrize("name", REAL)
@settings(max_examples=30, deadline=None)
@given(text=weird_texts())
def test_both_readings_equal_the_library(name, text):
    tok, enc = real_tokenizer(name), reference_encoding(name)
    found = special_readings(tok, text)
    assert (found.as_text.tokens, found.as_text.ids) == library_cut(enc, text)
    specials = quicktok_encoding(name) if name == "llama3" else enc  # tiktoken's Llama 3 here has none
    if any(s in text for s in specials.special_tokens_set):
        assert found.as_special == specials.encode(text, allowed_special="all")
    else:
        assert found.as_special == [] and found.found == ()


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_tiktoken_refuses_special_text_by_default(name):
    enc = reference_encoding(name)
    with pytest.raises(ValueError, match="disallowed special token"):
        enc.encode("a <|endoftext|>")
    assert "refuses" in LIBRARY_DEFAULTS[name]


def test_hugging_face_tokenizers_reads_an_added_special_token_as_special():
    tokenizers = need_module("tokenizers", "pip install -r requirements-dev.txt")
    hf = tokenizers.Tokenizer(tokenizers.models.BPE())
    hf.add_special_tokens(["<|endoftext|>"])
    assert hf.encode("<|endoftext|>").ids == [hf.token_to_id("<|endoftext|>")]
    assert "as the special token" in LIBRARY_DEFAULTS["qwen3"]


def test_llama3_has_no_endoftext_and_gpt4_one_id():
    assert special_readings(real_tokenizer("llama3"), "<|endoftext|>").as_special == []
    gpt4 = special_readings(real_tokenizer("cl100k_base"), "<|endoftext|>")
    assert gpt4.as_special == [100257] and len(gpt4.as_text.ids) > 1
    assert "<|im_start|>" in special_strings([real_tokenizer("qwen3")])


def test_the_longest_special_text_is_found_first():
    tok = BPETokenizer.byte_level(special_tokens=["<a>", "<a><b>"])
    assert specials_in(tok, "x<a><b>") == ("<a><b>", "<a>")
    assert special_readings(tok, "x<a><b>").as_special == [120, tok.special_tokens["<a><b>"]]
