"""What a language pays (core.insights.languages) on the shipped parallel corpus: the files, and
token counts equal to tiktoken's and quicktok's for the same text.

Llama 3 is checked against tiktoken (its reference implementation is tiktoken) over the ranks
quicktok ships: quicktok 0.4.0's own Llama 3 encoder joins some Cyrillic and Turkish words
differently from tiktoken's rule (" принадлежит": tiktoken " прин|ад|леж|ит", quicktok
" принадлеж|ит"), on 3 of the 38 texts."""

from __future__ import annotations

import pytest

from core.bpe import BPETokenizer
from core.bpe.checks import ArgumentError
from core.insights import (UDHR_DIR, language_costs, language_index, named_tokenizer, read_parallel,
                           token_count)
from tests.insights.references import quicktok_encoding, tiktoken_encoding

TEXTS = read_parallel(UDHR_DIR)


def test_the_parallel_corpus_covers_many_languages_and_scripts():
    index = language_index(UDHR_DIR)
    assert set(index) == set(TEXTS)
    assert len(TEXTS) >= 20
    scripts = {entry["script"] for entry in index.values()}
    for script in ("Latin", "Cyrillic", "Greek", "Arabic", "Hebrew", "Devanagari", "Bengali", "Tamil",
                   "Thai", "Ethiopic", "Hangul", "Han"):
        assert script in scripts
    assert "Kana" in index["jpn"]["script"]
    sizes = [(UDHR_DIR / f"{code}.txt").stat().st_size for code in TEXTS]
    assert max(sizes) < 20_000 and sum(sizes) < 400_000
    notice = (UDHR_DIR / "LICENSE").read_text(encoding="utf-8")
    assert "udhr" in notice and "MIT" in notice and "Permission is hereby granted" in notice
    # the same content: fifteen articles in each (English has "Article 1" ... "Article 15")
    assert TEXTS["eng"].startswith("Article 1\n") and "\nArticle 15\n" in TEXTS["eng"]


@pytest.mark.parametrize("name", ["cl100k_base", pytest.param("o200k_base", marks=pytest.mark.slow),
                                  pytest.param("qwen3", marks=pytest.mark.slow)])
def test_counts_equal_quicktok(name):
    tok = named_tokenizer(name)
    quick = quicktok_encoding(name)
    for code, text in TEXTS.items():
        assert token_count(tok, text) == len(quick.encode_ordinary(text)), code


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base",
                                  pytest.param("llama3", marks=pytest.mark.slow)])
def test_counts_equal_tiktoken(name):
    tok = named_tokenizer(name)
    enc = tiktoken_encoding(name)
    for code, text in TEXTS.items():
        assert token_count(tok, text) == len(enc.encode_ordinary(text)), code


def test_premiums_are_token_ratios_over_the_reference():
    tokenizers = {"bytes": BPETokenizer.byte_level(), "o200k_base": named_tokenizer("o200k_base")}
    costs = language_costs(TEXTS, tokenizers, reference="eng")
    assert set(costs) == set(TEXTS)
    for code, row in costs.items():
        for name, cell in row.items():
            assert cell["premium"] == cell["tokens"] / costs["eng"][name]["tokens"]
    assert costs["eng"]["o200k_base"]["premium"] == 1.0
    assert costs["kor"]["bytes"]["tokens"] == len(TEXTS["kor"].encode("utf-8"))
    assert costs["hin"]["o200k_base"]["premium"] < costs["hin"]["bytes"]["premium"]
    with pytest.raises(ArgumentError, match="reference"):
        language_costs(TEXTS, tokenizers, reference="xyz")


def test_a_char_tokenizer_counts_characters_it_never_saw_one_token_each():
    tok = BPETokenizer.from_text(TEXTS["eng"], 50)
    assert token_count(tok, TEXTS["kor"]) >= len(set(TEXTS["kor"]) - set(TEXTS["eng"]))
    costs = language_costs({"eng": "a b", "kor": "한국"}, {"mine": tok})
    assert costs["kor"]["mine"] == {"tokens": 2, "premium": 2 / costs["eng"]["mine"]["tokens"]}
