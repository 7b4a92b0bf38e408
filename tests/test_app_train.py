"""The "Train a GPT" page in AppTest: launch a tiny run, watch metrics arrive, stop it, generate."""

import json
import os
import signal
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from conftest import shared_path
from core.corpus import CorpusError
from core.runs import launch_run, list_runs, pid_alive, read_metrics, stop_run
from test_train import TEXT, tiny_config

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "streamlit_app.py"


def open_page(runs_dir) -> AppTest:
    """A new browser session opened at the Train a GPT page's URL, with the test corpus."""
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["gpt_runs_dir"] = str(runs_dir)
    at.session_state["corpus_name"] = "test corpus"
    at.session_state["corpus_text"] = TEXT
    at.switch_page("pages/train_gpt.py")
    return at


@pytest.fixture
def app(tmp_path):
    at = open_page(tmp_path)
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
    again = open_page(tmp_path).run()
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
    at = AppTest.from_file(str(APP), default_timeout=60).run()
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

    samples = at.sidebar.selectbox(key="corpus_sample")
    assert samples.value is None  # Tiny Shakespeare is not a listed sample, so none is shown picked
    samples.select("sennrich").run()  # and the sample shown before is one pick away again
    assert at.session_state["corpus_text"] == (ROOT / "sample_corpora" / "sennrich.txt").read_text()
    assert "too short" in at.warning[0].value


def test_the_run_name_follows_the_settings_until_typed(app):
    at = app.run()
    assert at.text_input(key="gpt_run_name").value == "char-tiny"
    at.radio(key="gpt_tokenizer").set_value("bpe").run()
    assert at.text_input(key="gpt_run_name").value == "bpe-tiny"
    at.selectbox(key="gpt_preset").select("small").run()
    assert at.text_input(key="gpt_run_name").value == "bpe-small"
    at.text_input(key="gpt_run_name").input("my first run").run()
    at.radio(key="gpt_tokenizer").set_value("char").run()
    assert at.text_input(key="gpt_run_name").value == "my first run"


def _finished_run(runs_dir: Path, name: str, started: str, bpc: float) -> None:
    """A run folder as a finished run leaves it (written by hand: no training needed)."""
    run = runs_dir / name
    run.mkdir()
    (run / "status.json").write_text(json.dumps({"status": "finished", "started": started,
                                                 "max_steps": 10, "step": 10}))
    (run / "metrics.jsonl").write_text(json.dumps({
        "step": 10, "train_loss": 2.0, "lr": 1e-3, "tokens_per_s": 1.0, "elapsed_s": 1.0,
        "val_loss": 2.0, "val_bpc": bpc}) + "\n")


def test_new_runs_join_the_comparison_and_removed_ones_stay_out(app, tmp_path):
    _finished_run(tmp_path, "char-a", "2026-01-01T00:00:01", 3.1)
    _finished_run(tmp_path, "bpe-b", "2026-01-01T00:00:02", 2.9)
    at = app.run()
    assert at.multiselect(key="gpt_compare").value == ["bpe-b", "char-a"]
    _finished_run(tmp_path, "bpe-c", "2026-01-01T00:00:03", 2.7)  # e.g. launched from another tab
    at.run()
    assert at.multiselect(key="gpt_compare").value == ["bpe-b", "char-a", "bpe-c"]
    at.multiselect(key="gpt_compare").unselect("char-a").run()
    _finished_run(tmp_path, "char-d", "2026-01-01T00:00:04", 3.0)
    at.run()
    assert at.multiselect(key="gpt_compare").value == ["bpe-b", "bpe-c", "char-d"]
    spec = json.loads(at.get("vega_lite_chart")[-1].proto.spec)
    assert spec["encoding"]["y"]["field"] == "bits per character"


def test_resume_a_stopped_run_then_delete_it(app, tmp_path):
    run = launch_run(tiny_config(max_steps=100_000, eval_interval=10), "paused", tmp_path, text=TEXT)
    poll(app, lambda a: (run.path / "ckpt.pt").is_file())
    stop_run(run.path, timeout=30)
    at = app.run()
    assert not at.button(key="gpt_resume").disabled and not any(b.key == "gpt_stop" for b in at.button)
    at.button(key="gpt_resume").click().run()
    [resumed] = list_runs(tmp_path)
    assert resumed.active and resumed.pid != run.pid
    steps_before = read_metrics(run.path)[-1]["step"]
    poll(at, lambda a: read_metrics(run.path)[-1]["step"] > steps_before + 10)
    at.button(key="gpt_stop").click().run()
    poll(at, lambda a: list_runs(tmp_path)[0].status == "stopped", timeout=30)
    assert not pid_alive(resumed.pid)

    at.button(key="gpt_delete").click().run()
    assert not at.exception and list_runs(tmp_path) == [] and not run.path.exists()
    assert "No runs yet" in " ".join(i.value for i in at.info)
