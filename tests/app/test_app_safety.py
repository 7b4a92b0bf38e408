"""AppTest: what one visitor sends cannot read server files, reach another visitor, or grow the
server's memory without bound; every refusal is a message that shows user-supplied names as text."""

import json
import re
import tracemalloc
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import core.corpus
import core.bpe.pretokenize
from core import BPETokenizer
from core.bpe.gpt2 import bytes_to_unicode
from app_helpers import paste_box
from ui.plumbing import cache

ROOT = Path(__file__).resolve().parents[2]
SENNRICH = (ROOT / "sample_corpora" / "sennrich.txt").read_text(encoding="utf-8")
EVIL_NAME = "[x](http://e) **y**"
SETTINGS = ("CORPUS_DIR", "MAX_CORPUS_BYTES", "REGEX_TIMEOUT_S", "MAX_TRAIN_MEMORY")


@pytest.fixture(autouse=True)
def server_env(monkeypatch):
    """Each test starts from the defaults: no corpus folder, default limits; the process-wide regex
    timeout a test's settings set is put back after it."""
    for name in SETTINGS:
        monkeypatch.delenv("BPE_EXPLORER_" + name, raising=False)
    monkeypatch.setattr(core.bpe.pretokenize, "REGEX_TIMEOUT_S", core.bpe.pretokenize.REGEX_TIMEOUT_S)
    return monkeypatch


def app(page: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60)
    at.switch_page(page or "app_pages/learn_bpe.py").run()  # the root opens Start here
    assert not at.exception, [e.message for e in at.exception]
    return at


def plain(markdown: str) -> str:
    """What a Markdown-escaped string reads as: backslash escapes and HTML entities undone."""
    return re.sub(r"\\(.)", r"\1", markdown).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def shown_as_text(value: str, name: str = EVIL_NAME) -> bool:
    return name not in value and "](" not in value and "**y" not in value and name in plain(value)


def upload_corpus(at: AppTest, name: str, data: bytes) -> AppTest:
    at.sidebar.get("file_uploader")[0].set_value((name, data, "text/plain")).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def path_box(at: AppTest):
    return [t for t in at.sidebar.text_input if t.key == "corpus_path"]


# -- corpora by server path ----------------------------------------------------------------------
def test_path_loading_is_off_by_default():
    at = app()
    assert path_box(at) == []
    assert not any("path" in t.label.lower() for t in at.sidebar.text_input)


def test_a_broken_server_setting_is_named_and_the_defaults_hold(server_env):
    server_env.setenv("BPE_EXPLORER_MAX_CORPUS_BYTES", "lots")
    at = app()
    assert any("MAX\\_CORPUS\\_BYTES" in e.value and "not a number" in e.value for e in at.sidebar.warning)
    assert path_box(at) == []


@pytest.fixture()
def corpus_dir(tmp_path, server_env):
    folder = tmp_path / "corpora"
    folder.mkdir()
    (folder / "tale.txt").write_text("once upon a time once upon a time", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("the server's secret", encoding="utf-8")
    (folder / "out.txt").symlink_to(tmp_path / "secret.txt")
    server_env.setenv("BPE_EXPLORER_CORPUS_DIR", str(folder))
    return folder


def test_a_file_in_the_corpus_folder_loads(corpus_dir):
    at = app()
    [box] = path_box(at)
    box.set_value("tale.txt").run()
    assert at.session_state["corpus_text"] == "once upon a time once upon a time"
    assert at.session_state["corpus_name"] == "tale.txt"


def test_the_corpus_folder_can_be_set_in_secrets(corpus_dir, server_env):
    server_env.delenv("BPE_EXPLORER_CORPUS_DIR")
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60)
    at.secrets["corpus_dir"] = str(corpus_dir)
    at.run()
    path_box(at)[0].set_value("tale.txt").run()
    assert at.session_state["corpus_name"] == "tale.txt"


@pytest.mark.parametrize("path, message", [
    ("../secret.txt", "outside the corpus folder"), ("out.txt", "outside the corpus folder"),
    ("/proc/self/environ", "outside the corpus folder"), ("/dev/zero", "outside the corpus folder"),
    (EVIL_NAME, "No such file"),
])
def test_other_paths_are_refused_and_the_corpus_kept(corpus_dir, path, message):
    at = app()
    path_box(at)[0].set_value(path).run()
    assert not at.exception
    [error] = [e.value for e in at.error]
    assert message in plain(error) and "The corpus was not changed" in error
    assert at.session_state["corpus_text"] == SENNRICH
    if path == EVIL_NAME:
        assert shown_as_text(error)


# -- uploads and pastes ----------------------------------------------------------------------------
def test_an_upload_over_the_limit_is_refused_before_reading(server_env):
    server_env.setenv("BPE_EXPLORER_MAX_CORPUS_BYTES", "100")
    at = upload_corpus(app(), "big.txt", b"a" * 101)
    assert any("big.txt is 101 bytes; the limit is 100 bytes" in plain(e.value) for e in at.error)
    assert at.session_state["corpus_text"] == SENNRICH


def test_a_paste_over_the_limit_is_refused(server_env):
    server_env.setenv("BPE_EXPLORER_MAX_CORPUS_BYTES", "100")
    at = app()
    paste_box(at).set_value("é" * 60).run()  # 60 characters, 120 bytes
    assert any("The pasted text is 120 bytes; the limit" in e.value for e in at.error)
    assert at.session_state["corpus_text"] == SENNRICH
    assert paste_box(at).value == SENNRICH


def test_a_paste_refused_on_start_here_says_so_there(server_env):
    server_env.setenv("BPE_EXPLORER_MAX_CORPUS_BYTES", "100")
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60).run()  # Start here
    paste_box(at).set_value("é" * 60).run()
    assert any("The pasted text is 120 bytes; the limit" in e.value for e in at.error)
    assert at.session_state["corpus_text"] == SENNRICH


def test_an_upload_name_with_markdown_shows_as_text():
    at = upload_corpus(app(), EVIL_NAME + ".txt", "café".encode("latin-1"))
    [error] = [e.value for e in at.error]
    assert "not UTF-8" in error and shown_as_text(error)


def test_a_large_paste_leaves_the_box_once_taken():
    """A browser sends every widget's value at every click: a pasted book kept in the box would
    travel back to the server at every click of that attendee (8 MB each, parsed by the one app
    process the room shares), so once taken the box empties, and the sidebar says why."""
    text = "the cat sat on the mat. " * 5_000  # 120,000 characters, over the box's edit limit
    at = app()
    paste_box(at).set_value(text).run()
    assert at.session_state["corpus_text"] == text
    assert paste_box(at).value == ""
    assert any("not copied into the text box" in c.value for c in at.sidebar.caption)


def test_a_paste_up_to_three_times_the_corpus_limit_reaches_the_app():
    """Streamlit closes a tab's connection when one message from it passes
    ``server.maxWidgetStateSize``: a paste over the corpus limit must reach the sidebar's size
    check (a message, the corpus kept), not drop the tab.  A character typed is at most 3 UTF-8
    bytes per unit the box counts."""
    import tomllib

    from core.settings import ServerSettings

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    allowed = config["server"]["maxWidgetStateSize"] * 10**6
    assert allowed >= 3 * ServerSettings().max_corpus_bytes + 10**6


def test_the_readme_server_watches_no_source_files():
    """`streamlit run streamlit_app.py` runs with no file watcher, as ``python -m ui.serve``'s
    processes do: the watcher walked every module the app imports at each new session's first run
    (half the server's time for a fresh tab)."""
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["fileWatcherType"] == "none"


def test_a_loaded_upload_is_not_kept_twice():
    at = upload_corpus(app(), "mine.txt", b"aa bb aa bb")
    assert at.session_state["corpus_text"] == "aa bb aa bb"
    assert at.sidebar.get("file_uploader")[0].value is None  # the box is fresh, its bytes let go


# -- GPT-2 files uploaded on Char vs BPE -----------------------------------------------------------
def gpt2_files(merges: list[tuple[str, str]]) -> tuple[bytes, bytes]:
    encoder = {ch: i for i, ch in enumerate(bytes_to_unicode().values())}
    for a, b in merges:
        encoder[a + b] = len(encoder)
    vocab = "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges)
    return vocab.encode(), json.dumps(encoder).encode()


def upload_gpt2(at: AppTest, vocab: bytes, encoder: bytes, vocab_name: str = "vocab.bpe") -> AppTest:
    at.main.get("file_uploader")[0].set_value((vocab_name, vocab, "application/octet-stream"))
    at.main.get("file_uploader")[1].set_value(("encoder.json", encoder, "application/json")).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def gpt2_count(at: AppTest) -> str:
    return {m.label: m.value for m in at.main.get("metric")}["GPT-2 tokens (test text)"]


@pytest.fixture()
def no_shared_gpt2(tmp_path, server_env):
    """No ``../shared`` GPT-2 files, so the page asks for uploads; a temp folder to watch."""
    server_env.setattr(core.corpus, "SHARED_DIR", tmp_path / "no-shared")
    temp = tmp_path / "tmp"
    temp.mkdir()
    server_env.setattr("tempfile.tempdir", str(temp))
    return temp


def test_gpt2_uploads_of_two_sessions_do_not_mix(no_shared_gpt2):
    a, b = app("app_pages/char_vs_bpe.py"), app("app_pages/char_vs_bpe.py")
    for at in (a, b):
        at.text_area(key="w_test_text").set_value(" the the").run()
    upload_gpt2(a, *gpt2_files([("Ġ", "t"), ("h", "e"), ("Ġt", "he")]))
    assert gpt2_count(a) == "2"
    upload_gpt2(b, *gpt2_files([("h", "e")]))
    assert gpt2_count(b) == "6"  # Ġ t he, twice: B's own files, not A's cached tokenizer
    a.run()
    assert gpt2_count(a) == "2"
    assert list(no_shared_gpt2.iterdir()) == []  # nothing written to a shared temp folder


def test_a_broken_gpt2_upload_is_a_message_with_its_name_as_text(no_shared_gpt2):
    at = app("app_pages/char_vs_bpe.py")
    vocab, encoder = gpt2_files([("h", "e")])
    upload_gpt2(at, vocab + b"h e x\n", encoder, vocab_name=EVIL_NAME + ".bpe")
    [error] = [e.value for e in at.error]
    assert "Could not load GPT-2's tokenizer" in error
    assert "expected two tokens" in plain(error)
    assert shown_as_text(error)


# -- hostile split patterns ---------------------------------------------------------------------------
@pytest.mark.slow
def test_a_loaded_tokenizer_whose_pattern_backtracks_is_a_message(server_env):
    server_env.setenv("BPE_EXPLORER_REGEX_TIMEOUT_S", "0.2")
    tok = BPETokenizer.from_text("xyz", 0, variant="byte", pattern=r"(a+)+$")
    at = app("app_pages/char_vs_bpe.py")
    at.text_area(key="w_test_text").set_value("a" * 5000 + "b").run()
    uploader = next(u for u in at.main.get("file_uploader") if u.proto.label.startswith("Load a tokenizer"))
    uploader.set_value((EVIL_NAME + ".json", json.dumps(tok.to_dict()).encode(), "application/json")).run()
    assert not at.exception, [e.message for e in at.exception]
    assert any("backtracks too much" in plain(e.value) for e in at.error)


@pytest.mark.slow
def test_a_custom_pattern_that_backtracks_on_the_corpus_is_a_message(server_env):
    server_env.setenv("BPE_EXPLORER_REGEX_TIMEOUT_S", "0.2")
    at = app()
    paste_box(at).set_value("a" * 5000 + "b").run()
    at.radio(key="w_variant").set_value("byte").run()
    at.radio(key="w_pattern_choice").set_value("custom").run()
    at.text_input(key="w_custom_pattern").set_value(r"(a+)+$").run()
    assert not at.exception, [e.message for e in at.exception]
    assert any("backtracks too much" in plain(e.value) for e in at.error)


def test_a_corpus_over_the_training_memory_limit_is_a_message(server_env):
    server_env.setenv("BPE_EXPLORER_MAX_TRAIN_MEMORY", str(2**20))
    at = app()
    paste_box(at).set_value("the cat sat on the mat").run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.error and "this server allows 1 MiB" in at.error[0].value


# -- bounded, shared caches ---------------------------------------------------------------------------
def test_the_cache_is_bounded_by_entries_and_bytes():
    lru = cache.BoundedCache(max_entries=3, max_bytes=100, cost=len)
    for key in "abcd":
        lru.put(key, "x" * 10)
    assert len(lru) == 3 and lru.get("a") is None and lru.get("d") == "x" * 10
    lru.get("b")  # used last: kept, while c and d (older) make room
    lru.put("e", "x" * 85)
    assert len(lru) == 2
    assert lru.bytes == 95
    assert lru.get("b")
    assert lru.get("c") is lru.get("d") is None
    lru.put("f", "x" * 500)  # one entry over the budget is kept alone, not refused
    assert len(lru) == 1 and lru.get("f")


def test_trained_tokenizers_are_shared_and_bounded():
    store = cache._store()
    texts = [f"corpus number {i} " * 5 for i in range(cache.STORE_ENTRIES + 4)]
    toks = [cache.train_tokenizer(t, "char", 3, progress=False) for t in texts]
    assert len(store) == cache.STORE_ENTRIES and store.bytes <= cache.STORE_BYTES
    assert cache.train_tokenizer(texts[-1], "char", 3, progress=False) is toks[-1]  # shared
    short = cache.train_tokenizer(texts[-1], "char", 1, progress=False)
    assert short.merges == toks[-1].merges[:1]
    assert "_prefixes" not in vars(toks[-1]) and "_curve_templates" not in vars(toks[-1])


def test_a_huge_alphabet_leaves_the_other_attendees_tokenizers_stored():
    """A paste of random Unicode makes a tokenizer of 100,000 base symbols: the store counts what
    it holds (within 3x), so storing it keeps the room's other tokenizers."""
    store = cache._store()
    room = [cache.train_tokenizer(f"an attendee's corpus {i} " * 5, "char", 3, progress=False)
            for i in range(5)]
    points = [c for c in range(0x3400, 0x3400 + 102_048) if not 0xD800 <= c <= 0xDFFF][:100_000]
    huge_text = "".join(map(chr, points)) * 2
    tracemalloc.start()
    huge = cache.train_tokenizer(huge_text, "char", 3, progress=False)
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert huge.base_size == 100_000
    assert held / 3 <= cache.tokenizer_bytes(huge) <= 3 * held
    for i, tok in enumerate(room):
        assert cache.train_tokenizer(f"an attendee's corpus {i} " * 5, "char", 3, progress=False) is tok
    assert store.bytes <= cache.STORE_BYTES


def test_a_shared_run_s_corpus_reads_as_text_in_another_attendee_s_page(tmp_path):
    """The room shares a run whose corpus begins with Markdown: another attendee's Generate names
    that corpus by its first words, which stay text (no link to follow, no bold)."""
    from app_helpers import finished_run
    from test_app_counts_and_labels import the_room_and_alice, train_page

    the_room_and_alice(tmp_path)
    finished_run(tmp_path, "room", "shared-by-mallory", "2026-01-01T00:00:05", 2.0,
                 corpus=EVIL_NAME + " and then some ordinary words of a long enough text " * 5, shared=True)
    at = train_page(tmp_path)
    at.selectbox(key="gpt_gen_run").set_value("shared-by-mallory · the room (shared)").run()
    [said] = [c.value for c in at.caption if c.value.startswith("Trained on: ")]
    assert shown_as_text(said), said


def test_a_file_put_aside_by_a_station_is_named_as_text_on_its_way_back(tmp_path, monkeypatch):
    """A station opens its tool on its own sample, putting the attendee's upload aside; the
    sidebar's button back names the file as it is called, Markdown and all, never as a link."""
    monkeypatch.setenv("BPE_EXPLORER_RUNS_DIR", str(tmp_path))
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60)
    at.query_params["station"] = "03_end_of_word"
    at = upload_corpus(at.run(), EVIL_NAME + ".txt", b"my own words " * 50)
    at.button(key="lesson_open_03_end_of_word").click().run()
    [back] = [b for b in at.sidebar.button if b.key == "corpus_back_to_own"]
    assert shown_as_text(back.label), back.label
