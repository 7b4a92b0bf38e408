"""BPE Explorer's library: train, trace, encode, decode, save and load BPE tokenizers
(``core.bpe``), and train a small GPT on the result (``core.gpt``).  Imports no Streamlit;
everything a page does, a script can do here.  This module is the public face: the tokenizer's
names, reading a corpus, and exporting a tokenizer to other libraries.

    >>> from core import BPETokenizer
    >>> text = "low low low low low lower newer newer newer newer wider"
    >>> tok = BPETokenizer.from_text(text, 10, variant="word")
    >>> tok.merges[:3]
    [('l', 'o'), ('lo', 'w'), ('e', 'r')]
"""

from .bpe import (
    GPT2_PATTERN,
    GPT4_PATTERN,
    PRETRAINED_NAMES,
    ArgumentError,
    BPETokenizer,
    BPETrainer,
    CharTokenizer,
    CorpusTooLargeError,
    MergeStep,
    PatternError,
    PatternTimeoutError,
    Token,
    TokenizerFileError,
    UnknownCharacterError,
    load_tokenizer,
    loads_tokenizer,
    save_tokenizer,
    set_regex_timeout,
    tokenizer_from_dict,
    tokenizer_to_dict,
    training_memory_estimate,
)
from .bpe.interop import hf_tokenizer_json, tiktoken_encoding
from .corpus import read_corpus

__all__ = [
    "ArgumentError",
    "BPETokenizer",
    "BPETrainer",
    "CharTokenizer",
    "CorpusTooLargeError",
    "GPT2_PATTERN",
    "GPT4_PATTERN",
    "MergeStep",
    "PRETRAINED_NAMES",
    "PatternError",
    "PatternTimeoutError",
    "Token",
    "TokenizerFileError",
    "UnknownCharacterError",
    "hf_tokenizer_json",
    "load_tokenizer",
    "loads_tokenizer",
    "read_corpus",
    "save_tokenizer",
    "set_regex_timeout",
    "tiktoken_encoding",
    "tokenizer_from_dict",
    "tokenizer_to_dict",
    "training_memory_estimate",
]
