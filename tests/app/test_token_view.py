"""AppTest: tokens are shown with visible whitespace, byte tokens under their characters, and the
merge graph of a token (each token once, with its merge step and count)."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from core import BPETokenizer
from ui.token_view import merge_graph_svg

ROOT = Path(__file__).resolve().parents[2]


def learn(corpus: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60).run()
    at.text_area(key="corpus_paste").set_value(corpus).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_a_space_pair_is_announced_and_drawn_visibly():
    at = learn("a  b  c  d\n\te  f  g")
    heads = [m.value for m in at.markdown if m.value.startswith("**Merge 1:")]
    assert heads and "'␣' \\+ '␣'" in heads[0]
    body = " ".join(h.proto.body for h in at.get("html"))
    assert 'class="ws"' in body and "␣" in body and "↵" in body and "⇥" in body
    assert "␣ space · ↵ new line · ⇥ tab" in body


def test_merge_graph_draws_a_shared_token_once_with_step_and_count():
    tok = BPETokenizer.from_text("aaaa aaaa <b>", 2, variant="char")
    svg = merge_graph_svg(tok, tok.stoi["aaaa"])
    assert svg.count('class="bpe-node"') == 3
    assert f"merge 2 · {tok.trace[1].count:,}×" in svg and "base character" in svg
    evil = BPETokenizer.from_text("<b><b><b>", 2, variant="char")
    assert "<b>" not in merge_graph_svg(evil, evil.vocab_size - 1).replace("<b", "&")
