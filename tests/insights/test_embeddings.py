"""A GPT trained here (core.insights.embeddings): each token's count in the run's training part and
its embedding row's norm, read from a run folder's checkpoint."""

from __future__ import annotations

import numpy as np
import pytest

from core.bpe import BPETokenizer

TEXT = "the cat sat on the mat. " * 30 + "zebra quartz"  # "zebra quartz": only in the held-out part


def checkpointed_run(folder, text: str = TEXT, vocab_merges: int = 20):
    """A run folder with a corpus and a checkpoint of an untrained small GPT (no training: the
    weights are its random start)."""
    torch = pytest.importorskip("torch")
    from core.gpt.checkpoint import checkpoint_path, save_checkpoint
    from core.gpt.model import GPT, GPTConfig
    from core.runfolder.layout import CORPUS_FILE, write_text
    from core.runfolder.status import write_status

    folder.mkdir(parents=True)
    tok = BPETokenizer.from_text(text, vocab_merges)
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=16, n_layer=1, n_head=2, n_embd=16))
    write_text(folder / CORPUS_FILE, text)
    save_checkpoint(checkpoint_path(folder), model, tok, step=7)
    write_status(folder, "finished", max_steps=7)
    return tok, model


@pytest.mark.slow  # imports torch
def test_counts_are_the_training_part_s_and_norms_the_embedding_rows(tmp_path):
    from core.gpt.split import split_text
    from core.insights.embeddings import embedding_use

    tok, model = checkpointed_run(tmp_path / "run")
    use = embedding_use(tmp_path / "run")
    train, _ = split_text(TEXT)
    assert use.step == 7
    assert use.counts.tolist() == np.bincount(tok.encode(train), minlength=tok.vocab_size).tolist()
    expected = model.transformer.wte.weight.detach().norm(dim=1).numpy()
    assert np.allclose(use.norms, expected)
    never = {tok.token_str(i) for i in use.rare(1)}
    assert {"z", "q"} <= never  # characters of the held-out part only
