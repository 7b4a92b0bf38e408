"""The "Train a GPT" page's first view: a fresh visitor gets a useful example, ready to launch
(never the default sample's "too short" warning), with measured speeds in the Model size help;
a reload of the URL brings back the same."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "streamlit_app.py"
ALICE = "alice-0123456789"


def fresh_visit(runs_dir, params: dict) -> AppTest:
    """A new browser session opened at the Train a GPT page's URL with ``params``, nothing else."""
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update(params)
    at.session_state["gpt_runs_dir"] = str(runs_dir)
    at.switch_page("app_pages/train_gpt.py").run()  # the first run opens the page, as a URL does
    assert not at.exception, [e.value for e in at.exception]
    return at


def ready_to_launch(at) -> bool:
    return (not at.warning and not at.error and not at.button(key="gpt_launch").disabled
            and not at.button(key="gpt_estimate").disabled)


def test_the_first_view_is_a_ready_example_and_a_reload_keeps_it(tmp_path):
    """Opened fresh, the page trains on a corpus a GPT can learn from (the default sample is far
    too short), Launch ready; the Model size help states measured speeds; a reload of the URL
    brings back the same corpus, still ready."""
    at = fresh_visit(tmp_path, {"u": ALICE})
    assert ready_to_launch(at), [w.value for w in at.warning]
    assert len(at.session_state["corpus_text"]) >= 100_000
    assert any("200,000 characters" in m.value for m in at.markdown)
    sizes = at.selectbox(key="gpt_preset").help
    assert "tiny: 4 layers × 128 wide" in sizes and "a 2-core CPU: ~" in sizes
    assert "one GPU: not measured" in sizes and "one H100 GPU: ~8.6 ms a step" in sizes

    # a reload: the URL the app wrote (?u=, ?corpus=); the Train settings the browser writes into
    # it itself (bind="query-params") are checked in a real browser (test_browser_reload.py)
    url = dict(at.query_params)
    assert url["corpus"].startswith("sample:")
    again = fresh_visit(tmp_path, url)
    assert ready_to_launch(again)
    assert again.session_state["corpus_text"] == at.session_state["corpus_text"]


def test_a_short_sample_the_visitor_chose_stays_with_its_offer(tmp_path):
    """Only the untouched default is replaced: a sample picked on purpose (here, by its link)
    stays, with the "too short" message and its one-click way out."""
    at = fresh_visit(tmp_path, {"u": ALICE, "corpus": "sample:sennrich"})
    assert "too short" in at.warning[0].value and at.button(key="gpt_launch").disabled
    assert at.button(key="gpt_load_shakespeare")
