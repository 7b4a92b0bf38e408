"""The "Train a GPT" page in AppTest: launch a tiny run, watch metrics arrive, stop it, generate."""

import os
import signal
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from conftest import shared_path
from core.corpus import CorpusError
from core.runs import list_runs, pid_alive, stop_run
from test_train import TEXT

PAGE = Path(__file__).resolve().parent.parent / "pages" / "train_gpt.py"


@pytest.fixture
def app(tmp_path):
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.session_state["gpt_runs_dir"] = str(tmp_path)
    at.session_state["corpus_name"] = "test corpus"
    at.session_state["corpus_text"] = TEXT
    try:
        yield at
    finally:  # never leave a training process behind
        for run in list_runs(tmp_path):
            if run.pid and pid_alive(run.pid):
                stop_run(run.path, timeout=10)
            if run.pid and pid_alive(run.pid):
                os.killpg(run.pid, signal.SIGKILL)


def poll(at, predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        at.run()
        if predicate(at):
            return
        time.sleep(0.5)
    raise AssertionError("timed out waiting for the page; errors: "
                         + "; ".join(e.value for e in at.error) + " exceptions: "
                         + "; ".join(str(e.value) for e in at.exception))


def val_loss_shown(at) -> bool:
    return any(m.label == "val loss" and m.value != "–" for m in at.metric)


def test_launch_watch_stop_and_generate(app, tmp_path):
    at = app.run()
    assert not at.exception
    assert "No runs yet" in " ".join(i.value for i in at.info)
    at.selectbox(key="gpt_preset").select("custom").run()
    for key, value in {"gpt_n_layer": 1, "gpt_n_head": 2, "gpt_n_embd": 32, "gpt_block_size": 16,
                       "gpt_batch_size": 8}.items():
        at.number_input(key=key).set_value(value)
    at.number_input(key="gpt_steps").set_value(100_000)
    at.text_input(key="gpt_run_name").input("../page run").run()
    at.button(key="gpt_estimate").click().run()
    assert "ms per step" in " ".join(i.value for i in at.info)
    at.button(key="gpt_launch").click().run()
    assert not at.exception, [e.value for e in at.exception]
    [run] = list_runs(tmp_path)
    assert run.name == "page-run" and run.active

    poll(at, val_loss_shown)
    assert at.get("vega_lite_chart"), "the loss chart is drawn"
    at.button(key="gpt_stop").click().run()
    poll(at, lambda a: list_runs(tmp_path)[0].status == "stopped", timeout=30)
    assert not pid_alive(run.pid)

    # a fresh session (a page reload) still finds the run on disk
    again = AppTest.from_file(str(PAGE), default_timeout=60)
    again.session_state["gpt_runs_dir"] = str(tmp_path)
    again.session_state["corpus_text"] = TEXT
    again.session_state["corpus_name"] = "test corpus"
    again.run()
    assert "page-run" in again.selectbox(key="gpt_selected_run").options[0]
    again.text_input(key="gpt_prompt").input("the cat €").run()
    again.button(key="gpt_generate").click().run()
    assert not again.exception
    assert any("cannot be encoded" in e.value for e in again.error)
    again.text_input(key="gpt_prompt").input("the cat").run()
    again.button(key="gpt_generate").click().run()
    assert not again.exception and again.code and again.code[-1].value.startswith("the cat")


def test_page_in_the_app_navigation(tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_EXPLORER_RUNS_DIR", str(tmp_path))
    at = AppTest.from_file(str(PAGE.parent.parent / "streamlit_app.py"), default_timeout=60).run()
    at.switch_page("pages/train_gpt.py").run()
    assert not at.exception and at.title[0].value == "🧠 Train a GPT"
    assert list_runs(tmp_path) == []


def test_a_too_short_corpus_offers_tiny_shakespeare(app, monkeypatch):
    shared_path("corpora", "tinyshakespeare.txt")  # where the button finds it offline
    app.session_state["corpus_text"] = "low lower newest widest"
    at = app.run()
    assert "too short" in at.warning[0].value and at.button(key="gpt_launch").disabled

    import ui.corpus

    def offline(cache_dir):
        raise CorpusError("Could not download Tiny Shakespeare (no internet connection?)")

    with monkeypatch.context() as m:  # offline and no local copy: a message, the corpus is kept
        m.setattr(ui.corpus, "download_tiny_shakespeare", offline)
        at.button(key="gpt_load_shakespeare").click().run()
    assert any("no internet" in e.value and "not changed" in e.value for e in at.error)
    assert at.session_state["corpus_text"] == "low lower newest widest"

    at.button(key="gpt_load_shakespeare").click().run()
    assert not at.exception and not at.warning
    assert at.session_state["corpus_name"] == "Tiny Shakespeare"
    assert len(at.session_state["corpus_text"]) == 1_115_394
    assert not at.button(key="gpt_launch").disabled
