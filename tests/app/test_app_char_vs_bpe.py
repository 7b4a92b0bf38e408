"""AppTest: the Char vs BPE page shows core's counts, unseen characters, GPT-2 and tokenizer files."""

import html
import json
import re
from pathlib import Path

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import open_page
from core import BPETokenizer, CharTokenizer
from core.bpe.explain import compression_curve
from core.corpus import shared_file

ROOT = Path(__file__).resolve().parents[2]
SENNRICH = (ROOT / "sample_corpora" / "sennrich.txt").read_text(encoding="utf-8")
FRENCH = ("Le petit prince est arrivé sur la Terre un matin de printemps. Il a rencontré un renard qui "
          "lui a appris ce que veut dire apprivoiser. « On ne voit bien qu'avec le cœur ; l'essentiel "
          "est invisible pour les yeux. » Puis ils ont pris le déjeuner ensemble près de la fontaine, "
          "à l'ombre des arbres, et le renard a parlé longtemps de ses amis.")  # a paste in one script


def page(test_text: str | None = None) -> AppTest:
    return open_page("char_vs_bpe", "w_test_text", test_text)


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.main.get("metric")}


def test_counts_equal_core():
    test = "low lower newer"
    at = page(test)
    tok = BPETokenizer.from_text(SENNRICH, 10, variant="char")
    char = CharTokenizer.from_text(SENNRICH)
    m = metrics(at)
    assert m["Char tokens (test text)"] == str(len(char.encode(test)))
    assert m["BPE tokens (test text, 10 merges)"] == str(len(tok.encode(test)))
    assert m["BPE: chars per token (corpus)"] == f"{len(SENNRICH) / tok.trace[-1].length_after:.2f}"
    table = at.dataframe[0].value  # a measure a row, a tokenizer a column
    assert list(table.loc["corpus tokens"]) == [f"{len(SENNRICH):,}", f"{tok.trace[-1].length_after:,}"]
    assert list(table.loc["vocabulary"]) == [str(char.vocab_size), str(tok.vocab_size)]


def test_unseen_characters_are_named():
    at = page("low zebra 👋")
    warning = " ".join(w.value for w in at.warning)
    for ch in "zb👋":
        assert f"U+{ord(ch):04X}" in warning
    assert "A byte-level tokenizer can encode any text" in warning


def test_a_text_of_many_unseen_characters_names_the_first_and_counts_the_rest():
    """Pasting thousands of new characters (a script the corpus lacks) gives a warning a person can
    read, not a wall of code points; the red pieces still show every one."""
    unseen = [chr(0x4E00 + n) for n in range(50)]  # CJK: none in the corpus
    at = page("".join(unseen))
    [warning] = [w.value for w in at.warning if "never contains" in w.value]
    assert [ch for ch in unseen if f"U+{ord(ch):04X}" in warning] == unseen[:20]
    assert "and 30 other characters" in warning
    [spans] = [h.proto.body for h in at.get("html") if "not in the alphabet" in h.proto.body]
    assert spans.count('title="not in the alphabet"') == 50


def test_a_full_box_draws_its_first_tokens_and_counts_them_all():
    """20,000 random characters are 70,000 tokens under GPT-2: the box draws the first
    ``DRAWN_TOKENS`` (to the end of a character), says how many it left out, and the count above it
    is the whole text's."""
    from test_page_thread import random_characters

    from ui.plumbing.render import DRAWN_TOKENS

    if shared_file("gpt2", "vocab.bpe") is None:
        pytest.skip("GPT-2's files are not in ../shared/gpt2")
    test = random_characters(20_000)
    at = page(test)
    total = len(BPETokenizer.from_pretrained("gpt2").encode(test, allowed_special="none"))
    assert metrics(at)["GPT-2 tokens (test text)"] == f"{total:,}"
    [panel] = [h.proto.body for h in at.get("html") if 'class="bpe-char"' in h.proto.body]
    drawn = panel.count("data-id=")
    assert DRAWN_TOKENS <= drawn <= DRAWN_TOKENS + 3
    assert f"… and {total - drawn:,} more tokens, not drawn here" in html.unescape(panel)


def test_unseen_words_decompose_with_tokenize():
    at = page("lowest newer")
    tok = BPETokenizer.from_text(SENNRICH, 10, variant="char")
    table = at.dataframe[1].value
    assert list(table["word"]) == ["lowest"]
    assert list(table["BPE tokens"]) == [" · ".join(tok.tokenize("lowest"))]


def test_an_unseen_word_is_listed_once_with_its_pieces_counted():
    """Each word is listed once, however often the text holds it, and its column counts its pieces
    (named "count", it read as the word's occurrences)."""
    at = page("lowest lowest lowest zzz")
    tok = BPETokenizer.from_text(SENNRICH, 10, variant="char")
    table = at.dataframe[1].value
    assert list(table.columns) == ["word", "BPE tokens", "pieces"]
    assert list(table["word"]) == ["lowest", "zzz"]
    assert list(table["pieces"]) == [len(tok.tokenize("lowest")), 3]


def test_html_in_text_is_escaped():
    evil = "<script>alert(1)</script> <img src=x onerror=alert(1)>"
    at = page(evil)
    bodies = " ".join(h.proto.body for h in at.get("html"))
    assert "<script>" not in bodies and "<img" not in bodies
    assert "&lt;" in bodies and "&gt;" in bodies
    shown = html.unescape(re.sub(r"<[^>]*>", "", bodies)).replace(" ", "")
    assert "script>alert(1)</script>" in shown and "onerror=alert(1)>" in shown


def test_compression_curves_one_per_variant():
    at = page()
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    text = json.dumps(spec)
    for variant in ("char", "word", "byte"):
        assert f'"{variant}"' in text


def test_compression_curves_are_core_s_and_the_dot_is_at_the_chosen_merges_on_every_run():
    """The chart's data, as the browser gets it: each variant's curve equals core's, the red dot
    sits on the chosen variant at its merges; the same on a rerun (the spec is shared, cached)."""
    at = page()
    curve = compression_curve(BPETokenizer.from_text(SENNRICH, 10, variant="char"), len(SENNRICH))
    for _ in range(2):
        chart = at.get("vega_lite_chart")[0].proto
        data = {d.name: pa.ipc.open_stream(d.data.data).read_all().to_pylist() for d in chart.datasets}
        char = [r for r in data["curves"] if r["variant"] == "char"]
        assert [(r["merges"], r["chars per token"]) for r in char] == [
            (p.merges, p.chars_per_token) for p in curve]
        assert {r["variant"] for r in data["curves"]} == {"char", "word", "byte"}
        assert data["chosen"] == [r for r in char if r["merges"] == 10]
        at.run()


def test_gpt2_column_when_files_are_there():
    at = page("Hello world")
    if shared_file("gpt2", "vocab.bpe") is None:
        assert any("upload both" in c.value for c in at.caption)
        return
    assert metrics(at)["GPT-2 tokens (test text)"] == "2"


def test_bad_tokenizer_upload_is_a_message():
    at = page()
    uploader = next(u for u in at.main.get("file_uploader") if u.proto.label.startswith("Load a tokenizer"))
    uploader.set_value(("bad.json", b'{"format": "nope"', "application/json")).run()
    assert not at.exception
    assert at.error and "json" in at.error[0].value.lower()


def test_good_tokenizer_upload_round_trips():
    tok = BPETokenizer.from_text(SENNRICH, 5, variant="word")
    at = page("lower")
    uploader = next(u for u in at.main.get("file_uploader") if u.proto.label.startswith("Load a tokenizer"))
    uploader.set_value(("mine.json", json.dumps(tok.to_dict()).encode(), "application/json")).run()
    assert not at.exception
    assert any("word tokenizer" in s.value and "5 merges" in s.value for s in at.success)
    assert metrics(at)["Its tokens (test text)"] == str(len(tok.tokenize("lower")))


def test_the_test_text_made_from_a_paste_says_how_it_was_made():
    """A pasted paragraph: the test text is its opening, cut at the end of a word, then a new word;
    the page says where both come from, and why the new word is listed as never seen."""
    from core.bpe.example_text import example_text

    at = open_page("char_vs_bpe", "corpus_paste", FRENCH)
    made = example_text(FRENCH)
    test = at.text_area(key="w_test_text").value
    assert test == made.text and FRENCH.startswith(made.opening)
    assert FRENCH[len(made.opening)] == " "  # the opening stops at the end of a word
    said = " ".join(c.value for c in at.caption)
    assert "Made from the corpus: the corpus's first words, cut at the end of a word" in said
    a, b = made.halves
    assert f"**{made.new_word}**: a word the corpus never contains" in said and a in said and b in said
    [unseen] = [t for t in at.dataframe if "word" in t.value.columns]
    assert list(unseen.value["word"]) == [made.new_word]
    assert any("the test text is not the corpus" in m.value for m in at.markdown)
    at.text_area(key="w_test_text").set_value("Le renard et le prince").run()
    assert not [c for c in at.caption if c.value.startswith("Made from the corpus")]


def test_a_paste_without_spaces_is_said_to_be_cut_after_so_many_characters():
    """Japanese puts no space between words: its opening is cut anywhere, and no word is made up."""
    japanese = "日本語の文章は単語の間に空白を入れずに書かれるので、区切りは文脈から読み取られます。" * 5
    at = open_page("char_vs_bpe", "corpus_paste", japanese)
    said = " ".join(c.value for c in at.caption)
    assert "Made from the corpus: the corpus's first 100 characters." in said
    assert "cut at the end of a word" not in said and "never contains" not in said
