"""The compiled scanners cut a text exactly where ``regex.findall`` does, for every known pattern:
on random Unicode heavy in the characters the patterns treat specially, on every sample corpus,
and on 2 MB of the Debian docs corpus."""

from __future__ import annotations

import lzma
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from core.bpe import count_chunks
from core.bpe.pretokenize import GPT2_PATTERN, GPT4_PATTERN, O200K_PATTERN
from core.bpe.kernels import piece_table, scanners
from core.bpe.split import known_patterns
from core.bpe.split.char_classes import LETTER, NUMBER, SPACE, class_table
from tests.conftest import shared_path

ROOT = Path(__file__).resolve().parents[2]
PATTERNS = list(known_patterns.SCANNERS)
NAMES = ["gpt2", "gpt4", "llama3", "qwen3", "cl100k", "o200k"]

# What the patterns treat specially: kinds of whitespace (\x1c-\x1f are not \s for regex, \x85
# is), apostrophes and the contraction letters in both cases (U+017F matches (?i:s)), digits of
# several kinds, combining marks (o200k's words may start with one), each letter case, slashes.
TRICKY = list(" \t\r\n\x0b\x0c\x1c\x1f\x85\xa0\u2028\u3000'\"’sSſdDmMtTlLvVeErR xyzÉéǅʰ中ا"
              "019٣²Ⅻ\u0301\u0903\u20dd/!.-😀\x00")
TEXTS = st.text(st.one_of(st.sampled_from(TRICKY), st.characters(exclude_categories=("Cs",))),
                max_size=80)


def pieces(text: str, pattern: str) -> list[str]:
    data = text.encode("utf-8")
    starts, ends, which, _ = known_patterns.split_bytes(data, pattern)
    return [data[starts[w]:ends[w]].decode("utf-8") for w in which.tolist()]


@pytest.mark.slow
@pytest.mark.parametrize("pattern", PATTERNS, ids=NAMES)
@settings(max_examples=400, deadline=None)
@given(text=TEXTS)
def test_a_scanner_cuts_random_text_where_regex_does(pattern, text):
    assert pieces(text, pattern) == regex.findall(pattern, text)


@pytest.mark.parametrize("pattern", PATTERNS, ids=NAMES)
@pytest.mark.parametrize("text", [
    "", " ", "  ", "\n", " \n ", "a  ", "'s", "'S", "'ſ", "'LL", "'lL", "'ve'RE", "don't we'll",
    "x'sy", "123456 7", "\u0301A", "\u0301a", "ǅa", "ʰA", "Aʰ", "ABCdef'S", "ABC\u0301", "!!\n/x",
    " !\r\n\r\nfoo", "a\x1c b", "\u3000\u3000x", "tab\t\tx", "end   ", "nl \n \n  ", "x\n\n",
])
def test_a_scanner_agrees_on_the_corner_cases(pattern, text):
    assert pieces(text, pattern) == regex.findall(pattern, text)


@pytest.mark.parametrize("pattern", PATTERNS, ids=NAMES)
def test_a_scanner_agrees_on_every_sample_corpus(pattern):
    for path in sorted((ROOT / "sample_corpora").glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        assert pieces(text, pattern) == regex.findall(pattern, text), path.name


@pytest.mark.slow
@pytest.mark.parametrize("pattern", PATTERNS, ids=NAMES)
def test_a_scanner_agrees_on_2_mb_of_the_docs_corpus(pattern):
    with lzma.open(shared_path("corpora", "debian-docs-100mb.txt.xz"), "rb") as f:
        head = f.read(2_000_000)
    text = head[: head.rindex(b"\n") + 1].decode("utf-8")
    assert pieces(text, pattern) == regex.findall(pattern, text)


def test_segments_are_cut_as_separate_texts():
    data = "Hello world  \n".encode()
    segments = np.array([[0, 5], [5, 11], [11, len(data)]], dtype=np.int64)
    starts, ends, which, seg_first = known_patterns.split_bytes(data, GPT4_PATTERN, segments)
    assert [data[starts[w]:ends[w]] for w in which] == [b"Hello", b" world", b"  \n"]
    assert seg_first.tolist() == [0, 1, 2, 3]


def test_the_class_table_is_the_regex_modules_view_of_unicode():
    table = class_table()
    for ch in "aZé中ǅ٣²Ⅻ \t\x85\u3000\x1c!\u0301":
        flags = int(table[ord(ch)])
        assert bool(flags & LETTER) == bool(regex.fullmatch(r"\p{L}", ch)), ch
        assert bool(flags & NUMBER) == bool(regex.fullmatch(r"\p{N}", ch)), ch
        assert bool(flags & SPACE) == bool(regex.fullmatch(r"\s", ch)), ch


def test_equal_pieces_are_found_once_in_first_appearance_order():
    data = b"the cat the hat cat " * 400  # enough distinct-piece lookups to grow every table
    words = ("".join(chr(97 + i // 26**k % 26) for k in range(3)) for i in range(3000))  # aaa, baa, ...
    data += "".join(" " + word for word in words).encode()
    starts, ends, which, _ = known_patterns.split_bytes(data, GPT2_PATTERN)
    distinct = [data[s:e] for s, e in zip(starts.tolist(), ends.tolist())]
    assert distinct[:5] == [b"the", b" cat", b" the", b" hat", b" "]
    by_regex = set(regex.findall(GPT2_PATTERN, data.decode()))
    assert len(distinct) == len(set(distinct)) == len(by_regex)
    assert b"".join(distinct[w] for w in which.tolist()) == data


def test_the_kernels_readable_reference_is_the_kernel_uncompiled():
    data = np.frombuffer("It's  2024: le café coûte 3€.\n\tOK ok ok!\u3000x".encode() * 3, np.uint8)
    pattern = O200K_PATTERN
    compiled = known_patterns.split_bytes(data, pattern)
    original = scanners.scan
    with np.errstate(over="ignore"):  # the hash wraps around by design
        try:
            scanners.scan = original.py_func
            uncompiled = known_patterns.split_bytes(data, pattern)
        finally:
            scanners.scan = original
        for got, want in zip(compiled, uncompiled):
            assert np.array_equal(got, want)
        starts, ends, which, _ = compiled
        index = piece_table.index_keys(data, starts, ends)
        assert np.array_equal(piece_table.find_keys(data, starts, ends, data, starts, ends, *index),
                              piece_table.find_keys.py_func(data, starts, ends, data, starts, ends, *index))
        offsets = np.arange(len(starts) + 1, dtype=np.int64)
        assert np.array_equal(piece_table.gather(which, starts, offsets),
                              piece_table.gather.py_func(which, starts, offsets))


@pytest.mark.parametrize("pattern", PATTERNS, ids=NAMES)
def test_chunk_counting_cuts_with_the_scanner_as_regex_cuts(pattern):
    text = sorted((ROOT / "sample_corpora").glob("*.txt"))[0].read_text(encoding="utf-8")
    texts = [text[:1000], "<|endoftext|>", text[1000:]]
    expected = Counter(regex.findall(pattern, text[:1000]) + regex.findall(pattern, text[1000:]))
    counts = count_chunks(texts, pattern, ["<|endoftext|>"], processes=1, slice_bytes=4096)
    assert counts == dict(expected) and list(counts) == list(expected)
