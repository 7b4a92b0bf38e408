"""Texts where nearly every pair ties: the trainer against the textbook, step by step.

Random Unicode is what makes ties everywhere: with thousands of distinct characters almost every
pair occurs once or twice, so the tie-break (the pair first in the current sequence wins) decides
nearly every merge, and the ranking shown beside a step (the competitors) is ordered by it too.
"""

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import BPETrainer
from core.bpe import _educational as oracle
from core.bpe.pretokenize import byte_chunks, resolve_pattern

TOP_K = 5


def random_unicode(length: int, distinct: int, seed: int) -> str:
    """``length`` characters, exactly ``distinct`` of them different: each once, in random order,
    then random repeats (CJK ideographs, plus a few spaces so the word variant has words)."""
    rng = random.Random(seed)
    alphabet = [chr(0x4E00 + i) for i in range(distinct - 1)] + [" "]
    chars = alphabet + [rng.choice(alphabet) for _ in range(length - distinct)]
    rng.shuffle(chars)
    return "".join(chars)


def textbook_steps(chunks, num_merges: int, first_new_id: int):
    """The textbook's merges with its ranking: ``(left, right, new, count, top pairs)``.  A fresh
    Counter per step, ranked by a stable sort on the count, so ties stay in order of first
    occurrence (what ``max(counter, key=counter.get)`` picks first)."""
    steps = []
    for step in range(num_merges):
        pairs = Counter()
        for symbols, freq in chunks:
            for a, b in zip(symbols, symbols[1:]):
                pairs[(a, b)] += freq
        if not pairs:
            break
        ranked = sorted(pairs.items(), key=lambda item: -item[1])[:TOP_K]
        (a, b), count = ranked[0]
        assert (a, b) == max(pairs, key=pairs.get)
        new = first_new_id + step
        steps.append((a, b, new, count, tuple((x, y, c) for (x, y), c in ranked)))
        chunks = [(oracle.merge(symbols, (a, b), new), freq) for symbols, freq in chunks]
    return steps


def trained_steps(text: str, variant: str, num_merges: int, pattern=None):
    trainer = BPETrainer(text, variant=variant, pattern=pattern, top_k=TOP_K)
    return [(s.left, s.right, s.new_id, s.count, s.competitors) for s in trainer.run(num_merges)]


def book_steps(text: str, variant: str, num_merges: int, pattern=None):
    if variant == "char":
        alphabet = sorted(set(text))
        return textbook_steps(oracle.char_chunks(text, alphabet), num_merges, len(alphabet))
    if variant == "word":
        alphabet = sorted(set("".join(text.split()))) + ["</w>"]
        return textbook_steps(oracle.word_chunks(text, alphabet), num_merges, len(alphabet))
    pieces = [text[s:e] for s, e, _ in byte_chunks(text, resolve_pattern(pattern))]
    return textbook_steps(oracle.byte_chunks(pieces), num_merges, 256)


TEXTS = {
    # 20 k distinct characters in 24 k: pairs occur once, a few twice
    "huge alphabet": random_unicode(24_000, 20_000, seed=1),
    # 3 k distinct in 8 k: counts of 1 to 3, thousands of pairs tied at each
    "tie-heavy": random_unicode(8_000, 3_000, seed=2),
    # one permutation three times: every pair inside it occurs exactly three times, and each merge
    # takes the first occurrence of its neighbours' pairs, so first positions keep moving
    "every pair thrice": random_unicode(4_000, 4_000, seed=3) * 3,
}


@pytest.mark.parametrize("name", list(TEXTS))
def test_char_merges_and_rankings_equal_the_textbook(name):
    text = TEXTS[name]
    assert trained_steps(text, "char", 60) == book_steps(text, "char", 60)


@pytest.mark.parametrize("variant", ["word", "byte"])
@pytest.mark.parametrize("name", list(TEXTS))
def test_word_and_byte_on_the_same_texts_equal_the_textbook(name, variant):
    text = TEXTS[name]
    assert trained_steps(text, variant, 40) == book_steps(text, variant, 40)


def test_the_huge_alphabet_really_ties_everywhere():
    """The texts above are what they claim: most merges are decided by the tie-break."""
    steps = list(BPETrainer(TEXTS["huge alphabet"], top_k=TOP_K).run(60))
    assert len(set(TEXTS["huge alphabet"])) == 20_000
    assert sum(s.ties >= TOP_K - 1 for s in steps) >= 50


def test_the_byte_variant_with_a_split_pattern_on_random_unicode_equals_the_textbook():
    text = TEXTS["tie-heavy"]
    assert trained_steps(text, "byte", 40, "gpt2") == book_steps(text, "byte", 40, "gpt2")


MANY_CHARACTERS = st.lists(st.integers(0x4E00, 0x4E00 + 300), min_size=1, max_size=200).map(
    lambda points: "".join(map(chr, points)))


@settings(max_examples=100, deadline=None)
@given(text=MANY_CHARACTERS, num_merges=st.integers(0, 40))
def test_char_on_random_text_over_a_large_alphabet_equals_the_textbook(text, num_merges):
    assert trained_steps(text, "char", num_merges) == book_steps(text, "char", num_merges)
