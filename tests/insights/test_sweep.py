"""The vocabulary sweep (core.insights.sweep): its tokenizers, and what it reads from a run's files.
No run is trained here."""

from __future__ import annotations

import json

import pytest

from core.bpe import BPETokenizer
from core.bpe.checks import ArgumentError
from core.room.queries import RunInfo
from core.insights import split_held_out
from core.insights.sweep import (SweepTooShortError, launch_sweep, run_name, surely_too_short, sweep_point,
                                 sweep_tokenizers)

TEXT = "the cat sat on the mat with the hat; " * 60


def test_each_size_is_cut_from_one_training_on_the_training_part():
    toks = sweep_tokenizers(TEXT, [400, 300, 260])
    assert sorted(toks) == [260, 300, 400]
    alone = BPETokenizer.from_text(split_held_out(TEXT)[0], 300 - 256, "byte", pattern="gpt4")
    assert toks[300].merge_triples == alone.merge_triples
    assert all(tok.vocab_size <= size for size, tok in toks.items())
    with pytest.raises(ArgumentError):
        sweep_tokenizers(TEXT, [100])
    with pytest.raises(ArgumentError):
        sweep_tokenizers(TEXT, range(300, 310))


def test_run_names_tell_corpora_and_sizes_apart():
    assert run_name(TEXT, 300, "quick") != run_name(TEXT + ".", 300, "quick")
    assert run_name(TEXT, 300, "quick") != run_name(TEXT, 400, "quick")


def test_a_point_reads_the_last_evaluation_and_the_embedding_share(tmp_path):
    (tmp_path / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in [
        {"step": 50, "val_bpc": 3.0}, {"step": 60, "loss": 2.0}, {"step": 100, "val_bpc": 2.5}]) + "\n")
    config = {"n_params": 100_000, "model_config": {"n_embd": 96}}
    run = RunInfo(name="r", path=tmp_path, status="finished", step=100, max_steps=100, config=config)
    point = sweep_point(512, run)
    assert point.val_bpc == 2.5
    assert point.embedding_share == 512 * 96 / 100_000
    assert sweep_point(512, RunInfo(name="r", path=tmp_path / "none", status="queued")).val_bpc is None


def test_a_corpus_too_short_for_the_preset_is_refused_before_anything_is_launched(tmp_path):
    """A 56-character corpus once launched three runs the room saw fail (or vanish)."""
    short = "low low low low low lower newer newer newer newer wider"
    assert surely_too_short(short) and not surely_too_short(TEXT * 20)
    with pytest.raises(SweepTooShortError) as refused:
        launch_sweep(short, [320, 512, 1024], "alice-0123456789ab", tmp_path)
    assert sorted(refused.value.short) == [320, 512, 1024]
    assert "window of 65 tokens" in str(refused.value) and "Tiny Shakespeare" in str(refused.value)
    assert not any(tmp_path.iterdir())  # nothing launched, no run folder
