"""core.bpe.explain: occurrence spans against a brute-force textbook replay, trees, curves, wording."""

import pytest

from core import BPETokenizer
from core.bpe.display import split_characters, visible
from core.bpe.explain import (
    coinciding_curves,
    compression_curve,
    explain_step,
    merge_dag,
    merge_tree,
    occurrences,
    quoted,
    segment,
    text_window,
    tree_lines,
)

SENNRICH = "low low low low low lower newer newer newer newer wider"
TEXTS = [
    SENNRICH,
    "the cat sat on the mat the cat ran",
    "aaabdaaabac",
    "aaaa aaa aa",
    "low lower newest widest",
]


def brute_force(tok: BPETokenizer, text: str, k: int):
    """Replay merges 0..k-1 on the text's base symbols (with character spans) the textbook way,
    then list where merge k fires, left to right, non-overlapping."""
    if tok.variant == "char":
        chunks = [[(tok.base_ids(ch)[0], i, i + 1) for i, ch in enumerate(text)]]
    else:
        marker = tok.base_size - 1
        chunks, pos = [], 0
        for word in text.split():
            start = text.index(word, pos)
            pos = start + len(word)
            chunks.append([(tok.base_ids(ch)[0], start + i, start + i + 1) for i, ch in enumerate(word)]
                          + [(marker, pos, pos)])
    triples = tok.merge_triples

    def merge(symbols, a, b, new):
        out, i, hits = [], 0, []
        while i < len(symbols):
            if i + 1 < len(symbols) and symbols[i][0] == a and symbols[i + 1][0] == b:
                out.append((new, symbols[i][1], symbols[i + 1][2]))
                hits.append((symbols[i][1], symbols[i + 1][2]))
                i += 2
            else:
                out.append(symbols[i])
                i += 1
        return out, hits

    for a, b, new in triples[:k]:
        chunks = [merge(c, a, b, new)[0] for c in chunks]
    a, b, new = triples[k]
    return [span for c in chunks for span in merge(c, a, b, new)[1]]


@pytest.mark.parametrize("variant", ["char", "word"])
@pytest.mark.parametrize("text", TEXTS)
def test_occurrences_match_textbook_replay(text, variant):
    tok = BPETokenizer.from_text(text, 12, variant=variant)
    for k in range(len(tok.merges)):
        assert occurrences(tok, text, k) == brute_force(tok, text, k), (text, variant, k)


@pytest.mark.parametrize("variant", ["char", "word"])
def test_occurrence_count_equals_step_count_on_the_training_text(variant):
    tok = BPETokenizer.from_text(SENNRICH, 10, variant=variant)
    for k, step in enumerate(tok.trace):
        # non-overlapping occurrences can be fewer than the (overlapping) pair count, never more
        assert len(occurrences(tok, SENNRICH, k)) <= step.count


def test_overlapping_pair_merges_once_per_two_symbols():
    tok = BPETokenizer.from_text("aaa", 1, variant="char")
    assert tok.merges == [("a", "a")]
    assert occurrences(tok, "aaa", 0) == [(0, 2)]
    assert occurrences(tok, "aaaa", 0) == [(0, 2), (2, 4)]


def test_segment_is_the_truncated_tokenizer():
    tok = BPETokenizer.from_text(SENNRICH, 10, variant="word")
    assert [t.id for t in segment(tok, "lower", 0)] == tok.truncated(0).encode("lower")
    assert [t.id for t in segment(tok, "lower", 10)] == tok.encode("lower")


def test_byte_occurrences_can_split_a_character():
    text = "héllo héllo"
    tok = BPETokenizer.from_text(text, 3, variant="byte")
    for k in range(3):
        for s, e in occurrences(tok, text, k):
            assert 0 <= s < e <= len(text)


def test_step_out_of_range_is_a_clear_error():
    tok = BPETokenizer.from_text("abab", 1)
    with pytest.raises(ValueError, match="between 0 and 0"):
        occurrences(tok, "abab", 1)


def test_merge_tree_goes_down_to_characters():
    tok = BPETokenizer.from_text(SENNRICH, 10, variant="word")
    low = tok.stoi["low"]
    tree = merge_tree(tok, low)
    assert tree.text == "low"
    assert [c.text for c in tree.children] == ["lo", "w"]
    assert [c.text for c in tree.children[0].children] == ["l", "o"]
    assert tree_lines(tree)[0] == "'low'  (id %d)" % low
    assert merge_tree(tok, 0).children == ()


def test_compression_curve_starts_at_initial_length():
    tok = BPETokenizer.from_text(SENNRICH, 10, variant="char")
    curve = compression_curve(tok, len(SENNRICH))
    assert curve[0].tokens == len(SENNRICH) and curve[0].merges == 0
    assert [p.tokens for p in curve[1:]] == [s.length_after for s in tok.trace]
    assert curve[-1].vocab_size == tok.vocab_size
    assert curve[-1].chars_per_token == pytest.approx(len(SENNRICH) / tok.trace[-1].length_after)


def test_curves_that_coincide_are_named_together():
    """Two tokenizers trained alike draw one line: named as a group; a different one is not."""
    char = BPETokenizer.from_text(SENNRICH, 10, variant="char")
    same = BPETokenizer.from_text(SENNRICH, 10, variant="char")
    word = BPETokenizer.from_text(SENNRICH, 10, variant="word")
    together = coinciding_curves({"char": char, "again": same, "word": word}, len(SENNRICH))
    assert together == [["char", "again"]]
    assert coinciding_curves({"char": char, "word": word}, len(SENNRICH)) == []


def test_explanation_names_pair_count_and_new_token():
    tok = BPETokenizer.from_text("aaabdaaabac", 3, variant="char")
    line = explain_step(tok, 0)
    assert line == ("Merge 1: 'a' + 'a' occurs 4 times — more than any other pair — so it becomes "
                    "token 4, 'aa'.")


def test_explanation_mentions_ties():
    tok = BPETokenizer.from_text(SENNRICH, 3, variant="word")
    assert tok.trace[0].ties == 3
    line = explain_step(tok, 0)
    assert "3 other pairs have the same count" in line and "occurs first" in line


def test_explanation_shows_partial_bytes_as_hex():
    tok = BPETokenizer.from_text("héllo héllo", 1, variant="byte")
    assert "\\xc3" in explain_step(tok, 0) or "\\xa9" in explain_step(tok, 0)
    assert quoted("a\nb") == "'a↵b'"
    assert quoted("👩\u200d💻") == "'👩\u200d💻'"  # a joiner inside an emoji sequence draws as one picture
    assert quoted("\u200d") == "'⟨U+200D⟩'"


def test_a_token_that_starts_with_a_combining_mark_is_named_on_a_dotted_circle():
    """Thai's vowel and tone marks are tokens of their own under character BPE: quoted alone, a
    browser drew them as a box (no font for a mark after a quote); on ◌ they draw as a mark."""
    tok = BPETokenizer.from_text("น้ำ น้ำ ที่ ที่", 1, variant="char")
    assert {quoted(tok.token_str(i)) for i in range(tok.vocab_size)} >= {"'◌้'", "'◌่'", "'◌ี'"}
    assert quoted("ก\u0e31") == "'ก\u0e31'" and quoted("e\u0301") == "'e\u0301'"  # marks on letters


def test_text_window_cuts_at_whitespace():
    text = " ".join(f"word{i}" for i in range(1000))
    window = text_window(text, 0, 100)
    assert len(window) <= 100 and text.startswith(window) and not window.endswith("wor")
    middle = text_window(text, 503, 100)
    assert middle.startswith("word") and middle in text
    assert text_window("short", 0, 100) == "short"


def test_whitespace_is_visible_in_one_convention():
    assert visible(" \n\t\r\x00\u00a0\u200b") == "␣↵⇥␍\\x00⍽⟨U+200B⟩"
    tok = BPETokenizer.from_text("a  b  c  d", 1, variant="char")
    assert explain_step(tok, 0).startswith("Merge 1: '␣' + '␣' occurs")


def test_control_bytes_are_shown_as_escapes_as_partial_bytes_are():
    """Bytes 0-31 and 127 are byte tokens of their own: each is drawn as its ``\\xNN`` escape (a
    whitespace byte as its symbol), never as a control picture that most fonts draw as nothing."""
    tok = BPETokenizer.from_text("abc", 0, variant="byte")
    shown = {i: visible(tok.token_str(i)) for i in [*range(32), 127]}
    symbols = {9: "⇥", 10: "↵", 13: "␍"}
    assert shown == {i: symbols.get(i, f"\\x{i:02x}") for i in shown}
    assert visible(tok.token_str(0x80)) == "\\x80"  # a byte that is not a whole character: token_str's
    assert quoted("a\x07") == "'a\\x07'"


def test_merge_dag_draws_a_shared_sub_token_once():
    tok = BPETokenizer.from_text("aaaa aaaa", 2, variant="char")
    nodes = merge_dag(tok, tok.stoi["aaaa"])
    assert [(n.text, n.step, n.height) for n in nodes] == [("aaaa", 2, 2), ("aa", 1, 1), ("a", None, 0)]
    assert nodes[0].parts == (tok.stoi["aa"], tok.stoi["aa"])
    assert nodes[0].count == tok.trace[1].count and nodes[1].count == tok.trace[0].count
    assert [n.id for n in merge_dag(tok, 0)] == [0]


@pytest.mark.parametrize("text", ["Μια γάτα", "नमस्ते", "🙂👍🏿 中文", "plain ascii", ""])
def test_byte_tokens_group_into_whole_characters(text):
    tok = BPETokenizer.from_text(text * 3 or "x", 0, variant="byte")
    tokens = tok.encode_tokens(text)
    pieces = [tok.token_bytes(t.id) for t in tokens]
    runs = split_characters(pieces)
    assert [i for run in runs for i in range(*run)] == list(range(len(tokens)))
    spelled = [b"".join(pieces[a:b]).decode("utf-8") for a, b in runs]
    assert "".join(spelled) == text
    assert spelled == [text[tokens[a].start:tokens[b - 1].end] for a, b in runs]
