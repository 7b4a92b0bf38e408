"""Answers to the questions people ask about tokenizers, computed on their own text:

- what vocabulary size to pick: characters per token at every size from one training, on the
  text trained on and on text held out (``vocab_curve``), and small GPTs at a few sizes
  (``sweep``, through the room's runs);
- which tokens never appear: tokens whose own text does not encode back to them, tokens that are
  part of a character (``unreachable``), and tokens a training minted but its corpus never emits
  (``residues``);
- what a language pays: tokens for the same content in each language of a parallel corpus, and
  the premium over English (``languages``);
- why language models are weird, on any text and tokenizer: a word's tokens in six forms and the
  letters hidden in them (``spelling``), how numbers' digits are grouped (``numbers``), tokens
  spent on whitespace (``whitespace``), special-token text read as text or as the special token
  (``specials``), the prompt's last tokens a continuation cuts otherwise (``boundary``), the same
  records as JSON, YAML, CSV, a table and XML (``formats``); each a text cut as ordinary text
  (``cuts``).

``python -m core.insights`` gives each as a table or JSON.  Imports ``core.bpe``; torch only where
a GPT's checkpoint is read (``embeddings``: a job worker's, in the app); never Streamlit.
"""

from .boundary import Boundary, prompt_boundary, trailing_space_prompt
from .cuts import Cut, cut, encode_each
from .formats import FORMATS, SAMPLE_RECORDS, format_costs, read_records, written
from .languages import UDHR_DIR, language_costs, language_index, read_parallel, token_count
from .numbers import NumberGroupings, number_groupings, numbers_in_text
from .residues import residues, token_counts
from .specials import SpecialReadings, special_readings, specials_in
from .spelling import FORMS, Spelling, letter_places, spelling, words_cut_differently
from .tokenizers import named_tokenizer
from .unreachable import Unreachable, token_reach, unreachable_tokens
from .vocab_curve import HELD_OUT, VocabCurve, split_held_out, vocabulary_curve
from .whitespace import WhitespaceCost, python_sample, whitespace_cost

__all__ = [
    "FORMATS",
    "FORMS",
    "HELD_OUT",
    "SAMPLE_RECORDS",
    "UDHR_DIR",
    "Boundary",
    "Cut",
    "NumberGroupings",
    "SpecialReadings",
    "Spelling",
    "Unreachable",
    "VocabCurve",
    "WhitespaceCost",
    "cut",
    "encode_each",
    "format_costs",
    "language_costs",
    "language_index",
    "letter_places",
    "named_tokenizer",
    "number_groupings",
    "numbers_in_text",
    "prompt_boundary",
    "python_sample",
    "read_parallel",
    "read_records",
    "residues",
    "special_readings",
    "specials_in",
    "spelling",
    "split_held_out",
    "token_count",
    "token_counts",
    "token_reach",
    "trailing_space_prompt",
    "unreachable_tokens",
    "vocabulary_curve",
    "whitespace_cost",
    "words_cut_differently",
    "written",
]
