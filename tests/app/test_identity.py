"""ui.plumbing.identity: an owner id per browser kept in the URL (``?u=``), replaced when crafted, kept
across page switches; the instructor key compared in constant time."""

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.plumbing.identity import key_matches

APP = Path(__file__).resolve().parents[2] / "streamlit_app.py"
TOKEN = re.compile(r"[A-Za-z0-9_-]{16}")


def open_app(tmp_path, monkeypatch, owner=None) -> AppTest:
    monkeypatch.setenv("BPE_EXPLORER_RUNS_DIR", str(tmp_path))
    at = AppTest.from_file(str(APP), default_timeout=60)
    if owner is not None:
        at.query_params["u"] = owner
    return at


def test_a_first_visit_gets_an_id_that_survives_page_switches(tmp_path, monkeypatch):
    at = open_app(tmp_path, monkeypatch)
    at.switch_page("app_pages/train_gpt.py").run()
    owner = at.query_params["u"]
    assert TOKEN.fullmatch(owner)
    for page in ("app_pages/learn_bpe.py", "app_pages/train_gpt.py"):
        at.switch_page(page).run()
        assert not at.exception
    assert at.query_params["u"] == owner
    again = open_app(tmp_path, monkeypatch, owner)  # a reload: a new session, the same URL
    again.switch_page("app_pages/train_gpt.py").run()
    assert again.query_params["u"] == owner


@pytest.mark.parametrize("crafted", ["../x", "admin", "a/b/c/d/e/f/g/h/i", "x" * 65, "ab cd ef gh ij kl"])
def test_a_crafted_id_is_replaced(tmp_path, monkeypatch, crafted):
    at = open_app(tmp_path, monkeypatch, crafted)
    at.switch_page("app_pages/train_gpt.py").run()
    assert not at.exception
    assert at.query_params["u"] != crafted
    assert TOKEN.fullmatch(at.query_params["u"])
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith(".")] == []


def test_the_instructor_key_is_checked_exactly():
    assert key_matches("s3cret-key", "s3cret-key")
    assert not key_matches("s3cret-ke", "s3cret-key") and not key_matches("", "s3cret-key")
    assert not key_matches("", None) and not key_matches("anything", None)
