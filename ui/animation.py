"""Play the merges in the browser: Learn BPE's Play sends, once, everything the animation needs,
and the browser applies one merge per tick itself (``assets/merge_animation.js``, a
``st.components.v2`` component).

A server rerun per merge could not keep up (1-2 merges/s whatever the chosen speed: every step
re-sent the charts, the merge table and the text); here nothing crosses the websocket while a play
runs.  When it stops (Pause, or the last merge) the browser reports the step it shows, and the page
jumps to exactly that step, so a pause never overshoots and a step never runs backwards.

The payload is bounded by the window and the merges: the window's tokens after ``start`` merges,
the merges still to come (pair, new id, count, corpus length after), and how each token that can
appear in the window is drawn.  Those are the final tokens of the window and their parts made at
step ``start`` or later: a token shown at any step is a part of some final token.  Every piece of
text is escaped here (``ui.render``); the browser only assembles it.

Leaves out: the static view at one step (``ui.render.token_spans_html``) and the page's controls.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st

from core import BPETokenizer
from core.bpe.display import is_invisible, quoted, visible_char
from core.bpe.explain import segment

from . import render, state
from .render import esc, gap_html, token_face


def _css() -> str:
    """``ui.render``'s inline styles as classes: the same boxes, in a fraction of the markup."""
    rules = {".tok": render.BOX + "cursor:pointer;", ".tok.c0": f"background:{render.PALETTE[0]};",
             ".tok.c1": f"background:{render.PALETTE[1]};", ".tok.tok-hit": render.HIT,
             ".tok.in-group": render.IN_GROUP, ".tok.partial": render.PARTIAL, ".bpe-char": render.GROUP,
             ".bpe-glyph": render.GLYPH, ".bpe-hit": render.HIT_PAIR}
    return "".join(f".bpe-anim {name}{{{style}}}" for name, style in rules.items())


_ANIMATION = st.components.v2.component(
    "bpe_explorer.merge_animation", html='<div class="bpe-anim"></div>', css=_css(),
    js=(Path(__file__).parent / "assets" / "merge_animation.js").read_text(encoding="utf-8"),
    isolate_styles=False)
PAUSE_KEY = "learn_pause"  # the page's Pause button, whose clicks the animation catches first
NAME_CHARS = 32


def styles(height: int) -> dict:
    """The styles the script writes inline (once a step, not once a token)."""
    return {"faint": render.FAINT, "legend": render.LEGEND_STYLE, "container": render.CONTAINER.format(h=height)}


def shown_ids(tok: BPETokenizer, window: str, start: int, first: list[int]) -> set[int]:
    """Every token the window can show from merge ``start`` on: the tokens at ``start`` (``first``)
    and the parts, made at step ``start`` or later, of the window's final tokens."""
    made = {s.new_id: k for k, s in enumerate(tok.trace)}  # steps along the trace (an extension's new ones)
    found, todo = set(first), [t.id for t in segment(tok, window, len(tok.trace))]
    while todo:
        i = todo.pop()
        if i in found or made.get(i, -1) < start:
            continue
        found.add(i)
        todo.extend(tok.merge_parts(i))
    return found


def play_payload(tok: BPETokenizer, window: str, start: int, rate: float, play: int,
                 view: str = "learn", height: int = 320) -> dict:
    """What the browser needs to play merges ``start`` to the last over ``window`` at ``rate``
    merges per second; ``play`` names this play (a new number restarts the animation)."""
    tokens, n = segment(tok, window, start), len(tok.trace)
    ids = shown_ids(tok, window, start, [t.id for t in tokens])
    merges = [[s.left, s.right, s.new_id, s.count, s.length_after] for s in tok.trace[start:n]]
    named = ids | {i for m in merges for i in m[:3]}
    gaps, pos = {}, 0
    for i, t in enumerate(tokens):
        if t.start > pos:
            gaps[i] = gap_html(window[pos:t.start])
        pos = max(pos, t.end)
    byte_level = not tok.variant_rules.has_alphabet
    faces = {i: token_face(tok, i) for i in ids}
    return {
        "play": play, "view": view, "pause": PAUSE_KEY, "rate": float(rate), "start": start, "n": n,
        "base_vocab": tok.vocab_size - n,
        "length0": tok.trace[start - 1].length_after if start else tok.initial_length,
        "ids": [t.id for t in tokens], "chunks": [t.chunk for t in tokens], "gaps": gaps,
        "tail": gap_html(window[pos:]), "merges": merges,
        "names": {i: _name(tok, i, full=i in ids) for i in named},
        "faces": {i: [html, int(partial), int(br)] for i, (html, partial, br) in faces.items()},
        "hex": {i: render.hex_bytes(tok.token_bytes(i)) for i in ids},
        "grouping": byte_level,
        "cont": {i: 1 for i in ids if byte_level and _continues(tok.token_bytes(i))},
        "symbols": {ch: visible_char(ch) for ch in set(window) if is_invisible(ch)},
        "legend": render.legend_text(window), "group_legend": esc(render.GROUP_LEGEND),
        "styles": styles(height),
    }


def _name(tok: BPETokenizer, token_id: int, full: bool) -> str:
    """A token quoted as headings show it; cut short where only the heading needs it (long tokens
    of thousands of merges would make most of the payload)."""
    name = quoted(tok.token_str(token_id))
    return name if full or len(name) <= NAME_CHARS else name[:NAME_CHARS - 2] + "…'"


def _continues(raw: bytes) -> bool:
    return bool(raw) and raw[0] & 0xC0 == 0x80


def reported_step(report: object, play: int, start: int, n: int) -> int | None:
    """The step to jump to from the browser's report ``{"play", "step"}``, kept between ``start``
    (the step the play began from: never backwards) and ``n``; ``None`` for a report of an older
    play or one that is not a step at all (a browser can send anything)."""
    if not isinstance(report, dict) or report.get("play") != play:
        return None
    step = report.get("step")
    if isinstance(step, bool) or not isinstance(step, int):
        return None
    return min(max(step, start), n)


def play(tok: BPETokenizer, window: str, start: int, rate: float, play_id: int,
         on_stop: Callable[[int], None]) -> None:
    """Mount the animation of merges ``start`` on.  When the browser stops it, ``on_stop(step)``
    runs before the next rerun draws anything (a callback: the page may still move its slider)."""
    n = len(tok.trace)

    def reported() -> None:
        step = reported_step(getattr(state.get(state.LEARN_ANIMATION), "report", None), play_id, start, n)
        if step is not None:
            on_stop(step)

    _ANIMATION(data=play_payload(tok, window, start, rate, play_id), key=state.LEARN_ANIMATION,
               on_report_change=reported)
