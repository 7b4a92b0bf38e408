"""AppTest: the corpus sidebar and the Learn BPE page show exactly what ``core`` computes."""

import io
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from core import BPETokenizer
from core.bpe.explain import explain_step, quoted, segment
from ui.render import md_safe

ROOT = Path(__file__).resolve().parents[2]
SENNRICH = (ROOT / "sample_corpora" / "sennrich.txt").read_text(encoding="utf-8")


def app() -> AppTest:
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60)
    at.switch_page("app_pages/learn_bpe.py").run()  # the root opens Start here
    assert not at.exception, [e.message for e in at.exception]
    return at


def button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


def sidebar_stats(at: AppTest) -> dict[str, str]:
    """The corpus statistics table in the sidebar, as {label: shown value}."""
    [table] = [m.value for m in at.sidebar.markdown if "| Characters |" in m.value]
    rows = [line.strip("|").split("|") for line in table.splitlines()[2:]]
    return {label.strip(): value.strip() for label, value in rows}


def bold_lines(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("**")]


def paste(at: AppTest, text: str) -> AppTest:
    at.text_area(key="corpus_paste").set_value(text).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_first_open_shows_sennrich_and_the_first_merge():
    at = app()
    tok = BPETokenizer.from_text(SENNRICH, 10, variant="char")
    assert at.session_state["corpus_text"] == SENNRICH
    assert f"**{md_safe(explain_step(tok, 0))}**" in bold_lines(at)
    assert sidebar_stats(at) == {"Characters": f"{len(SENNRICH):,}",
                                 "Bytes (UTF-8)": f"{len(SENNRICH.encode()):,}", "Words": "11",
                                 "Unique characters": f"{len(set(SENNRICH))}"}
    # the tree of the last token goes down to characters
    assert at.code[0].value.splitlines()[0] == f"{quoted(tok.token_str(tok.vocab_size - 1))}  (id {tok.vocab_size - 1})"


def test_next_previous_and_merge_table_follow_the_trace():
    at = app()
    tok = BPETokenizer.from_text(SENNRICH, 10, variant="char")
    button(at, "Next ▶").click().run()
    button(at, "Next ▶").click().run()
    assert at.session_state["learn_step"] == 2
    assert f"**{md_safe(explain_step(tok, 2))}**" in bold_lines(at)
    table = at.dataframe[0].value
    assert list(table["step"]) == [1, 2]
    assert list(table["count"]) == [s.count for s in tok.trace[:2]]
    assert list(table["new token"]) == [quoted(tok.token_str(s.new_id)) for s in tok.trace[:2]]
    button(at, "◀ Previous").click().run()
    assert at.session_state["learn_step"] == 1
    at.slider(key="learn_step").set_value(10).run()
    assert any(v.startswith("**All 10 merges done**") for v in bold_lines(at))


def test_pair_chart_data_are_the_step_competitors():
    at = app()
    tok = BPETokenizer.from_text(SENNRICH, 10, variant="char")
    chart = at.get("vega_lite_chart")[0]
    data = [pa.ipc.open_stream(io.BytesIO(d.data.data)).read_pandas() if hasattr(d, "data") else None
            for d in chart.proto.datasets]
    spec = json.loads(chart.proto.spec)
    frames = [f for f in data if f is not None and "count" in getattr(f, "columns", [])]
    if not frames:  # altair may inline the data in the spec
        frames = [pd.DataFrame(v) for v in spec.get("datasets", {}).values()]
    counts = sorted(frames[0]["count"].tolist(), reverse=True)
    assert counts == sorted((c for _, _, c in tok.trace[0].competitors), reverse=True)


def test_play_advances_without_retraining():
    at = app()
    button(at, "▶ Play").click().run()
    assert at.session_state["learn_playing"] is True
    step = at.session_state["learn_step"]
    at.run()  # run_every fragments do not fire by themselves in AppTest
    assert at.session_state["learn_step"] >= step
    assert any(b.label == "⏸ Pause" for b in at.button)
    button(at, "⏸ Pause").click().run()
    assert at.session_state["learn_playing"] is False


@pytest.mark.parametrize("variant", ["word", "byte"])
def test_other_variants(variant):
    at = app()
    at.radio(key="w_variant").set_value(variant).run()
    assert not at.exception
    pattern = "gpt2" if variant == "byte" else None
    tok = BPETokenizer.from_text(SENNRICH, 10, variant=variant, pattern=pattern)
    assert f"**{md_safe(explain_step(tok, 0))}**" in bold_lines(at)


def test_custom_regex_error_is_a_message():
    at = app()
    at.radio(key="w_variant").set_value("byte").run()
    at.radio(key="w_pattern_choice").set_value("custom").run()
    at.text_input(key="w_custom_pattern").set_value("([a-z").run()
    assert not at.exception
    assert any("not a valid regular expression" in e.value for e in at.error)


def test_empty_corpus_is_a_friendly_message():
    at = paste(app(), "")
    assert any("corpus is empty" in i.value for i in at.info)


def test_pasted_corpus_and_merges_setting_are_used():
    text = "the cat sat on the mat the cat ran"
    at = paste(app(), text)
    at.number_input(key="w_num_merges").set_value(4).run()
    tok = BPETokenizer.from_text(text, 4, variant="char")
    assert f"**{md_safe(explain_step(tok, 0))}**" in bold_lines(at)
    assert at.slider(key="learn_step").max == 4


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


def animation_data(at: AppTest) -> dict:
    [anim] = [e for e in at.get("bidi_component") if e.proto.component_name == "bpe_explorer.merge_animation"]
    return json.loads(anim.proto.json)


def report_from_browser(at: AppTest, report: dict) -> AppTest:
    """What the browser sends when its animation stops: the component's "report" trigger.  AppTest
    has no setter for a component's trigger, so the rerun's widget states are built as the browser
    builds them (the page's widgets, plus the trigger)."""
    from streamlit.components.v2.bidi_component.main import _make_trigger_id
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    [anim] = [e for e in at.get("bidi_component") if e.proto.component_name == "bpe_explorer.merge_animation"]
    states = at._tree.get_widget_states()
    trigger = WidgetState(id=_make_trigger_id(anim.proto.id, "events"),
                          json_trigger_value=json.dumps([{"event": "report", "value": report}]))
    states.widgets.append(trigger)
    at._run(states)
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_play_sends_the_animation_once_and_pause_lands_on_the_step_the_browser_shows():
    at = app()
    tok = BPETokenizer.from_text(SENNRICH, 10, variant="char")
    button(at, "Next ▶").click().run()
    button(at, "▶ Play").click().run()
    data = animation_data(at)
    tokens = segment(tok, SENNRICH, 1)
    # the window's tokens after the merge already done, and every merge still to come
    assert (data["start"], data["n"]) == (1, 10)
    assert data["ids"] == [t.id for t in tokens]
    assert data["merges"] == [[s.left, s.right, s.new_id, s.count, s.length_after] for s in tok.trace[1:]]
    assert data["rate"] == 5.0 and all(str(s.new_id) in data["faces"] for s in tok.trace[1:])
    assert not at.get("vega_lite_chart") and not at.dataframe  # the heavy parts wait for the pause
    assert at.slider(key="learn_step").disabled
    report_from_browser(at, {"play": data["play"] - 1, "step": 7})  # an older play's report: ignored
    assert at.session_state["learn_playing"] is True
    report_from_browser(at, {"play": data["play"], "step": 7})
    assert at.session_state["learn_playing"] is False and at.session_state["learn_step"] == 7
    assert f"**{md_safe(explain_step(tok, 7))}**" in bold_lines(at)
    assert list(at.dataframe[0].value["step"]) == list(range(1, 8))
    # a second play is a new animation, from the step shown
    button(at, "▶ Play").click().run()
    assert animation_data(at)["play"] == data["play"] + 1 and animation_data(at)["start"] == 7
    report_from_browser(at, {"play": data["play"] + 1, "step": 3})  # never backwards
    assert at.session_state["learn_step"] == 7


@pytest.mark.parametrize("report", [None, "7", {"play": 1}, {"play": 1, "step": "7"}, {"play": 1, "step": True}])
def test_a_report_that_is_not_a_step_is_ignored(report):
    from ui.animation import reported_step

    assert reported_step(report, 1, 2, 10) is None
    assert reported_step({"play": 1, "step": 99}, 1, 2, 10) == 10
