"""A tokenizer by the name a user types: a real model's (``BPETokenizer.from_pretrained``) or a
saved tokenizer's path, each loaded once per process."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..bpe import PRETRAINED_NAMES, BPETokenizer
from ..bpe.checks import ArgumentError


@lru_cache(maxsize=8)
def named_tokenizer(name: str) -> BPETokenizer:
    """``gpt2``, ``cl100k_base``, ``o200k_base``, ``llama3``, ``qwen3``, or a tokenizer file."""
    if name in PRETRAINED_NAMES:
        return BPETokenizer.from_pretrained(name)
    if Path(name).is_file():
        return BPETokenizer.load(name)
    raise ArgumentError(f"{name!r} is neither a known tokenizer ({', '.join(PRETRAINED_NAMES)}) "
                        f"nor a tokenizer file.")
