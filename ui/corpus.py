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
SAMPLE = "corpus_sample"
ERROR = "corpus_error"
EDIT_LIMIT = 100_000  # larger corpora are not copied into the text box


def _sync_paste_box() -> None:
    text = st.session_state[CORPUS_TEXT]
    st.session_state[PASTE] = text if len(text) <= EDIT_LIMIT else ""


def _load(name: str, text: str, from_samples: bool = False) -> None:
    set_corpus(name, text)
    st.session_state[ERROR] = None
    _sync_paste_box()
    if not from_samples:  # the sample box shows no sample, so any sample is one pick away
        st.session_state[SAMPLE] = None


def _on_sample() -> None:
    name = st.session_state[SAMPLE]
    if name is not None:
        _load(samples.label(name), samples.load_sample(name), from_samples=True)


def _on_paste() -> None:
    text = st.session_state[PASTE]
    if text == st.session_state[CORPUS_TEXT]:
        return
    set_corpus("Pasted text", text)
    st.session_state[ERROR] = None
    st.session_state[SAMPLE] = None


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
        st.selectbox("Sample corpus", names, format_func=samples.label, key=SAMPLE,
                     on_change=_on_sample, placeholder="Pick a sample…",
                     help="Choosing a sample replaces the corpus.")
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
        # a table, not metric tiles: the sidebar is too narrow for "1,115,394" in a tile
        st.markdown("| | |\n|:--|--:|\n" + "".join(
            f"| {label} | {value:,} |\n" for label, value in (
                ("Characters", s.characters), ("Bytes (UTF-8)", s.bytes), ("Words", s.words),
                ("Unique characters", s.unique_characters))))


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
