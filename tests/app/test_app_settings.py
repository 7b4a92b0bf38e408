"""A server setting that cannot be used never breaks a page: every page runs as if it were unset
and the sidebar names it (an instructor who set a short key once got a traceback on every page)."""

import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import ROOT
from ui.plumbing.navigation import PAGES as NAVIGATION

PAGES = [name for name, _, _ in NAVIGATION]  # every page, a new one too


@pytest.mark.parametrize("page", PAGES)
def test_a_bad_setting_is_a_warning_in_the_sidebar_on_every_page(page, tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_EXPLORER_RUNS_DIR", str(tmp_path))
    monkeypatch.setenv("BPE_EXPLORER_INSTRUCTOR_KEY", "testkey")
    monkeypatch.setenv("BPE_EXPLORER_MAX_RUNNING", "lots")
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60).run()
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, [e.message for e in at.exception]
    warnings = [w.value.replace("\\", "") for w in at.sidebar.warning]  # markdown escapes removed
    assert any("INSTRUCTOR_KEY is too short" in w for w in warnings), warnings
    assert any("MAX_RUNNING='lots' is not a number" in w for w in warnings), warnings
