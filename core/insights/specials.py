"""Why a model halts on the text ``<|endoftext|>``: a special token's text read as ordinary text
(the pieces it is cut into) and read as the special token (one id the model was trained to treat
as a document's end).  Which reading a text gets is the encoder's choice, made by an argument.

    >>> from core.bpe import BPETokenizer
    >>> tok = BPETokenizer.byte_level(special_tokens=["<|end|>"])
    >>> found = special_readings(tok, "a<|end|>")
    >>> len(found.as_text.ids), found.as_special
    (8, [97, 256])

:data:`LIBRARY_DEFAULTS` says what each real tokenizer's own library does with such a text by
default; ``allowed_special`` is this project's argument (``BPETokenizer.encode``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bpe import BPETokenizer
from .cuts import Cut, cut

# What the libraries that ship each real tokenizer do by default with special-token text in a
# string to encode (tiktoken's is checked by tests/insights/test_specials.py).
TIKTOKEN_DEFAULT = ("tiktoken's encode() refuses it with an error unless allowed_special names it; "
                    "encode_ordinary() reads it as text")
LIBRARY_DEFAULTS = {
    "gpt2": TIKTOKEN_DEFAULT,
    "cl100k_base": TIKTOKEN_DEFAULT,
    "o200k_base": TIKTOKEN_DEFAULT,
    "llama3": "Meta's tokenizer (tiktoken underneath) reads it as text unless allowed_special names it",
    "qwen3": "Hugging Face tokenizers reads an added special token's text as the special token",
}


@dataclass(frozen=True)
class SpecialReadings:
    """``as_text``: the text cut as ordinary text; ``as_special``: its ids with the tokenizer's
    special tokens read as such (empty when the text holds none of them); ``found``: which."""

    as_text: Cut
    as_special: list[int]
    found: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"as_text": self.as_text.to_dict(), "as_special": self.as_special}


def specials_in(tok: BPETokenizer, text: str) -> tuple[str, ...]:
    """``tok``'s special tokens whose text occurs in ``text``, longest first."""
    return tuple(s for s in sorted(tok.special_tokens, key=len, reverse=True) if s in text)


def special_readings(tok: BPETokenizer, text: str) -> SpecialReadings:
    """Both readings of ``text`` by ``tok``."""
    found = specials_in(tok, text)
    as_special = tok.encode(text, allowed_special="all") if found else []
    return SpecialReadings(cut(tok, text), as_special, found)


def special_strings(tokenizers) -> list[str]:
    """Every special token's text of ``tokenizers`` (an iterable), each once, in order."""
    return list(dict.fromkeys(s for tok in tokenizers for s in sorted(tok.special_tokens)))
