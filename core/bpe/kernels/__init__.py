"""Every compiled loop of the tokenizer (numba), in one place, each beside the textbook step it
speeds up.  Plain Python that numba compiles: ``function.py_func`` runs the same source
uncompiled, which the tests compare against.

- ``training``     counting pairs and applying a merge while training (``core.bpe.trainer``);
  ``encode`` borrows its pair key and table lookup from there.
- ``encode``       applying a tokenizer's merges to many chunks at once (``core.bpe.encoding``);
- ``count``        where a corpus may be cut into slices counted apart (``core.bpe.counting``);
- ``scanners``     cutting UTF-8 bytes into the pieces of a known split pattern, as ``regex``
  would (``core.bpe.split.known_patterns``);
- ``piece_table``  the table in which equal pieces are found once and looked up among a
  vocabulary's tokens (``core.bpe.split``).

Each module loads on first use (``core.bpe._lazy``): ``import core`` loads no numba.
"""

from .. import _lazy

_lazy.defer(__name__, ("training", "encode", "count", "scanners", "piece_table"))
