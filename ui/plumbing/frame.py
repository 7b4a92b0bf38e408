"""The frame every page sits in: page config, the page list, the corpus sidebar.

``streamlit_app.py`` calls :func:`run_app`.  The page files live in ``app_pages/``, not
``pages/``: Streamlit treats a ``pages/`` folder beside the main script the old way on a fresh
server, and ran a page file alone (no corpus sidebar, file names for a navigation) when the first
visitor opened a page's URL.  With no such folder, every URL runs ``streamlit_app.py`` and its
``st.navigation`` picks the page (``test_a_fresh_server_opened_at_a_page_url`` in
``tests/app/test_browser.py`` opens a fresh server at a page's URL to show it).
"""

from __future__ import annotations

import streamlit as st

from ui.serving import memory, page_queue, sockets, supervisor

from ui.plumbing import heavy_jobs, state, theme
from ui.plumbing.controls import restore_settings, sync_settings_url
from ui.plumbing.corpus_sidebar import corpus_sidebar, restore_corpus, start_trainable
from ui.plumbing.identity import owner_id
from ui.plumbing.navigation import PAGES


def run_app() -> None:
    """Run the page the URL names in its frame, in its place in this process's line of page runs
    (``ui.serving.page_queue``)."""
    with page_queue.place_in_line():
        _run_page()


def _run_page() -> None:
    """Set up the page, the navigation and the corpus sidebar, then run the page the URL names."""
    memory.start("ui.views")  # once per process: the arena cap, the views frozen, the housekeeper
    sockets.start()  # once per process: a run's messages leave at once (``ui.serving.sockets``)
    st.set_page_config(page_title="BPE Explorer", page_icon="🔤", layout="wide")
    theme.apply()  # contrast where Streamlit's theme falls short (``ui.plumbing.theme``)
    page = st.navigation([st.Page(f"app_pages/{name}.py", title=title, icon=icon, default=name == PAGES[0][0])
                          for name, title, icon in PAGES])
    owner_id()  # keeps ?u= in the URL on every page, so a reload anywhere keeps the same owner
    if page.url_path:  # ?station= is Start here's (the browser's Back returns to it), not a tool's
        state.url_put(state.STATION_PARAM, None)
    params = state.opening_params()
    if params is not None:  # a reload or a bookmark: the corpus, then its settings, from the URL
        state.init_state()
        restore_corpus(params)
        restore_settings(params)
    if page.url_path == "train_gpt":
        start_trainable()
    heavy_jobs.cancel_stale()  # a new corpus or new settings: this session's running jobs are moot
    corpus_sidebar(page.url_path)
    memory.hold_corpus(state.corpus_digest())  # the caches keep its work while a session has it
    with st.sidebar:
        supervisor.rerun_on_reconnect()  # a tab whose app process died comes back at once
    sync_settings_url()
    page.run()
