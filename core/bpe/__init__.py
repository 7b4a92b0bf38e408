"""The tokenizer library: train, trace, encode, decode, save and load BPE tokenizers (numpy, numba
and regex; never torch, Streamlit or ``core.gpt``).

    >>> from core.bpe import BPETokenizer
    >>> text = "low low low low low lower newer newer newer newer wider"
    >>> tok = BPETokenizer.from_text(text, 10, variant="word")
    >>> tok.merges[:3]
    [('l', 'o'), ('lo', 'w'), ('e', 'r')]

New here?  Read ``_educational`` first: BPE as the textbook writes it, in plain Python; the
fast engine is checked against it.

Layers, bottom to top (a module imports only those below it): ``checks``, ``alphabet``,
``pretokenize``; ``kernels``, every compiled loop (numba),
loaded on first use (``_lazy``) so that ``import core`` loads no numba;
``split`` (the known split patterns cut by the compiled scanners, and a split text encoded in
kernels or in plain Python); ``encoding``; ``variants``; ``counting`` (the chunk counts of a file
or an iterator, in counting processes; ``dask_counting`` on a Dask cluster); ``trainer`` (merge
steps); ``files``,
``gpt2``, ``ranks`` and ``pretrained`` (plain fields; the real models' vocabularies, offline);
``vocab``; ``extend`` (more merges for a tokenizer, learned from a text); ``tokenizer`` (the
value class); ``explain``, ``tree_layout`` (where a merge tree's boxes go), ``markup`` and
``step_data`` (a token as escaped HTML; the data Learn BPE's step view replays) and ``interop``.
The functions below are the package's verbs for files; each is one call on :class:`BPETokenizer`.
"""


from .counting import count_chunks
from .checks import ArgumentError, UnknownCharacterError
from .extend import extension_trainer
from .files import TokenizerFileError
from .gpt2 import GPT2FileError
from .pretrained import NAMES as PRETRAINED_NAMES
from .pretokenize import (
    GPT2_PATTERN,
    GPT4_PATTERN,
    PatternError,
    PatternTimeoutError,
    set_regex_timeout,
)
from .tokenizer import BPETokenizer, CharTokenizer, Token
from .trainer import BPETrainer, CorpusTooLargeError, MergeStep, training_memory_estimate
from .variants import VARIANTS

__all__ = [
    "ArgumentError",
    "BPETokenizer",
    "BPETrainer",
    "CharTokenizer",
    "CorpusTooLargeError",
    "count_chunks",
    "GPT2FileError",
    "GPT2_PATTERN",
    "GPT4_PATTERN",
    "MergeStep",
    "PRETRAINED_NAMES",
    "PatternError",
    "PatternTimeoutError",
    "Token",
    "TokenizerFileError",
    "UnknownCharacterError",
    "VARIANTS",
    "extension_trainer",
    "load_gpt2",
    "load_gpt2_bytes",
    "load_tokenizer",
    "loads_tokenizer",
    "save_tokenizer",
    "set_regex_timeout",
    "tokenizer_from_dict",
    "tokenizer_to_dict",
    "training_memory_estimate",
]


def load_tokenizer(path) -> BPETokenizer:
    """A tokenizer file (ours or the book's JSON); a bad file raises :class:`TokenizerFileError`."""
    return BPETokenizer.load(path)


def loads_tokenizer(raw: bytes | str, source: str = "the uploaded file") -> BPETokenizer:
    """A tokenizer file's bytes or text (an upload); ``source`` names it in error messages."""
    return BPETokenizer.loads(raw, source)


def save_tokenizer(tok: BPETokenizer, path) -> None:
    tok.save(path)


def tokenizer_to_dict(tok: BPETokenizer) -> dict:
    return tok.to_dict()


def tokenizer_from_dict(data, source: str = "the tokenizer data") -> BPETokenizer:
    return BPETokenizer.from_dict(data, source)


def load_gpt2(vocab_bpe_path, encoder_json_path) -> BPETokenizer:
    """GPT-2's tokenizer from its ``vocab.bpe`` and ``encoder.json``."""
    return BPETokenizer.from_gpt2(vocab_bpe_path, encoder_json_path)


def load_gpt2_bytes(vocab_bpe: bytes, encoder_json: bytes, vocab_name: str = "vocab.bpe",
                    encoder_name: str = "encoder.json") -> BPETokenizer:
    """GPT-2's tokenizer from an upload of its two files (nothing is written to disk)."""
    return BPETokenizer.from_gpt2_bytes(vocab_bpe, encoder_json, vocab_name, encoder_name)
