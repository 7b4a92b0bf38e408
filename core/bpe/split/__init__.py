"""The known split patterns (GPT-2, GPT-4, cl100k, o200k, Llama 3, Qwen 3) cut by compiled
scanners exactly as ``regex`` cuts them, and a long text encoded in compiled kernels over the
whole of it (a short one in plain Python).  Any other pattern goes through ``regex``
(``core.bpe.pretokenize``).

Modules, bottom to top:

- ``char_classes``: the Unicode classes the patterns test, one byte of flags per code point,
  taken from ``regex`` itself;
- ``piece_table`` (numba): a table of byte ranges in which equal pieces are found once and a
  piece is looked up among a vocabulary's tokens; the ids of every piece gathered;
- ``scanners`` (numba): the three compiled scanners that cut UTF-8 bytes into pieces;
- ``known_patterns``: which pattern runs which scanner, a text's pieces as byte ranges, and the
  chunk counts training starts from;
- ``piece_encoding``: encoding a split text, in plain Python or in compiled kernels, and which
  pays.

The two numba modules load on first use (``core.bpe._lazy``), so that ``import core`` loads no
numba.
"""

from .. import _lazy

_lazy.defer(__name__, ("scanners", "piece_table"))
