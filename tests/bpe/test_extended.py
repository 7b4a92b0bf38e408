"""``tok.extended(text, n)`` (core.bpe.extend, BPETrainer.from_sequences): continuing a trained
tokenizer is training it longer; every old id, token and special token stays; new ids come after
all of them; text no new merge touches keeps its old ids; every sample round-trips; the
tiktoken and Hugging Face exports of an extended real tokenizer give our ids; what Learn BPE
animates for one (its new steps replayed on the real tokenizer's cut, graphs, curves)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.bpe import (
    ArgumentError,
    BPETokenizer,
    CharTokenizer,
    CorpusTooLargeError,
    UnknownCharacterError,
    extension_trainer,
    pretrained,
)
from core.bpe.explain import (
    compression_curve,
    merge_dag,
    merge_tree,
    occurrence_indices,
    replay,
    segment,
)
from core.bpe.interop import hf_tokenizer_json, tiktoken_encoding
from tests.conftest import missing, need_module

SAMPLES = {p.name: p.read_text(encoding="utf-8")
           for p in sorted((Path(__file__).resolve().parents[2] / "sample_corpora").glob("*.txt"))}
CORPUS = SAMPLES["python_source.txt"] + SAMPLES["multilingual_and_emoji.txt"] + SAMPLES["sennrich.txt"]
HELD_OUT = "The quick brown fox, 안녕하세요 🎉 and naïve café\n\tx = 42\n"


@pytest.mark.parametrize("variant, options", [("char", {}), ("word", {}), ("byte", {"pattern": "gpt4"}),
                                              ("byte", {})])
def test_extending_is_training_longer(variant, options):
    text = SAMPLES["sennrich.txt"]
    short = BPETokenizer.from_text(text, 30, variant=variant, **options)
    longer = BPETokenizer.from_text(text, 50, variant=variant, **options)
    more = short.extended(text, 20)
    assert more.merge_triples == longer.merge_triples
    assert more.trace == tuple(longer.trace[30:])  # the same steps, same counts and competitors
    assert more.encode(text) == longer.encode(text)


def test_a_char_tokenizer_becomes_a_bpe_tokenizer():
    text = SAMPLES["the_cat_sat.txt"]
    more = CharTokenizer(sorted(set(text))).extended(text, 5)
    assert type(more) is BPETokenizer and len(more.merges) == 5
    assert more.merge_triples == BPETokenizer.from_text(text, 5).merge_triples


def test_new_ids_come_after_special_tokens_and_old_ids_stay():
    tok = BPETokenizer.from_text(SAMPLES["sennrich.txt"], 20, variant="byte", pattern="gpt4",
                                 special_tokens=["<|endoftext|>", "<|pad|>"])
    more = tok.extended(SAMPLES["python_source.txt"] + "<|endoftext|>", 30)
    first = max(tok.ids) + 1
    assert [s.new_id for s in more.trace] == list(range(first, first + 30))
    assert more.special_tokens == tok.special_tokens
    assert all(more.token_bytes(i) == tok.token_bytes(i) for i in tok.ids)
    assert all(b"<|" not in more.token_bytes(s.new_id) or b"|>" not in more.token_bytes(s.new_id)
               for s in more.trace)  # special tokens are never learned from
    assert more.encode("<|endoftext|>") == tok.encode("<|endoftext|>")
    assert more.truncated(len(tok.merge_triples)).merge_triples == tok.merge_triples
    assert BPETokenizer.from_dict(more.to_dict()) == more


def test_trace_records_every_step():
    tok = BPETokenizer.from_text(SAMPLES["sennrich.txt"], 10, variant="byte")
    more = tok.extended(SAMPLES["python_source.txt"], 15)
    assert len(more.trace) == 15 and not more.exhausted
    assert more.initial_length == len(tok.encode(SAMPLES["python_source.txt"]))
    assert more.trace[-1].length_after == len(more.encode(SAMPLES["python_source.txt"]))
    assert all(s.count >= t.count for s, t in zip(more.trace, more.trace[1:]))
    assert [s.index for s in more.trace] == list(range(15))


def test_the_trainer_can_be_driven_step_by_step():
    tok = BPETokenizer.from_text(SAMPLES["sennrich.txt"], 10, variant="byte")
    trainer = extension_trainer(tok, SAMPLES["python_source.txt"])
    steps = list(trainer.run(3)) + list(trainer.run(2))
    more = BPETokenizer.from_trainer(trainer)
    assert more.trace == tuple(steps) and more == tok.extended(SAMPLES["python_source.txt"], 5)


def test_a_text_without_pairs_exhausts():
    tok = BPETokenizer.from_text("ab ab", 1, variant="byte")
    more = tok.extended("ab", 5)
    assert more.exhausted and more.merge_triples == tok.merge_triples


def test_bad_arguments_are_refused():
    tok = BPETokenizer.from_text("low lower", 2)
    with pytest.raises(ValueError, match="empty"):
        tok.extended("", 3)
    with pytest.raises(ArgumentError):
        tok.extended("low", -1)
    with pytest.raises(ArgumentError):
        tok.extended(b"low", 1)
    with pytest.raises(UnknownCharacterError):
        tok.extended("lowest", 1)  # a char tokenizer cannot learn unseen characters


@pytest.fixture(scope="module")
def real() -> dict[str, BPETokenizer]:
    return {}


def _real(real, name) -> BPETokenizer:
    if name not in real:
        try:
            real[name] = BPETokenizer.from_pretrained(name)
        except (ImportError, OSError) as exc:
            missing(f"{name} is not available here: {exc}")
    return real[name]


@pytest.fixture(scope="module")
def extended_real(real) -> dict[str, BPETokenizer]:
    return {}


def _extended(real, extended_real, name) -> BPETokenizer:
    if name not in extended_real:
        extended_real[name] = _real(real, name).extended(CORPUS, 40)
    return extended_real[name]


@pytest.mark.slow
@pytest.mark.parametrize("name", pretrained.NAMES)
def test_real_tokenizers_keep_their_ids_and_round_trip(real, extended_real, name):
    tok, more = _real(real, name), _extended(real, extended_real, name)
    new = {s.new_id for s in more.trace}
    assert len(new) == 40 and min(new) == max(tok.ids) + 1
    assert more.special_tokens == tok.special_tokens
    for text in [*SAMPLES.values(), HELD_OUT]:
        ids = more.encode(text)
        assert more.decode(ids) == text
        if not new.intersection(ids):  # no new merge applied: the old ids, exactly
            assert ids == tok.encode(text)
    plain = "The quick brown fox jumps over the lazy dog."
    assert more.encode(plain) == tok.encode(plain)
    assert len(more.encode(CORPUS)) < len(tok.encode(CORPUS))


@pytest.mark.slow
@pytest.mark.parametrize("name", pretrained.NAMES)
def test_real_tokenizers_export_to_tiktoken(real, extended_real, name):
    need_module("tiktoken", "pip install -r requirements-dev.txt")
    more = _extended(real, extended_real, name)
    enc = tiktoken_encoding(more)
    for text in [*SAMPLES.values(), HELD_OUT]:
        assert enc.encode(text, allowed_special="all") == more.encode(text)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_real_tokenizers_export_to_hugging_face(real, extended_real, name):
    tokenizers = need_module("tokenizers", "pip install -r requirements-dev.txt")
    more = _extended(real, extended_real, name)
    hf = tokenizers.Tokenizer.from_str(hf_tokenizer_json(more))
    for text in [*SAMPLES.values(), HELD_OUT]:
        assert hf.encode(text).ids == more.encode(text)


@pytest.mark.slow
def test_extending_twice_keeps_the_first_extension(real):
    tok = _real(real, "cl100k_base")
    once = tok.extended(SAMPLES["python_source.txt"], 5)
    twice = once.extended(SAMPLES["multilingual_and_emoji.txt"], 5)
    assert twice.merge_triples[:len(once.merge_triples)] == once.merge_triples
    assert min(s.new_id for s in twice.trace) == max(once.ids) + 1
    for text in SAMPLES.values():
        assert twice.decode(twice.encode(text)) == text


# -- what Learn BPE animates for an extended real tokenizer (core.bpe.explain) ----------------------
def test_steps_replayed_on_a_tokenizers_cut_are_the_trained_steps():
    """replay (what Learn BPE shows for an extension) equals encoding with the first k merges, at
    every k, on a tokenizer trained from bytes."""
    text = SAMPLES["python_source.txt"] + SAMPLES["multilingual_and_emoji.txt"]
    tok = BPETokenizer.from_text(text, 60, variant="byte", pattern="gpt4")
    start = tok.truncated(0).encode_tokens(text)
    for k in range(0, 61, 5):
        assert replay(start, tok.trace[:k]) == segment(tok, text, k), k


@pytest.mark.slow
def test_an_extended_real_tokenizer_animates_from_its_own_cut(real):
    base = _real(real, "cl100k_base")
    text = CORPUS
    more = base.extended(text, 30)
    start = base.encode_tokens(text)
    assert more.extends is base
    assert segment(more, text, 0) == start  # step 0: the text as GPT-4 cuts it
    assert [t.id for t in segment(more, text, 30, start)] == more.encode(text)
    for k in (0, 7, 29):  # the highlighted pair is the step's, even though 100k merges came first
        tokens = segment(more, text, k, start)
        step = more.trace[k]
        hits = occurrence_indices(more, tokens, k)
        assert hits and all((tokens[i].id, tokens[i + 1].id) == step.pair for i in hits)
    curve = compression_curve(more, len(text))
    assert (curve[0].vocab_size, curve[0].tokens) == (base.vocab_size, len(base.encode(text)))
    assert [p.vocab_size for p in curve[-2:]] == [more.vocab_size - 1, more.vocab_size]


@pytest.mark.slow
def test_a_new_tokens_graph_goes_down_through_the_real_merges(real):
    base = _real(real, "cl100k_base")
    more = base.extended(CORPUS, 30)
    last = more.trace[-1]
    nodes = merge_dag(more, last.new_id)
    assert (nodes[0].step, nodes[0].count) == (30, last.count)  # numbered along the trace
    old = [n for n in nodes if n.id < more.trace[0].new_id]
    assert old
    assert all(n.step is None and n.count is None for n in old)  # GPT-4's own: no count

    def leaves(node):
        return [node] if not node.children else [leaf for c in node.children for leaf in leaves(c)]

    bottom = leaves(merge_tree(more, last.new_id))
    assert all(len(more.token_bytes(n.id)) == 1 for n in bottom)  # down to single bytes
    assert b"".join(more.token_bytes(n.id) for n in bottom) == more.token_bytes(last.new_id)


def test_fewer_merges_come_from_the_steps_without_training(real):
    base = _real(real, "cl100k_base")
    more = base.extended(CORPUS, 30)
    short = more.truncated(len(base.merge_triples) + 12)
    again = base.extended(CORPUS, 12)
    assert short.extends is base and short.initial_length == again.initial_length
    assert short.trace == again.trace and short.merge_triples == again.merge_triples
    assert short.encode(CORPUS) == again.encode(CORPUS)


def test_a_corpus_over_the_memory_limit_is_refused():
    tok = BPETokenizer.from_text("low lower", 2, variant="byte")
    with pytest.raises(CorpusTooLargeError, match="shorter corpus"):
        extension_trainer(tok, "low " * 1000, max_memory=2**20)
