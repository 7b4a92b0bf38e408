"""A text's name wherever its work is kept: the shared caches, the jobs' keys (the same in every
app process of a machine, and on a Dask cluster), a run folder's corpus.  Beside no domain, so
that the tokenizer library and the app both use the one."""

from __future__ import annotations

import hashlib


def text_digest(text: str | bytes) -> str:
    """``text``'s name; ``bytes``: its UTF-8, where the caller has encoded it already (a paste)."""
    raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(raw, digest_size=16).hexdigest()
