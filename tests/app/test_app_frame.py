"""The frame around every page: whichever URL a visitor opens first, the page has its navigation
and corpus sidebar.

AppTest starts each test as a fresh server, so a first run that asks for a page's URL is the case
where Streamlit used to run a page file alone (a ``pages/`` folder, which the app no longer has);
``test_browser.py`` checks the same in a real browser.
"""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "streamlit_app.py"
PAGES = {"app_pages/start_here.py": "🧭 Start here",
         "app_pages/learn_bpe.py": "🎞️ Learn BPE", "app_pages/char_vs_bpe.py": "⚖️ Char vs BPE",
         "app_pages/train_gpt.py": "🧠 Train a GPT", "app_pages/chat.py": "💬 Chat templates"}


@pytest.mark.parametrize("page", PAGES)
def test_a_first_visit_to_a_page_url_gets_the_whole_app(page, tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_EXPLORER_RUNS_DIR", str(tmp_path))
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.switch_page(page).run()  # the session's first run asks for this page, not the main one
    for _ in range(2):  # and the rerun after a click keeps it all
        assert not at.exception, [e.value for e in at.exception]
        assert [t.value for t in at.title] == [PAGES[page]]
        assert [h.value for h in at.sidebar.header] == ["Corpus"]
        assert at.sidebar.selectbox(key="corpus_sample").value
        at.run()


def test_the_main_url_opens_start_here_with_the_sidebar(tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_EXPLORER_RUNS_DIR", str(tmp_path))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not at.exception
    assert [t.value for t in at.title] == [PAGES["app_pages/start_here.py"]]
    assert [h.value for h in at.sidebar.header] == ["Corpus"]
