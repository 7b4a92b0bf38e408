"""AppTest: the corpus sidebar and the Learn BPE page show exactly what ``core`` computes."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import markdown_tables, paste_box, step_view
from core import BPETokenizer
from core.bpe.explain import quoted, segment
from ui.plumbing.corpus_sidebar import EMPTIED_BOX
from ui.views import step_view as view
from ui.views.token_view import PICKER_BASE_MAX

ROOT = Path(__file__).resolve().parents[2]
SENNRICH = (ROOT / "sample_corpora" / "sennrich.txt").read_text(encoding="utf-8")


def app() -> AppTest:
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60)
    at.switch_page("app_pages/learn_bpe.py").run()  # the root opens Start here
    assert not at.exception, [e.message for e in at.exception]
    return at


def sidebar_stats(at: AppTest) -> dict[str, str]:
    """The corpus statistics table in the sidebar, as {label: shown value}."""
    [(header, *rows)] = [t for t in markdown_tables(at, at.sidebar) if ["Characters"] in [r[:1] for r in t]]
    assert all(header), header  # columns with names: an empty header row draws as a blank row
    return {label: value for label, value in rows}


def merges_of(tok: BPETokenizer) -> list[list[int]]:
    """Each merge as the step view receives it: pair, new id, count, corpus length after, ties."""
    return [[s.left, s.right, s.new_id, s.count, s.length_after, s.ties] for s in tok.trace]


def paste(at: AppTest, text: str) -> AppTest:
    paste_box(at).set_value(text).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_first_open_shows_sennrich_and_its_merges():
    at = app()
    tok = BPETokenizer.from_text(SENNRICH, 10, variant="char")
    assert at.session_state["corpus_text"] == SENNRICH
    _, step, data = step_view(at)
    assert step == 0 and data["merges"] == merges_of(tok)
    assert sidebar_stats(at) == {"Characters": f"{len(SENNRICH):,}",
                                 "Bytes (UTF-8)": f"{len(SENNRICH.encode()):,}",
                                 "Words (split at spaces)": "11",
                                 "Unique characters": f"{len(set(SENNRICH))}"}
    # the tree of the last token goes down to characters, as text once its expander is opened (a
    # closed one sends no code block: a fresh tab loads no syntax highlighter)
    assert not at.code
    at.session_state["learn_tree_text"] = True
    at.run()
    last = tok.vocab_size - 1
    assert at.code[0].value.splitlines()[0] == f"{quoted(tok.token_str(last))}  (id {last})"


def test_the_step_view_gets_every_step_once():
    """Every step is drawn in the browser from one payload: the window before the first merge,
    every merge with the pairs it beat, each token's name; a rerun sends the same bytes again
    without building them (``tests/app/test_browser_step_view.py`` checks the drawing)."""
    at = app()
    tok = BPETokenizer.from_text(SENNRICH, 10, variant="char")
    _, _, data = step_view(at)
    assert data["n"] == 10 and data["base_vocab"] == tok.vocab_size - 10
    assert data["ids"] == [t.id for t in segment(tok, SENNRICH, 0)]
    assert data["length0"] == tok.initial_length == len(SENNRICH)
    assert data["pairs"] == [[x for pair in s.competitors for x in pair] for s in tok.trace]
    assert all(data["names"][str(i)] == quoted(tok.token_str(i)) for m in data["merges"] for i in m[:3])
    assert set(data["charts"]) == {"pairs", "curves"}
    assert data["charts"]["pairs"]["data"] == {"name": "pairs"}  # filled in by the browser
    first = next(e for e in at.get("bidi_component") if e.proto.component_name == view.NAME)
    at.run()
    again = next(e for e in at.get("bidi_component") if e.proto.component_name == view.NAME)
    assert again.proto.bytes == first.proto.bytes


@pytest.mark.parametrize("variant", ["word", "byte"])
def test_other_variants(variant):
    at = app()
    at.radio(key="w_variant").set_value(variant).run()
    assert not at.exception
    pattern = "gpt2" if variant == "byte" else None
    tok = BPETokenizer.from_text(SENNRICH, 10, variant=variant, pattern=pattern)
    assert step_view(at)[2]["merges"] == merges_of(tok)


def test_custom_regex_error_is_a_message():
    at = app()
    at.radio(key="w_variant").set_value("byte").run()
    at.radio(key="w_pattern_choice").set_value("custom").run()
    at.text_input(key="w_custom_pattern").set_value("([a-z").run()
    assert not at.exception
    assert any("not a valid regular expression" in e.value for e in at.error)


def test_a_blank_corpus_is_a_friendly_message():
    at = paste(app(), " \n\t ")
    assert any("corpus is empty" in i.value for i in at.info)


def test_an_emptied_paste_box_keeps_the_corpus():
    """Emptying the box is not a paste: the corpus stays (the browser sends the box emptied by the
    server too, after a large paste)."""
    text = "the cat sat on the mat the cat ran"
    at = paste(app(), text)
    assert EMPTIED_BOX not in [c.value for c in at.sidebar.caption]
    at = paste(at, "")
    assert at.session_state["corpus_text"] == text
    assert not at.info and step_view(at)[2]["merges"]
    assert EMPTIED_BOX in [c.value for c in at.sidebar.caption]  # said, not left to guess


def test_pasted_corpus_and_merges_setting_are_used():
    text = "the cat sat on the mat the cat ran"
    at = paste(app(), text)
    at.number_input(key="w_num_merges").set_value(4).run()
    tok = BPETokenizer.from_text(text, 4, variant="char")
    _, _, data = step_view(at)
    assert data["n"] == 4 and data["merges"] == merges_of(tok)


def test_non_utf8_upload_keeps_the_corpus_and_names_the_byte():
    at = app()
    at.sidebar.get("file_uploader")[0].set_value(("latin1.txt", "café".encode("latin-1"), "text/plain")).run()
    assert not at.exception
    assert any("not UTF-8" in e.value and "offset 3" in e.value for e in at.error)
    assert at.session_state["corpus_text"] == SENNRICH


def test_utf8_upload_becomes_the_corpus():
    at = app()
    at.sidebar.get("file_uploader")[0].set_value(("mine.txt", "aa bb aa bb".encode(), "text/plain")).run()
    assert at.session_state["corpus_text"] == "aa bb aa bb"
    assert at.session_state["corpus_name"] == "mine.txt"


def test_shared_state_for_other_pages():
    at = app()
    at.radio(key="w_variant").set_value("word").run()
    assert at.session_state["kept_variant"] == "word"
    assert at.session_state["kept_end_of_word"] == "</w>"
    assert at.session_state["kept_num_merges"] == 10


def test_the_view_opens_at_the_url_step_until_a_new_corpus_resets_it():
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60)
    at.query_params["step"] = "7"
    at.switch_page("app_pages/learn_bpe.py").run()
    assert not at.exception, [e.message for e in at.exception]
    epoch, step, _ = step_view(at)
    assert step == 7
    paste(at, "the cat sat on the mat the cat ran")
    assert step_view(at)[:2] == (epoch + 1, 0)  # a new epoch: the browser drops the step it shows


def test_a_corpus_of_many_distinct_characters_lists_its_merges_only():
    """The token picker of a corpus with more distinct characters than a list can hold (random
    Unicode, a script of thousands of characters) lists the merges learned here, and says where
    the others are (each is still one click away in the text)."""
    alphabet = "".join(chr(0x4E00 + i) for i in range(PICKER_BASE_MAX + 1))
    text = alphabet + " " + alphabet[:50] * 20
    at = paste(app(), text)
    tok = BPETokenizer.from_text(text, at.number_input(key="w_num_merges").value, variant="char")
    [picker] = [s for s in at.selectbox if s.label.startswith("Token (or click")]
    assert picker.options == [f"{s.new_id}: {quoted(tok.token_str(s.new_id))}" for s in tok.trace]
    assert any(f"The corpus has {tok.base_size:,} distinct characters" in c.value for c in at.caption)


def test_a_token_picked_for_its_tree_comes_back_after_another_page_without_a_warning(monkeypatch):
    """The tree's token, chosen, is the one shown again after a visit to Char vs BPE; the server's
    log stays clean (Streamlit warned, once a process, of a widget given both a default and the
    value restored for it)."""
    import streamlit.elements.lib.policies as policies

    warned = []
    monkeypatch.setattr(policies, "_shown_default_value_warning", False)
    monkeypatch.setattr(policies._LOGGER, "warning", lambda message, *args, **kw: warned.append(args))
    at = app()
    [box] = [s for s in at.selectbox if s.key and s.key.startswith("learn_tree_")]
    chosen = box.value - 1  # it opens on the last merge's token: the one before it
    box.set_value(chosen).run()
    at.switch_page("app_pages/char_vs_bpe.py").run()
    at.switch_page("app_pages/learn_bpe.py").run()
    [box] = [s for s in at.selectbox if s.key and s.key.startswith("learn_tree_")]
    assert box.value == chosen and warned == []
