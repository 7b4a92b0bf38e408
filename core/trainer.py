"""BPE training as a generator of frozen step records: this is where a merge is counted and chosen.

    >>> trainer = BPETrainer("low low low low low lower newer newer newer newer wider", variant="word")
    >>> [trainer.pair_text(s) for s in trainer.run(3)]
    [('l', 'o'), ('lo', 'w'), ('e', 'r')]

Tie-break, for every variant: among equally frequent pairs the one that occurs first in the
current sequence wins (what ``max(counter, key=counter.get)`` does on a freshly counted Counter).
Counts include overlapping occurrences ("aaa" holds two "a a"), as the textbook counts them.

Memory stays O(corpus + merges * top_k): a step records only its pair, counts and competitors;
where a pair sits in the text is recomputed on demand (``core.explain``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from . import kernels
from .pretokenize import byte_chunks, check_variant, resolve_pattern, word_spans
from .tokenizer import BPETokenizer

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class MergeStep:
    """One merge: ``left + right -> new_id``, chosen because it occurred ``count`` times."""

    index: int  # 0-based: the first merge has index 0 and creates id ``base_size``
    left: int
    right: int
    new_id: int
    count: int
    length_after: int  # tokens in the whole corpus after this merge
    competitors: tuple[tuple[int, int, int], ...]  # (left, right, count), winner first

    @property
    def pair(self) -> tuple[int, int]:
        return self.left, self.right

    @property
    def ties(self) -> int:
        """How many other pairs had exactly the winning count (the tie-break decided)."""
        return sum(1 for _, _, c in self.competitors[1:] if c == self.count)


class BPETrainer:
    """Holds a corpus prepared for one variant and merges it step by step.

    ``run(n)`` is a generator, so a caller can stop, show progress, or animate between steps;
    ``tokenizer()`` returns the tokenizer after the merges done so far.
    """

    def __init__(
        self,
        text: str,
        *,
        variant: str = "char",
        end_of_word: str = "</w>",
        pattern: str | None = None,
        special_tokens: Sequence[str] = (),
        top_k: int = 10,
    ) -> None:
        if not isinstance(text, str):
            raise ValueError("The corpus must be text (str); decode bytes first.")
        if not text:
            raise ValueError("The corpus is empty: paste or load some text first.")
        self.variant = check_variant(variant)
        if variant == "word" and not end_of_word:
            raise ValueError("The word variant needs a non-empty end-of-word marker.")
        self.end_of_word = end_of_word if variant == "word" else None
        self.pattern = resolve_pattern(pattern) if variant == "byte" else None
        self.special_tokens = tuple(dict.fromkeys(special_tokens)) if variant == "byte" else ()
        self.top_k = max(1, int(top_k))
        self.base = self._base_tokenizer(text)
        chunks = self._chunks(text)
        self._seq, self._weights = _flatten(chunks)
        self._counts = kernels.count_pairs(self._seq, self._weights, len(self._seq))
        if variant == "char":  # one chunk, counted once: no per-position weights to carry
            self._weights = np.ones(1, dtype=np.int64)
        self._heap = kernels.heap_from_counts(self._counts, 2 * len(self._counts) + 1024)
        # Positions: about n at the start plus at most 2 per merged occurrence; 2.5n rarely grows.
        self._nxt, self._prv, self._slots, *lists = kernels.index_pairs(self._seq, 5 * len(self._seq) // 2 + 1024)
        self._lists = lists  # head, slot_len, pool_pos, pool_next, pool_used
        self.initial_length = int(sum(len(c) * w for c, w in chunks))
        self.length = self.initial_length
        self.steps: list[MergeStep] = []
        self.exhausted = False

    # -- preparation ---------------------------------------------------------------------------
    def _base_tokenizer(self, text: str) -> BPETokenizer:
        if self.variant == "byte":
            return BPETokenizer.byte_level(pattern=self.pattern, special_tokens=self.special_tokens)
        if self.variant == "word":
            alphabet = sorted({ch for s, e in word_spans(text) for ch in text[s:e]})
            if not alphabet:
                raise ValueError("The corpus has no words (only whitespace): nothing to learn.")
            return BPETokenizer(variant="word", base=alphabet + [self.end_of_word],
                                end_of_word=self.end_of_word)
        return BPETokenizer(variant="char", base=sorted(set(text)))

    def _chunks(self, text: str) -> list[tuple[list[int], int]]:
        """Unique chunks in first-appearance order with their frequencies (weights)."""
        if self.variant == "char":
            return [(self.base.base_ids(text), 1)]
        if self.variant == "word":
            words = Counter(text[s:e] for s, e in word_spans(text))
            marker = self.base.base_size - 1
            return [(self.base.base_ids(w) + [marker], f) for w, f in words.items()]
        pieces = Counter(text[s:e] for s, e, special in byte_chunks(text, self.pattern, self.special_tokens)
                         if special is None)
        return [(list(p.encode("utf-8")), f) for p, f in pieces.items()]

    # -- training ------------------------------------------------------------------------------
    def run(self, num_merges: int, progress: Progress | None = None) -> Iterator[MergeStep]:
        """Do up to ``num_merges`` more merges, yielding each; stops early when no pair is left."""
        if num_merges < 0:
            raise ValueError(f"The number of merges must be 0 or more, not {num_merges}.")
        last_report = 0.0
        for done in range(num_merges):
            if len(self._counts) == 0:
                self.exhausted = True
                break
            step = self._merge_once()
            self.steps.append(step)
            if progress is not None and (time.monotonic() - last_report > 0.05 or done + 1 == num_merges):
                progress(done + 1, num_merges)
                last_report = time.monotonic()
            yield step

    def _merge_once(self) -> MergeStep:
        new_id = self.base.base_size + len(self.steps)
        heap_c, heap_k, size = self._heap
        head, slot_len, pool_pos, pool_next, used = self._lists
        keys, counts, _first, size = kernels.rank_pairs(self._counts, heap_c, heap_k, size, self._seq,
                                                         self._nxt, self._slots, head, pool_pos,
                                                         pool_next, self.top_k)
        left, right = int(keys[0] >> 32), int(keys[0] & 0xFFFFFFFF)
        count = int(counts[0])
        self._heap = heap_c, heap_k, size
        self.ensure_room(int(kernels.listed_positions(self._slots, slot_len, keys[0])))
        heap_c, heap_k, size = self._heap
        head, slot_len, pool_pos, pool_next, used = self._lists
        removed, size, used = kernels.merge_pair(
            self._seq, self._nxt, self._prv, self._weights, self._counts, heap_c, heap_k, size,
            self._slots, head, slot_len, pool_pos, pool_next, used, left, right, new_id)
        self._heap = heap_c, heap_k, size
        self._lists = head, slot_len, pool_pos, pool_next, used
        self.length -= int(removed)
        competitors = tuple((int(k >> 32), int(k & 0xFFFFFFFF), int(c))
                            for k, c in zip(keys[: self.top_k], counts[: self.top_k]))
        return MergeStep(len(self.steps), left, right, new_id, count, self.length, competitors)

    def ensure_room(self, listed: int) -> None:
        """Grow the heap and position lists so a merge of a pair listed at ``listed`` positions
        (at least its occurrences) fits: each occurrence makes at most 2 new pairs and pushes
        at most 2 heap entries (5 is kept as a margin)."""
        heap_c, heap_k, size = self._heap
        if size + 5 * listed + 8 > len(heap_c):
            self._heap = kernels.heap_from_counts(self._counts, 2 * len(self._counts) + 5 * listed + 1024)
        head, slot_len, pool_pos, pool_next, used = self._lists
        if used + 2 * listed > len(pool_pos):
            grow = max(len(pool_pos) // 2, 2 * listed + 1024)
            pool_pos = np.concatenate([pool_pos, np.empty(grow, dtype=np.int64)])
            pool_next = np.concatenate([pool_next, np.empty(grow, dtype=np.int64)])
        if len(self._slots) + 2 * listed > len(head):
            grow = max(len(head) // 2, 2 * listed + 1024)
            head = np.concatenate([head, np.full(grow, -1, dtype=np.int64)])
            slot_len = np.concatenate([slot_len, np.zeros(grow, dtype=np.int64)])
        self._lists = head, slot_len, pool_pos, pool_next, used

    def tokenizer(self) -> BPETokenizer:
        """The tokenizer after every merge done so far (its ``trace`` holds the steps)."""
        tok = self.base.with_merges([(s.left, s.right, s.new_id) for s in self.steps])
        tok.trace = tuple(self.steps)
        tok.initial_length = self.initial_length
        tok.exhausted = self.exhausted
        return tok

    def pair_text(self, step: MergeStep) -> tuple[str, str]:
        tok = self.tokenizer()
        return tok.token_str(step.left), tok.token_str(step.right)


def _flatten(chunks: list[tuple[list[int], int]]) -> tuple[np.ndarray, np.ndarray]:
    """One int32 array with -1 between chunks, and each position's chunk weight."""
    total = sum(len(c) + 1 for c, _ in chunks)
    seq = np.full(total, kernels.SEPARATOR, dtype=np.int32)
    weights = np.zeros(total, dtype=np.int64)
    pos = 0
    for symbols, weight in chunks:
        seq[pos:pos + len(symbols)] = symbols
        weights[pos:pos + len(symbols)] = weight
        pos += len(symbols) + 1
    return seq, weights
