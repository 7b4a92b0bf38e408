"""AppTest: tokens are shown with visible whitespace, byte tokens under their characters, and the
merge graph of a token (each token once, with its merge step and count)."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import step_view, paste_box
from core import BPETokenizer
from core.bpe.explain import merge_dag
from core.samples import python_docs_corpus
from core.bpe.tree_layout import MAX_BOXES
from ui.views.token_view import NODE_H, merge_graph_layout, merge_graph_svg

ROOT = Path(__file__).resolve().parents[2]


def learn(corpus: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60)
    at.switch_page("app_pages/learn_bpe.py").run()  # the root opens Start here
    paste_box(at).set_value(corpus).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_a_space_pair_is_announced_and_drawn_visibly():
    """What the step view is sent (it draws the tokens in the browser): the first merge's pair
    named with visible spaces, invisible characters drawn as faint symbols, and the legend."""
    _, _, data = step_view(learn("a  b  c  d\n\te  f  g"))
    left, right = data["merges"][0][:2]
    assert data["names"][str(left)] == data["names"][str(right)] == "'␣'"
    faces = " ".join(face for face, _, _ in data["faces"].values())
    assert 'class="ws"' in faces and "␣" in faces and "↵" in faces and "⇥" in faces
    assert "␣ space · ↵ new line · ⇥ tab" in data["legend"]


def test_merge_graph_draws_a_shared_token_once_with_step_and_count():
    tok = BPETokenizer.from_text("aaaa aaaa <b>", 2, variant="char")
    svg = merge_graph_svg(tok, tok.stoi["aaaa"])
    assert svg.count('class="bpe-node"') == 3
    assert f"merge 2 · {tok.trace[1].count:,}×" in svg and "base character" in svg
    evil = BPETokenizer.from_text("<b><b><b>", 2, variant="char")
    assert "<b>" not in merge_graph_svg(evil, evil.vocab_size - 1).replace("<b", "&")


def _orient(a, b, c) -> float:
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


def _cross(s, t) -> bool:
    a, b, c, d = s[:2], s[2:], t[:2], t[2:]
    if {a, b} & {c, d}:  # two edges into one box meet there
        return False
    return _orient(c, d, a) * _orient(c, d, b) < 0 and _orient(a, b, c) * _orient(a, b, d) < 0


def _through(line, box) -> bool:
    """The line enters the box's inside: sampled every pixel (boxes are 50 px tall)."""
    x1, y1, x2, y2 = line
    steps = int(max(abs(x2 - x1), abs(y2 - y1))) + 2
    return any(box.x - box.w / 2 < x1 + (x2 - x1) * i / steps < box.x + box.w / 2
               and box.y < y1 + (y2 - y1) * i / steps < box.y + NODE_H for i in range(1, steps))


def drawing_faults(d) -> list[str]:
    """What a reader would see wrong in a merge graph: crossing edges, an edge through a box, boxes
    on top of each other, a token's right part drawn left of its left part."""
    faults = []
    lines = list(zip(d.edges, d.lines))
    for i, (e, s) in enumerate(lines):
        faults += [f"{e} crosses {f}" for f, t in lines[i + 1:] if _cross(s, t)]
        faults += [f"{e} runs through box {k}" for k, box in d.boxes.items()
                   if k not in (e.parent, e.child) and _through(s, box)]
    boxes = sorted(d.boxes.values(), key=lambda b: (b.y, b.x))
    for a, b in zip(boxes, boxes[1:]):
        if a.y == b.y and a.x + a.w / 2 > b.x - b.w / 2:
            faults.append(f"{a} overlaps {b}")
    ends = {}
    for e in d.edges:
        ends.setdefault(e.parent, {})[e.side] = d.boxes[e.child].x
    faults += [f"parts of {k} out of order" for k, s in ends.items() if s[-1] > s[1]]
    return faults


@pytest.mark.parametrize("variant", ["char", "byte"])
def test_merge_graph_edges_never_cross(variant):
    tok = BPETokenizer.from_text(python_docs_corpus(20_000) + " that Γειά σου", 300, variant=variant)
    for _, _, token_id in tok.merge_triples:
        d = merge_graph_layout(tok, token_id)
        assert drawing_faults(d) == [], tok.token_str(token_id)
        drawn, dag = {b.id for b in d.boxes.values()}, {n.id for n in merge_dag(tok, token_id)}
        assert drawn == dag if not d.cut else drawn <= dag, tok.token_str(token_id)


@pytest.mark.slow
def test_a_long_tokens_tree_is_cut_to_what_a_reader_can_follow():
    text = python_docs_corpus(100_000)
    tok = BPETokenizer.from_text(text, 5000, variant="char")
    longest = max((s.new_id for s in tok.trace), key=lambda i: len(tok.token_str(i)))
    d = merge_graph_layout(tok, longest)
    assert len(tok.token_str(longest)) > 1000 and len(d.boxes) <= MAX_BOXES and d.cut
    assert drawing_faults(d) == []
    assert all(not any(e.parent == k for e in d.edges) for k in d.cut)  # no parts below a cut box
    assert merge_graph_svg(tok, longest).count('stroke-dasharray') == len(d.cut)


def test_a_sub_token_is_drawn_once_unless_its_edges_would_cross():
    tok = BPETokenizer.from_text("abba abba abba ab ab ab ab ba ba ba ba|that that that th th th at at",
                                 13, variant="byte", pattern="gpt2")

    def shown(token: str) -> list[str]:
        boxes = merge_graph_layout(tok, tok.stoi[token]).boxes.values()
        return sorted(tok.token_str(b.id) for b in boxes)

    # 'ab' + 'ba' share the middle 'b': drawn once; the two outer 'a's would cross the b's edges
    assert shown("abba") == ["a", "a", "ab", "abba", "b", "ba"]
    # in 'th' + 'at' one 't' is the left part of one and the right part of the other: drawn twice
    assert shown("that") == ["a", "at", "h", "t", "t", "th", "that"]
    same = BPETokenizer.from_text("aaaa aaaa", 2, variant="char")  # 'aa' + 'aa': one 'aa', one 'a'
    assert len(merge_graph_layout(same, same.stoi["aaaa"]).boxes) == 3
