"""Continue training a tokenizer on your own text: every id and token of it stays, and new merges
learned from the text get ids after all of its ids (special tokens included).

    >>> from core.bpe import BPETokenizer
    >>> tok = BPETokenizer.from_text("low low low lower", 2, variant="byte")
    >>> more = tok.extended("newer newer newest", 2)
    >>> [more.token_str(s.new_id) for s in more.trace]
    ['ne', 'new']

How: ``text`` is cut as ``tok`` cuts it (its split pattern, its special tokens, words, or the
whole text for ``char``), each unique chunk is encoded by ``tok`` itself, and
``BPETrainer.from_sequences`` merges on those id sequences with the usual rules (most frequent
pair, the first one on a tie).  A tokenizer of merges then encodes with its merges followed by the
new ones, exactly as training applied them.  A pretrained vocabulary keeps tiktoken's rule (join
any two neighbours whose bytes are a token, lowest id first) over old and new tokens
(:func:`rank_encoder`), so its tiktoken export gives its ids by construction; the new merges rank
after every old token, so a text where none applies keeps ``tok``'s ids.  Where two tokens spell
a new token without being its merge (rare), encoding joins them and training did not: the trace's
counts are then those of the textbook application.

Owns: the trainer of an extension, the text cut and encoded as ``tok`` does, and the rank table
grown by the new tokens.  Leaves out: the tokenizer class (``BPETokenizer.extended`` trains and
builds an extension, ``BPETokenizer.from_trainer`` builds one from this module's trainer, its
``truncated`` keeps fewer new merges) and the exports (``core.bpe.interop``: new tokens are
ordinary ranks there).
"""

from __future__ import annotations

import bisect
import unicodedata

import numpy as np

from .checks import EmptyCorpusError, check_text
from .trainer import BPETrainer, refuse_above


def extension_trainer(tok, text: str, top_k: int = 10, max_memory: int | None = None) -> BPETrainer:
    """A trainer on ``tok``'s encoding of ``text``, ready to ``run`` (new ids from
    ``max(tok.ids) + 1``); ``BPETokenizer.from_trainer`` makes the extended tokenizer of its
    steps.  ``max_memory``: refuse (``CorpusTooLargeError``) a text whose encoding and counting
    may take more, before encoding anything."""
    check_text(text, "The corpus")
    if not text:
        raise EmptyCorpusError()
    if max_memory is not None:
        refuse_above(text, "byte", max_memory, "use a shorter corpus", extending=True)
    sequences = chunk_encodings(tok, text)
    return BPETrainer.from_sequences(sequences, max(tok.ids) + 1, top_k=top_k, extends=tok)


def chunk_encodings(tok, text: str) -> list[tuple[tuple[int, ...], int]]:
    """``(ids, count)`` of every unique chunk of ``text`` as ``tok`` cuts and encodes it, in
    first-appearance order (the whole text, once, for ``char``)."""
    if tok.normalization is not None:
        text = unicodedata.normalize(tok.normalization, text)
    rules = tok.variant_rules
    chunks = rules.corpus_chunks(text, tok.pattern, list(tok.special_tokens), None)
    if chunks is None:
        return [(tuple(tok.encode(text)), 1)]
    pieces = [c for c, _ in chunks]
    if rules.has_alphabet:
        encoded = tok.encoder.chunks(pieces, lambda w: tok.base_ids(w) + [tok.base_size - 1])
    else:
        encoded = tok.encoder.chunks(pieces, np.asarray(tok.byte_ids, dtype=np.int32))
    return list(zip(encoded, (n for _, n in chunks)))


def grown_pair_table(tok, new: list[tuple[int, int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """tiktoken's pair table of ``tok`` (``tok.pair_table``) grown by the ``new`` merges ``(left,
    right, id)``: every way two tokens spell a new token or join with one into a token (the ranks
    of the exports), sorted by key as ``core.bpe.ranks.pair_table`` sorts."""
    spelled = {i: tok.token_bytes(i) for i in tok.ids if not tok.is_special(i)}
    for left, right, token in new:
        spelled[token] = spelled[left] + spelled[right]
    ids = {data: i for i, data in spelled.items()}  # a later id wins, as the encoder's index
    keys, merged = [], []
    for left, right, t in _joins(ids, {spelled[token] for _, _, token in new}):
        keys.append((left << 32) | right)
        merged.append(t)
    keys = np.concatenate([tok.pair_table[0], np.array(keys, dtype=np.int64)])
    merged = np.concatenate([tok.pair_table[1], np.array(merged, dtype=np.int64)])
    order = np.argsort(keys, kind="stable")
    return keys[order], merged[order]


def _joins(ids: dict[bytes, int], fresh: set[bytes]):
    """``(left, right, token)``: each cut of a fresh token into two tokens, and each cut of a
    token whose left or right part is a fresh token (found by prefix search in sorted bytes)."""
    found = set()
    for data in fresh:
        found.update((data[:c], data[c:]) for c in range(1, len(data)))
    forward, backward = sorted(ids), sorted(d[::-1] for d in ids)
    for data in fresh:
        for ordered, key, flip in ((forward, data, False), (backward, data[::-1], True)):
            k = bisect.bisect_right(ordered, key)  # after ``key`` itself: longer ones
            while k < len(ordered) and ordered[k].startswith(key):
                whole = ordered[k][::-1] if flip else ordered[k]
                cut = len(whole) - len(data) if flip else len(data)
                found.add((whole[:cut], whole[cut:]))
                k += 1
    for left, right in found:
        if left in ids and right in ids:
            yield ids[left], ids[right], ids[left + right]

