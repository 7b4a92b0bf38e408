"""From a ranked vocabulary (tiktoken's form: token bytes -> rank, the rank being the id) to the
merges of our own class, and the table of joinable pairs that encoding by ranks needs.

A tiktoken-style file lists tokens, not merges.  A token's *parts* are recovered the way it was
made: encode its bytes allowing only tokens of lower rank; what is left must be two tokens (minbpe
and Hugging Face's converter do the same).  The merge ``(left, right) -> token`` then names them,
so merge trees, explanations and exports work as for a trained tokenizer.

Encoding by ranks (``core.bpe.encoding.RankEncoder``) also needs every *other* way two tokens
join into a token: tiktoken joins any neighbours whose bytes spell a token, whether or not that
pair is the token's recovered merge.  :func:`pair_table` lists them all.

Leaves out: where vocabularies come from and the cache (``core.bpe.pretrained``).
"""

from __future__ import annotations

import numpy as np

from .encoding import RankEncoder
from .checks import MAX_ID, check_id


def pair_table(token_bytes: dict[int, bytes]) -> tuple[np.ndarray, np.ndarray]:
    """``(keys, merged)``: for every token and every cut of its bytes into two tokens, the pair
    key ``left << 32 | right`` and the token's id, sorted by key."""
    ids = {data: i for i, data in token_bytes.items()}
    keys, merged = [], []
    for i, data in token_bytes.items():
        for cut in range(1, len(data)):
            left, right = ids.get(data[:cut]), ids.get(data[cut:])
            if left is not None and right is not None:
                keys.append((left << 32) | right)
                merged.append(i)
    keys_array = np.array(keys, dtype=np.int64)
    merged_array = np.array(merged, dtype=np.int64)
    order = np.argsort(keys_array, kind="stable")
    return keys_array[order], merged_array[order]


def recover_merges(token_bytes: dict[int, bytes], byte_ids: list[int],
                   pairs: tuple[np.ndarray, np.ndarray]) -> list[tuple[int, int, int]]:
    """``(left, right, token)`` for every token longer than one byte, in rank order: the two
    tokens its bytes come to when only lower ranks may join.  A token that does not come to two
    (tiktoken can give it only as a whole piece) is made from its lowest-ranked cut instead."""
    encoder = RankEncoder(pairs, dict)
    table = np.asarray(byte_ids, dtype=np.int32)
    longer = sorted(i for i, data in token_bytes.items() if len(data) > 1)
    encoded = [token_bytes[i] for i in longer]
    starts = np.zeros(len(longer) + 1, dtype=np.int64)
    np.cumsum([len(data) for data in encoded], out=starts[1:])
    flat = table[np.frombuffer(b"".join(encoded), dtype=np.uint8)]
    out, out_starts = encoder.apply(flat, starts, np.asarray(longer, dtype=np.int64))
    ids = {data: i for i, data in token_bytes.items()}
    merges = []
    for k, token in enumerate(longer):
        parts = out[out_starts[k]:out_starts[k + 1]]
        if len(parts) != 2:
            parts = _lowest_cut(ids, token_bytes[token], token)
        merges.append((int(parts[0]), int(parts[1]), token))
    return merges


def _lowest_cut(ids: dict[bytes, int], data: bytes, token: int) -> tuple[int, int]:
    """The cut of ``token`` (bytes ``data``) into two lower-ranked tokens whose larger rank is
    smallest."""
    cuts = [(ids[data[:c]], ids[data[c:]]) for c in range(1, len(data))
            if ids.get(data[:c], token) < token and ids.get(data[c:], token) < token]
    if not cuts:
        raise ValueError(f"Token {token} ({data!r}) cannot be cut into two lower-ranked tokens.")
    return min(cuts, key=max)


def merge_triples(merges) -> list[tuple[int, int, int]]:
    """Merges as ``(left, right, new)`` int triples, each id checked; an ``(n, 3)`` integer array
    (a pretrained vocabulary's 200,000 merges), or a list of int triples, is checked at once
    instead of id by id (the message then names the first bad id)."""
    if isinstance(merges, np.ndarray) and merges.ndim == 2 and merges.dtype.kind in "iu":
        if merges.shape[1] != 3 or (merges.size and not 0 <= merges.min() <= merges.max() < MAX_ID):
            raise ValueError(f"Merges must be (left, right, new) ids from 0 to {MAX_ID - 1:,}.")
        return list(zip(*(merges[:, k].tolist() for k in range(3)))) if len(merges) else []
    if isinstance(merges, list) and all(type(m) is tuple and len(m) == 3 and type(m[0]) is type(m[1])
                                        is type(m[2]) is int for m in merges):
        if not merges or 0 <= min(map(min, merges)) and max(map(max, merges)) < MAX_ID:
            return list(merges)  # plain int triples in range (GPT-2's 50,000): checked at once
    return [(check_id(a, "A merge id"), check_id(b, "A merge id"), check_id(n, "A merge id"))
            for a, b, n in merges]
