"""The corpus sidebar every page shares: pick a sample, paste, upload, download Tiny Shakespeare
or read a local file.  Errors become messages; a failed load keeps the previous corpus."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from core.corpus import CorpusError, MAX_CORPUS_BYTES, decode_corpus, download_tiny_shakespeare, read_corpus

from . import samples
from .render import md_safe
from .state import CORPUS_TEXT, get_corpus, init_state, set_corpus, stats_of

CACHE_DIR = Path.home() / ".cache" / "bpe-explorer"
PASTE = "corpus_paste"
ERROR = "corpus_error"
EDIT_LIMIT = 100_000  # larger corpora are not copied into the text box


def _sync_paste_box() -> None:
    text = st.session_state[CORPUS_TEXT]
    st.session_state[PASTE] = text if len(text) <= EDIT_LIMIT else ""


def _load(name: str, text: str) -> None:
    set_corpus(name, text)
    st.session_state[ERROR] = None
    _sync_paste_box()


def _on_sample() -> None:
    name = st.session_state["corpus_sample"]
    _load(samples.label(name), samples.load_sample(name))


def _on_paste() -> None:
    text = st.session_state[PASTE]
    if text == st.session_state[CORPUS_TEXT]:
        return
    set_corpus("Pasted text", text)
    st.session_state[ERROR] = None


def _on_upload() -> None:
    upload = st.session_state.get("corpus_upload")
    if upload is None:
        return
    try:
        _load(upload.name, decode_corpus(upload.getvalue(), upload.name))
    except CorpusError as exc:
        st.session_state[ERROR] = str(exc)


def load_tiny_shakespeare() -> None:
    """A button callback: Tiny Shakespeare becomes the corpus (a failed download is shown by
    :func:`corpus_error_banner`, and the corpus stays what it was)."""
    try:
        path = download_tiny_shakespeare(CACHE_DIR)
        _load("Tiny Shakespeare", read_corpus(path))
    except CorpusError as exc:
        st.session_state[ERROR] = str(exc)


def _on_local_path() -> None:
    raw = st.session_state.get("corpus_path", "").strip()
    if not raw:
        return
    try:
        path = Path(raw).expanduser()
        _load(path.name, read_corpus(path))
    except CorpusError as exc:
        st.session_state[ERROR] = str(exc)


def corpus_sidebar() -> None:
    init_state()
    ss = st.session_state
    if PASTE not in ss:
        _sync_paste_box()
    ss.setdefault(ERROR, None)
    with st.sidebar:
        st.header("Corpus")
        names = samples.sample_names()
        st.selectbox("Sample corpus", names, format_func=samples.label, key="corpus_sample",
                     on_change=_on_sample, help="Choosing a sample replaces the corpus.")
        st.text_area("Or paste your own text", key=PASTE, height=150, on_change=_on_paste,
                     help="Press Ctrl+Enter (or click outside the box) to use it.")
        st.file_uploader(f"Or upload a UTF-8 .txt file (up to {MAX_CORPUS_BYTES // 2**20} MB)",
                         type=["txt"], key="corpus_upload", on_change=_on_upload)
        with st.expander("More corpora"):
            st.button("Download Tiny Shakespeare (1 MB)", on_click=load_tiny_shakespeare,
                      help=f"Cached in {CACHE_DIR}; needs the internet the first time.")
            st.text_input("Load a local file by path", key="corpus_path", on_change=_on_local_path,
                          placeholder="/path/to/corpus.txt")
        name, text = get_corpus()
        s = stats_of(text)
        st.markdown(f"**{md_safe(name)}**")
        if len(text) > EDIT_LIMIT:
            st.caption("Large corpus: not copied into the text box above.")
        c1, c2 = st.columns(2)
        c1.metric("Characters", f"{s.characters:,}")
        c2.metric("Bytes", f"{s.bytes:,}")
        c1.metric("Words", f"{s.words:,}")
        c2.metric("Unique chars", f"{s.unique_characters:,}")


def corpus_error_banner() -> None:
    """The last failed load, above the page (the corpus stays what it was)."""
    error = st.session_state.get(ERROR)
    if error:
        st.error(f"{error} The corpus was not changed.", icon="⚠️")


def require_corpus() -> tuple[str, str] | None:
    """The corpus, or ``None`` after a friendly message when it is empty.  Call it at the top of
    a page: it also shows why the last load failed, if it did."""
    corpus_error_banner()
    name, text = get_corpus()
    if not text.strip():
        st.info("The corpus is empty. Pick a sample, paste some text or upload a .txt file in the "
                "sidebar, and BPE will start learning from it.", icon="✍️")
        return None
    return name, text
