"""Tokens that never appear (core.insights.unreachable): the batched check equals encoding each
token's text alone, with our encoder, with quicktok and with tiktoken."""

from __future__ import annotations

import pytest

from core.bpe import PRETRAINED_NAMES, BPETokenizer
from core.bpe.checks import ArgumentError
from core.insights import named_tokenizer, token_reach, unreachable_tokens
from tests.insights.references import quicktok_encoding, tiktoken_encoding, unreachable_by_encoding


def _ordinary(tok):
    return [i for i in tok.ids if not tok.is_special(i)]


def _one_by_one(tok) -> tuple[list[int], int]:
    """Our own encoder, one token's text at a time."""
    return unreachable_by_encoding(_Ours(tok), _ordinary(tok), tok.token_bytes)


class _Ours:
    def __init__(self, tok):
        self.tok = tok

    def encode_ordinary(self, text):
        return self.tok.encode(text, allowed_special="none")


def test_a_token_its_merges_build_another_way_is_unreachable():
    # "abc" was made as a + bc, but (a, b) ranks first: its text encodes as ab, c
    for variant in ("char", "byte"):
        base = ["a", "b", "c"] if variant == "char" else None
        a, b, c = (0, 1, 2) if variant == "char" else (97, 98, 99)
        first = 3 if variant == "char" else 256
        tok = BPETokenizer(variant=variant, base=base, merges=[(a, b, first), (b, c, first + 1),
                                                                (a, first + 1, first + 2)])
        found = unreachable_tokens(tok)
        assert found.unreachable == (first + 2,)
        assert tok.encode("abc") == [first, c]
        assert list(found.unreachable) == _one_by_one(tok)[0]


@pytest.mark.parametrize("variant", ["char", "byte"])
def test_trained_tokenizers_equal_encoding_each_token_alone(variant):
    text = "The cat sat on the mat; l'homme qu'il a vu. 안녕하세요 세계, 東京タワー " * 20
    for pattern in ([None, "gpt2", "gpt4"] if variant == "byte" else [None]):
        tok = BPETokenizer.from_text(text, 150, variant, pattern=pattern)
        found = unreachable_tokens(tok)
        assert (list(found.unreachable), len(found.partial)) == _one_by_one(tok)


def test_a_word_tokenizer_is_refused_with_a_reason():
    tok = BPETokenizer.from_text("low lower lowest", 5, "word")
    with pytest.raises(ArgumentError, match="word"):
        unreachable_tokens(tok)


@pytest.mark.slow
def test_gpt4o_unreachable_tokens_equal_tiktoken_encoding_each_text():
    tok = named_tokenizer("o200k_base")
    found = unreachable_tokens(tok)
    expected = unreachable_by_encoding(tiktoken_encoding("o200k_base"), _ordinary(tok), tok.token_bytes)
    assert (list(found.unreachable), len(found.partial)) == expected
    assert " I'" in [tok.token_str(i) for i in found.unreachable]
    assert 5 <= len(found.unreachable) <= 20  # "about a dozen"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_gpt2_and_gpt4_equal_tiktoken(name):
    tok = named_tokenizer(name)
    found = unreachable_tokens(tok)
    expected = unreachable_by_encoding(tiktoken_encoding(name), _ordinary(tok), tok.token_bytes)
    assert (list(found.unreachable), len(found.partial)) == expected


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in PRETRAINED_NAMES if n != "gpt2"])
def test_ranked_vocabularies_equal_quicktok(name):
    tok = named_tokenizer(name)
    found = unreachable_tokens(tok)
    expected = unreachable_by_encoding(quicktok_encoding(name), _ordinary(tok), tok.token_bytes)
    assert (list(found.unreachable), len(found.partial)) == expected


def test_one_token_is_checked_as_the_whole_vocabulary_is():
    tok = BPETokenizer(variant="byte", merges=[(97, 98, 256), (98, 99, 257), (97, 257, 258)],
                       special_tokens=["<|end|>"])
    found = unreachable_tokens(tok)
    assert token_reach(tok, 258) == [256, 99] and 258 in found.unreachable
    assert token_reach(tok, 256) == "reachable"
    assert token_reach(tok, 200) == "partial" and 200 in found.partial
    assert token_reach(tok, tok.special_tokens["<|end|>"]) == "special"
