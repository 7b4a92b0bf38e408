"""A word as the model is given it (core.insights.spelling): every form's tokens and ids equal
tiktoken's and quicktok's, the hidden letters, and the words a space or a capital cuts otherwise."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.bpe import BPETokenizer
from core.bpe.checks import ArgumentError
from core.insights.spelling import (FORMS, letter_places, spelling, word_forms, words_cut_differently)
from tests.insights.references import REAL, real_tokenizer, reference_encoding, reference_tokens

WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCXYZéß", min_size=1, max_size=14)


@pytest.mark.parametrize("name", REAL)
@settings(max_examples=25, deadline=None)
@given(word=WORDS)
def test_every_form_equals_the_library(name, word):
    tok, enc = real_tokenizer(name), reference_encoding(name)
    found = spelling(tok, word)
    assert list(found.forms) == list(FORMS)
    for form, text in word_forms(word).items():
        ids = enc.encode_ordinary(text)
        assert found.forms[form].ids == tuple(ids), form
        assert found.forms[form].tokens == reference_tokens(enc, ids), form
    longer = sum(len(t) for t in reference_tokens(enc, enc.encode_ordinary(word)) if len(t) >= 2)
    if word.isascii():
        assert found.letters_in_longer_tokens == longer


def test_strawberry_under_gpt4():
    found = spelling(real_tokenizer("cl100k_base"), "strawberry")
    assert found.forms["word"].tokens == ("str", "aw", "berry")
    assert found.forms[" word"].tokens == (" strawberry",)
    assert found.forms["reversed"].tokens == ("yr", "reb", "warts")
    assert found.letters_in_longer_tokens == 10
    places = letter_places(real_tokenizer("cl100k_base"), "strawberry", "R")
    assert places == [("str", 1), ("aw", 0), ("berry", 2)]
    assert sum(n for _, n in places) == "strawberry".count("r")


def test_letters_of_single_letter_tokens_are_not_hidden():
    tok = BPETokenizer.byte_level()
    assert spelling(tok, "abc").letters_in_longer_tokens == 0
    tok = BPETokenizer(variant="byte", merges=[(97, 98, 256)])
    assert spelling(tok, "abc").letters_in_longer_tokens == 2


def _brute_force(tok, text):
    """Every distinct word checked one by one with ``cut``'s meaning, no batching."""
    words = [w for w in dict.fromkeys(w.lower() for w in text.replace(".", " ").split())
             if w.capitalize() != w]
    space = capital = 0
    for w in words:
        plain = [tok.token_str(i) for i in tok.encode(w, allowed_special="none")]
        spaced = [tok.token_str(i) for i in tok.encode(" " + w, allowed_special="none")]
        spaced[0] = spaced[0][1:]
        spaced = spaced if spaced[0] else spaced[1:]
        cap = [tok.token_str(i).lower() for i in tok.encode(w[0].upper() + w[1:], allowed_special="none")]
        space += plain != spaced
        capital += plain != cap
    return len(words), space, capital


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "qwen3"])
def test_words_cut_differently_by_a_space_or_a_capital(name):
    tok = real_tokenizer(name)
    text = "The strawberry tastes good. Strawberry jam and wonderful unbelievable words. thou art"
    found = words_cut_differently(tok, text)
    assert (found.words, found.by_space, found.by_capital) == _brute_force(tok, text)
    assert found.either <= found.words and set(found.examples) <= set(text.lower().split())


def test_words_are_taken_most_frequent_first():
    tok = real_tokenizer("cl100k_base")
    text = "zyx " * 5 + "strawberry " * 3 + "blorp"
    found = words_cut_differently(tok, text, max_words=2)
    assert found.words == 2
    assert Counter(text.split()).most_common(2)[0][0] == "zyx"


@pytest.mark.parametrize("bad", ["", "two words", "x" * 101, "tab\there"])
def test_a_bad_word_is_refused_with_a_reason(bad):
    with pytest.raises(ArgumentError, match="one word"):
        spelling(BPETokenizer.byte_level(), bad)
    with pytest.raises(ArgumentError, match="one letter"):
        letter_places(BPETokenizer.byte_level(), "word", "ab")
