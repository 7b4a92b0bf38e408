"""The character classes the known split patterns test, one byte of flags per code point, taken
from the ``regex`` module itself: the compiled scanner (``kernels.scanners``) then agrees with
``regex.findall`` on every character, whatever Unicode version ``regex`` ships.

Each class is read by running its own regex over a string of all 1,114,112 code points (once per
process): ``\\p{L}``, ``\\p{N}``, ``\\s``, o200k's two case classes, and the
characters a contraction's letters match case-insensitively (``(?i:s)`` also matches U+017F,
LATIN SMALL LETTER LONG S).  Leaves out: the patterns themselves (``core.bpe.pretokenize``) and
scanning (``kernels.scanners``).
"""

from __future__ import annotations

import functools

import numpy as np
import regex

# The flags (compiled into ``kernels.scanners`` as constants: after changing one, delete numba's
# cache of that module, ``core/bpe/split/__pycache__/scanners*.nb*``, which is keyed by its file).
LETTER = 1  # \p{L}
NUMBER = 2  # \p{N}
SPACE = 4  # \s
OTHER = 8  # [^\s\p{L}\p{N}]
PREFIX = 16  # [^\r\n\p{L}\p{N}]: what may stand before a word in the GPT-4-style patterns
UPPER = 32  # [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]: o200k's cased-word head
LOWER = 64  # [\p{Ll}\p{Lm}\p{Lo}\p{M}]: o200k's cased-word tail
NEWLINE = 128  # [\r\n]
_CLASSES = (
    (r"\p{L}", LETTER),
    (r"\p{N}", NUMBER),
    (r"\s", SPACE),
    (r"[^\s\p{L}\p{N}]", OTHER),
    (r"[^\r\n\p{L}\p{N}]", PREFIX),
    (r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", UPPER),
    (r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", LOWER),
    (r"[\r\n]", NEWLINE),
)
CONTRACTION_LETTERS = "sdmtlvre"  # 's 'd 'm 't 'll 've 're


@functools.cache
def class_table() -> np.ndarray:
    """``table[code_point]``: the OR of the flags above that the character has (uint8)."""
    everything = _all_characters()
    table = np.zeros(len(everything), dtype=np.uint8)
    for pattern, flag in _CLASSES:
        for match in regex.finditer(pattern + "+", everything):
            table[match.start():match.end()] |= flag
    return table


@functools.cache
def case_folds() -> tuple[np.ndarray, np.ndarray]:
    """``(code_points, letters)``: every character that ``(?i:x)`` matches for a contraction
    letter ``x``, and that letter (as its ASCII code), sorted by code point."""
    everything = _all_characters()
    pairs = sorted((match.start(), ord(letter)) for letter in CONTRACTION_LETTERS
                   for match in regex.finditer(f"(?i:{letter})", everything))
    return (np.array([p for p, _ in pairs], dtype=np.int64),
            np.array([letter for _, letter in pairs], dtype=np.int64))


def _all_characters() -> str:
    """Every code point once, in order (surrogates included: a Python string may hold them)."""
    return np.arange(0x110000, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")
