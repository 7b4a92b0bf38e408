"""The Compare tokenizers page's helpers: the real models' tokenizers loaded once per server, each
chosen tokenizer's tokens for a text, token spans with the cuts that differ marked, and the cost
per script as an Altair chart.

- ``choices() -> (labels, missing)``: every tokenizer the page can show (the real ones, then the
  one trained on the session's corpus) by key, and why any is missing (GPT-2 without its files).
- ``encode_all(keys, labels, text) -> list[Encoded]``: each tokenizer's tokens, or why it cannot encode.
- ``spans_html(result, panel, marked, height)``: escaped HTML; hovering a token shows its id and bytes.
- ``cost_frame(results, text)`` / ``cost_chart(frame)``: tokens per character, per tokenizer and script;
  ``costs(results, text)``: the chart's spec and each tokenizer's costliest script, made once.

Each tokenizer's encoding of a text, its spans' HTML and the costs are kept in bounded caches
shared by every session, so a rerun of the page that changes none of them (a click on a token,
another tree) computes none of them again.

Leaves out: the rules (``core.bpe.compare``), the page layout (``app_pages/compare_tokenizers.py``).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Callable

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from core import PRETRAINED_NAMES, BPETokenizer
from core.bpe import GPT2FileError, PatternTimeoutError, UnknownCharacterError
from core.bpe.encoding import PackedTokens
from core.bpe.compare import char_scripts, differing, ranked_scripts, script_costs, spans
from core.bpe.markup import esc
from core.digest import text_digest

from ui.serving.bounded_cache import BoundedCache
from ui.plumbing.charts import FIT_WIDTH, grouped_height
from ui.plumbing.controls import own_label
from ui.plumbing.cache import PRETRAINED_LABELS as LABELS
from ui.plumbing.cache import TRAINING_ERRORS, pretrained, session_tokenizer
from ui.plumbing.render import (
    CONTAINER,
    TokenFaces,
    box_attrs,
    drawn_count,
    legend_html,
    rest_html,
    show_error,
    spans_markup,
    string_tokens_html,
)

SESSION = "session"
MAX_SHOWN = 6
MAX_TEXT_CHARS = 20_000  # a longer text in the box is compared on its first this many characters
# the start of the sidebar's corpus that its pick puts in the box: enough to see every tokenizer cut
# it, and cheap, as each attendee's corpus is compared anew on the page's thread, where 20,000
# characters each stalled a room's other pages (why: docs/benchmarks.md, "A room that does not behave")
CORPUS_CHARS = 2_000
MARK = "box-shadow:inset 0 -3px 0 #dc2626;"  # a cut the reference tokenizer does not make


def session_label() -> str:
    try:
        tok = session_tokenizer(progress=False)
    except TRAINING_ERRORS:
        return "Yours (this session's corpus)"
    return own_label(tok)


def choices() -> tuple[dict[str, str], dict[str, str]]:
    """The tokenizers that load, key -> label, and those that do not, label -> why."""
    labels, missing = {}, {}
    for name in PRETRAINED_NAMES:
        try:
            pretrained(name)
        except (GPT2FileError, ImportError, OSError) as exc:
            missing[LABELS.get(name, name)] = str(exc)
            continue
        labels[name] = LABELS.get(name, name)
    labels[SESSION] = session_label()
    return labels, missing


@dataclass
class Encoded:
    """One tokenizer's view of the text: its tokens (offsets into ``text``, its normalized form
    for a tokenizer that normalizes), or ``error`` saying why there are none (with ``unseen``, the
    characters a trained tokenizer's alphabet lacks).

    The tokenizer is held weakly: encodings are kept in a cache shared by the room, which must not
    keep an attendee's tokenizer alive once the tokenizer store has let it go (``made_for`` then
    drops the encoding too)."""

    key: str
    label: str
    tok_ref: Callable[[], BPETokenizer | None]
    text: str
    tokens: PackedTokens  # kept in a cache shared by the room: no Python object a token
    error: str | None = None
    unseen: tuple[str, ...] = ()

    @property
    def tok(self) -> BPETokenizer | None:
        return self.tok_ref()

    @property
    def chars_per_token(self) -> float:
        return len(self.text) / len(self.tokens) if self.tokens else 0.0


class Encodings(list):
    """A page run's encodings, holding their tokenizers for as long as the run holds the list: the
    shared encodings hold them weakly, and a crowded store could let one go while the page draws."""

    def __init__(self, made: list[tuple[Encoded, BPETokenizer | None]]) -> None:
        super().__init__(encoded for encoded, _ in made)
        self.held = [tok for _, tok in made]


def encode_all(keys: list[str], labels: dict[str, str], text: str) -> Encodings:
    return Encodings([_encode(key, labels[key], text) for key in keys])


@st.cache_resource(show_spinner=False)
def _encodings() -> BoundedCache:
    """Encodings by tokenizer and text (the page's texts are at most 20,000 characters)."""
    return BoundedCache(64, 64 * 2**20,
                        cost=lambda entry: entry[1].tokens.rows.nbytes + 4 * len(entry[1].text))


def _encode(key: str, label: str, text: str) -> tuple[Encoded, BPETokenizer | None]:
    """The shared encoding of ``text`` by the tokenizer ``key``, and that tokenizer."""
    try:
        tok = session_tokenizer(progress=False) if key == SESSION else pretrained(key)
    except (*TRAINING_ERRORS, GPT2FileError) as exc:
        return Encoded(key, label, lambda: None, text, PackedTokens(), error=str(exc)), None
    key_of_text = (key, label, text_digest(text))
    return _encodings().made_for(tok, key_of_text, lambda: _encoded(key, label, tok, text)), tok


def _encoded(key: str, label: str, tok: BPETokenizer, text: str) -> Encoded:
    shown = tok.normalized(text)
    try:
        return Encoded(key, label, weakref.ref(tok), shown,
                       PackedTokens(tok.encode_tokens(shown, allowed_special="none")))
    except UnknownCharacterError:
        unseen = tuple(dict.fromkeys(ch for _, ch in tok.unknown_characters(shown)))
        return Encoded(key, label, weakref.ref(tok), shown, PackedTokens(), unseen=unseen,
                       error=f"{len(unseen):,} distinct characters of the text are not in its alphabet "
                             "(its corpus never had them), so it cannot encode it: shown in red. "
                             "A byte-level tokenizer encodes any text.")


def unseen_html(result: Encoded) -> str:
    """What a trained tokenizer makes of a text it cannot encode: its pieces, unseen in red (made
    once for the room, as the spans are)."""
    return _spans().made_for(result, "unseen", lambda: string_tokens_html(
        result.tok.tokenize(result.text), set(result.unseen), height=360))


def marked_tokens(result: Encoded, reference: Encoded | None) -> tuple[int, ...]:
    """Indices of ``result``'s tokens cut unlike ``reference``'s (``core.bpe.compare.differing``),
    made once per pair of encodings: a full box is tens of thousands of tokens a tokenizer,
    compared again at every click on the page otherwise."""
    if reference is None or result is reference:
        return ()
    return _made_for_encodings(_marks(), (result, reference),
                              lambda: tuple(differing(result.tokens, spans(reference.tokens))))


@st.cache_resource(show_spinner=False)
def _marks() -> BoundedCache:
    """Tokens cut unlike a reference's, by the two encodings."""
    return BoundedCache(64, 16 * 2**20, cost=lambda entry: 100 + 8 * len(entry[1]))


def _made_for_encodings(cache: BoundedCache, results, make):
    """``make()`` once for these encodings, kept in ``cache`` by their identities and holding them
    weakly (``BoundedCache.made_for`` holds one source; an address a freed encoding leaves may be
    another's)."""
    key = tuple(id(r) for r in results)
    entry = cache.get(key)
    if entry is None or any(ref() is not r for ref, r in zip(entry[0], results)):
        entry = (tuple(weakref.ref(r) for r in results), make())
        cache.put(key, entry)
    return entry[1]


VIEW = "tokenizers"  # the page's token texts, for clicks (``ui.views.token_view``)
PANEL = 10**7  # a token's data-id is panel * PANEL + id: one click listener tells the texts apart


def clicked_at(value: int) -> tuple[int, int]:
    """``(panel, token id)`` of a click's value (see ``PANEL``)."""
    return divmod(value, PANEL)


@st.cache_resource(show_spinner=False)
def _spans() -> BoundedCache:
    """Spans' HTML by encoding, panel and marked tokens: ~300 bytes a token."""
    return BoundedCache(64, 64 * 2**20, cost=lambda entry: len(entry[1]))


def spans_html(result: Encoded, panel: int, marked=(), height: int = 360) -> str:
    """The text as token spans, alternating colours; tokens in ``marked`` underlined in red.
    Hovering a token shows its id, text and bytes (``title``); a click names its id
    (``data-id``, read by ``ui.views.token_view``); every piece of text is escaped."""
    marked = tuple(sorted(marked))
    return _spans().made_for(result, (panel, marked, height),
                             lambda: _spans_html(result, panel, marked, height))


def _spans_html(result: Encoded, panel: int, marked: tuple[int, ...], height: int) -> str:
    text, tok = result.text, result.tok
    drawn = drawn_count(tok, result.tokens)
    spans, pos, grouped = spans_markup(tok, text, result.tokens[:drawn], TokenFaces(tok, text),
                                       styles=dict.fromkeys(marked, MARK),
                                       classes=dict.fromkeys(marked, " tok-diff"), id_offset=panel * PANEL)
    return (f'<div class="bpe-text bpe-compare" data-view="{VIEW}" data-tokenizer="{esc(result.key)}" '
            f'{box_attrs(result.label + ": the text split into tokens")} '
            f'style="{CONTAINER.format(h=height)}">{spans}{rest_html(text, pos, drawn, len(result.tokens))}'
            f'</div>{legend_html(grouped)}')


def cost_frame(results: list[Encoded], text: str) -> pd.DataFrame:
    """Tokens per character for every (tokenizer, script) of ``text``; tokenizers that could not
    encode all of it are left out (a skipped character would look free)."""
    scripts = char_scripts(text)
    rows = []
    for r in results:
        if r.error:
            continue
        scripts_r = scripts if r.text == text else char_scripts(r.text)
        for c in script_costs(r.text, r.tokens, scripts_r):
            rows.append({
                "tokenizer": r.label,
                "script": c.script,
                "characters": c.chars,
                "tokens": round(c.tokens, 2),
                "tokens per character": round(c.tokens_per_char, 3),
            })
    columns = ["tokenizer", "script", "characters", "tokens", "tokens per character"]
    return pd.DataFrame(rows, columns=columns)


def costliest_vs_cheapest(results: list[Encoded], text: str) -> dict[str, tuple[str, str, float]]:
    """Per tokenizer, its costliest and cheapest scripts of ``text`` and what a character of the one
    costs over the other: ``core.bpe.compare.ranked_scripts``, the ranking Start here's script
    station states."""
    scripts, found = char_scripts(text), {}
    for r in results:
        if r.error:
            continue
        ranked = ranked_scripts(script_costs(r.text, r.tokens, scripts if r.text == text else None))
        if len(ranked) >= 2 and ranked[-1].tokens_per_char > 0:
            found[r.label] = (ranked[0].script, ranked[-1].script,
                              ranked[0].tokens_per_char / ranked[-1].tokens_per_char)
    return found


def cost_chart(frame: pd.DataFrame) -> alt.Chart:
    """One row of bars per tokenizer, one bar per script in it: the tokenizers' names on the left
    axis, each in full, the scripts in the legend below.  The plot is as tall as its bars need
    (``grouped_height``), the legend below it and only the width fitted to the page: fitted to a
    fixed height too (Streamlit's default), the axis and the legend of a text in one script took all
    of it, and six names lay on one hairline of bars."""
    order = list(dict.fromkeys(frame["script"]))
    tokenizers = list(dict.fromkeys(frame["tokenizer"]))
    return alt.Chart(frame).mark_bar().encode(
        y=alt.Y("tokenizer:N", sort=tokenizers, title=None,
                axis=alt.Axis(labelOverlap=False, labelLimit=0, labelFontSize=13)),
        yOffset=alt.YOffset("script:N", sort=order),
        x=alt.X("tokens per character:Q"),
        color=alt.Color("script:N", sort=order,
                        legend=alt.Legend(orient="bottom", columns=2, labelLimit=0, title=None)),
        tooltip=["tokenizer", "script", "characters", "tokens",
                 alt.Tooltip("tokens per character:Q", format=".3f")],
    ).properties(width="container", height=grouped_height(len(tokenizers), len(order)), autosize=FIT_WIDTH)


@st.cache_resource(show_spinner=False)
def _costs() -> BoundedCache:
    """The cost chart's spec and the scripts' ranking, by the encodings they come from."""
    return BoundedCache(32, 32 * 2**20, cost=lambda entry: 8192)


def costs(results: list[Encoded], text: str) -> tuple[dict | None, dict[str, float]]:
    """The cost per script chart's Vega-Lite spec (``None`` when no tokenizer could encode the
    text) and each tokenizer's costliest script against its cheapest: made once for
    these encodings (each cached, so the same objects come back while nothing changed)."""
    def make():
        frame = cost_frame(results, text)
        if frame.empty:
            return None, {}
        return cost_chart(frame).to_dict(), costliest_vs_cheapest(results, text)

    return _made_for_encodings(_costs(), results, make)


def token_options(result: Encoded) -> list[int]:
    """Ids of the text's tokens, each once, longest first (the most merges to see)."""
    ids = np.unique(result.tokens.ids).tolist()  # at every run of the page: no Token made
    return sorted(ids, key=lambda i: (-len(result.tok.token_bytes(i)), i))


def handle_timeouts(draw) -> None:
    """Run ``draw``; a split pattern too slow for the text becomes a message."""
    try:
        draw()
    except PatternTimeoutError as exc:
        show_error(exc)
