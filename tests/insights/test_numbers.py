"""How numbers are cut (core.insights.numbers): every integer 0..9,999 per tokenizer against
encoding each with tiktoken or quicktok, numbers found in a text, and place values."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.bpe import BPETokenizer
from core.bpe.checks import ArgumentError
from core.insights.numbers import (number_groupings, numbers_in_text, place_values, units_alone_share)
from tests.insights.references import REAL, real_tokenizer, reference_encoding, reference_ids_each


def _library_groupings(enc, upto: int) -> Counter:
    texts = [str(n) for n in range(upto + 1)]
    return Counter(tuple(len(enc.decode_single_token_bytes(i)) for i in ids)
                   for ids in reference_ids_each(enc, texts))


@pytest.mark.parametrize("name", REAL)
def test_every_integer_to_9999_equals_the_library(name):
    found = number_groupings(real_tokenizer(name), 9_999)
    expected = _library_groupings(reference_encoding(name), 9_999)
    assert found.groupings == expected
    assert found.tokens_per_number == _per_length(expected)
    assert sum(found.tokens_per_number.values()) == 10_000
    assert found.to_dict() == {"tokens_per_number": {str(k): v for k, v in found.tokens_per_number.items()},
                               "groupings": len(expected)}


def _per_length(groupings: Counter) -> dict[int, int]:
    out = Counter()
    for g, n in groupings.items():
        out[len(g)] += n
    return dict(sorted(out.items()))


def test_gpt4_groups_three_digits_from_the_left_and_qwen_single_digits():
    gpt4 = number_groupings(real_tokenizer("cl100k_base"))
    assert set(gpt4.groupings) == {(1,), (2,), (3,), (3, 1)}
    assert units_alone_share(gpt4.groupings) == 9_000 / 9_990
    qwen = number_groupings(real_tokenizer("qwen3"))
    assert qwen.tokens_per_number == {1: 10, 2: 90, 3: 900, 4: 9_000}
    assert units_alone_share(qwen.groupings) == 1.0


@pytest.mark.parametrize("name", REAL)
@settings(max_examples=25, deadline=None)
@given(numbers=st.lists(st.integers(0, 10**12), min_size=1, max_size=6), spaced=st.booleans())
def test_numbers_in_a_text_equal_the_library(name, numbers, spaced):
    tok, enc = real_tokenizer(name), reference_encoding(name)
    text = "x".join((" " if spaced else "") + str(n) for n in numbers)
    found = numbers_in_text(tok, text)
    assert sum(n.count for n in found) == len(numbers)
    for number in found:
        ids = enc.encode_ordinary(number.text)
        assert number.cut.ids == tuple(ids)
        digits = [sum(c.isdigit() for c in enc.decode_single_token_bytes(i).decode()) for i in ids]
        assert number.grouping == tuple(d for d in digits if d)


def test_place_values_fall_across_tokens():
    assert place_values((3, 1)) == [(3, 2, 1), (0,)]
    assert place_values((1, 1)) == [(1,), (0,)]
    assert place_values(()) == []


def test_a_byte_tokenizer_without_merges_cuts_every_digit():
    found = number_groupings(BPETokenizer.byte_level(), upto=12)
    assert found.tokens_per_number == {1: 10, 2: 3} and found.groupings[(1, 1)] == 3


@pytest.mark.parametrize("bad", [-1, 1_000_001, 2.5, True])
def test_a_bad_upto_is_refused(bad):
    with pytest.raises(ArgumentError, match="upto"):
        number_groupings(BPETokenizer.byte_level(), bad)
