"""AppTest: the Compare tokenizers page shows every real tokenizer that loads (and yours), counts equal
to ``core``'s, the merge tree of a chosen token, and one bar group per tokenizer in the cost chart."""

import gc
import html
import json
import re
from pathlib import Path

import unicodedata

import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import open_page
from core.bpe.compare import ranked_scripts, script_costs
from core import PRETRAINED_NAMES, BPETokenizer
from core.bpe import GPT2FileError
from core.bpe.encoding import PackedTokens
from core.insights import read_parallel
from ui.plumbing.render import md_safe
from ui.views.compare_view import Encoded

ROOT = Path(__file__).resolve().parents[2]
MULTILINGUAL = (ROOT / "sample_corpora" / "multilingual_and_emoji.txt").read_text(encoding="utf-8")
SENNRICH = (ROOT / "sample_corpora" / "sennrich.txt").read_text(encoding="utf-8")
EVIL = "<script>alert(1)</script> <img src=x onerror=alert(1)>"


def available() -> list[str]:
    names = []
    for name in PRETRAINED_NAMES:
        try:
            BPETokenizer.from_pretrained(name)
        except GPT2FileError:
            continue
        names.append(name)
    return names


def page(text: str | None = None) -> AppTest:
    return open_page("compare_tokenizers", "w_tokenizers_text", text, timeout=120)


def test_the_encodings_kept_for_the_room_hold_no_python_object_a_token():
    """A room's caches keep every attendee's encoded texts, and a full garbage collection walks each
    object they hold while every page waits: a text's tokens are kept packed, not a ``Token`` each."""
    at = page(MULTILINGUAL)
    assert not at.exception
    kept = [o for o in gc.get_objects() if isinstance(o, Encoded) and o.text == MULTILINGUAL]
    assert all(isinstance(e.tokens, PackedTokens) for e in kept) and sum(len(e.tokens) for e in kept) > 1_000


def test_the_summary_table_writes_vocabulary_sizes_and_counts_with_separators():
    """A reader takes "100261" for a phone number: the table shows 100,261 (Streamlit's localized
    format), and keeps the figure a number, so its column still sorts as one."""
    table = page().dataframe[0]
    columns = json.loads(table.proto.columns)
    for name in ("vocabulary", "tokens"):
        assert columns[name]["type_config"] == {"type": "number", "format": "localized"}
        assert table.value[name].dtype.kind == "i"
    assert table.value["vocabulary"].max() > 9_999


def token_counts(at: AppTest) -> list[str]:
    """Each panel's token count, from its line of figures ("**408** tokens · ...")."""
    return [m.group(1).replace(",", "") for m in
            (re.match(r"\*\*([\d,]+)\*\* tokens · ", md.value) for md in at.main.markdown) if m]


def html_of(at: AppTest) -> str:
    return " ".join(h.proto.body for h in at.main.get("html"))


def chart_rows(at: AppTest) -> list[dict]:
    import pyarrow as pa

    chart = at.main.get("vega_lite_chart")[0]
    spec = json.loads(chart.proto.spec)
    assert spec["encoding"]["y"]["field"] == "tokenizer"
    assert spec["encoding"]["yOffset"]["field"] == "script"
    table = pa.ipc.open_stream(chart.proto.datasets[0].data.data).read_all()
    return table.to_pylist()


@pytest.mark.slow
def test_multilingual_sample_under_every_tokenizer():
    at = page()
    names = available()
    toks = {n: BPETokenizer.from_pretrained(n) for n in names}
    assert token_counts(at) == [str(len(toks[n].encode(MULTILINGUAL))) for n in names]
    table = at.dataframe[0].value
    assert list(table["tokens"]) == [len(toks[n].encode(MULTILINGUAL)) for n in names]
    # yours (a char tokenizer of the Sennrich sample) cannot encode Hangul or emoji: it says so
    assert any("not in its alphabet" in w.value for w in at.warning)
    rows = chart_rows(at)
    groups = list(dict.fromkeys(r["tokenizer"] for r in rows))
    assert groups == list(table["tokenizer"])  # one bar group per tokenizer that encodes the text
    assert "Hangul (Korean)" in {r["script"] for r in rows}
    for name, group in zip(names, groups):
        spent = sum(r["tokens"] for r in rows if r["tokenizer"] == group)
        assert spent == pytest.approx(len(toks[name].encode(MULTILINGUAL)), abs=0.05)
    # the caption ranks scripts as Start here's script station does (emoji and symbols apart)
    [ranking] = [c.value for c in at.caption if "The costliest script against the cheapest" in c.value]
    said = dict(re.findall(r"under (.+?), an? (.+?) character costs", ranking))
    for name, group in zip(names, groups):
        text = unicodedata.normalize(toks[name].normalization, MULTILINGUAL) if toks[name].normalization \
            else MULTILINGUAL
        ranked = ranked_scripts(script_costs(text, toks[name].encode_tokens(text)))
        assert said[md_safe(group)] == ranked[0].script
    # grounded on the same text in both languages, counted by core on the shipped parallel texts
    texts = read_parallel()
    [same] = [c.value for c in at.caption if "On the same text in both languages" in c.value]
    for name, group in zip(names, groups):
        kor, eng = (len(toks[name].encode(texts[c], allowed_special="none")) for c in ("kor", "eng"))
        assert f"{kor / eng:.1f}× English's tokens under {md_safe(group)}" in same
    assert "under Yours" not in same  # a char tokenizer of Sennrich's text has no Hangul to count


@pytest.mark.slow
def test_your_tokenizer_joins_when_it_can_encode_the_text():
    text = "low lower newer wider"
    at = page(text)
    yours = BPETokenizer.from_text(SENNRICH, 10, variant="char")
    counts = token_counts(at)
    assert len(counts) == len(available()) + 1
    assert counts[-1] == str(len(yours.encode(text)))
    groups = {r["tokenizer"] for r in chart_rows(at)}
    assert "Yours (char, 10 merges)" in groups


def unlike_counts(at: AppTest) -> list[str]:
    """Each panel's "**N** cut unlike the reference", or "the reference"."""
    return [m.group(1) for m in (re.search(r"· (the reference|\*\*[\d,]+\*\* cut unlike)", md.value)
                                 for md in at.main.markdown) if m]


@pytest.mark.slow
def test_the_cuts_unlike_the_reference_follow_the_reference_chosen():
    """Each panel counts and marks the tokens no token of the reference covers exactly
    (``core.bpe.compare.differing``), against whichever reference is chosen, at every change."""
    from core.bpe.compare import differing, spans

    text = "Tokenizers disagree: unconstitutionally, 2,048 naïve cafés 👋🏽 ünïcödé"
    at = page(text)
    names = available()
    toks = {n: BPETokenizer.from_pretrained(n) for n in names}
    for reference in (names[0], names[-1]):
        at.selectbox(key="tokenizers_reference").set_value(reference).run()
        cuts = spans(toks[reference].encode_tokens(text))
        unlike = {n: len(differing(toks[n].encode_tokens(text), cuts)) for n in names if n != reference}
        expected = [f"**{unlike[n]}** cut unlike" if n in unlike else "the reference" for n in names]
        assert unlike_counts(at)[:len(names)] == expected
        assert html_of(at).count(" tok-diff") == sum(unlike.values())  # yours cannot encode 👋: no panel


@pytest.mark.slow
def test_merge_tree_of_a_chosen_token():
    at = page("unconstitutional")
    tok = BPETokenizer.from_pretrained("o200k_base")
    ids = sorted(set(tok.encode("unconstitutional")), key=lambda i: -len(tok.token_bytes(i)))
    assert at.selectbox(key="tokenizers_tree_of").value == "o200k_base"  # GPT-4o's tree first
    box = at.selectbox(key="tokenizers_tree_token_o200k_base")
    assert box.value == ids[0]  # the longest token of the text
    built = [m.value for m in at.markdown if " built " in m.value]
    assert built == [f"How GPT\\-4o \\(o200k\\_base\\) built '{tok.token_str(ids[0])}':"]
    box.set_value(ids[-1]).run()
    assert not at.exception
    assert f"built '{tok.token_str(ids[-1])}'" in " ".join(m.value for m in at.markdown)


def test_pasted_html_stays_text():
    at = page(EVIL)
    shown = html_of(at)
    assert "<script" not in shown and "<img" not in shown
    text = html.unescape(re.sub(r"<[^>]+>", "", shown))  # what the reader sees
    assert "<script>alert(1)</script>" in text and "onerror=alert(1)>" in text


@pytest.mark.slow
def test_gpt2_missing_is_explained(tmp_path, monkeypatch):
    from core.bpe import pretrained
    from ui.views.compare_view import pretrained as cached

    monkeypatch.setattr(pretrained, "SHARED_GPT2", tmp_path)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    cached.clear()
    try:
        at = page()
        assert "GPT-2" not in list(at.dataframe[0].value["tokenizer"])
        assert any("GPT\\-2 is not shown" in c.value for c in at.caption)
        assert len(token_counts(at)) == len(PRETRAINED_NAMES) - 1
    finally:
        cached.clear()


def test_an_encoding_keeps_its_tokenizer_while_the_page_draws_it(monkeypatch):
    """Encodings are shared by the room and hold their tokenizer weakly; the page that asked for
    one must still hold it while it draws (a crowded store may let the tokenizer go meanwhile:
    the page then said ``'NoneType' object has no attribute 'tokenize'``)."""
    import gc

    from ui.views import compare_view

    monkeypatch.setattr(compare_view, "pretrained", lambda name: BPETokenizer.from_text("ab ab ab", 2))
    results = compare_view.encode_all(["yours-for-test"], {"yours-for-test": "Yours"}, "ab ab")
    gc.collect()
    result = results[0]
    assert result.tok is not None
    assert [result.text[t.start:t.end] for t in result.tokens] == result.tok.tokenize("ab ab")


def test_a_long_corpus_is_compared_on_its_start_and_the_caption_says_so():
    """A corpus the attendee loads is compared on its first ``CORPUS_CHARS`` characters (each
    attendee's differs, so each is computed anew on the page: docs/benchmarks.md, "A room that does
    not behave"); pasted into the box, a longer text is compared up to ``MAX_TEXT_CHARS``."""
    from app_helpers import paste_box
    from ui.views.compare_view import CORPUS_CHARS, MAX_TEXT_CHARS

    corpus = " ".join(f"word{i}" for i in range(2_000))  # ~15,000 characters
    at = page()
    paste_box(at).set_value(corpus).run()
    at.switch_page("app_pages/compare_tokenizers.py").run()
    assert not at.exception, [e.message for e in at.exception]
    box = at.text_area(key="w_tokenizers_text")
    assert box.value == corpus[:CORPUS_CHARS]
    assert any(f"the start of the corpus ({len(corpus):,})" in c.value for c in at.main.caption)
    box.set_value(corpus).run()
    assert at.text_area(key="w_tokenizers_text").value == corpus
    assert any(c.value == f"{len(corpus):,} characters" for c in at.main.caption)
    assert len(corpus) <= MAX_TEXT_CHARS


def test_windows_line_ends_are_compared_and_said_to_hide_in_the_box():
    """An uploaded file's carriage returns are in the text compared, and the caption says so: the box
    shows them as plain line breaks, and a browser drops them from a paste."""
    text = "first line\r\nsecond line\r\nthird\r\n"
    at = page()
    at.sidebar.file_uploader[0].set_value(("windows.txt", text.encode(), "text/plain")).run()
    at.switch_page("app_pages/compare_tokenizers.py").run()
    assert at.text_area(key="w_tokenizers_text").value == text
    [said] = [c.value for c in at.main.caption if "carriage returns" in c.value]
    assert said.startswith(f"{len(text)} characters. It holds 3 carriage returns")
    at.text_area(key="w_tokenizers_text").set_value(text.replace("\r", "")).run()
    assert not [c for c in at.main.caption if "carriage returns" in c.value]


def test_a_byte_level_panel_draws_each_split_character_above_its_byte_tokens():
    """Thai under GPT-2 is two byte tokens a character: the panel draws the character above them in
    one outline, as Char vs BPE does, not a wall of hex; the marked cuts and the panel's ids stay."""
    thai = "ภาษาไทยเป็นภาษาที่สวยงาม"
    at = page(thai)
    assert not at.exception
    markup = html_of(at)
    assert markup.count('class="bpe-char"') >= len(thai) // 2
    assert '<span class="bpe-glyph">ภ</span>' in markup
    assert "A purple outline joins byte tokens that spell one character" in markup
    assert "tok-diff" in markup  # the cuts unlike the reference still marked
