"""Characters per token at every vocabulary size, from one training: on the text trained on and on
text held out from it (where the two curves part, merges stop generalising).

    >>> curve = vocabulary_curve("low lower newest widest " * 50, 40, held_out=0.2)
    >>> [row["vocab_size"] for row in curve.rows([20, 30])]
    [20, 30]

The corpus is cut as ``core.gpt.split.split_text`` cuts it for a GPT: the first 90% of its
characters (``held_out=0.1``) train the tokenizer, the last 10% are held out.  A merge list is
ordered, so every smaller vocabulary is a prefix of it (``BPETokenizer.truncated``); no size is
trained or encoded on its own:

- on the training part, the trainer records the text's length after every merge
  (``MergeStep.length_after``);
- on the held-out part, one encoding with the whole merge list says how often each merge fired:
  every final token is a tree of merges, so a merge fired once for each node of it in the trees
  (:func:`merge_fires`).  Encoding applies merges in rank order and a merge never makes a pair
  of an earlier rank, so the encoding at ``k`` merges is the full one with the merges from ``k``
  on undone: its length is the final length plus the fires of those merges.

Characters the training part never had (char and word variants) count one token each, as
``BPETokenizer.tokenize`` keeps them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..bpe import BPETokenizer, BPETrainer
from ..bpe.alphabet import UNSEEN
from ..bpe.checks import ArgumentError

HELD_OUT = 0.1  # the share of the corpus a GPT run validates on (core.gpt.split.split_text)
# What Tokenizer questions' curve opens with; the Start here check asks a station's corpus to reach it.
CURVE_VARIANT, CURVE_TOP = "byte", 1024


def split_held_out(text: str, held_out: float = HELD_OUT) -> tuple[str, str]:
    """The training part and the held-out part: the corpus cut by characters, the last
    ``held_out`` of it held out (the cut a GPT run makes)."""
    if not 0 < held_out < 1:
        raise ArgumentError(f"The held-out share must be between 0 and 1, not {held_out!r}.")
    cut = int(len(text) * (1 - held_out))
    return text[:cut], text[cut:]


@dataclass(frozen=True)
class VocabCurve:
    """Token counts of both parts at every vocabulary size from ``base_size`` to ``tokenizer``'s.

    ``train_tokens[k]`` and ``held_out_tokens[k]``: the parts' lengths after ``k`` merges, that is
    at vocabulary size ``base_size + k``."""

    variant: str
    tokenizer: BPETokenizer
    train_chars: int
    held_out_chars: int
    train_tokens: np.ndarray
    held_out_tokens: np.ndarray

    @property
    def base_size(self) -> int:
        return self.tokenizer.base_size

    @property
    def vocab_sizes(self) -> np.ndarray:
        return self.base_size + np.arange(len(self.train_tokens))

    def row(self, vocab_size: int) -> dict:
        """Characters per token of both parts at ``vocab_size``."""
        k = vocab_size - self.base_size
        if not 0 <= k < len(self.train_tokens):
            raise ArgumentError(f"Vocabulary size {vocab_size} is outside this curve: it runs from "
                                f"{self.base_size} to {self.base_size + len(self.train_tokens) - 1}.")
        return {"vocab_size": int(vocab_size),
                "train_chars_per_token": self.train_chars / max(1, int(self.train_tokens[k])),
                "held_out_chars_per_token": self.held_out_chars / max(1, int(self.held_out_tokens[k]))}

    def rows(self, sizes=None) -> list[dict]:
        """:meth:`row` for each of ``sizes``, in the order given (every size by default)."""
        sizes = self.vocab_sizes.tolist() if sizes is None else sizes
        return [self.row(int(size)) for size in sizes]


def vocabulary_curve(text: str, max_vocab: int, variant: str = "char", *, pattern: str | None = None,
                     held_out: float = HELD_OUT, progress=None) -> VocabCurve:
    """Train ``variant`` BPE up to ``max_vocab`` on the training part of ``text`` (fewer if its
    pairs run out) and count both parts' tokens at every size on the way; ``progress(done,
    total)`` as the merges are learned."""
    train, held = split_held_out(text, held_out)
    if not train or not held:
        raise ArgumentError("The corpus is too short to hold out a part of it.")
    trainer = BPETrainer(train, variant=variant, pattern=pattern, top_k=1)
    if max_vocab < trainer.base_size:
        raise ArgumentError(f"The vocabulary must hold at least the {trainer.base_size} base symbols "
                            f"of the training part, not {max_vocab}.")
    for _ in trainer.run(max_vocab - trainer.base_size, progress=progress):
        pass
    tok = BPETokenizer.from_trainer(trainer)
    train_tokens = np.array([trainer.initial_length] + [s.length_after for s in tok.trace], dtype=np.int64)
    return VocabCurve(tok.variant, tok, len(train), len(held), train_tokens, held_out_lengths(tok, held))


def held_out_lengths(tok: BPETokenizer, text: str) -> np.ndarray:
    """The length of ``text`` encoded with ``tok``'s first ``k`` merges, for every ``k`` (one
    encoding: the final length plus the fires of the merges left out)."""
    ids = np.asarray(_ids_keeping_unseen(tok, text), dtype=np.int64)
    fires = merge_fires(tok, ids[ids < UNSEEN])
    undone = np.concatenate([np.cumsum(fires[::-1])[::-1], [0]])  # fires of merges k, k+1, ...
    return len(ids) + undone


def _ids_keeping_unseen(tok: BPETokenizer, text: str):
    """``text`` encoded, a character the alphabet lacks kept as one token (``UNSEEN`` + its code
    point) that never merges; the char variant without a ``Token`` per id."""
    if tok.alphabet is None:
        return tok.encode(text)
    if tok.variant == "char":
        return tok.encoder.whole(tok.alphabet.ids(text, "keep", 0))
    return [t.id for t in tok.encode_tokens(text, unknown="keep", offsets=False)]


def merge_fires(tok: BPETokenizer, ids: np.ndarray) -> np.ndarray:
    """How often each merge (in rank order) fired to make the tokens ``ids``: the times its
    token occurs in the merge trees of ``ids``.  Parts come before what they make (a trained
    tokenizer's new ids grow), so one pass from the last merge down counts every node."""
    triples = tok.merge_triples
    size = max([tok.base_size] + [new + 1 for _, _, new in triples])
    nodes = np.bincount(ids, minlength=size).astype(np.int64)
    for left, right, new in reversed(triples):
        nodes[left] += nodes[new]
        nodes[right] += nodes[new]
    return np.array([nodes[new] for _, _, new in triples], dtype=np.int64)
