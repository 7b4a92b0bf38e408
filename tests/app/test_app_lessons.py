"""AppTest: Start here is the page a fresh visitor lands on; the whole path walked as an attendee
would (a wrong prediction gets feedback, a right one marks the station done), progress kept for
the owner across sessions, and the instructor's room view."""

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import JOB_WAIT_S, paste_box, poll_until_done, table_with
from core.chat.conversation import SAMPLE_MESSAGES
from core.lessons import ProgressStore, compute_answer, explanation, load_path
from tests.conftest import shared_path
from tests.lessons.room_fixtures import finished_room_runs, finished_sweep_runs
from ui.plumbing.render import md_safe

ROOT = Path(__file__).resolve().parents[2]
OWNER = "attendee-0123456789ab"
KEY = "an-instructor-key-for-tests"


@pytest.fixture
def runs_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_EXPLORER_RUNS_DIR", str(tmp_path))
    monkeypatch.delenv("BPE_EXPLORER_INSTRUCTOR_KEY", raising=False)
    return tmp_path


def open_start(owner: str = OWNER, station: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120)
    at.query_params["u"] = owner
    if station:
        at.query_params["station"] = station
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def choose(at: AppTest, station_id: str) -> None:
    at.button_group(key="w_lesson_station").set_value(station_id).run()
    assert not at.exception, [e.message for e in at.exception]


def predict(at: AppTest, station_id: str, value) -> None:
    """Give ``value`` as the prediction and press Check."""
    key = f"lesson_answer_{station_id}"
    widget = at.radio(key=key) if any(r.key == key for r in at.radio) else at.number_input(key=key)
    widget.set_value(value).run()
    at.button(key=f"lesson_check_{station_id}").click().run()
    assert not at.exception, [e.message for e in at.exception]


def plain(markdown: str) -> str:
    """Text as it reads on the page (the feedback escapes Markdown in what core computed)."""
    return markdown.replace("\\", "")


def wrong_value(station, answer):
    if station.question.choices:
        return next(v for v in station.question.choices if v != answer.value)
    return float(answer.value) * 3 + 5


def test_a_fresh_visitor_lands_on_start_here_with_the_first_station(runs_dir):
    at = open_start()
    assert [t.value for t in at.title] == ["🧭 Start here"]
    path = load_path()
    assert at.button_group(key="w_lesson_station").value == path.stations[0].id
    assert [h.value for h in at.subheader] == [f"1. {path.stations[0].title}"]
    assert any(m.value.startswith("**Predict first.**") for m in at.markdown)
    assert at.button(key=f"lesson_check_{path.stations[0].id}").disabled  # nothing predicted yet
    assert ProgressStore(runs_dir).of(OWNER)[path.stations[0].id].opened  # reached, for the room


def test_a_station_s_words_say_what_its_tool_shows_as_core_computes_it(runs_dir):
    """Station 2's directions quote which step of Learn BPE highlights what (core.bpe.explain's
    rule), filled: the first pair is outlined at 0 merges done, and Next moves on to merge 2's."""
    at = open_start(station="02_first_merge")
    [then] = [" ".join(m.value.split()) for m in at.markdown if m.value.startswith("**Then see it.**")]
    assert "At *Merges done* 0 the pair BPE merges first is already highlighted" in then
    assert "at *Merges done* 1 that pair is one token, and the pair of merge 2 is highlighted" in then
    assert "{" not in then and "once" not in then


def test_a_wrong_prediction_gets_a_hint_and_the_answer_on_request(runs_dir):
    at = open_start(station="02_first_merge")
    predict(at, "02_first_merge", "e + s")
    [error] = at.error
    assert "Not quite" in error.value and "you predicted e + s" in plain(error.value)
    assert not at.success
    at.button(key="lesson_reveal_02_first_merge").click().run()
    [info] = at.info
    assert "first new token is lo" in plain(info.value)  # core's answer (the tie rule's), in the feedback
    assert ProgressStore(runs_dir).of(OWNER)["02_first_merge"].revealed  # kept for the room's view
    predict(at, "02_first_merge", "l + o")
    [success] = at.success
    assert success.value.startswith("**Right, once you had seen the answer.**")
    progress = ProgressStore(runs_dir).of(OWNER)["02_first_merge"]
    assert progress.answers == (("e + s", False), ("l + o", True)) and progress.done
    at.button(key="lesson_next_02_first_merge").click().run()  # on to the next station not done
    assert [h.value for h in at.subheader] == ["3. Words it never saw"]
    assert at.query_params["station"] == "03_end_of_word"  # a reload comes back here


@pytest.mark.slow
def test_the_whole_path_walked_then_kept_for_the_owner(runs_dir):
    shared_path("corpora", "tinyshakespeare.txt")  # station 4's corpus
    finished_room_runs(runs_dir)  # station 7's two runs, as the room trained them
    finished_sweep_runs(runs_dir)  # station 8's three
    at = open_start()
    path = load_path()
    for station in path.stations:
        choose(at, station.id)
        answer = compute_answer(station, runs_dir)
        shown = " ".join(m.value for m in at.markdown)
        assert "{" not in shown and "seed" not in shown.lower(), station.id  # facts filled, no seed names
        predict(at, station.id, wrong_value(station, answer))
        assert "Not quite" in at.error[0].value, station.id
        predict(at, station.id, answer.value if station.question.choices else float(answer.value))
        success = at.success[0]  # right, and why: the station's text filled from core's result
        assert success.value == f"**Right.** {explanation(station, answer, md_safe)}", station.id
        assert at.button_group(key="w_lesson_station").formatted_values  # the path redrawn
    labels = at.button_group(key="w_lesson_station").options
    assert all(label.startswith("✓") for label in labels), labels
    assert at.success[-1].value.startswith("You have done every station")
    again = open_start()  # a new session, the same personal link: a reload, or the next day
    n = len(path.stations)
    assert f"{n} of {n} stations done" in again.get("progress")[0].proto.text
    assert all(label.startswith("✓") for label in again.button_group(key="w_lesson_station").options)


def test_progress_survives_a_new_session_and_is_the_owner_s_own(runs_dir):
    at = open_start()
    predict(at, "01_characters_bytes_tokens", 17)
    assert at.success
    again = open_start()
    assert again.button_group(key="w_lesson_station").options[0].startswith("✓")
    assert again.button_group(key="w_lesson_station").value == "02_first_merge"  # the first not done
    stranger = open_start(owner="someone-else-0123456")
    assert not stranger.button_group(key="w_lesson_station").options[0].startswith("✓")


def test_the_tool_button_opens_the_page_set_up_as_the_station_says(runs_dir):
    at = open_start(station="03_end_of_word")
    at.button(key="lesson_open_03_end_of_word").click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert [t.value for t in at.title] == ["⚖️ Char vs BPE"]
    assert at.session_state["corpus_name"] == "Sennrich: low lower newer wider"
    assert at.session_state["kept_variant"] == "word" and at.session_state["kept_num_merges"] == 10


OWN_TEXT = "My own notes: 3 apples, 12 pears and a strawberry. " * 20


@pytest.mark.slow
def test_a_station_about_any_text_opens_its_tool_on_the_attendee_s_paste(runs_dir):
    """Station 10's question works on any text: with a paste of one's own, the tool opens on it,
    and the station said so before the click; ``?station=`` stays Start here's (Back returns to it)."""
    at = open_start(station="10_spelling")
    paste_box(at).set_value(OWN_TEXT).run()
    assert any("It opens on your text (Pasted text)" in c.value for c in at.caption)
    assert at.query_params["station"] == "10_spelling"
    at.button(key="lesson_open_10_spelling").click().run()
    assert [t.value for t in at.title] == ["❓ Tokenizer questions"]
    assert at.session_state["corpus_text"] == OWN_TEXT
    assert "station" not in at.query_params  # the tool page's own URL; Start here's entry keeps it
    assert not at.exception, [e.message for e in at.exception]


@pytest.mark.slow
def test_a_station_that_needs_its_sample_puts_the_paste_aside_and_gives_it_back(runs_dir):
    at = open_start(station="03_end_of_word")
    paste_box(at).set_value(OWN_TEXT).run()
    assert any("your text (Pasted text) is put aside" in c.value for c in at.caption)  # said before
    at.button(key="lesson_open_03_end_of_word").click().run()
    assert at.session_state["corpus_name"] == "Sennrich: low lower newer wider"
    at.sidebar.button(key="corpus_back_to_own").click().run()
    assert at.session_state["corpus_text"] == OWN_TEXT
    assert not at.sidebar.get("button") or "corpus_back_to_own" not in [b.key for b in at.sidebar.button]
    assert not at.exception, [e.message for e in at.exception]


def open_tool(station_id: str, jobs: bool = True) -> AppTest:
    """Start here at ``station_id``, its tool's button pressed; with ``jobs``, the tool's heavy work
    waited for (a corpus as large as Tiny Shakespeare trains in the room's job engine)."""
    at = open_start(station=station_id)
    at.button(key=f"lesson_open_{station_id}").click().run()
    if jobs:
        poll_until_done(at)
    assert not at.exception, [e.message for e in at.exception]
    return at


@pytest.mark.slow
def test_the_spelling_station_lands_on_its_word_as_core_cuts_it(runs_dir):
    station = load_path().station("10_spelling")
    answer = compute_answer(station)
    at = open_tool(station.id)
    assert [t.value for t in at.title] == ["❓ Tokenizer questions"]
    args = station.question.args
    assert at.text_input(key="w_questions_word").value == args["word"]  # "A word holds strawberry"
    assert at.selectbox(key="questions_letter").value == args["letter"]
    row = table_with(at, "␣word").loc["GPT-4 (cl100k_base)"]
    assert (row["word"], row["␣word"]) == (answer.facts["tokens"], answer.facts["spaced"])
    assert row[f"'{args['letter']}' per token"] == answer.facts["places"]


@pytest.mark.slow
def test_the_numbers_station_lands_on_the_built_in_sentence_with_its_number(runs_dir):
    station = load_path().station("11_numbers")
    answer = compute_answer(station)
    at = open_tool(station.id)
    row = table_with(at, "number").loc["␣" + station.question.args["number"]]  # "the table shows ..."
    assert row["GPT-4 (cl100k_base)"] == f"{answer.facts['spaced']}  ({answer.value})"


@pytest.mark.slow
def test_the_formats_station_lands_on_the_built_in_sample(runs_dir):
    station = load_path().station("12_formats")
    answer = compute_answer(station)
    at = open_tool(station.id)
    said = " ".join(c.value for c in at.caption)
    assert "records from a built-in sample" in said
    assert f"take {answer.facts['xml_tokens']} tokens as xml and {answer.facts['csv_tokens']} as csv" in said


def test_the_room_view_is_the_instructor_s_and_counts_two_owners(runs_dir, monkeypatch):
    monkeypatch.setenv("BPE_EXPLORER_INSTRUCTOR_KEY", KEY)
    store = ProgressStore(runs_dir)
    store.record_answer("alice-0123456789ab", "02_first_merge", "e + s", False)
    store.record_answer("alice-0123456789ab", "02_first_merge", "l + o", True)
    store.record_answer("bob-0123456789abcd", "02_first_merge", "l + o", True)
    store.open_station("bob-0123456789abcd", "03_end_of_word")
    at = open_start()
    assert not any(h.value == "The room" for h in at.subheader)  # attendees never see it
    at.sidebar.text_input(key="instructor_key_input").input(KEY).run()
    assert any(h.value == "The room" for h in at.subheader)
    table = at.table[0].value.map(lambda v: plain(v) if isinstance(v, str) else v).set_index("station")
    row = table.loc["2. First merge"]
    assert (row["reached"], row["answered"], row["done"]) == (2, 2, 2)
    assert row["right at first try"] == "1 of 2 (50%)"
    assert row["most common wrong answer"] == "e + s (1)"
    assert table.loc["3. New words", "reached"] == 1 and table.loc["3. New words", "answered"] == 0


def test_a_station_file_with_a_mistake_is_named_when_the_app_starts(runs_dir, tmp_path, monkeypatch):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    good = (ROOT / "lessons" / "02_first_merge.toml").read_text(encoding="utf-8")
    (lessons / "02_first_merge.toml").write_text(good, encoding="utf-8")
    (lessons / "03_typo.toml").write_text(good.replace('compute = "first_merge"', 'compute = "frist_merge"'),
                                          encoding="utf-8")
    monkeypatch.setenv("BPE_EXPLORER_LESSONS_DIR", str(lessons))
    at = open_start()
    [error] = at.error
    assert plain(error.value).startswith(
        "A station file has a mistake, so it is left out (tell the instructor): "
        f"{lessons / '03_typo.toml'}: question.compute = 'frist_merge' is not a computation core has")
    assert at.button_group(key="w_lesson_station").options == ["1 · First merge"]  # the good one still shows


def test_an_answer_recorded_before_the_station_file_changed_still_shows(runs_dir):
    ProgressStore(runs_dir).record_answer(OWNER, "02_first_merge", "a choice since removed", False)
    at = open_start(station="02_first_merge")
    [error] = at.error
    assert plain(error.value).startswith("**Not quite:** you predicted a choice since removed.")


@pytest.mark.slow
def test_the_gpt_station_starts_the_room_s_runs_once(runs_dir):
    from core.room.runs import SERVER, list_runs, stop_run

    shared_path("corpora", "tinyshakespeare.txt")
    at = open_start(station="07_char_vs_bpe_gpt")
    try:
        at.radio(key="lesson_answer_07_char_vs_bpe_gpt").set_value("bpe").run()  # before the runs exist
        at.button(key="lesson_check_07_char_vs_bpe_gpt").click().run()
        assert "not trained yet" in at.info[0].value  # checked when the runs have finished
        at.button(key="lesson_start_runs").click().run()
        assert not at.exception, [e.message for e in at.exception]
        runs = list_runs(runs_dir)
        assert sorted(r.name for r in runs) == ["07_char_vs_bpe_gpt-bpe", "07_char_vs_bpe_gpt-char"]
        assert all(r.owner == "room" and r.shared for r in runs)
        assert any("The room's models: characters:" in c.value for c in at.caption)
        again = open_start(owner="bob-0123456789abcdef", station="07_char_vs_bpe_gpt")
        assert not any(b.key == "lesson_start_runs" for b in again.button)  # nothing to start twice
    finally:
        for run in list_runs(runs_dir):
            if run.active:
                stop_run(run.path, SERVER, timeout=30)


def test_the_room_s_runs_are_labelled_the_room_s_on_train_a_gpt(runs_dir):
    """Station 7's runs, started from the station by any attendee, are the room's: Train a GPT says
    so, not that another attendee shared them."""
    from core.room.runs import SERVER, set_shared

    for path in finished_room_runs(runs_dir).values():
        set_shared(path, SERVER, True)  # as start_room_runs leaves them
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120)
    at.query_params["u"] = OWNER
    at.switch_page("app_pages/train_gpt.py").run()
    assert not at.exception, [e.message for e in at.exception]
    said = " ".join(c.value for c in at.caption)
    assert "The room's run, trained once for everyone: read-only" in said
    assert "Shared by another attendee" not in said


def test_station_7_s_button_opens_its_own_runs_not_the_newest_shared_one(runs_dir):
    """Another attendee's run shared with the room, newer than the station's, is listed on Train a
    GPT, but the station's button opens the station's runs, and the comparison draws those alone."""
    from core.room.runs import SERVER, set_shared
    from tests.app.app_helpers import finished_run

    for path in finished_room_runs(runs_dir).values():
        set_shared(path, SERVER, True)
    finished_run(runs_dir, "alice-aaaaaaaaaaaaaaaa", "vocab-320-quick-0a1b2c3d", "2099-01-01T00:00:00", 3.0,
                 shared=True)
    at = open_tool("07_char_vs_bpe_gpt", jobs=False)  # a run's progress bar is no job
    assert [t.value for t in at.title] == ["🧠 Train a GPT"]
    deadline = time.monotonic() + JOB_WAIT_S  # the launch form's tokenizer, trained in the job engine
    while not any(s.key == "gpt_selected_run" for s in at.selectbox) and time.monotonic() < deadline:
        time.sleep(0.2)
        at.run()
    picked = at.selectbox(key="gpt_selected_run").value
    compared = at.multiselect(key="gpt_bpc_runs").value
    assert picked.startswith("07_char_vs_bpe_gpt-bpe")
    assert sorted(label.split(" · ")[0] for label in compared) == ["07_char_vs_bpe_gpt-bpe",
                                                                     "07_char_vs_bpe_gpt-char"]
    assert any("vocab-320" in option for option in at.selectbox(key="gpt_selected_run").options)


def test_the_station_shown_is_there_again_after_a_visit_to_another_page(runs_dir):
    """Streamlit forgot the pills' key on the tool's page, and the URL's ``?station=`` went with the
    page switch: an attendee back from a station's tool found the first station not done."""
    at = open_start(station="13_chat_templates")
    at.switch_page("app_pages/chat.py").run()
    at.switch_page("app_pages/start_here.py").run()
    assert at.button_group(key="w_lesson_station").value == "13_chat_templates"
    assert not at.exception


def test_a_station_opens_its_tool_as_new_whatever_was_typed_there_before(runs_dir):
    """The tool's own boxes, kept across pages, are set back when a station opens it: the
    figures the station quotes are those of the page's first view."""
    at = open_start(station="13_chat_templates")
    at.switch_page("app_pages/chat.py").run()
    at.text_area(key="w_chat_text_1").set_value("My own question").run()
    at.button(key="chat_remove_0").click().run()
    at.switch_page("app_pages/start_here.py").run()
    at.button(key="lesson_open_13_chat_templates").click().run()
    assert [t.value for t in at.title] == ["💬 Chat templates"]
    assert [t.value for t in at.text_area if (t.key or "").startswith("w_chat_text_")] == \
        [m.content for m in SAMPLE_MESSAGES]


def test_the_chat_station_lands_on_its_conversation_with_the_figures_it_quotes(runs_dir):
    station = load_path().station("13_chat_templates")
    answer = compute_answer(station)
    at = open_tool(station.id, jobs=False)
    assert [t.value for t in at.title] == ["💬 Chat templates"]
    at.checkbox(key="w_chat_use_tools").uncheck().run()  # the station's conversation has no tool
    said = " ".join(m.value for m in at.markdown)
    total, template = answer.facts["first_total"], answer.facts["first_template"]
    assert f"**GPT\\-OSS**: {total} tokens, {template} of them" in said
