"""Answers to the questions people ask about tokenizers, computed on their own text:

- what vocabulary size to pick: characters per token at every size from one training, on the
  text trained on and on text held out (``vocab_curve``), and small GPTs at a few sizes
  (``sweep``, through the room's runs);
- which tokens never appear: tokens whose own text does not encode back to them, tokens that are
  part of a character (``unreachable``), and tokens a training minted but its corpus never emits
  (``residues``);
- what a language pays: tokens for the same content in each language of a parallel corpus, and
  the premium over English (``languages``).

``python -m core.insights`` gives each as a table or JSON.  Imports ``core.bpe``; torch only when
a sweep launches its runs; never Streamlit.
"""

from .languages import UDHR_DIR, language_costs, language_index, read_parallel, token_count
from .residues import residues, token_counts
from .tokenizers import named_tokenizer
from .unreachable import Unreachable, token_reach, unreachable_tokens
from .vocab_curve import HELD_OUT, VocabCurve, split_held_out, vocabulary_curve

__all__ = [
    "HELD_OUT",
    "UDHR_DIR",
    "Unreachable",
    "VocabCurve",
    "language_costs",
    "language_index",
    "named_tokenizer",
    "read_parallel",
    "residues",
    "split_held_out",
    "token_count",
    "token_counts",
    "token_reach",
    "unreachable_tokens",
    "vocabulary_curve",
]
