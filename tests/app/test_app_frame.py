"""The frame around every page: whichever URL a visitor opens first, the page has its navigation
and corpus sidebar; a page left for another and opened again keeps what was typed into it.

AppTest starts each test as a fresh server, so a first run that asks for a page's URL is the case
where Streamlit used to run a page file alone (a ``pages/`` folder, which the app no longer has);
``test_browser.py`` checks the same in a real browser.
"""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.plumbing.navigation import PAGES as NAVIGATION

APP = Path(__file__).resolve().parents[2] / "streamlit_app.py"
EVERY_PAGE = sorted(p.stem for p in (APP.parent / "app_pages").glob("*.py"))  # a page added later too
PAGES = {"app_pages/start_here.py": "🧭 Start here",
         "app_pages/learn_bpe.py": "🎞️ Learn BPE", "app_pages/char_vs_bpe.py": "⚖️ Char vs BPE",
         "app_pages/train_gpt.py": "🧠 Train a GPT", "app_pages/chat.py": "💬 Chat templates"}


def test_the_navigation_lists_every_page_file():
    """A page file the navigation leaves out is never shown, nor checked by the tests and visited by
    the room benchmarks that read the navigation's list (``ui.plumbing.navigation``)."""
    assert sorted(name for name, _, _ in NAVIGATION) == EVERY_PAGE


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


@pytest.mark.parametrize("page", EVERY_PAGE)
def test_a_page_opened_again_keeps_what_was_typed_into_it(page, tmp_path, monkeypatch):
    """Streamlit forgets a widget's value on a page that does not draw it: Compare tokenizers,
    opened again, raised a KeyError, and Chat, Tokenizer questions and the run name came back
    empty or on their examples.  Every box of the page is typed into, then the attendee goes to
    another page and comes back."""
    monkeypatch.setenv("BPE_EXPLORER_RUNS_DIR", str(tmp_path))
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    at.switch_page(f"app_pages/{page}.py").run()
    typed = {}
    for kind, key in [(box.type, box.key) for box in [*at.main.text_area, *at.main.text_input]]:
        box = (at.text_area if kind == "text_area" else at.text_input)(key=key)  # in this run's page
        typed[key] = f"{box.value or ''} and mine"
        box.set_value(typed[key]).run()
    elsewhere = "learn_bpe" if page != "learn_bpe" else "chat"
    at.switch_page(f"app_pages/{elsewhere}.py").run()
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert {box.key: box.value for box in [*at.main.text_area, *at.main.text_input]
            if box.key in typed} == typed
