"""Chunk counting on a Dask cluster (the optional ``dist`` extra: ``pip install -e .[dist]``):
the same slices and the same per-slice counting as ``core.bpe.counting``, each slice a Dask task,
the counts merged here in slice order, so the merges equal the single-process path's exactly.

    >>> from dask.distributed import Client
    >>> from core.bpe import BPETrainer
    >>> client = Client(n_workers=2, processes=True)            # doctest: +SKIP
    >>> counts = count_chunks_on(client, "corpus.txt", "gpt4")  # doctest: +SKIP
    >>> trainer = BPETrainer.from_chunk_counts(counts, pattern="gpt4")  # doctest: +SKIP

(``Client("scheduler:8786")`` reaches a cluster already running.)

When to reach for it: when one machine's cores are not enough, or the corpus is larger than one
machine's memory or disk (a few GB and up).  The slices are read here and sent to the Dask workers,
so the network carries the corpus once; the merged counts (the distinct chunks, a few hundred MB
for tens of GB of text) and the merge loop stay on this machine.  For a corpus on one machine,
``count_chunks`` with counting processes is simpler and as fast.  Dask is imported only inside
these functions; ``core.bpe`` never needs it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from .counting import SLICE_BYTES, corpus_slices, count_chunks, count_slice, cuttable, merge_counts
from .pretokenize import resolve_pattern
from .variants import variant_rules


def count_chunks_on(client, corpus, pattern: str | None, special_tokens: Sequence[str] = (), *,
                    slice_bytes: int = SLICE_BYTES, in_flight: int | None = None) -> dict[str, int]:
    """``count_chunks(corpus, pattern, special_tokens)`` with each slice counted as a task on the
    ``client``'s Dask workers; at most ``in_flight`` slices (default: two per Dask worker thread) are
    out at a time, so this process holds a bounded part of the corpus."""
    import dask.distributed  # noqa: F401  (the optional extra: fail here, with its own message)

    resolved = resolve_pattern(pattern)
    specials = variant_rules("byte").special_tokens(special_tokens)
    if not cuttable(resolved, specials):
        return count_chunks(corpus, pattern, specials, processes=1)
    limit = in_flight or 2 * max(1, sum(client.nthreads().values()))
    total: dict[str, int] = {}
    pending = deque()
    for data in corpus_slices(corpus, slice_bytes):
        pending.append(client.submit(count_slice, data, resolved, specials, pure=False))
        if len(pending) >= limit:
            merge_counts(total, pending.popleft().result())
    while pending:
        merge_counts(total, pending.popleft().result())
    return total
