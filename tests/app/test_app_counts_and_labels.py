"""AppTest: what the pages count and name is what a person would count and name: text boxes count
characters (an emoji is one), "Pick a text" says when the text is the attendee's own, a corpus with
no pair to merge says so whatever was asked, Generate opens on the attendee's own run, and runs on
different corpora never share a bits-per-character axis."""

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from app_helpers import ROOT, finished_run, open_page
from ui.plumbing.navigation import PAGES as NAVIGATION

MULTILINGUAL = (ROOT / "sample_corpora" / "multilingual_and_emoji.txt").read_text(encoding="utf-8")
PAGES = [name for name, _, _ in NAVIGATION]  # every page, a new one too
ALICE = "alice-0123456789"
ROOM_CORPUS = "First Citizen:\nBefore we proceed any further, hear me speak.\n" * 40
OWN_CORPUS = "The quick brown fox jumps over the lazy dog. " * 60


def utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def compare_page(text: str | None = None) -> AppTest:
    return open_page("compare_tokenizers", "w_tokenizers_text", text, timeout=120)


def counted_in_utf16(at: AppTest) -> list[str]:
    """The text boxes of the page that show Streamlit's counter (those with ``max_chars``)."""
    boxes = [*at.text_area, *at.text_input, *at.sidebar.text_area, *at.sidebar.text_input]
    assert boxes
    return [b.key for b in boxes if b.proto.max_chars]


def test_no_text_box_counts_utf16_units(tmp_path):
    """Streamlit's counter under a box with ``max_chars`` counts UTF-16 units (748 for the 736
    characters of a text with emoji): no box of any page has one, the word variant's marker box
    and Train a GPT's prompt included."""
    for page in PAGES:
        assert counted_in_utf16(open_page(page)) == [], page
    at = open_page("learn_bpe")
    at.radio(key="w_variant").set_value("word").run()
    assert "w_end_of_word" in [b.key for b in at.text_input]
    assert counted_in_utf16(at) == []
    the_room_and_alice(tmp_path)
    at = train_page(tmp_path)
    assert "gpt_prompt" in [b.key for b in at.text_input]
    assert counted_in_utf16(at) == []


def test_compare_counts_the_pasted_text_in_characters():
    text = MULTILINGUAL + " 👋🏽🇫🇷"
    assert utf16_units(text) > len(text)  # the text has characters UTF-16 counts twice
    at = compare_page(text)
    captions = [c.value for c in at.main.caption]
    assert f"{len(text):,} characters" in captions
    assert f"{utf16_units(text):,} characters" not in captions


def test_pick_a_text_names_the_attendee_s_own_text_once_pasted():
    at = compare_page()
    pick = at.selectbox(key="w_tokenizers_pick")
    assert pick.value == "multilingual and emoji" and at.text_area(key="w_tokenizers_text").value == \
        MULTILINGUAL
    at.text_area(key="w_tokenizers_text").set_value("my own words, 안녕하세요").run()
    pick = at.selectbox(key="w_tokenizers_pick")
    assert pick.value == "__own__"
    assert pick.options[pick.index] == "Your own text (typed or pasted)"
    assert at.text_area(key="w_tokenizers_text").value == "my own words, 안녕하세요"
    pick.set_value("sennrich").run()  # picking a sample again puts its text in the box
    assert at.text_area(key="w_tokenizers_text").value.startswith("low low low")
    assert at.selectbox(key="w_tokenizers_pick").value == "sennrich"


def test_a_corpus_with_nothing_to_merge_says_so_for_the_merges_asked():
    at = open_page("learn_bpe", "corpus_paste", "a")
    at.number_input(key="w_num_merges").set_value(5).run()
    warnings = " ".join(w.value for w in at.warning)
    assert "No merge could be learned of the 5 asked" in warnings
    assert "ask for at least one merge" not in warnings
    assert not any("ran out of pairs after 0" in i.value for i in at.info)
    at.number_input(key="w_num_merges").set_value(0).run()
    assert "ask for at least one merge" in " ".join(w.value for w in at.warning)


# -- Train a GPT ------------------------------------------------------------------------------------
def train_page(runs_dir: Path) -> AppTest:
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60)
    at.query_params["u"] = ALICE
    at.session_state["gpt_runs_dir"] = str(runs_dir)
    at.session_state["corpus_name"] = "own corpus"
    at.session_state["corpus_text"] = OWN_CORPUS
    at.switch_page("app_pages/train_gpt.py").run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def the_room_and_alice(runs_dir: Path) -> None:
    """The room's two runs (the newest) on one corpus, Alice's two on hers."""
    finished_run(runs_dir, ALICE, "char-quick", "2026-01-01T00:00:01", 1.9, corpus=OWN_CORPUS)
    finished_run(runs_dir, ALICE, "bpe-quick", "2026-01-01T00:00:02", 1.7, corpus=OWN_CORPUS)
    finished_run(runs_dir, "room", "07_char_vs_bpe_gpt-char", "2026-01-01T00:00:03", 2.4, corpus=ROOM_CORPUS,
                 shared=True)
    finished_run(runs_dir, "room", "07_char_vs_bpe_gpt-bpe", "2026-01-01T00:00:04", 2.1, corpus=ROOM_CORPUS,
                 shared=True)


def test_the_run_pickers_open_on_the_attendee_s_own_run(tmp_path):
    the_room_and_alice(tmp_path)
    at = train_page(tmp_path)
    assert at.selectbox(key="gpt_selected_run").value == "bpe-quick"  # the run watched
    box = at.selectbox(key="gpt_gen_run")
    # the runs on the sidebar's corpus (Alice's) first, the others said to be on another corpus
    assert box.options[:2] == ["bpe-quick", "char-quick"] and len(box.options) == 4
    assert all(o.startswith("07_char_vs_bpe_gpt") and o.endswith(" · another corpus")
               for o in box.options[2:])
    assert box.value == "bpe-quick"  # Alice's newest
    at.selectbox(key="gpt_selected_run").set_value("char-quick").run()
    at.selectbox(key="gpt_gen_run").set_value("07_char_vs_bpe_gpt-bpe · the room (shared)").run()
    assert at.selectbox(key="gpt_gen_run").value == "07_char_vs_bpe_gpt-bpe · the room (shared)"  # kept


def test_generate_opens_on_a_checkpoint_of_the_chosen_corpus_and_says_which_corpus(tmp_path):
    """With the room's corpus in the sidebar, Generate opens on the room's run trained on it, not on
    Alice's own run on another corpus, and names the corpus the chosen checkpoint came from."""
    the_room_and_alice(tmp_path)
    at = train_page(tmp_path)
    at.session_state["corpus_text"] = ROOM_CORPUS
    at.run()
    box = at.selectbox(key="gpt_gen_run")
    assert box.value == "07_char_vs_bpe_gpt-bpe · the room (shared)"
    assert box.options[2:] == ["bpe-quick · another corpus", "char-quick · another corpus"]
    said = [c.value for c in at.caption if c.value.startswith("Trained on: ")]
    assert said == [f"Trained on: own corpus, the corpus in the sidebar "
                    f"\\({len(ROOM_CORPUS):,} characters\\)"]


def test_the_run_s_samples_are_a_history_the_newest_first_each_with_its_bits_per_character(tmp_path):
    """Every sample the run wrote, the newest first, under its step and bits per character (a
    resumed run's step written twice: once, the later), each wrapped to the box."""
    import json

    the_room_and_alice(tmp_path)
    samples = [{"step": 10, "text": "tthe  qk", "val_bpc": 3.5}, {"step": 20, "text": "dead", "val_bpc": 9.0},
               {"step": 20, "text": "the quikc fox", "val_bpc": 2.25}, {"step": 25, "text": "between"},
               {"step": 30, "text": "The quick brown fox " * 20, "val_bpc": 1.125}]
    (tmp_path / ALICE / "bpe-quick" / "samples.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in samples), encoding="utf-8")
    at = train_page(tmp_path)
    headings = [m.value for m in at.markdown if m.value.startswith("**Step ")]
    assert headings == ["**Step 30 · 1.125 bits/char**", "**Step 25 · not evaluated**",
                        "**Step 20 · 2.250 bits/char**", "**Step 10 · 3.500 bits/char**"]
    texts = [c for c in at.code if c.value in {r["text"] for r in samples}]
    assert [c.value for c in texts] == [samples[4]["text"], "between", "the quikc fox", "tthe  qk"]
    assert all(c.proto.wrap_lines for c in texts)


def chart_runs(chart) -> set[str]:
    import pyarrow as pa

    rows = [r for d in chart.proto.datasets for r in pa.ipc.open_stream(d.data.data).read_all().to_pylist()]
    return {r["run"] for r in rows}


def test_runs_on_different_corpora_never_share_an_axis(tmp_path):
    the_room_and_alice(tmp_path)
    at = train_page(tmp_path)
    assert len(at.multiselect(key="gpt_bpc_runs").value) == 4
    charts = [c for c in at.get("vega_lite_chart")
              if json.loads(c.proto.spec)["encoding"]["y"].get("field") == "bits per character"]
    assert list(map(chart_runs, charts)) == [  # the sidebar's corpus first
        {"bpe-quick", "char-quick"},
        {"07_char_vs_bpe_gpt-bpe · the room (shared)", "07_char_vs_bpe_gpt-char · the room (shared)"}]
    assert any("trained on 2 different corpora" in i.value for i in at.info)
    titles = [m.value for m in at.markdown if m.value.startswith("**") and m.value.endswith(("”**", "\\)**"))]
    assert titles == [f"**own corpus, the corpus in the sidebar \\({len(OWN_CORPUS):,} characters\\)**",
                      f"**Corpus of {len(ROOM_CORPUS):,} characters beginning “First Citizen: Before we "
                      "proceed any further…”**"]
    for chart in charts:  # every run's name in full in its legend
        legend = json.loads(chart.proto.spec)["encoding"]["color"]["legend"]
        assert legend["labelLimit"] == 0
    # one corpus: one chart, no note
    at.multiselect(key="gpt_bpc_runs").set_value(["bpe-quick", "char-quick"]).run()
    charts = [c for c in at.get("vega_lite_chart")
              if json.loads(c.proto.spec)["encoding"]["y"].get("field") == "bits per character"]
    assert len(charts) == 1 and not any("different corpora" in i.value for i in at.info)
