"""Learn BPE's step view, run in the browser: the text with the pair about to merge highlighted,
the "Merge k: ..." sentence, the counts, the top-pairs chart, the merge table and the curves'
cursor, for every step, from data sent once per tokenizer and window (``assets/step_view.js``, a
``st.components.v2`` component).

Why in the browser: a step used to be a server rerun (the page, its charts and its table sent
again), and a room of thirty stepping at once queued seconds behind each other's runs.  Here
Reset, Previous, Next, All merges, the Merges-done slider, Play and Pause cost the server
nothing: the browser applies (or undoes) merges itself, with the rule ``core.bpe.explain``
applies (pairs left to right without overlap inside a chunk), and redraws in place.  The step
lives in the page's URL (``?step=``, written by the browser), so a reload or a bookmark opens at
it; the server reads it only when a session opens (``ui.plumbing.controls.restore_settings``).
Every control is a real ``<button>``, ``<select>`` or ``<input type=range>`` with a visible focus
ring; the keys the view names (→ and ←, n and p, j and k) step from anywhere on the page
but a text box or a widget with keys of its own (the page's document listens, not the view: after a
click on the heading they did nothing), and Play and Pause hand the focus to each other as they
take each other's place.

The payload is built once per tokenizer and window and kept as encoded JSON in a bounded cache
shared by every session: a rerun of the page (a click on a token, another window) re-sends the
same bytes and computes nothing.  Its data (``core.bpe.step_data``, which a job worker can build
without Streamlit) are bounded by the window and the merges; every piece of text in them is
escaped there (``core.bpe.markup``), and the browser only assembles it.  The charts are
Vega-Lite specs built with Altair (``ui.plumbing.charts``) and drawn by Vega in the browser
(``ui.serving.vega_bundle``); at a step the browser only refills the pairs chart's named data set
and moves the cursors it lays over the curves.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from core import BPETokenizer, Token
from core.bpe import step_data
from core.bpe.markup import FAINT, esc
from core.digest import text_digest

from core.room.jobs import INLINE_BELOW

from ui.plumbing import charts, heavy_jobs, render, state
from ui.serving.bounded_cache import BoundedCache, KeyLocks
from ui.plumbing.cache import server_settings
from ui.plumbing.render import tokenizer_digest, tokenizer_scope
from ui.serving.vega_bundle import bundle_url

SPEEDS = [1, 2, 5, 10, 20]  # merges per second Play offers
DEFAULT_SPEED = 5
HEIGHT = 320  # the text box's height in pixels
# A payload of this many merges or more is built by the room's job engine: its tokens' names and
# faces grow with the merges, to seconds of work on a busy 2-core machine.
INLINE_MERGES = 1000


def _css() -> str:
    """``ui.plumbing.render``'s inline styles as classes (the same boxes, in a fraction of the markup), and
    the view's layout in the page's own theme colours (Streamlit's ``--st-*`` variables)."""
    boxes = {
        ".tok": render.BOX + "cursor:pointer;",
        ".tok.c0": f"background:{render.PALETTE[0]};",
        ".tok.c1": f"background:{render.PALETTE[1]};",
        ".tok.tok-hit": render.HIT,
        ".tok.in-group": render.IN_GROUP,
        ".tok.partial": render.PARTIAL,
        ".bpe-char": render.GROUP,
        ".bpe-glyph": render.GLYPH,
        ".bpe-hit": render.HIT_PAIR,
    }
    # one rule a line: Streamlit takes a one-line string with brackets for a file's path; a name
    # starting with ":" is the view's own state (its focus)
    return "\n".join(f".bpe-step{'' if name.startswith(':') else ' '}{name}{{{style}}}"
                     for name, style in {**boxes, **LAYOUT}.items())


# a control with the keyboard's focus is ringed in the theme's text colour (the view itself, which
# steps with the arrow keys, too); text on the primary colour is white, as on Streamlit's own
# primary buttons (.streamlit/config.toml picks violets dark enough for it)
FOCUS = "outline:3px solid var(--st-text-color,#31333f);outline-offset:2px;"
LAYOUT = {
    ":focus": "outline:none;",
    ":focus-visible": FOCUS,
    "*:focus-visible": FOCUS,
    "button": ("font:inherit;font-size:14px;padding:4px 12px;min-height:38px;cursor:pointer;"
               "border-radius:var(--st-button-radius,.5rem);border:1px solid rgba(128,128,128,.4);"
               "background:var(--st-background-color,#fff);color:var(--st-text-color,#31333f);"),
    "button:hover:not(:disabled)": "border-color:var(--st-primary-color);color:var(--st-primary-color);",
    "button.primary": "background:var(--st-primary-color);border-color:var(--st-primary-color);color:#fff;",
    "button.primary:hover:not(:disabled)": "color:#fff;filter:brightness(1.1);",
    "button:disabled": "opacity:.45;cursor:not-allowed;",
    "button[hidden]": "display:none;",
    ".bpe-controls": "display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin-bottom:6px;",
    ".bpe-speed": "margin-left:auto;font-size:14px;",
    ".bpe-speed select": ("font:inherit;padding:4px;border-radius:6px;color:var(--st-text-color);"
                          "background:var(--st-secondary-background-color);"
                          "border:1px solid rgba(128,128,128,.4);"),
    ".bpe-slider": "display:flex;align-items:center;gap:12px;font-size:14px;margin:4px 0 10px;",
    ".bpe-slider input": "flex:1;min-width:120px;accent-color:var(--st-primary-color);",
    ".bpe-head": "font-size:16px;margin:4px 0;",
    ".bpe-caption, .bpe-note": "font-size:14px;opacity:.7;margin-bottom:6px;",
    ".bpe-metrics": "display:flex;flex-wrap:wrap;gap:8px 40px;margin:8px 0 12px;",
    ".bpe-metric-label": "font-size:14px;opacity:.75;",
    ".bpe-metric-value": "font-size:28px;line-height:1.3;",
    ".bpe-row, .bpe-curves": "display:flex;flex-wrap:wrap;gap:16px 32px;margin-top:16px;",
    ".bpe-pairs, .bpe-table, .bpe-curve": "flex:1 1 340px;min-width:0;",
    ".bpe-curve": "position:relative;",
    ".bpe-cursor": "position:absolute;left:0;top:0;width:2px;background:#dc2626;pointer-events:none;",
    ".bpe-pairs[hidden]": "display:none;",
    ".bpe-pairs-title": "font-weight:600;margin-bottom:4px;",
    ".bpe-pairs-chart": "display:block;width:100%;",  # Vega's "container" width needs a width
    ".bpe-table-scroll": ("max-height:300px;overflow-y:auto;margin-top:6px;border-radius:6px;"
                          "border:1px solid rgba(128,128,128,.3);"),
    ".bpe-table table": "border-collapse:collapse;width:100%;font-size:14px;",
    ".bpe-table th": ("position:sticky;top:0;text-align:left;padding:4px 8px;"
                      "background:var(--st-secondary-background-color,#f0f2f6);"),
    ".bpe-table td": "padding:2px 8px;border-top:1px solid rgba(128,128,128,.15);white-space:pre;",
    ".bpe-table tr.current td": "background:rgba(250,204,21,.35);font-weight:600;",
    # a line is laid out and painted on its own, and not at all far out of the box's view (its height
    # until first drawn: one line of the box's 1.9 line height); a token's outline may pass its edge
    ".ln": "content-visibility:auto;contain-intrinsic-height:auto 1.9em;overflow-clip-margin:8px;",
}


NAME = "bpe_explorer.step_view"
_STEP_VIEW = st.components.v2.component(
    NAME, html='<div class="bpe-step"></div>', css=_css(),
    js=(Path(__file__).parent / "assets" / "step_view.js").read_text(encoding="utf-8"),
    isolate_styles=False)
VIEW_KEY = "learn_step_view"


@st.cache_resource(show_spinner=False)
def _payloads() -> BoundedCache:
    """Encoded payloads by tokenizer and window (as many as the tokenizers: ``ui.plumbing.cache``); a
    5,000-merge payload is about ten times a 300-merge one (docs/benchmarks.md, "Learn BPE's step
    view in Chromium")."""
    return BoundedCache(64, 96 * 2**20, cost=lambda entry: len(entry[1]))


_building = KeyLocks()  # one session builds a payload while the room waits for it


def show(tok: BPETokenizer, window: str, text_length: int, start_tokens: list[Token] | None) -> None:
    """Mount the step view of ``tok``'s merges over ``window`` (a window of a corpus of
    ``text_length`` characters); ``start_tokens`` is the real tokenizer's cut of ``window`` for an
    extension (``core.bpe.explain.segment``).

    The browser keeps the step it shows across reruns, pages and windows of this page load, until
    the session's step is reset (a new corpus or new settings: ``state.reset_learn_step``); it opens
    at the session's step, which a reload or a bookmark restores from the URL."""
    opening = f"{state.learn_resets()} {state.learn_step()}\n".encode()
    # a new element for each reset (a new corpus or new settings), not new data for the old one: a
    # paste made while a fresh page's first run was under way left the browser's view on the sample
    # (Chromium, CI) while the page around it showed the paste
    _STEP_VIEW(data=opening + encoded_payload(tok, window, text_length, start_tokens),
               key=f"{VIEW_KEY}_{state.learn_resets()}")


def encoded_payload(tok: BPETokenizer, window: str, text_length: int,
                    start_tokens: list[Token] | None = None) -> bytes:
    """``payload`` as the bytes the browser parses (``core.bpe.step_data.built_payload``).  Built
    once, shared by every session: by the room's job engine for a large corpus or many merges
    (``ui.plumbing.heavy_jobs``; the page shows its progress and stops there until it is built),
    else here."""
    key = (text_length, text_digest(window))
    with _building.hold((id(tok), key)):
        return _payloads().made_for(tok, key, lambda: _built(tok, window, key, start_tokens))


def _built(tok: BPETokenizer, window: str, key: tuple[int, str],
           start_tokens: list[Token] | None) -> bytes:
    """The payload of ``window``; ``key``: its corpus's length and the window's hash, made once."""
    text_length = key[0]
    scope = tokenizer_scope(tok)  # a hash of str: computed here, as another process hashes otherwise
    args = (tok, window, text_length, start_tokens, scope, _page(tok, text_length))
    if text_length < INLINE_BELOW and len(tok.trace) < INLINE_MERGES:
        return step_data.built_payload(*args)
    job_key = ("step view", tokenizer_digest(tok), tok.vocab_size, *key)
    return heavy_jobs.job_result(server_settings(), job_key, step_data.built_payload, args,
                                 "Preparing the step view",
                                 advice="Ask for fewer merges, or show another part of the text.")


def payload(tok: BPETokenizer, window: str, text_length: int,
            start_tokens: list[Token] | None = None) -> dict:
    """Everything the browser needs to show any step of ``tok``'s merges over ``window``
    (``core.bpe.step_data.payload``, with this page's styles, charts and controls)."""
    return step_data.payload(tok, window, text_length, start_tokens, tokenizer_scope(tok),
                             _page(tok, text_length))


def _page(tok: BPETokenizer, text_length: int) -> dict:
    """The payload's entries that are the page's own: how it draws and what it offers."""
    return {
        "group_legend": esc(render.GROUP_LEGEND),
        "styles": _styles(),
        "charts": {"pairs": charts.pairs_spec(), "curves": charts.curves_spec(tok, text_length)},
        "status": charts.STATUS,
        "vega": bundle_url(),
        "speeds": SPEEDS,
        "speed": DEFAULT_SPEED,
        "param": state.STEP_PARAM,
        "view": "learn",
    }


def _styles() -> dict:
    """The styles the script writes inline (once a step, not once a token)."""
    return {"faint": FAINT, "legend": render.LEGEND_STYLE,
            "container": render.CONTAINER.format(h=HEIGHT), "attrs": render.box_attrs(render.TEXT_LABEL)}
