"""AppTest: Learn BPE starting from a real tokenizer (GPT-4) shows the merges GPT-4 would add for
the corpus, exactly as ``core`` computes them (``BPETokenizer.extended``), and its downloads load
back to the same ids; a reload keeps the choice; GPT-2's files missing is a plain message."""

from pathlib import Path

import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from app_helpers import open_page, step_view
from core import BPETokenizer
from core.bpe.explain import quoted, text_window

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_corpora"
TEXT = "".join((SAMPLES / f).read_text(encoding="utf-8")
               for f in ("python_source.txt", "multilingual_and_emoji.txt", "sennrich.txt"))
MERGES = 25


@pytest.fixture(scope="module")
def gpt4() -> BPETokenizer:
    try:
        return BPETokenizer.from_pretrained("cl100k_base")
    except (ImportError, OSError) as exc:
        pytest.skip(f"GPT-4's vocabulary is not available here: {exc}")


@pytest.fixture
def downloads(monkeypatch) -> dict:
    """What each download button would send, by file name (its deferred callable, run on demand)."""
    found = {}
    original = MediaFileManager.add_deferred

    def record(self, data_callable, *args, **kwargs):
        found[kwargs.get("file_name")] = data_callable
        return original(self, data_callable, *args, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    return found


def from_gpt4(merges: int = MERGES) -> AppTest:
    at = open_page("learn_bpe", "corpus_paste", TEXT)
    at.number_input(key="w_num_merges").set_value(merges).run()
    at.radio(key="w_start").set_value("cl100k_base").run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_gpt4_shows_the_merges_it_would_add(gpt4, downloads):
    at = from_gpt4()
    expected = gpt4.extended(TEXT, MERGES)
    first = max(gpt4.ids) + 1  # after cl100k's special tokens (100,257-100,276)
    labels = [r.label for r in at.radio]
    assert "BPE variant" not in labels and "Pre-split regex" not in labels  # GPT-4 fixes both
    assert any(c.value.startswith(f"GPT-4 already has 100,256 tokens (and 5 special ones); these are the "
                                  f"{MERGES} merges it would add") for c in at.caption)
    # merge 0: the corpus as GPT-4 itself cuts it; then the new merges only, ids from `first`
    _, _, data = step_view(at)
    assert data["length0"] == len(gpt4.encode(TEXT)) and data["base_vocab"] == gpt4.vocab_size
    assert data["ids"] == [t.id for t in gpt4.encode_tokens(text_window(TEXT, 0, 2000))]
    assert [m[2] for m in data["merges"]] == list(range(first, first + MERGES))
    assert [m[4] for m in data["merges"]] == [s.length_after for s in expected.trace]
    assert [data["names"][str(m[2])] for m in data["merges"]] == [
        quoted(expected.token_str(s.new_id)) for s in expected.trace]
    assert at.query_params["start"] == "cl100k_base"  # a reload keeps it
    # the tree of the last new token goes down through GPT-4's own merges to single bytes
    at.session_state["learn_tree_text"] = True  # the tree as text, built once its expander opens
    at.run()
    tree = at.code[0].value.splitlines()
    assert tree[0] == f"{quoted(expected.token_str(first + MERGES - 1))}  (id {first + MERGES - 1})"
    assert any(int(line.rsplit("id ", 1)[1].rstrip(")")) < first for line in tree[1:])
    # the downloads load back to the ids shown here
    saved = BPETokenizer.loads(downloads[f"cl100k_base-plus-{MERGES}.json"]())
    assert saved.encode(TEXT) == expected.encode(TEXT) and saved.trace == ()
    assert saved.merge_triples[-MERGES:] == [(s.left, s.right, s.new_id) for s in expected.trace]
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer.from_str(downloads["tokenizer.json"]())
    assert hf.encode(TEXT).ids == expected.encode(TEXT)


def test_a_reload_keeps_the_start_and_characters_come_back(gpt4):
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60)
    at.query_params.update({"start": "cl100k_base", "merges": "5"})
    at.switch_page("app_pages/learn_bpe.py").run()  # the root opens Start here
    assert not at.exception, [e.message for e in at.exception]
    assert at.radio(key="w_start").value == "cl100k_base"
    # the default corpus's words are GPT-4 tokens already
    assert "is already a single GPT-4 token: there is nothing to merge" in at.info[0].value
    at.radio(key="w_start").set_value("chars").run()
    assert "BPE variant" in [r.label for r in at.radio]
    assert "start" not in at.query_params  # the default stays out of the URL
    bad = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60)
    bad.query_params.update({"start": "gpt5"})
    bad.switch_page("app_pages/learn_bpe.py").run()
    assert not bad.exception and bad.radio(key="w_start").value == "chars"


def test_gpt2_missing_is_a_plain_message(tmp_path, monkeypatch):
    from core.bpe import pretrained
    from ui.plumbing.cache import pretrained as cached

    monkeypatch.setattr(pretrained, "SHARED_GPT2", tmp_path)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    cached.clear()
    try:
        at = open_page("learn_bpe")
        at.radio(key="w_start").set_value("gpt2").run()
        assert not at.exception, [e.message for e in at.exception]
        assert at.error[0].value.startswith("Could not start from GPT-2: GPT\\-2's vocab\\.bpe")
        assert "characters / bytes always works" in at.info[0].value
    finally:
        cached.clear()
