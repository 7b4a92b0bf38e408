"""``core.gpt.split``: the rule a run's two parts must meet, checked before Launch on the page, and
checked without encoding a part that is surely long enough (a page runs it on whatever was pasted)."""

import random

import pytest

from core import BPETokenizer
from core.gpt.split import DataTooShortError, check_length, short_parts


class Counting:
    """A tokenizer that records the length of each text it is asked to encode."""

    def __init__(self, tokenizer) -> None:
        self.tokenizer, self.encoded = tokenizer, []
        self.ids, self.token_bytes = tokenizer.ids, tokenizer.token_bytes

    def encode(self, text: str) -> list[int]:
        self.encoded.append(len(text))
        return self.tokenizer.encode(text)


def test_a_part_one_token_short_of_a_window_is_refused_and_a_part_that_holds_one_passes():
    text = "ab" * 500  # one token a character: the validation part is 100 tokens
    tok = BPETokenizer.from_text(text, 0, "char")
    check_length(text, tok, block_size=99)
    with pytest.raises(DataTooShortError, match="validation part of the corpus is only 100 tokens"):
        check_length(text, tok, block_size=100)


def test_merged_tokens_are_counted_as_the_run_counts_them():
    text = "low lower lowest " * 40  # 680 characters, 68 of them kept for validation
    tok = BPETokenizer.from_text(text, 12, "char")
    val_tokens = len(tok.encode(text[-68:]))
    assert val_tokens < 68  # the merges made its tokens fewer than its characters
    check_length(text, tok, block_size=val_tokens - 1)
    with pytest.raises(DataTooShortError):
        check_length(text, tok, block_size=val_tokens)


def test_a_long_corpus_is_found_long_enough_without_encoding_it():
    rng = random.Random(3)
    words = ["the", "lowest", "newer", "wider", "tokens", "were", "lower", "than", "newest", "ones"]
    text = " ".join(rng.choice(words) for _ in range(200_000))  # about 1.2 M characters
    tok = Counting(BPETokenizer.from_text(text[:20_000], 50, "char"))
    check_length(text, tok, block_size=256)
    assert tok.encoded == []


def test_each_part_too_short_is_named_with_the_tokens_it_holds():
    """What a sweep tells per vocabulary size (``core.insights.sweep``): the shorter part's tokens."""
    text = "ab" * 500  # one token a character: 900 tokens for training, 100 for validation
    tok = BPETokenizer.from_text(text, 0, "char")
    assert short_parts(text, tok, block_size=99) == {}
    assert short_parts(text, tok, block_size=100) == {"validation": 100}
    assert short_parts(text, tok, block_size=900) == {"validation": 100, "training": 900}
