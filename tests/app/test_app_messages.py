"""Plain messages with actions: the first view of Char vs BPE is an example, not a warning; a
file that is not UTF-8 can be loaded with its bad bytes replaced, UTF-16 with its mark loads, a picture
is refused; a prompt Generate cannot read
offers to drop the unseen characters or to switch to a byte-level tokenizer."""

import json
from pathlib import Path

import pytest
from conftest import missing
from streamlit.testing.v1 import AppTest

from core import CharTokenizer
from core.runfolder.layout import CHECKPOINT_FILE
from ui.plumbing.navigation import PAGES as NAVIGATION

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "streamlit_app.py"
OWNER = "alice-0123456789"


def open_app(tmp_path, page: str | None = None) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params["u"] = OWNER
    at.session_state["gpt_runs_dir"] = str(tmp_path / "runs")
    at.switch_page(page or "app_pages/learn_bpe.py")  # the root opens Start here
    return at.run()


@pytest.mark.parametrize("sample", [None, "the cat sat", "python source", "multilingual and emoji"])
def test_char_vs_bpe_opens_on_an_example_without_warning(tmp_path, sample):
    at = open_app(tmp_path)
    if sample:
        at.sidebar.selectbox(key="corpus_sample").set_value(sample).run()
    at.switch_page("app_pages/char_vs_bpe.py").run()
    assert not at.exception and not at.warning, [w.value for w in at.warning]
    test = at.text_area(key="w_test_text").value
    assert test and set(test) <= set(at.session_state["corpus_text"])
    assert "never contained" in " ".join(m.value for m in at.markdown)  # an unseen word to look at
    assert not any("still splits them into known pieces" in m.value for m in at.markdown)
    at.text_area(key="w_test_text").input("my own text ☃").run()
    assert "☃" in at.warning[0].value and "Python" not in at.warning[0].value
    at.button(key="charbpe_use_bytes").click().run()
    assert at.radio(key="w_variant").value == "byte" and not at.warning


def test_non_utf8_upload_offers_to_replace_bad_bytes(tmp_path):
    at = open_app(tmp_path)
    at.sidebar.file_uploader[0].set_value(("latin1.txt", "café crème brûlée\n".encode("latin-1") * 20,
                                           "text/plain")).run()
    assert "not UTF-8" in at.error[0].value and "encode(" not in at.error[0].value
    at.button(key="corpus_load_replaced").click().run()
    assert not at.error
    assert at.session_state["corpus_text"].startswith("caf\ufffd cr\ufffdme")
    assert dict(at.query_params)["corpus"].startswith("text:")  # a reload finds it again


def test_a_utf_16_upload_loads_and_a_picture_is_refused_without_an_offer(tmp_path):
    """Notepad's "Unicode" (UTF-16 with its mark) loads as typed; a PNG renamed .txt is refused as
    no text, and nothing offers to load it with its bytes replaced (that would load noise)."""
    at = open_app(tmp_path)
    text = "Grüße aus Köln, 你好\n" * 20
    at.sidebar.file_uploader[0].set_value(("notepad.txt", text.encode("utf-16"), "text/plain")).run()
    assert not at.error and at.session_state["corpus_text"] == text
    picture = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    at.sidebar.file_uploader[0].set_value(("photo.txt", picture, "text/plain")).run()
    assert "is not a text file" in at.error[0].value
    assert not [b for b in at.button if b.key == "corpus_load_replaced"]
    assert at.session_state["corpus_text"] == text


def test_generate_offers_actions_for_unseen_characters(tmp_path):
    run = tmp_path / "runs" / OWNER / "char-tiny"
    run.mkdir(parents=True)
    (run / "status.json").write_text(json.dumps({"status": "finished", "started": "2026-01-01T00:00:01",
                                                 "max_steps": 10, "step": 10}))
    (run / "metrics.jsonl").write_text("")
    (run / CHECKPOINT_FILE).write_bytes(b"not read by this test")
    CharTokenizer.from_text("hello world").save(run / "tokenizer.json")
    at = open_app(tmp_path, "app_pages/train_gpt.py")
    if not at.text_input(key="gpt_prompt"):
        missing("the run is not offered for generation (checkpoint name)")
    # the default prompt is empty and says what it does: a new line as the default showed as an empty
    # box that warned this run's tokenizer could not read it (its corpus has no new line)
    assert at.text_input(key="gpt_prompt").value == ""
    assert "from scratch" in at.text_input(key="gpt_prompt").placeholder
    assert not [w for w in at.warning if "never saw" in w.value]
    at.text_input(key="gpt_prompt").input("hello Zoë").run()
    message = " ".join(w.value for w in at.warning)
    assert "'Z'" in message and "'ë'" in message and "encode(" not in message
    at.button(key="gpt_generate").click().run()
    assert "cannot be encoded" in at.error[0].value and "encode(" not in at.error[0].value
    at.button(key="gpt_drop_unseen").click().run()
    assert at.text_input(key="gpt_prompt").value == "hello o"
    assert not [w for w in at.warning if "never saw" in w.value]
    at.text_input(key="gpt_prompt").input("Zoë").run()
    at.button(key="gpt_use_bytes").click().run()
    assert at.session_state["kept_variant"] == "byte"
    assert at.session_state["gpt_tokenizer"] == "bpe"


@pytest.mark.parametrize("page", [name for name, _, _ in NAVIGATION])  # every page, a new one too
def test_an_empty_corpus_is_a_message_on_every_page(tmp_path, page):
    """A corpus emptied (as a large paste's echo once did): no page shows a traceback (Compare
    tokenizers and Tokenizer questions did), and where the corpus is trained on, the page says so."""
    at = open_app(tmp_path, f"app_pages/{page}.py")
    at.session_state["corpus_text"] = ""
    at.session_state["corpus_name"] = "empty.txt"
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    if page in ("learn_bpe", "char_vs_bpe", "insights"):
        said = " ".join(m.value for m in [*at.info, *at.error])
        assert "corpus is empty" in said.replace("\\", ""), said
