"""The corpus cut 90/10 by characters for a run, and the rule its cuts must meet: each holds one
window of ``block_size + 1`` tokens.  Torch-free, so that a page refuses a too-short corpus before
Launch without loading torch (``core.gpt.machine`` says why); ``core.gpt.data`` tokenizes the cuts.
"""

from __future__ import annotations


class DataTooShortError(ValueError):
    """A part of the corpus holds fewer tokens than one window of ``block_size + 1``."""


def split_text(text: str, val_fraction: float = 0.1) -> tuple[str, str]:
    """The training and validation text: the corpus cut 90/10 by characters."""
    if not text:
        raise ValueError("The corpus is empty: there is nothing to train on.")
    cut = int(len(text) * (1 - val_fraction))
    return text[:cut], text[cut:]


def check_window(name: str, tokens: int, block_size: int) -> None:
    if tokens < block_size + 1:
        raise DataTooShortError(
            f"The {name} part of the corpus is only {tokens} tokens long; block_size "
            f"{block_size} needs at least {block_size + 1}. Use a longer corpus or a smaller "
            f"block size.")


def short_parts(text: str, tokenizer, block_size: int, val_fraction: float = 0.1) -> dict[str, int]:
    """The parts of the corpus (the validation part first) that hold fewer than ``block_size + 1``
    tokens under ``tokenizer``, with how many they hold: empty when a run of ``block_size`` can use
    the corpus (the rule ``core.gpt.data.prepare_data`` applies).

    Only a part that could be too short is encoded, so the check costs a page the same on a pasted
    8 MB as on a sample: no token is longer than the tokenizer's longest, in UTF-8 bytes, and a part
    has at least as many bytes as characters, so a part of many more characters than a window of
    such tokens holds one (twice over: a normalization may join characters)."""
    longest = max(len(tokenizer.token_bytes(i)) for i in tokenizer.ids)
    train_text, val_text = split_text(text, val_fraction)
    short = {}
    for name, part in (("validation", val_text), ("training", train_text)):
        if len(part) < 2 * (block_size + 1) * longest:
            tokens = len(tokenizer.encode(part))
            if tokens < block_size + 1:
                short[name] = tokens
    return short


def check_length(text: str, tokenizer, block_size: int, val_fraction: float = 0.1) -> None:
    """Refuse a corpus too short for ``block_size`` with this tokenizer before a run is launched:
    :class:`DataTooShortError` when the validation (or training) part holds fewer than
    ``block_size + 1`` tokens (:func:`short_parts`)."""
    for name, tokens in short_parts(text, tokenizer, block_size, val_fraction).items():
        check_window(name, tokens, block_size)
