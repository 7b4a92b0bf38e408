"""BPE Explorer's library: train, trace, encode, decode, save and load BPE tokenizers, and train a
small GPT on the result.  Imports no Streamlit; everything a page does, a script can do here.

    >>> from core import BPETokenizer
    >>> tok = BPETokenizer.from_text("low low low low low lower newer newer newer newer wider", 10, variant="word")
    >>> tok.merges[:3]
    [('l', 'o'), ('lo', 'w'), ('e', 'r')]
"""

from .pretokenize import GPT2_PATTERN, GPT4_PATTERN, PatternError, PatternTimeoutError, set_regex_timeout
from .storage import TokenizerFileError, load_tokenizer, loads_tokenizer, tokenizer_from_dict
from .tokenizer import ArgumentError, BPETokenizer, CharTokenizer, Token, UnknownCharacterError
from .trainer import BPETrainer, CorpusTooLargeError, MergeStep, training_memory_estimate

__all__ = [
    "ArgumentError", "BPETokenizer", "BPETrainer", "CharTokenizer", "CorpusTooLargeError",
    "GPT2_PATTERN", "GPT4_PATTERN", "MergeStep", "PatternError", "PatternTimeoutError", "Token",
    "TokenizerFileError", "UnknownCharacterError", "load_tokenizer", "loads_tokenizer",
    "set_regex_timeout", "tokenizer_from_dict", "training_memory_estimate",
]
