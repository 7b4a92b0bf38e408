"""Reloading the tab (a new session opened at the same URL) brings back the corpus and the
tokenizer settings: the URL names them, and a pasted corpus is kept in the owner's store."""

import stat
from pathlib import Path

from streamlit.testing.v1 import AppTest

from app_helpers import paste_box
from conftest import shared_path

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "streamlit_app.py"
OWNER = "alice-0123456789"
TEXT = "the lowest newer wider tokens were lower than the newest widest ones\n" * 20


def open_app(runs_dir: Path, params: dict) -> AppTest:
    """A new browser session opened at a URL with ``params``."""
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params.update(params)
    at.session_state["gpt_runs_dir"] = str(runs_dir)
    at.switch_page("app_pages/learn_bpe.py")  # the root opens Start here
    return at.run()


def test_reload_restores_pasted_corpus_and_settings(tmp_path):
    at = open_app(tmp_path / "runs", {"u": OWNER})
    paste_box(at).input(TEXT).run()
    at.radio(key="w_variant").set_value("word").run()
    at.number_input(key="w_num_merges").set_value(30).run()
    assert not at.exception
    url = dict(at.query_params)
    assert url["corpus"].startswith("text:")
    assert url["variant"] == "word"
    assert url["merges"] == "30"

    again = open_app(tmp_path / "runs", {**url, "step": "7"})
    assert not again.exception
    assert again.session_state["corpus_text"] == TEXT
    assert again.radio(key="w_variant").value == "word"
    assert again.number_input(key="w_num_merges").value == 30
    assert again.session_state["learn_step"] == 7
    folder = tmp_path / "runs" / ".corpora" / OWNER
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_reload_restores_a_sample_by_name(tmp_path):
    at = open_app(tmp_path / "runs", {"u": OWNER})
    names = at.sidebar.selectbox(key="corpus_sample").options
    at.sidebar.selectbox(key="corpus_sample").select_index(len(names) - 1).run()
    url = dict(at.query_params)
    assert url["corpus"].startswith("sample:")
    again = open_app(tmp_path / "runs", url)
    assert again.session_state["corpus_text"] == at.session_state["corpus_text"]


def test_another_owner_or_a_bad_link_gets_a_plain_message(tmp_path):
    at = open_app(tmp_path / "runs", {"u": OWNER})
    paste_box(at).input(TEXT).run()
    url = dict(at.query_params)
    bob = open_app(tmp_path / "runs", {**url, "u": "bob-0123456789ab"})
    assert bob.session_state["corpus_text"] != TEXT  # Bob's store holds no Alice corpus
    assert "could not be restored" in bob.error[0].value
    odd = open_app(tmp_path / "runs", {"u": OWNER, "corpus": "text:../../etc/passwd", "merges": "x9"})
    assert not odd.exception and "does not name a saved corpus" in odd.error[0].value


def test_sessions_on_a_sample_share_one_copy_of_its_text(tmp_path):
    """A room reloading the Python docs held one copy (a 400 KB string) per session; now every session that
    opens a sample, from the URL or by default, holds the same string, hashed once."""
    from core.samples import PYTHON_DOCS, python_docs_corpus
    from ui.plumbing.state import text_digest

    tabs = [open_app(tmp_path / "runs", {"u": f"{OWNER}-{i}", "corpus": "sample:" + PYTHON_DOCS})
            for i in range(2)]
    fresh = [open_app(tmp_path / "runs", {"u": f"{OWNER}-f{i}"}) for i in range(2)]
    for group in (tabs, fresh):
        assert not any(at.exception for at in group)
        first, second = (at.session_state["corpus_text"] for at in group)
        assert first is second
        assert all(at.session_state["corpus_digest"] == text_digest(first) for at in group)
    assert tabs[0].session_state["corpus_text"] == python_docs_corpus()
    assert fresh[0].session_state["corpus_name"].startswith("Sennrich")


def test_sessions_on_tiny_shakespeare_share_one_copy_of_it(tmp_path):
    shared_path("corpora", "tinyshakespeare.txt")  # where the server finds it offline
    tabs = [open_app(tmp_path / "runs", {"u": f"{OWNER}-{i}", "corpus": "shakespeare"}) for i in range(2)]
    assert not any(at.exception for at in tabs)
    first, second = (at.session_state["corpus_text"] for at in tabs)
    assert len(first) == 1_115_394 and first is second
    assert tabs[1].session_state["corpus_name"] == "Tiny Shakespeare"
