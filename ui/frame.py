"""The frame every page sits in: page config, the page list, the corpus sidebar.

``streamlit_app.py`` calls :func:`run_app`.  Each page starts with :func:`require_frame`, because
Streamlit can run a page without its frame: a fresh server whose first visitor opens a page's URL
(a bookmark, or a tab reconnecting after ``streamlit run`` restarts) treats the ``pages/`` folder
the old way and runs that page file alone, with no corpus sidebar and a navigation of file names,
for every visitor until the frame runs once.
"""

from __future__ import annotations

import threading

import streamlit as st

from . import memory, state
from .controls import restore_settings, sync_settings_url
from .corpus import corpus_sidebar, restore_corpus, start_trainable
from .identity import owner_id

_inside = threading.local()  # set while run_app runs a page (each session's script has a thread)


def run_app() -> None:
    """Set up the page, the navigation and the corpus sidebar, then run the page the URL names."""
    memory.start()  # once per process: the malloc arena cap, the housekeeper (``ui.memory``)
    st.set_page_config(page_title="BPE Explorer", page_icon="🔤", layout="wide")
    page = st.navigation([
        st.Page("pages/learn_bpe.py", title="Learn BPE", icon="🎞️", default=True),
        st.Page("pages/char_vs_bpe.py", title="Char vs BPE", icon="⚖️"),
        st.Page("pages/compare_tokenizers.py", title="Compare tokenizers", icon="🔍"),
        st.Page("pages/train_gpt.py", title="Train a GPT", icon="🧠"),
    ])
    owner_id()  # keeps ?u= in the URL on every page, so a reload anywhere keeps the same owner
    params = state.opening_params()
    if params is not None:  # a reload or a bookmark: the corpus, then its settings, from the URL
        state.init_state()
        restore_corpus(params)
        restore_settings(params)
    if page.url_path == "train_gpt":
        start_trainable()
    corpus_sidebar()
    sync_settings_url()
    _inside.active = True
    try:
        page.run()
    finally:
        _inside.active = False


def require_frame() -> None:
    """Run the whole app instead when this page was started without its frame, then end this
    run.  The app's ``st.navigation`` picks the same page from the URL, and from then on
    Streamlit runs ``streamlit_app.py`` for every visitor."""
    if getattr(_inside, "active", False):
        return
    run_app()
    st.stop()
