"""The corpus sidebar every page shares: pick a sample, paste, upload, download Tiny Shakespeare
or, when the server allows it, read a file from the server's corpus folder.  Errors become
messages; a failed load keeps the previous corpus.

Every way in is bounded by the server's ``max_corpus_bytes`` before the text is read, and a
loaded corpus is held once per session: the paste box copies only small corpora, and an upload's
bytes are handed back to Streamlit once decoded.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core.corpus import (CorpusError, check_corpus_size, decode_corpus, download_tiny_shakespeare,
                         read_corpus, read_corpus_under)
from core.settings import ServerSettings

from . import samples, state
from .cache import corpus_statistics, server_settings
from .render import md_safe
from .state import CORPUS_ERROR, CORPUS_PASTE, CORPUS_PATH, CORPUS_SAMPLE, CORPUS_UPLOADS

CACHE_DIR = Path.home() / ".cache" / "bpe-explorer"
EDIT_LIMIT = 100_000  # larger corpora are not copied into the text box


def settings(report: bool = False) -> ServerSettings:
    """The server's settings; with a broken setting the safe defaults (no server folder, default
    caps) hold instead, and ``report`` says why where it is drawn."""
    try:
        return server_settings()
    except ValueError as exc:
        if report:
            st.error(f"Server setting ignored: {md_safe(str(exc))}", icon="⚠️")
        return ServerSettings()


def _sync_paste_box() -> None:
    _, text = state.corpus()
    state.put(CORPUS_PASTE, text if len(text) <= EDIT_LIMIT else "")


def _load(name: str, text: str, from_samples: bool = False) -> None:
    state.set_corpus(name, text)
    state.put(CORPUS_ERROR, None)
    _sync_paste_box()
    if not from_samples:  # the sample box shows no sample, so any sample is one pick away
        state.put(CORPUS_SAMPLE, None)


def _failed(message: str) -> None:
    """Keep a failed load's message for :func:`corpus_error_banner` (Markdown: any user-supplied
    name in it must already be escaped with ``md_safe``)."""
    state.put(CORPUS_ERROR, message)


def _on_sample() -> None:
    name = state.get(CORPUS_SAMPLE)
    if name is not None:
        _load(samples.label(name), samples.load_sample(name), from_samples=True)


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _on_paste() -> None:
    text = state.get(CORPUS_PASTE)
    if text == state.corpus()[1]:
        return
    try:
        check_corpus_size(_utf8_size(text), "The pasted text", settings().max_corpus_bytes)
    except CorpusError as exc:
        _failed(str(exc))
        _sync_paste_box()  # the box shows the corpus again, not the refused text
        return
    state.set_corpus("Pasted text", text)
    state.put(CORPUS_ERROR, None)
    state.put(CORPUS_SAMPLE, None)


def _upload_key() -> str:
    """The uploader's key: it counts the uploads loaded, so each load empties the box."""
    return f"corpus_upload_{state.get(CORPUS_UPLOADS, 0)}"


def _on_upload() -> None:
    upload = state.get(_upload_key())
    if upload is None:
        return
    limit = settings().max_corpus_bytes
    source = md_safe(upload.name)  # shown in a Markdown banner: the name as typed, never as links
    try:
        check_corpus_size(upload.size, source, limit)
        _load(upload.name, decode_corpus(upload.getvalue(), source, max_bytes=limit))
    except CorpusError as exc:
        _failed(str(exc))
        return
    _release(upload)


def _release(upload) -> None:
    """Let go of a loaded upload's bytes: the corpus now holds the text.  Streamlit keeps an
    uploaded file until its session ends, so it is removed from the session's files, and the
    uploader gets a fresh key (an empty box)."""
    ctx = get_script_run_ctx()
    if ctx is not None:
        ctx.uploaded_file_mgr.remove_file(ctx.session_id, upload.file_id)
    state.put(CORPUS_UPLOADS, state.get(CORPUS_UPLOADS, 0) + 1)


def load_tiny_shakespeare() -> None:
    """A button callback: Tiny Shakespeare becomes the corpus (a failed download is shown by
    :func:`corpus_error_banner`, and the corpus stays what it was)."""
    try:
        path = download_tiny_shakespeare(CACHE_DIR)
        _load("Tiny Shakespeare", read_corpus(path))
    except CorpusError as exc:
        _failed(str(exc))


def _on_server_path() -> None:
    folder = settings().corpus_dir
    raw = state.get(CORPUS_PATH, "").strip()
    if folder is None or not raw:
        return
    try:
        name, text = read_corpus_under(folder, raw, settings().max_corpus_bytes)
    except CorpusError as exc:
        _failed(md_safe(str(exc)))  # the message quotes the typed path
        return
    _load(name, text)


def corpus_sidebar() -> None:
    state.init_state()
    if state.get(CORPUS_PASTE) is None:
        _sync_paste_box()
    with st.sidebar:
        st.header("Corpus")
        limits = settings(report=True)
        megabytes = max(1, limits.max_corpus_bytes // 2**20)
        names = samples.sample_names()
        st.selectbox("Sample corpus", names, format_func=samples.label, key=CORPUS_SAMPLE,
                     on_change=_on_sample, placeholder="Pick a sample…",
                     help="Choosing a sample replaces the corpus.")
        st.text_area("Or paste your own text", key=CORPUS_PASTE, height=150, on_change=_on_paste,
                     max_chars=limits.max_corpus_bytes,
                     help="Press Ctrl+Enter (or click outside the box) to use it.")
        st.file_uploader(f"Or upload a UTF-8 .txt file (up to {megabytes} MB)", type=["txt"],
                         key=_upload_key(), on_change=_on_upload, max_upload_size=megabytes)
        with st.expander("More corpora"):
            st.button("Download Tiny Shakespeare (1 MB)", on_click=load_tiny_shakespeare,
                      help="Cached on the server; needs the internet the first time.")
            if limits.corpus_dir is not None:
                st.text_input("Load a file from the server's corpus folder", key=CORPUS_PATH,
                              on_change=_on_server_path, placeholder="e.g. books/moby_dick.txt",
                              help="A path inside the folder the person running the server chose.")
        _corpus_summary()


def _corpus_summary() -> None:
    name, text = state.corpus()
    s = corpus_statistics(state.corpus_digest(), text)
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
    error = state.get(CORPUS_ERROR)
    if error:
        st.error(f"{error} The corpus was not changed.", icon="⚠️")


def require_corpus() -> tuple[str, str] | None:
    """The corpus, or ``None`` after a friendly message when it is empty.  Call it at the top of
    a page: it also shows why the last load failed, if it did."""
    corpus_error_banner()
    name, text = state.corpus()
    if not text.strip():
        st.info("The corpus is empty. Pick a sample, paste some text or upload a .txt file in the "
                "sidebar, and BPE will start learning from it.", icon="✍️")
        return None
    return name, text
