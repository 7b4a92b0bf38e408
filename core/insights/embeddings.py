"""Where to look for under-trained tokens in a GPT trained here (Land & Bartolo 2024, "Fishing for
Magikarp"): each token's count in the text its run trained on, beside the norm of its embedding
row.  What a rare token's row does is the run's to show, not this module's to promise: the
embedding is tied to the output layer, so every row moves at every step (a token never seen in
the input is still pushed down as an output), and weight decay shrinks every row, so a rarely
seen token's norm need not stay near its random start.

Reads a run folder of the room (``core.runfolder.layout``: its corpus and latest checkpoint); the
training part is the one ``core.gpt.split.split_text`` gives the run.  Torch: loads the checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..bpe import BPETokenizer
from ..runfolder.layout import CORPUS_FILE

RARE = 10  # seen fewer times than this in the training part: rare


@dataclass(frozen=True)
class EmbeddingUse:
    """``counts[i]``: token ``i``'s occurrences in the training part; ``norms[i]``: the L2 norm of
    its embedding row, at checkpoint ``step``."""

    tokenizer: BPETokenizer
    counts: np.ndarray
    norms: np.ndarray
    step: int

    def rare(self, below: int = RARE) -> np.ndarray:
        """Ids seen fewer than ``below`` times, in id order."""
        return np.flatnonzero(self.counts < below)


def embedding_use(run_dir) -> EmbeddingUse:
    """What the run's latest checkpoint and training text say about each token."""
    from ..gpt.checkpoint import checkpoint_path, load_checkpoint  # torch
    from ..gpt.split import split_text

    run_dir = Path(run_dir)
    checkpoint = load_checkpoint(checkpoint_path(run_dir))
    tok = checkpoint.tokenizer
    train, _ = split_text((run_dir / CORPUS_FILE).read_text(encoding="utf-8"))
    weights = checkpoint.model.transformer.wte.weight.detach().float()
    norms = weights.norm(dim=1).numpy()
    counts = np.bincount(np.asarray(tok.encode(train), dtype=np.int64), minlength=len(norms))
    return EmbeddingUse(tok, counts[: len(norms)], norms, checkpoint.step)
