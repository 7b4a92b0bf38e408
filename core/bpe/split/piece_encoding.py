"""Encoding a split text: plain Python or compiled kernels, and which pays.

A long text, with a known split pattern (``known_patterns``), is encoded in compiled kernels
over the whole of it (:func:`byte_ids`): cut, equal pieces found once (``kernels.scanners``), each
distinct piece encoded at once (the tokenizer's ``encoder.encode_ranges``), the ids of every
piece gathered (``kernels.piece_table``).  Python touches no piece, which is what makes it as fast as
tiktoken: with ``regex`` and a dictionary lookup per piece, the split alone took longer than
tiktoken's whole encode (why: docs/benchmarks.md, "Encoding real tokenizers").  Special tokens
are cut out first and put back between the segments.

A short text goes through ``regex`` and plain Python instead (``core.bpe.encoding``), new chunks
merged by :func:`lowest_first`: importing numba and loading the kernels in a fresh process
(numba's first load also imports scipy) costs what plain Python spends on a million characters or
more (why: docs/benchmarks.md, "Encoding real tokenizers"), so ``python -c "...encode('hello
world')"`` never loads numba.  Once the kernels are loaded (``warm``), they win from a few
thousand characters on.  Merging by scanning costs the square of a chunk's length, so plain
Python takes new chunks only while the sum of their squared lengths stays small.
"""

from __future__ import annotations

import numpy as np

from ..kernels import piece_table
from . import known_patterns
from ..pretokenize import special_split

# Characters from which the compiled kernels pay: before they are loaded (loading them is a fresh
# process's largest cost), and after (why: docs/benchmarks.md, "Encoding real tokenizers").
_COLD_FROM_CHARS = 1_000_000
_WARM_FROM_CHARS = 4_000
# The most new chunks' summed squared lengths that plain Python merges sooner than a kernel.
_COLD_PYTHON_COST = 4_000_000
_WARM_PYTHON_COST = 20_000
warm = False  # compiled encoding has run in this process


def loaded() -> None:
    """Note that the compiled kernels are loaded: from now on they pay from short texts on."""
    global warm
    warm = True


def compiled_pays(pattern: str | None, text: str) -> bool:
    """Whether ``text`` is encoded by :func:`byte_ids` (and, if so, the kernels are noted loaded)."""
    enough = _WARM_FROM_CHARS if warm else _COLD_FROM_CHARS
    if known_patterns.has_scanner(pattern) and len(text) >= enough:
        loaded()
        return True
    return False


def python_pays(lengths: list[int]) -> bool:
    """Whether new chunks of these lengths are merged sooner in plain Python than by a kernel."""
    return sum(n * n for n in lengths) <= (_WARM_PYTHON_COST if warm else _COLD_PYTHON_COST)


def lowest_first(parts: list, rank_of) -> list:
    """Join neighbouring parts while any pair joins, the pair that ``rank_of(left, right)`` ranks
    lowest first (``(rank, joined)``, or ``None``: never), the leftmost among equals: the
    kernels' rule in plain Python, for one chunk.

        >>> ranks = {("l", "o"): (0, "lo"), ("lo", "w"): (1, "low")}
        >>> lowest_first(list("lower"), lambda a, b: ranks.get((a, b)))
        ['low', 'e', 'r']
    """
    while len(parts) > 1:
        best, at = None, -1
        for k in range(len(parts) - 1):
            found = rank_of(parts[k], parts[k + 1])
            if found is not None and (best is None or found[0] < best[0]):
                best, at = found, k
        if best is None:
            break
        parts[at:at + 2] = [best[1]]
    return parts


def byte_ids(tok, text: str, specials: list[str], table: np.ndarray) -> list[int]:
    """``core.bpe.encoding.byte_ids`` in compiled kernels over the whole text (``table``: byte -> id)."""
    spans = list(special_split(text, specials))
    data = utf8(text)
    plain = all(special is None for _, _, special in spans)  # one span, or none
    if plain:
        segments = np.array([[0, len(data)]], dtype=np.int64)
    else:
        segments = known_patterns.ordinary_segments(text, spans)
    buf = np.frombuffer(data, dtype=np.uint8)
    starts, ends, which, seg_first = known_patterns.split_bytes(buf, tok.pattern, segments)
    flat, offsets = tok.encoder.encode_ranges(buf, starts, ends, table)
    ids = piece_table.gather(which, flat, offsets).tolist()
    if plain:
        return ids
    piece_out = np.zeros(len(which) + 1, dtype=np.int64)  # where each piece's ids start in ``ids``
    np.cumsum(np.diff(offsets)[which], out=piece_out[1:])
    out, g = [], 0
    for _, _, special in spans:
        if special is not None:
            out.append(tok.special_tokens[special])
        else:
            out.extend(ids[piece_out[seg_first[g]]:piece_out[seg_first[g + 1]]])
            g += 1
    return out


def utf8(text: str) -> bytes:
    """``text`` as UTF-8; a lone surrogate (no UTF-8 form) is refused with its position."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"The text holds a lone surrogate {text[exc.start]!r} at position {exc.start:,}, "
                         f"which has no UTF-8 bytes: decode the input with errors='replace'.") from None
