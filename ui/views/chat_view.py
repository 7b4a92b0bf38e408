"""The Chat page's helpers: each model's reading of the conversation counted once per content
(shared by every session), its rendering as token spans with the template's tokens in their own
style, the two charts' frames and specs, and the table of what it costs.

Leaves out: the formats and the counting (``core.chat``), the editor and layout (``app_pages/chat.py``).
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

import hashlib

from core import Token
from core.bpe import UnknownCharacterError
from core.chat import OWN_MODEL, ChatCount, count_chat, own_chat_tokenizer
from core.chat.chat_models import count_models
from core.chat.history import Growth
from ui.plumbing import heavy_jobs
from ui.plumbing.cache import server_settings
from ui.plumbing.charts import FIT_WIDTH
from ui.plumbing.render import DRAWN_TOKENS, md_safe, plural, token_spans_html
from ui.serving.bounded_cache import BoundedCache

# What the page counts on its own thread (the five formats take about a second per 100,000
# characters); a longer conversation is counted by the room's job engine, as other heavy work is.
MAX_CHARS = 20_000
SHOWN_TOKENS = DRAWN_TOKENS + 3  # what a rendering draws, and the rest of a character
TEMPLATE_STYLE = "background:#e5e7eb;border-style:dashed;"  # the template's own text
SPECIAL_STYLE = "background:#1e3a8a;color:#ffffff;font-weight:600;"  # a special token it placed
PARTS = ("content", "template")


@st.cache_resource(show_spinner=False)
def _counts() -> BoundedCache:
    """Conversations' counts by their content: a counted token is about 200 bytes of objects."""
    return BoundedCache(64, 128 * 2**20, lambda found: 200 * sum(
        len(c.tokens) for c in found.values() if not isinstance(c, str)))


def model_counts(messages: tuple, tools: tuple, thinking: bool) -> dict[str, ChatCount | str] | None:
    """Each model's count of the conversation, or why its template refuses it: on the page's
    thread up to :data:`MAX_CHARS` characters, else as a job (``None``, under a progress bar,
    until it is done)."""
    content = repr((messages, tools)).encode("utf-8", "surrogatepass")
    key = ("chat", hashlib.sha256(content).hexdigest(), thinking)
    size = sum(len(m.content) for m in messages)
    return heavy_jobs.computed(server_settings(), _counts(), key, count_models,
                               (messages, tools, thinking, SHOWN_TOKENS), size,
                               "Counting the conversation for each model",
                               advice="Use a shorter conversation.", inline_below=MAX_CHARS + 1)


@st.cache_data(show_spinner=False, max_entries=64)
def own_count(scope: str, _tokenizer, messages: tuple, tools: tuple) -> ChatCount | str:
    """Your tokenizer's count (``scope``: its name, which keys the cache), or why it cannot read it."""
    try:
        return count_chat(OWN_MODEL, own_chat_tokenizer(_tokenizer), messages, tools)
    except UnknownCharacterError as exc:  # its API's advice is a script's, not an attendee's
        return (f"the conversation holds {exc.count:,} characters the sidebar's corpus never had "
                f"(the first: {exc.char!r}), so a tokenizer trained on its characters cannot read it; "
                "a byte-level one (Learn BPE's byte variant) reads any text.")
    except ValueError as exc:
        return str(exc)


@st.cache_resource(show_spinner=False)
def _renderings() -> BoundedCache:
    """Each count's rendering (a count is its model's, so its tokenizer is known by it): the page
    drew five of them at every rerun, whatever was clicked."""
    return BoundedCache(32, 32 * 2**20, cost=lambda made: len(made.value))


def rendering_html(count: ChatCount, tokenizer, height: int = 260) -> str:
    """The conversation as the model reads it (its first ``render.DRAWN_TOKENS`` tokens): message
    text in the usual boxes, the template's text dashed and grey, its special tokens dark blue;
    made once per count."""
    return _renderings().made_for(count, height, lambda: _rendering_html(count, tokenizer, height))


def _rendering_html(count: ChatCount, tokenizer, height: int) -> str:
    shown = count.head(SHOWN_TOKENS)
    tokens = [Token(t.id, t.start, t.end, 0) for t in shown.tokens]
    styles = {n: SPECIAL_STYLE if t.part == "special" else TEMPLATE_STYLE
              for n, t in enumerate(shown.tokens) if t.part != "content"}
    return token_spans_html(tokenizer, shown.text, tokens, height=height, styles=styles, total=count.total,
                            label=f"The conversation as {count.label} reads it")


def message_frame(counts: dict[str, ChatCount], labels: list[str]) -> pd.DataFrame:
    """Tokens per model, message and part, in the conversation's order (what no message owns last)."""
    rows = []
    for count in counts.values():
        for k, m in enumerate(count.messages):
            for part, n in zip(PARTS, (m.content_tokens, m.template_tokens)):
                rows.append({"model": count.label, "message": labels[k], "part": part, "tokens": n,
                             "order": k})
        outside = count.total - sum(m.content_tokens + m.template_tokens for m in count.messages)
        rows.append({"model": count.label, "message": "around the messages", "part": "template",
                     "tokens": outside, "order": len(labels)})
    return pd.DataFrame(rows)


def message_chart(frame: pd.DataFrame) -> alt.Chart:
    return alt.Chart(frame).mark_bar(stroke="white", strokeWidth=1).encode(
        x=alt.X("sum(tokens):Q", title="tokens", axis=alt.Axis(labelFlush=True)),
        y=alt.Y("model:N", title=None, sort=None, axis=alt.Axis(labelLimit=0, labelOverlap=False)),
        color=alt.Color("part:N", sort=list(PARTS), scale=alt.Scale(range=["#2563eb", "#9ca3af"]),
                        legend=alt.Legend(orient="bottom", title=None)),
        order=alt.Order("order:Q"),
        tooltip=["model", "message", "part", "tokens"],
    ).properties(width="container", height=34 * frame["model"].nunique(),  # room for each model's name
                 autosize=FIT_WIDTH, padding={"left": 5, "top": 5, "bottom": 5, "right": 10})  # the last
    # tick's label, flush with the axis's end, overran a 5 px padding by a pixel or two in Chromium


def history_frame(counts: dict[str, ChatCount], requests: int) -> pd.DataFrame:
    rows = []
    for count in counts.values():
        growth, window = Growth.of(count), count.context_window
        for r in range(1, requests + 1):
            sent = growth.sent(r)
            rows.append({"model": count.label, "request": r, "sent by this request": sent,
                         "sent in all": growth.sent_in_all(r), "context window": window,
                         "share of the window": sent / window if window else None})
    return pd.DataFrame(rows)


def _history_base(frame: pd.DataFrame) -> alt.Chart:
    colour = alt.Color("model:N", legend=alt.Legend(orient="bottom", title=None, columns=2, labelLimit=0))
    x = alt.X("request:Q", title="request (the whole history sent again)", axis=alt.Axis(labelFlush=True))
    return alt.Chart(frame).encode(x=x, color=colour)


def request_chart(frame: pd.DataFrame) -> alt.Chart:
    """How much of each model's context window each request fills, against the full window
    (dashed): on one scale for every model, whose windows run from thousands of tokens to hundreds
    of thousands (drawn in tokens, a few thousand sent lay flat under the largest window)."""
    share = _history_base(frame.dropna(subset=["share of the window"])).mark_line(point=True).encode(
        y=alt.Y("share of the window:Q", title="share of its context window", axis=alt.Axis(format="%")),
        tooltip=["model", "request", "sent by this request", "context window",
                 alt.Tooltip("share of the window:Q", format=".1%")])
    full = alt.Chart(pd.DataFrame({"full": [1.0]})).mark_rule(strokeDash=[6, 4], color="gray").encode(
        y="full:Q", tooltip=[alt.Tooltip("full:Q", title="the whole window", format="%")])
    return (share + full).properties(width="container", height=260, autosize=FIT_WIDTH)


def total_chart(frame: pd.DataFrame) -> alt.Chart:
    """Tokens sent in all by each request: what the conversation costs."""
    return _history_base(frame).mark_line().encode(
        y=alt.Y("sent in all:Q", title="tokens sent in all"), tooltip=["model", "request", "sent in all"],
    ).properties(width="container", height=260, autosize=FIT_WIDTH)


def headline(counts: dict[str, ChatCount]) -> str:
    """Whose format costs most here, and whose least: the one sentence above the table."""
    ranked = sorted(counts.values(), key=lambda c: -c.template_tokens)
    most, least = ranked[0], ranked[-1]
    said = (f"**{md_safe(most.label)}**'s format costs the most here: {most.template_tokens:,} template "
            f"tokens wrapped around {most.content_tokens:,} tokens of content")
    if least is most:
        return said + "."
    return said + f"; the least is **{md_safe(least.label)}**'s, {least.template_tokens:,}."


def cost_rows(counts: dict[str, ChatCount], requests: int) -> pd.DataFrame:
    """A row a model, dearest format first: its template's tokens, what each request sends again
    (the system prompt, the tools) and that over ``requests`` requests, and how many requests its
    window holds.  A column nobody pays (no system prompt, no tools) is left out."""
    ranked = sorted(counts.values(), key=lambda c: -c.template_tokens)
    frame = pd.DataFrame({
        "model": [c.label for c in ranked],
        "template": [c.template_tokens for c in ranked],
        "system prompt": [c.system_tokens for c in ranked],
        "tools": [c.tools_tokens for c in ranked],
    })
    frame = frame.loc[:, (frame != 0).any()]
    again = [c for c in ("system prompt", "tools") if c in frame]
    if again:
        name = "system + tools" if len(again) == 2 else again[0]
        frame[f"{name} × {requests:,}"] = frame[again].sum(axis=1) * requests
    frame["requests that fit"] = [Growth.of(c).requests_that_fit(c.context_window) for c in ranked]
    frame["window"] = [c.context_window for c in ranked]
    return frame


def cost_caption(frame: pd.DataFrame, requests: int) -> str:
    """What the table's columns mean, only those it has."""
    said = ("Tokens, a row a model, the dearest format first. *Template*: every token that is not a "
            "message's own text (headers, separators, special tokens, the tools).")
    again = [c for c in ("system prompt", "tools") if c in frame]
    if again:
        said += (f" The {' and the '.join(again)} go{'es' * (len(again) == 1)} again with every request "
                 f"(× {requests:,}: in {plural(requests, 'request')}).")
    return said + (" *Requests that fit*: how many requests the model's context *window* holds, each "
                   "adding these messages again.")


