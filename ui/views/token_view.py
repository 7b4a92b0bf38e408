"""Click a token, see how it was built: the click listener (a ``st.components.v2`` component) and
the merge graph drawn as SVG.

The token spans themselves stay plain escaped HTML (``ui.plumbing.render``): each token carries its id in
``data-id`` and its text box a ``data-view`` name.  The component has no HTML of its own; its
script listens for clicks on tokens of *its* view and sends the id to Python as a trigger value.
No user text ever reaches the component (only the view name and ids do).

The graph (``core.bpe.explain.merge_dag``) gives each box its merge step and pair count; a token
is drawn once, even one used twice, wherever that crosses no edge (``core.bpe.tree_layout``, a tidy tree:
each row one merge further down, a token's parts left and right as in the token).
"""

from __future__ import annotations

import html

import streamlit as st

from core import BPETokenizer
from core.bpe.display import quoted, visible
from core.bpe.explain import DagNode, merge_dag, merge_tree, tree_lines

from ui.plumbing import state
from ui.serving.bounded_cache import BoundedCache
from ui.plumbing.render import tokenizer_scope
from core.bpe.tree_layout import Layout, layout

_JS = """
export default function(component) {
  const { data, setTriggerValue } = component;
  const view = data && data.view;
  const onClick = (event) => {
    const target = event.target;
    const token = target && target.closest ? target.closest(".tok[data-id]") : null;
    if (!token) return;
    const box = token.closest(".bpe-text");
    if (!box || box.dataset.view !== view) return;
    setTriggerValue("clicked", Number(token.dataset.id));
  };
  document.addEventListener("click", onClick);
  return () => document.removeEventListener("click", onClick);
}
"""
_CLICKS = st.components.v2.component("bpe_explorer.token_clicks", js=_JS, isolate_styles=False)
# st.html drops SVG, so the graph is drawn by a component of its own; its markup is built by
# ``merge_graph_svg`` with every piece of text escaped.  A graph wider than its column scrolls
# sideways, opened on the token asked about: its box then says so ("scroll ← →") and fades at the
# side with more to see.
_GRAPH_JS = """
export default function(component) {
  const { data, parentElement } = component;
  const box = parentElement.querySelector(".bpe-graph");
  if (!box || !data || typeof data.svg !== "string") return;
  box.innerHTML = data.svg;
  const scroller = box.querySelector(".bpe-tree-box");
  if (!scroller) return;
  const mark = () => {
    const wide = scroller.scrollWidth > scroller.clientWidth + 1;
    const left = scroller.scrollLeft > 1;
    const right = scroller.scrollLeft + scroller.clientWidth < scroller.scrollWidth - 1;
    box.dataset.overflow = wide ? (left && right ? "both" : left ? "left" : "right") : "none";
  };
  // a wide graph opens on the token asked about, its top box, not on the leaves at its left
  const root = scroller.querySelector(`.bpe-node[data-id="${scroller.dataset.root}"] rect`);
  if (root) {
    const r = root.getBBox();
    scroller.scrollLeft = Math.max(0, r.x + r.width / 2 - scroller.clientWidth / 2);
  }
  scroller.addEventListener("scroll", mark, {passive: true});
  const observer = new ResizeObserver(mark);
  observer.observe(scroller);
  mark();
  return () => observer.disconnect();
}
"""
# the fades are drawn over the box's edges; they take no clicks
_GRAPH_CSS = "\n".join([
    ".bpe-graph{position:relative;}",
    ".bpe-graph .bpe-scroll-note{display:none;font-size:14px;opacity:.8;margin-bottom:2px;}",
    ".bpe-graph:not([data-overflow=none]) .bpe-scroll-note{display:block;}",
    ".bpe-graph .bpe-tree-box:focus-visible{outline:3px solid var(--st-text-color,#31333f);"
    "outline-offset:2px;}",
    ".bpe-graph::before,.bpe-graph::after{content:'';position:absolute;top:0;bottom:0;width:36px;"
    "pointer-events:none;opacity:0;transition:opacity .15s;}",
    ".bpe-graph::before{left:0;background:linear-gradient(to right,var(--st-background-color,#fff),"
    "transparent);}",
    ".bpe-graph::after{right:0;background:linear-gradient(to left,var(--st-background-color,#fff),"
    "transparent);}",
    ".bpe-graph[data-overflow=right]::after,.bpe-graph[data-overflow=both]::after,"
    ".bpe-graph[data-overflow=left]::before,.bpe-graph[data-overflow=both]::before{opacity:1;}",
])
_GRAPH = st.components.v2.component("bpe_explorer.merge_graph", html='<div class="bpe-graph"></div>',
                                    js=_GRAPH_JS, css=_GRAPH_CSS, isolate_styles=False)

# The merge graph's sizes in pixels: a row, a box's height, the least gap between two boxes and a
# monospace character's width; and the most characters of a token a box shows.
ROW = 74
NODE_H = 50
GAP = 12
CHAR_W = 7.4
MAX_CHARS = 24
CUT = ' stroke-dasharray="5 3"'


def clicked_token(view: str, scope: str) -> int | None:
    """The token last clicked in the text named ``view``, kept across reruns while ``scope`` (a
    name for the tokenizer shown) stays the same; else ``None``.  Mounts the click listener."""
    result = _CLICKS(data={"view": view}, key=f"{view}_token_clicks", on_clicked_change=lambda: None,
                     height=0)
    clicked = getattr(result, "clicked", None)
    if clicked is not None:
        state.set_last_click(view, (scope, int(clicked)))
    kept = state.last_click(view)
    return kept[1] if kept is not None and kept[0] == scope else None


def show_clicked_tree(tok: BPETokenizer, view: str) -> None:
    """Under a token text: the merge graph of the token clicked there, or how to get one."""
    token_id = clicked_token(view, tokenizer_scope(tok))
    if token_id is None or not 0 <= token_id < tok.vocab_size:
        st.caption("Click a token above to see how it was built.")
        return
    st.markdown(f"**How token {token_id} was built**")
    show_merge_graph(tok, token_id)


def forget_click(view: str) -> None:
    """Back to the dropdown's token (its ``on_change``)."""
    state.set_last_click(view, None)


def show_merge_graph(tok: BPETokenizer, token_id: int) -> None:
    _GRAPH(data={"svg": _cached_svg(tok, token_id)}, key=f"merge_graph_{id(tok)}_{token_id}")


@st.cache_resource(show_spinner=False)
def _drawn() -> BoundedCache:
    """Drawn merge graphs by tokenizer and token: laying out a large token's graph takes a
    noticeable part of a page run, and a page that shows one draws it again at every rerun."""
    return BoundedCache(64, 16 * 2**20, cost=lambda entry: len(entry[1]))


def _cached_svg(tok: BPETokenizer, token_id: int) -> str:
    return _drawn().made_for(tok, token_id, lambda: merge_graph_svg(tok, token_id))


def tree_text(tok: BPETokenizer, token_id: int) -> str:
    """The merge tree drawn with box characters (``core.bpe.explain.tree_lines``), made once."""
    return _drawn().made_for(tok, ("text", token_id),
                             lambda: "\n".join(tree_lines(merge_tree(tok, token_id))))


@st.cache_resource(show_spinner=False)
def _names() -> BoundedCache:
    """Token pickers' labels by tokenizer: ~60 bytes a token."""
    return BoundedCache(64, 32 * 2**20, cost=lambda entry: 60 * len(entry[1]))


PICKER_BASE_MAX = 5_000  # base tokens a picker lists; past it (an alphabet of random Unicode), merges only


def picker_names(tok: BPETokenizer, new_only: bool) -> dict[int, str]:
    """A token picker's choices, ``id -> "id: 'token'"``: every token but the special ones, or
    (``new_only``, for a real tokenizer's 100k-200k) the merges learned here; made once per
    tokenizer (a picker of 5,000 tokens formats 5,000 names at every rerun otherwise)."""
    def make() -> dict[int, str]:
        ids = [s.new_id for s in tok.trace] if new_only else range(tok.vocab_size - len(tok.special_tokens))
        return {i: f"{i}: {quoted(tok.token_str(i))}" for i in ids}
    return _names().made_for(tok, ("picker", new_only), make)


def _label(node: DagNode) -> str:
    text = visible(node.text)
    return "'" + (text if len(text) <= MAX_CHARS else text[:MAX_CHARS - 1] + "…") + "'"


def _detail(node: DagNode, base: str) -> str:
    if node.parts is None:
        return f"id {node.id} · {base}"
    count = "" if node.count is None else f" · {node.count:,}×"
    step = "merged" if node.step is None else f"merge {node.step}"
    return f"id {node.id} · {step}{count}"


def _width(node: DagNode, base: str) -> float:
    return CHAR_W * max(len(_label(node)), len(_detail(node, base))) + 16


def _base_name(tok: BPETokenizer) -> str:
    return "base character" if tok.variant_rules.has_alphabet else "base byte"


def merge_graph_layout(tok: BPETokenizer, token_id: int, dag: list[DagNode] | None = None) -> Layout:
    """Where each box of ``token_id``'s merge graph goes (``core.bpe.tree_layout``: no edge crosses);
    ``dag``: its ``merge_dag``, where the caller has it."""
    base = _base_name(tok)
    return layout(dag or merge_dag(tok, token_id), lambda n: _width(n, base), ROW, NODE_H, GAP)


def merge_graph_svg(tok: BPETokenizer, token_id: int) -> str:
    """The merge graph of ``token_id`` as an SVG in a scrolling box; every text escaped."""
    dag = merge_dag(tok, token_id)
    nodes = {n.id: n for n in dag}
    base = _base_name(tok)
    drawing = merge_graph_layout(tok, token_id, dag)
    edges = [
        f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#64748b" '
        'stroke-width="1.5"/>'
        for x1, y1, x2, y2 in drawing.lines
    ]
    boxes = [
        _box_svg(nodes[box.id], box, token_id, key in drawing.cut, base)
        for key, box in drawing.boxes.items()
    ]
    width = drawing.width + 4
    height = drawing.height + 4
    svg = (f'<svg class="bpe-tree" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
           f'height="{height}" viewBox="-2 -2 {width:.0f} {height}" '
           f'font-family="ui-monospace,SFMono-Regular,Menlo,monospace">'
           f'{"".join(edges)}{"".join(boxes)}</svg>')
    note = '<div class="bpe-scroll-note" aria-hidden="true">Wider than this column: scroll ← →</div>'
    return (f'{note}<div class="bpe-tree-box" tabindex="0" role="region" data-root="{token_id}" '
            f'aria-label="How token {token_id} was built (scrolls sideways)" '
            f'style="overflow-x:auto;padding:4px 0">{svg}</div>')


def _box_svg(node: DagNode, box, token_id: int, cut: bool, base: str) -> str:
    """One box: the token's text over its id and merge.  The token asked about is yellow, a base
    symbol grey; a ``cut`` box (a long token's graph stops there: its parts are not drawn) is
    dashed."""
    x, y, w = box.x, box.y, box.w
    if node.id == token_id:
        fill = "#fde68a"
    elif node.parts is None:
        fill = "#e5e7eb"
    else:
        fill = "#dbeafe"
    dashed = CUT if cut else ""
    title = "<title>a long token: the parts of this one are not drawn</title>" if cut else ""
    label = html.escape(_label(node))
    detail = html.escape(_detail(node, base))
    return (
        f'<g class="bpe-node" data-id="{node.id}">'
        f'<rect x="{x - w / 2:.1f}" y="{y}" width="{w:.1f}" height="{NODE_H}" rx="6" fill="{fill}" '
        f'stroke="#475569"{dashed}>{title}</rect>'
        f'<text x="{x:.1f}" y="{y + 21}" text-anchor="middle" font-size="14">{label}</text>'
        f'<text x="{x:.1f}" y="{y + 40}" text-anchor="middle" font-size="11" fill="#475569">{detail}</text>'
        "</g>"
    )
