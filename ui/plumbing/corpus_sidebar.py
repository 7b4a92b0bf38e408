"""The corpus sidebar every page shares: pick a sample, paste, upload, download Tiny Shakespeare
or, when the server allows it, read a file from the server's corpus folder.  Errors become
messages; a failed load keeps the previous corpus.

Every way in is bounded by the server's ``max_corpus_bytes`` before the text is read, and a
loaded corpus is held once per session: the paste box copies only small corpora, and an upload's
bytes are handed back to Streamlit once decoded.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core.corpus import (CACHE_DIR, CorpusError, NotUTF8Error, check_corpus_size, decode_corpus,
                         download_tiny_shakespeare, read_corpus, read_corpus_under)
from core.digest import text_digest
from core.atomic import atomic_write
from core.settings import ServerSettings

from core import samples

from ui.plumbing import state
from ui.plumbing.cache import corpus_statistics, server_settings
from ui.plumbing.heavy_jobs import TooHeavyError
from ui.plumbing.identity import owner_id
from ui.plumbing.render import md_safe
from ui.plumbing.state import runs_dir
from ui.plumbing.state import (CORPUS_ERROR, CORPUS_PASTE, CORPUS_PASTES, CORPUS_PATH, CORPUS_REPLACEABLE,
                               CORPUS_SAMPLE, CORPUS_UPLOADS)

EDIT_LIMIT = 100_000  # larger corpora are not copied into the text box
EMPTIED_BOX = ("An empty box changes nothing: the corpus is still the one below. Paste text, then "
               "press Ctrl+Enter.")
STORE_FOLDER = ".corpora"  # in the runs folder, never taken for an owner's folder of runs
STORE_KEEP = 5  # pasted or uploaded corpora kept per owner, the newest, for reloads
_DIGEST = re.compile(r"[0-9a-f]{32}")


def settings(report: bool = False) -> ServerSettings:
    """The server's settings; a setting that cannot be used is left unset (``core.settings``), and
    ``report`` names it where it is drawn, so the person who started the server sees why."""
    found = server_settings()
    if report:
        for problem in found.problems:
            st.warning(f"Server setting ignored: {md_safe(problem)}", icon="⚠️")
    return found


def _paste_key() -> str:
    """The paste box's key, new each time the server rewrites the box (:func:`_sync_paste_box`)."""
    return f"{CORPUS_PASTE}_{state.get(CORPUS_PASTES, 0)}"


def _sync_paste_box() -> None:
    """Show the corpus in a new paste box (empty for a large corpus, which the browser would
    otherwise send back at every click).

    A new box, not a new value in the old one: the browser applies a value the server sets only
    when it draws the page, and a fragment polling a job (the corpus being counted) can send the
    page's widgets before that (``state.fragment_run``).  A large paste was then sent back once more, and
    then the box as the server had emptied it, which read as a second paste of nothing and emptied
    the corpus.  A message about the old box names a widget this session no longer has."""
    _, text = state.corpus()
    state.put(CORPUS_PASTES, state.get(CORPUS_PASTES, 0) + 1)
    state.put(_paste_key(), text if len(text) <= EDIT_LIMIT else "")


def _load(name: str, text: str, from_samples: bool = False, source: str | None = None,
          digest: str | None = None) -> None:
    state.set_corpus(name, text, source, digest)
    state.put(CORPUS_ERROR, None)
    _sync_paste_box()
    if not from_samples:  # the sample box shows no sample, so any sample is one pick away
        state.put(CORPUS_SAMPLE, None)


def _load_sample(name: str) -> None:
    _load(samples.label(name), samples.load_sample(name), from_samples=True, source="sample:" + name,
          digest=state.sample_digest(name))


def _failed(message: str) -> None:
    """Keep a failed load's message for :func:`corpus_error_banner` (Markdown: any user-supplied
    name in it must already be escaped with ``md_safe``)."""
    state.put(CORPUS_ERROR, message)


def _on_sample() -> None:
    name = state.get(CORPUS_SAMPLE)
    if name is not None and not state.fragment_run():
        _load_sample(name)


def _on_paste() -> None:
    text = state.get(_paste_key())
    if not text or text == state.corpus()[1] or state.fragment_run():  # an emptied box is no corpus
        return
    raw = text.encode("utf-8", "surrogatepass")  # once: it holds the GIL, a moment per megabyte
    try:
        check_corpus_size(len(raw), "The pasted text", settings().max_corpus_bytes)
    except CorpusError as exc:
        _failed(str(exc))
        _sync_paste_box()  # the box shows the corpus again, not the refused text
        return
    digest = text_digest(raw)
    del raw
    state.set_corpus("Pasted text", text, _store("Pasted text", text, digest), digest)
    state.put(CORPUS_ERROR, None)
    state.put(CORPUS_SAMPLE, None)
    _sync_paste_box()


def _upload_key() -> str:
    """The uploader's key: it counts the uploads loaded, so each load empties the box."""
    return f"corpus_upload_{state.get(CORPUS_UPLOADS, 0)}"


def _on_upload() -> None:
    upload = state.get(_upload_key())
    if upload is None:
        return
    limit = settings().max_corpus_bytes
    source = md_safe(upload.name)  # shown in a Markdown banner: the name as typed, never as links
    errors = "replace" if state.get(CORPUS_REPLACEABLE) == _upload_key() else "strict"
    state.put(CORPUS_REPLACEABLE, None)
    try:
        check_corpus_size(upload.size, source, limit)
        text = decode_corpus(upload.getvalue(), source, errors=errors, max_bytes=limit)
    except CorpusError as exc:
        _failed(str(exc))  # names the first byte that is not UTF-8, and where it is
        state.put(CORPUS_REPLACEABLE, _upload_key() if isinstance(exc, NotUTF8Error) else None)
        return
    if not text.strip():
        _failed(f"{source} holds no text.")
        return
    digest = text_digest(text)
    _load(upload.name, text, source=_store(upload.name, text, digest), digest=digest)
    _release(upload)


def _load_replaced() -> None:
    """The banner's button: load the refused upload again, bytes that are not UTF-8 as U+FFFD."""
    _on_upload()


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
        stat = path.stat()
        text, digest = _read_shared(path, stat.st_mtime_ns, stat.st_size)
        _load("Tiny Shakespeare", text, source="shakespeare", digest=digest)
    except CorpusError as exc:
        _failed(str(exc))


@functools.lru_cache(maxsize=2)
def _read_shared(path: Path, mtime_ns: int, size: int) -> tuple[str, str]:
    """The text and hash of a file any session may load (Tiny Shakespeare), read once while the file
    stays as it was: a room that loads it then holds one copy of its 1 MB, not one per session, and
    a reload (which loads it again from the URL) neither reads nor hashes it."""
    text = read_corpus(path)
    return text, text_digest(text)


_OPENING = samples.label(samples.DEFAULT_SAMPLE).split(":")[0]
TRAINING_CHOICE = f"Train a GPT chose this sample for you: {_OPENING}'s is far too short to train a GPT on."


def start_trainable() -> None:
    """Before the Train a GPT page draws the sidebar: a visitor who has not chosen a corpus gets
    the built-in English sample, which a GPT can learn from, not the default sample, which is
    far too short to train on (its first view would be a warning); the sidebar says so while the
    corpus is that one, on every page (:data:`TRAINING_CHOICE`)."""
    state.init_state()
    untouched = state.get(state.CORPUS_SOURCE) is None
    if untouched and state.corpus()[0] == samples.label(samples.DEFAULT_SAMPLE):
        state.put(CORPUS_SAMPLE, samples.PYTHON_DOCS)
        _on_sample()
        state.put(state.TRAINING_SAMPLE, state.get(state.CORPUS_SOURCE))


def _back_to_opening() -> None:
    """Undo :func:`start_trainable`'s choice: the opening sample again, as on a first visit (no
    corpus chosen, so Train a GPT chooses again when it is opened)."""
    name = samples.DEFAULT_SAMPLE
    state.put(CORPUS_SAMPLE, name)
    _load(samples.label(name), samples.load_sample(name), from_samples=True,
          digest=state.sample_digest(name))


def _on_server_path() -> None:
    folder = settings().corpus_dir
    raw = state.get(CORPUS_PATH, "").strip()
    if folder is None or not raw or state.fragment_run():
        return
    try:
        name, text = read_corpus_under(folder, raw, settings().max_corpus_bytes)
    except CorpusError as exc:
        _failed(md_safe(str(exc)))  # the message quotes the typed path
        return
    _load(name, text, source="file:" + raw)


# -- what a reload restores ------------------------------------------------------------------------
def _store_dir() -> Path:
    return runs_dir() / STORE_FOLDER / owner_id()


def _store(name: str, text: str, digest: str) -> str | None:
    """Save a pasted or uploaded corpus (its hash: ``digest``) in this owner's folder (mode 0o700)
    so that a reload finds it; its source for the URL (``text:<digest>``), or ``None`` when it
    could not be saved."""
    folder = _store_dir()
    try:
        for path in (folder.parent, folder):
            path.mkdir(mode=0o700, exist_ok=True, parents=True)
            path.chmod(0o700)
        target = folder / f"{digest}.txt"
        if not target.exists():
            with atomic_write(target, "wb") as f:
                f.write(text.encode("utf-8", "surrogatepass"))
        (folder / f"{digest}.name").write_text(name[:200], "utf-8")
        target.touch()
        for old in sorted(folder.glob("*.txt"), key=lambda p: p.stat().st_mtime)[:-STORE_KEEP]:
            old.unlink(missing_ok=True)
            old.with_suffix(".name").unlink(missing_ok=True)
    except OSError:
        return None
    return "text:" + digest


def _stored(digest: str) -> tuple[str, str]:
    if not _DIGEST.fullmatch(digest):
        raise CorpusError("That link does not name a saved corpus.")
    path = _store_dir() / f"{digest}.txt"
    try:
        text = path.read_bytes().decode("utf-8", "surrogatepass")
        name_file = path.with_suffix(".name")
        name = name_file.read_text("utf-8") if name_file.exists() else ""
    except OSError:
        raise CorpusError("The corpus of this link is no longer on the server.") from None
    return name or "Pasted text", text


def _load_source(source: str) -> None:
    """Load the corpus a URL's ``?corpus=`` names (see :func:`_store`); a failure is a message."""
    kind, _, value = source.partition(":")
    try:
        if kind == "sample" and value in samples.sample_names():
            _load_sample(value)
            state.put(CORPUS_SAMPLE, value)
        elif kind == "text":
            _load(*_stored(value), source=source)
        elif kind == "shakespeare":
            load_tiny_shakespeare()
        elif kind == "file" and settings().corpus_dir is not None:
            limits = settings()
            _load(*read_corpus_under(limits.corpus_dir, value, limits.max_corpus_bytes), source=source)
        else:
            raise CorpusError("That link does not name a corpus this server has.")
    except CorpusError as exc:
        _failed(md_safe(f"Your corpus could not be restored: {exc}"))


def own_corpus() -> tuple[str, str] | None:
    """``(name, source)`` of the session's corpus when it is the attendee's own (pasted, uploaded or
    read from the server's folder) rather than a sample: what a station's tool must not lose."""
    source = state.get(state.CORPUS_SOURCE)
    if not source or source.startswith(("sample:", "shakespeare")):
        return None
    return state.corpus()[0], source


def source_label(source: str) -> str:
    """What a reader calls the corpus a ``?corpus=`` value names: "Tiny Shakespeare"."""
    kind, _, value = source.partition(":")
    if kind == "sample" and value in samples.sample_names():
        return samples.label(value)
    return "Tiny Shakespeare" if kind == "shakespeare" else value or source


def put_aside_own_corpus() -> None:
    """Before a station loads its own corpus: keep the attendee's, for :func:`back_to_own_corpus`."""
    own = own_corpus()
    if own is not None:
        state.put(state.CORPUS_PUT_ASIDE, own)


def _back_to_own_corpus() -> None:
    name, source = state.get(state.CORPUS_PUT_ASIDE)
    state.put(state.CORPUS_PUT_ASIDE, None)
    _load_source(source)


def restore_corpus(params: dict) -> None:
    """The corpus the URL's ``?corpus=`` names, when the session opens (see ``ui.plumbing.frame``)."""
    if params.get(state.CORPUS_PARAM):
        _load_source(params[state.CORPUS_PARAM])


def corpus_sidebar(page: str = "") -> None:
    """The sidebar's corpus controls and figures, on the page whose URL path is ``page``."""
    state.init_state()
    if state.get(_paste_key()) is None:
        _sync_paste_box()
    with st.sidebar:
        st.header("Corpus")
        limits = settings(report=True)
        megabytes = max(1, limits.max_corpus_bytes // 2**20)
        names = samples.sample_names()
        st.selectbox("Sample corpus", names, format_func=samples.label, key=CORPUS_SAMPLE,
                     on_change=_on_sample, placeholder="Pick a sample…",
                     help="Choosing a sample replaces the corpus.")
        chosen = state.get(state.TRAINING_SAMPLE)
        if chosen and chosen == state.get(state.CORPUS_SOURCE):
            st.caption(TRAINING_CHOICE)
            if page != "train_gpt":  # the way back to the example the other pages opened on
                st.button(f"↩ Back to {_OPENING}'s example", key="corpus_back_to_opening",
                          on_click=_back_to_opening,
                          help="The short text the pages opened on; Train a GPT chooses a longer one "
                               "again when you open it.")
        # no max_chars: Streamlit's counter counts UTF-16 units (an emoji twice), not characters;
        # the size is checked in UTF-8 bytes when the text is used, and the summary counts characters
        st.text_area("Or paste your own text", key=_paste_key(), height=150, on_change=_on_paste,
                     help=f"Press Ctrl+Enter (or click outside the box) to use it. Up to {megabytes} MiB.")
        if state.get(_paste_key()) == "" and 0 < len(state.corpus()[1]) <= EDIT_LIMIT:  # emptied by hand
            st.caption(EMPTIED_BOX)
        st.file_uploader(f"Or upload a UTF-8 .txt file (up to {megabytes} MiB)", type=["txt"],
                         key=_upload_key(), on_change=_on_upload, max_upload_size=megabytes)
        with st.expander("More corpora"):
            st.button("Download Tiny Shakespeare (1 MB)", on_click=load_tiny_shakespeare,
                      help="Cached on the server; needs the internet the first time.")
            if limits.corpus_dir is not None:
                st.text_input("Load a file from the server's corpus folder", key=CORPUS_PATH,
                              on_change=_on_server_path, placeholder="e.g. books/moby_dick.txt",
                              help="A path inside the folder the person running the server chose.")
        put_aside = state.get(state.CORPUS_PUT_ASIDE)
        if put_aside and put_aside[1] != state.get(state.CORPUS_SOURCE):
            st.button(f"↩ Back to your text ({md_safe(put_aside[0])})", key="corpus_back_to_own",
                      on_click=_back_to_own_corpus,
                      help="A station of Start here opened its tool on one of the samples; this brings "
                           "back the text you had before.")
        _corpus_summary()
    state.url_put(state.CORPUS_PARAM, state.get(state.CORPUS_SOURCE))


def _corpus_summary() -> None:
    name, text = state.corpus()
    st.markdown(f"**{md_safe(name)}**")
    if len(text) > EDIT_LIMIT:
        st.caption("Large corpus: not copied into the text box above.")
    try:
        s = corpus_statistics(state.corpus_digest(), text)  # None while a large one is counted
    except TooHeavyError as exc:
        st.caption(md_safe(str(exc)))
        return
    if s is None:
        return
    # a table, not metric tiles: the sidebar is too narrow for "1,115,394" in a tile; a header that
    # names its columns, where an empty one drew a blank row (and screen readers read nothing)
    st.markdown("| In this corpus | Count |\n|:--|--:|\n" + "".join(
        f"| {label} | {value:,} |\n" for label, value in (
            ("Characters", s.characters), ("Bytes (UTF-8)", s.bytes),
            # what a word-level tokenizer splits on: a paragraph of Japanese is one such word
            ("Words (split at spaces)", s.words), ("Unique characters", s.unique_characters))))


def corpus_error_banner() -> None:
    """The last failed load, above the page (the corpus stays what it was)."""
    error = state.get(CORPUS_ERROR)
    if error:
        st.error(f"{error} The corpus was not changed.", icon="⚠️")
        if state.get(CORPUS_REPLACEABLE) == _upload_key() and state.get(_upload_key()) is not None:
            st.button(
                "Load with invalid bytes replaced",
                key="corpus_load_replaced",
                on_click=_load_replaced,
                help="Each byte that is not UTF-8 becomes the replacement character �.",
            )


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
