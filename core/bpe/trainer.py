"""BPE training as a generator of frozen step records: this is where a merge is counted and chosen.

    >>> trainer = BPETrainer("low low low low low lower newer newer newer newer wider", variant="word")
    >>> [trainer.pair_text(s) for s in trainer.run(3)]
    [('l', 'o'), ('lo', 'w'), ('e', 'r')]

Tie-break, for every variant: among equally frequent pairs the one that occurs first in the
current sequence wins (what ``max(counter, key=counter.get)`` does on a freshly counted Counter);
the competitors a step lists are ranked the same way.  Counts include overlapping occurrences
("aaa" holds two "a a"), as the textbook counts them.

Time: laying out and counting the corpus is linear in its length, and a merge costs what it
changes (the merged pair's occurrences and their neighbours, in ``core.bpe.kernels.training``),
whatever the text: an alphabet of 171 k characters with every pair tied at a count of 1 trains as
fast as English.

Memory stays O(corpus + pairs + merges * top_k): a step records only its pair, counts and
competitors; where a pair sits in the text is recomputed on demand (``core.bpe.explain``).  Every
position costs about 8 bytes (an int32 symbol and its entry in its token's position list),
every distinct pair about 100, plus temporaries while the corpus is laid out;
:func:`training_memory_estimate` gives an upper bound of the peak, and
``BPETrainer(..., max_memory=...)`` refuses a corpus above it before allocating anything.

Leaves out: the tokenizer class.  A trainer gives plain fields (:meth:`BPETrainer.fields`, the
steps); ``BPETokenizer.from_trainer(trainer)`` builds the tokenizer from them.
"""

from __future__ import annotations

import collections
import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from .kernels import training as kernels
from .alphabet import characters
from .counting import checked_chunk_counts
from .checks import MAX_ID, ArgumentError, EmptyCorpusError, check_count, check_text
from .pretokenize import resolve_pattern
from .variants import variant_rules
from .vocab import token_bytes_of

Progress = Callable[[int, int], None]
# Characters (or chunks) converted at a time: a block's temporaries stay in glibc's heap once
# freed, so a million at a time raised the peak (why: docs/benchmarks.md, "Peak memory").
_BLOCK = 1 << 16

# Peak memory of training, in bytes per unit of corpus (characters for char/word, UTF-8 bytes for
# byte), above the worst case measured per variant (why: docs/benchmarks.md, "Peak memory"): word's
# is one giant word, its frequencies laid out per position; byte's random CJK or distinct random
# words, whose chunks barely repeat.  Extending a real tokenizer holds each distinct chunk's
# encoding as a tuple first.  Plus the pair table, heap and small arrays (tests/bpe/test_hostile_inputs.py).
_BYTES_PER_UNIT = {"char": 16, "word": 40, "byte": 40}
_BYTES_PER_EXTENDED_BYTE = 80
_FIXED_BYTES = 64 * 2**20
# And per distinct pair: up to four table slots of 20 bytes (kept under half full, and the old table
# still there while it doubles) and a heap entry.  English has a few thousand pairs; random Unicode
# about one per character (why: docs/benchmarks.md, "Peak memory").  At most a pair per unit, and at
# most the alphabet's size squared.
_BYTES_PER_PAIR = 160


class CorpusTooLargeError(ValueError):
    """Training on this corpus would need more memory than allowed (the message says both)."""


def training_memory_estimate(text: str, variant: str = "char", *, extending: bool = False) -> int:
    """An upper bound, in bytes, of the memory ``BPETrainer`` takes on ``text`` beyond the text
    itself (for ``byte``, the UTF-8 length is what counts, measured block by block); ``extending``:
    of extending a byte-level tokenizer on it instead (``core.bpe.extend``)."""
    check_text(text, "The corpus")
    rules = variant_rules("byte" if extending else variant)
    units = rules.units(text)
    symbols = len(characters(text)) + rules.marker if rules.has_alphabet else 256
    per_unit = _BYTES_PER_EXTENDED_BYTE if extending else _BYTES_PER_UNIT[rules.name]
    return _FIXED_BYTES + per_unit * units + _BYTES_PER_PAIR * min(units, symbols**2)


def refuse_above(text: str, variant: str, max_memory: int, advice: str,
                 extending: bool = False) -> None:
    """Raise :class:`CorpusTooLargeError` when training on ``text`` may take over ``max_memory``."""
    need = training_memory_estimate(text, variant, extending=extending)
    if need > max_memory:
        raise CorpusTooLargeError(f"Training {variant} BPE on {_size(len(text))} needs about "
                                  f"{_size(need)}; this server allows {_size(max_memory)}: {advice}.")


def _size(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


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
    """Holds a corpus prepared for one variant and merges it step by step (the compiled kernels
    keep the pair counts, their ranking and where each pair occurs, so no step recounts).

    ``run(n)`` is a generator, so a caller can stop, show progress, or animate between steps;
    ``fields()`` and ``steps`` describe the tokenizer after the merges done so far
    (``BPETokenizer.from_trainer`` builds it).
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
        regex_timeout: float | None = None,
        max_memory: int | None = None,
    ) -> None:
        check_text(text, "The corpus")
        if not text:
            raise EmptyCorpusError()
        self._configure(variant, end_of_word, pattern, special_tokens, top_k, regex_timeout, max_memory)
        if max_memory is not None:
            refuse_above(text, self.variant, max_memory, "use a shorter corpus")
        self._base_of(text)
        self._seq, self._weights = self._sequence(text)
        self._start()

    @classmethod
    def from_chunk_counts(cls, counts, *, pattern: str | None, special_tokens: Sequence[str] = (),
                          top_k: int = 10) -> BPETrainer:
        """A byte-level trainer on ``{chunk: count}`` in first-appearance order, as
        ``core.bpe.counting.count_chunks`` gives for a file or an iterator of texts: the same
        merges as ``BPETrainer(text, variant="byte", pattern=..., special_tokens=...)`` on the text
        the counts came from (pass the same ``pattern`` and ``special_tokens``)."""
        trainer = cls.__new__(cls)
        trainer._configure("byte", "</w>", pattern, special_tokens, top_k, None, None)
        trainer._base_of("")
        trainer._seq, trainer._weights = trainer._flatten(checked_chunk_counts(counts))
        trainer._start()
        return trainer

    @classmethod
    def from_sequences(cls, sequences, first_new_id: int, *, top_k: int = 10,
                       extends=None) -> BPETrainer:
        """A trainer that continues a tokenizer, ``extends`` (``core.bpe.extend``): ``[(ids, count),
        ...]`` are its encodings of a corpus's unique chunks; merges make ids from ``first_new_id``
        on, so ``steps`` are all there is to read (``fields``/``pair_text`` know no base), and
        ``BPETokenizer.from_trainer`` puts them after ``extends``' own merges."""
        trainer = cls.__new__(cls)
        trainer._configure("byte", "</w>", None, (), top_k, None, None)
        trainer.extends = extends
        trainer.alphabet = None
        trainer.byte_ids = None
        trainer.base_size = check_count(first_new_id, "first_new_id", 1, MAX_ID - 1)
        lengths = np.array([len(ids) + 1 for ids, _ in sequences], dtype=np.int64)
        flat = [(*ids, kernels.SEPARATOR) for ids, _ in sequences]
        trainer._seq = np.fromiter(itertools.chain.from_iterable(flat), np.int32, int(lengths.sum()))
        counts = [check_count(n, "A chunk's count", 1, 2**31 - 1) for _, n in sequences]
        trainer._weights = np.repeat(np.array(counts, dtype=np.int32), lengths)
        trainer._start()
        return trainer

    def _configure(self, variant, end_of_word, pattern, special_tokens, top_k, regex_timeout,
                   max_memory) -> None:
        self.rules = variant_rules(variant)
        self.variant = self.rules.name
        self._check_options(end_of_word, special_tokens, max_memory)
        self.end_of_word = self.rules.end_of_word(end_of_word)
        self.pattern = resolve_pattern(self.rules.split_pattern(pattern))
        self.special_tokens = self.rules.special_tokens(special_tokens)
        self.top_k = check_count(top_k, "top_k", 1, 1000)
        self.regex_timeout = regex_timeout
        self.extends = None  # the tokenizer whose encodings a trainer ``from_sequences`` merges

    def _start(self) -> None:
        """Count the pairs of the prepared sequence, list where each occurs, and rank them."""
        self._table = kernels.count_pairs(self._seq, self._weights)
        self._heap = kernels.build_heap(*self._table[:3])
        self._positions = kernels.list_positions(self._seq, self.base_size + 1024)
        self.initial_length = self._symbols()
        self.length = self.initial_length
        self.steps: list[MergeStep] = []
        self.exhausted = False
        self._pending: collections.deque[MergeStep] = collections.deque()  # merged, not yet yielded
        self._merged_length = self.initial_length
        self._batch = 1  # merges per compiled call: doubles while a call stays short

    # -- preparation ---------------------------------------------------------------------------
    def _check_options(self, end_of_word, special_tokens, max_memory) -> None:
        self.rules.check_end_of_word(end_of_word)
        if isinstance(special_tokens, str) or not all(isinstance(t, str) and t for t in special_tokens):
            raise ArgumentError("special_tokens must be a list of non-empty strings, "
                                "e.g. ['<|endoftext|>'].")
        if max_memory is not None:
            check_count(max_memory, "max_memory", 1)

    def _base_of(self, text: str) -> None:
        """The base symbols: the corpus's alphabet (char/word) or the 256 bytes in order."""
        symbols = self.rules.corpus_alphabet(text, self.end_of_word)
        self.alphabet, self.byte_ids = self.rules.base(symbols, None)
        self.base_size = 256 if self.alphabet is None else len(self.alphabet)

    def _sequence(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """The int32 symbols of every unique chunk, each followed by a -1 separator, and the
        chunk's frequency at each position (a single 1 for char: one chunk, counted once)."""
        chunks = self.rules.corpus_chunks(text, self.pattern, self.special_tokens, self.regex_timeout)
        if chunks is not None:
            return self._flatten(chunks)
        seq = np.full(len(text) + 1, kernels.SEPARATOR, dtype=np.int32)
        for i in range(0, len(text), _BLOCK):
            block = self.alphabet.ids(text[i:i + _BLOCK], "error", i)
            seq[i:i + len(block)] = block
        return seq, np.ones(1, dtype=np.int32)

    def _flatten(self, chunks: list[tuple[str, int]]) -> tuple[np.ndarray, np.ndarray]:
        """Lay out ``(chunk, frequency)`` pairs in first-appearance order, a block of chunks at a
        time, so no per-symbol Python list is ever built."""
        extra = self.rules.marker + 1  # the end-of-word marker, and the separator
        lengths = self.rules.chunk_lengths(chunks)
        seq = np.full(int(lengths.sum()) + extra * len(chunks), kernels.SEPARATOR, dtype=np.int32)
        weights = np.repeat(np.fromiter((f for _, f in chunks), dtype=np.int32, count=len(chunks)),
                            lengths + extra)
        pos = 0
        for b in range(0, len(chunks), _BLOCK):
            block = [c for c, _ in chunks[b:b + _BLOCK]]
            flat = self.rules.chunk_ids(block, self.alphabet, self.byte_ids)
            pos = self._place(seq, pos, flat, lengths[b:b + _BLOCK])
        return seq, weights

    def _place(self, seq: np.ndarray, pos: int, flat: np.ndarray, lengths: np.ndarray) -> int:
        """Write chunks (``flat`` cut by ``lengths``) from ``seq[pos]``, each followed by the
        end-of-word marker (word) and a separator; returns the position after the last."""
        extra = self.rules.marker + 1
        starts = pos + np.concatenate(([0], np.cumsum(lengths + extra)[:-1]))
        offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        seq[np.arange(len(flat)) + np.repeat(starts - offsets, lengths)] = flat
        if self.rules.marker:  # the marker is the alphabet's last symbol
            seq[starts + lengths] = self.base_size - 1
        return pos + int(lengths.sum()) + extra * len(lengths)

    def _symbols(self) -> int:
        """Tokens in the corpus before any merge: every chunk's symbols times its frequency (a
        block at a time: a mask of the whole sequence would be a large corpus's peak)."""
        if len(self._weights) == 1:  # char: the text's symbols, then one separator
            return len(self._seq) - 1
        total = 0
        for i in range(0, len(self._seq), _BLOCK):
            symbols = self._seq[i:i + _BLOCK] >= 0  # not a separator
            total += int(self._weights[i:i + _BLOCK][symbols].sum(dtype=np.int64))
        return total

    # -- training ------------------------------------------------------------------------------
    def run(self, num_merges: int, progress: Progress | None = None) -> Iterator[MergeStep]:
        """Do up to ``num_merges`` more merges, yielding each; stops early when no pair is left.

        The compiled loop merges a batch at a time, never more than this call asked for; a
        caller that stops early finds the rest of the batch yielded by its next ``run``."""
        num_merges = check_count(num_merges, "The number of merges")
        last_report = 0.0
        for done in range(num_merges):
            if not self._pending and not self._merge_batch(num_merges - done):
                self.exhausted = True
                break
            step = self._pending.popleft()
            self.steps.append(step)
            self.length = step.length_after
            last_one = done + 1 == num_merges
            if progress is not None and (last_one or time.monotonic() - last_report > 0.05):
                progress(done + 1, num_merges)
                last_report = time.monotonic()
            yield step

    def _merge_batch(self, limit: int) -> int:
        """Merge up to ``limit`` pairs (fewer when a batch is quick to come) into ``_pending``;
        returns how many."""
        count = min(limit, self._batch)
        first_new = self.base_size + len(self.steps) + len(self._pending)
        pool, lo, hi = self._positions
        if first_new + count > len(lo):  # room for the new tokens' lists
            grow = np.zeros(max(len(lo), count), dtype=np.int64)
            self._positions = pool, np.concatenate([lo, grow]), np.concatenate([hi, grow])
        out = np.zeros((count, 5), dtype=np.int64)
        top = np.zeros((count, 2, self.top_k), dtype=np.int64)
        started = time.monotonic()
        done, self._table, self._heap = kernels.train_steps(
            self._seq, self._weights, self._positions, self._table, self._heap, first_new, count,
            self.top_k, out, top)
        if time.monotonic() - started < 0.02:  # a quick call: ask for twice as many next time
            self._batch = min(256, 2 * self._batch)
        else:
            self._batch = max(1, self._batch // 2)
        for i in range(done):
            left, right, pair_count, removed, k = (int(v) for v in out[i])
            self._merged_length -= removed
            competitors = tuple((int(key >> 32), int(key & 0xFFFFFFFF), int(c))
                                for key, c in zip(top[i, 0, :k], top[i, 1, :k]))
            step = MergeStep(
                index=len(self.steps) + len(self._pending),
                left=left,
                right=right,
                new_id=first_new + i,
                count=pair_count,
                length_after=self._merged_length,
                competitors=competitors,
            )
            self._pending.append(step)
        return done

    def fields(self) -> dict:
        """The tokenizer's constructor arguments after every merge done so far."""
        return dict(
            variant=self.variant,
            base=None if self.alphabet is None else self.alphabet.symbols,
            merges=[(s.left, s.right, s.new_id) for s in self.steps],
            end_of_word=self.end_of_word,
            pattern=self.pattern,
            special_tokens=list(self.special_tokens),
        )

    def pair_text(self, step: MergeStep) -> tuple[str, str]:
        """The two tokens a step merged, as text (bytes that are not whole characters as ``\\xNN``)."""
        spelled = token_bytes_of(self.rules.base_bytes(self.alphabet, self.byte_ids),
                                 [(s.left, s.right, s.new_id) for s in self.steps[:step.index]])
        return tuple(spelled[i].decode("utf-8", errors="backslashreplace") for i in step.pair)
