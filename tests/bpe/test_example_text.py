"""core.bpe.example_text: Char vs BPE's first test text, cut at a word's end, its new word new."""

import pytest

from core.bpe.example_text import example_text, opening_words

FRENCH = ("Le petit prince est arrivé sur la Terre un matin de printemps. Il a rencontré un renard qui "
          "lui a appris ce que veut dire apprivoiser. Puis ils ont pris le déjeuner ensemble.")


@pytest.mark.parametrize("limit", range(5, len(FRENCH), 7))
def test_the_opening_ends_at_the_end_of_a_word_of_the_corpus(limit):
    opening = opening_words(FRENCH, limit)
    assert len(opening) <= limit and FRENCH.startswith(opening)
    assert FRENCH[len(opening):][:1] in ("", " "), f"cut inside a word: {opening!r}"


def test_a_cut_at_the_end_of_a_word_keeps_it_and_a_text_without_spaces_is_cut_at_the_limit():
    assert opening_words("low lower newest", 9) == "low lower"
    assert opening_words("low\nlower newest", 12) == "low\nlower"
    assert opening_words("漢字仮名交じり文", 4) == "漢字仮名"


def test_the_new_word_is_not_in_the_corpus_and_is_made_of_two_of_its_words_halves():
    made = example_text(FRENCH)
    a, b = made.halves
    assert made.new_word not in FRENCH and a in FRENCH and b in FRENCH
    assert made.new_word == a[: len(a) // 2 + 1] + b[len(b) // 2:]
    assert made.text == f"{made.opening} {made.new_word}"


def test_no_new_word_where_none_can_be_made():
    assert example_text("a b").new_word is None
    assert example_text("a b").text == "a b"


def test_a_run_of_letters_of_a_script_without_spaces_is_no_word_to_cut_in_half():
    """Japanese and Thai put no space between words: there a run of letters is a sentence, and half
    of one joined to half of another is not "a word the corpus never contains"."""
    mixed = "日本語の文章はスペースなしで書かれます。 The quick brown fox jumps over. 東京都に住んでいます。"
    assert example_text(mixed).halves == ("brown", "jumps")
    assert example_text("日本語の文章は スペースなしで 書かれます。").new_word is None
    assert example_text("ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ แต่เว้นวรรคระหว่างประโยค").new_word is None


def test_the_two_halves_are_of_one_script():
    made = example_text("ελληνική γλώσσα и столица мира")  # Greek's longest word is longer than Russian's
    assert made.halves == ("ελληνική", "γλώσσα") and made.new_word == "ελληνσσα"
