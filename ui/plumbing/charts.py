"""Vega-Lite specs of training traces, built with Altair once per content, never per rerun.

Learn BPE's step view (``ui.views.step_view``) draws the top pairs counted before a merge, and the
vocabulary and corpus length after each merge (the browser lays a cursor at the step shown over
them): each spec is built once (the pairs chart once per process, the curves once per tokenizer,
inside the step view's cached payload) and holds no step; the pairs chart's named data set ``pairs``
is refilled by the browser at every step (``assets/step_view.js``), from the rows :func:`pair_rows`
describes.

Char vs BPE draws each variant's compression curve (:func:`variants_spec`), kept in a bounded
cache shared by every session, by the tokenizers' content: a rerun of the page (a test text typed)
sends the same spec without building it, its data sets already in the Arrow form Streamlit sends
(converting the rows at each rerun was a fifth of the page's server time).  Insights' charts are
made the same way, once per content, by :func:`vega_spec`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import altair as alt
import pandas as pd
import streamlit as st
from streamlit.dataframe_util import convert_anything_to_arrow_bytes

from core import BPETokenizer
from core.bpe.explain import compression_curve, quoted

from ui.serving.bounded_cache import BoundedCache
from ui.plumbing.render import tokenizer_scope

STATUS = ["winner", "tie (lost on order)", "other"]
STATUS_COLOURS = ["#ca8a04", "#f97316", "#93c5fd"]
# each status told apart without colour too: a word on the bar and an outline (dark text on every fill)
STATUS_MARKS = ["▲ merged", "= tie", ""]
STATUS_DASHES = [[1, 0], [4, 2], [1, 0]]
BAR_TEXT = "#111827"
MAX_CURVE_POINTS = 1000  # a longer curve is thinned evenly: the browser draws it at every step
CURVES = {"vocabulary size": "#6d4aff", "corpus tokens": "#0891b2"}
# as wide as the page gives, axis labels included, laid out again when a step brings longer labels
FIT_WIDTH = alt.AutoSizeParams(type="fit-x", contains="padding", resize=True)
BAR = 16  # px per bar of a group: after the padding Vega lays between bars, 12 px or more are drawn
ROW_GAP = 8  # px between two groups: a group of one bar is 24 px, its 13 px name fits


def whole_axis(channel: str = "x", **properties) -> alt.Axis:
    """An axis of whole numbers (merges, counts, steps, vocabulary sizes), ticked and labelled as
    such.  Vega's ``tickMinStep`` alone leaves three ticks over 0 to 2, which its tick rule spaces
    every 0.5; so the count of ticks is also at most the scale's span (and at most one per 40 px,
    Vega-Lite's own rule)."""
    size = "width" if channel == "x" else "height"
    count = alt.ExprRef(f"max(1, min(ceil({size} / 40), span(domain('{channel}'))))")
    return alt.Axis(format=",d", tickMinStep=1, tickCount=count, **properties)


def grouped_height(groups: int, bars: int) -> int:
    """A bar chart's plot height for ``groups`` rows of ``bars`` bars each: as tall as its bars need,
    never a fixed height (Streamlit's default squeezed one script's six tokenizers onto a hairline)."""
    return groups * (bars * BAR + ROW_GAP)


def pair_rows(tok: BPETokenizer, k: int, name=None) -> list[dict]:
    """The rows of the pairs chart before merge ``k``: the competing pairs, winner first, each
    with its count and whether it won, tied (same count, lost on order) or lost.  The browser
    builds the same rows from the payload, whose names of tokens longer than
    ``core.bpe.step_data.NAME_CHARS`` are cut; ``name`` quotes a token (``quoted(token_str)``)."""
    name = name or (lambda i: quoted(tok.token_str(i)))
    step = tok.trace[k]
    rows = []
    for rank, (a, b, c) in enumerate(step.competitors):
        status = STATUS[0] if rank == 0 else (STATUS[1] if c == step.count else STATUS[2])
        rows.append({"pair": f"{name(a)} + {name(b)}", "count": c, "status": status, "rank": rank})
    return rows


@functools.cache
def pairs_spec() -> dict:
    """Bars of the ``pairs`` rows, longest first, one 24-pixel band a pair; the winner and its ties
    say so on their bars ("▲ merged", "= tie": the colours alone are lost to colour blindness)."""
    # a left-to-right mark each side of " + ": a pair of right-to-left tokens is not turned around
    label = "replace(datum.label, ' + ', '\u200e + \u200e')"
    y = alt.Y("pair:N", sort=alt.EncodingSortField(field="rank", op="min", order="ascending"),
              title=None, axis=alt.Axis(labelOverlap=False, labelLimit=220, labelFontSize=12,
                                        labelFont="monospace", labelExpr=label))
    base = alt.Chart(alt.Data(name="pairs")).encode(y=y)
    bars = base.mark_bar(stroke=BAR_TEXT, strokeWidth=1).encode(
        x=alt.X("count:Q", title="occurrences in the corpus", axis=whole_axis()),
        color=alt.Color("status:N", scale=alt.Scale(domain=STATUS, range=STATUS_COLOURS),
                        legend=alt.Legend(orient="bottom", title=None)),
        strokeDash=alt.StrokeDash("status:N", scale=alt.Scale(domain=STATUS, range=STATUS_DASHES),
                                  legend=None),
        tooltip=["pair:N", "count:Q", "status:N"])
    marks = " : ".join(f"datum.status == '{s}' ? '{m}'" for s, m in zip(STATUS, STATUS_MARKS)) + " : ''"
    words = base.mark_text(align="left", dx=4, fontSize=12, fontWeight="bold", color=BAR_TEXT).encode(
        x=alt.datum(0), text="mark:N").transform_calculate(mark=marks)
    chart = alt.layer(bars, words)
    return chart.properties(width="container", height=alt.Step(24), autosize=FIT_WIDTH).to_dict()


def thin(points: list, limit: int) -> list:
    """At most ``limit`` (>= 2) of ``points``, evenly spaced, the first and the last always kept."""
    if len(points) <= limit:
        return list(points)
    last = len(points) - 1
    return [points[round(i * last / (limit - 1))] for i in range(limit)]


def curves_spec(tok: BPETokenizer, characters: int) -> dict[str, dict]:
    """One spec per curve (vocabulary size, corpus tokens after each merge of ``tok``'s trace, for
    a corpus of ``characters``); the step view lays its red cursor over each."""
    points = thin(compression_curve(tok, characters), MAX_CURVE_POINTS)
    rows = [{"merges": p.merges, "vocabulary size": p.vocab_size, "corpus tokens": p.tokens}
            for p in points]
    dots = len(points) < 60
    # the data go in beside a template: Altair checks a spec's inline data row by row, slowly
    return {measure: {**_curve_template(measure, dots), "datasets": {"curve": rows}} for measure in CURVES}


@functools.cache
def _curve_template(measure: str, dots: bool) -> dict:
    line = alt.Chart(alt.Data(name="curve")).mark_line(color=CURVES[measure], point=dots).encode(
        x=alt.X("merges:Q", title="merges done", axis=whole_axis()),
        y=alt.Y(f"{measure}:Q", title=measure, scale=alt.Scale(zero=False)),
        tooltip=["merges:Q", f"{measure}:Q"])
    return line.properties(width="container", height=200, autosize=FIT_WIDTH).to_dict()


@st.cache_resource(show_spinner=False, max_entries=32)
def vega_spec(kind: str, frame: pd.DataFrame, _build: Callable[[pd.DataFrame], alt.Chart]) -> dict:
    """``_build(frame)`` as the spec ``st.vega_lite_chart`` takes, made once per ``kind`` of chart
    and content, shared by every session, its data sets already in Arrow form: building an Altair
    chart (each channel checked against Vega-Lite's schema) and converting its rows at every rerun
    were two thirds of the Insights page's server time."""
    spec = _build(frame).to_dict()
    return {**spec, "datasets": _as_arrow(spec["datasets"])} if "datasets" in spec else spec


def _as_arrow(datasets: dict) -> dict:
    """Named data sets as the Arrow bytes ``st.vega_lite_chart`` makes of rows at each call (it
    sends bytes as they are): converted once, with the cached spec."""
    return {name: convert_anything_to_arrow_bytes(rows) for name, rows in datasets.items()}


@st.cache_resource(show_spinner=False)
def _variant_specs() -> BoundedCache:
    """Char vs BPE's curves by the tokenizers' content, costed at their Arrow bytes (tens of KB
    for three variants at 5,000 merges)."""
    return BoundedCache(32, 16 * 2**20, cost=lambda spec: len(spec["datasets"]["curves"]))


def variants_spec(tokenizers: dict[str, BPETokenizer], characters: int, chosen: str, merges: int) -> dict:
    """Characters per token after each merge, one line per variant (``tokenizers``: variant ->
    its tokenizer on a corpus of ``characters``), a red dot at the ``chosen`` variant's
    ``merges``."""
    key = (tuple((v, tokenizer_scope(t)) for v, t in tokenizers.items()), characters, chosen, merges)
    spec = _variant_specs().get(key)
    if spec is None:
        spec = _variants_spec(tokenizers, characters, chosen, merges)
        _variant_specs().put(key, spec)
    return spec


def _variants_spec(tokenizers: dict[str, BPETokenizer], characters: int, chosen: str, merges: int) -> dict:
    rows = [{"variant": v, "merges": p.merges, "chars per token": p.chars_per_token}
            for v, t in tokenizers.items() for p in thin(compression_curve(t, characters), MAX_CURVE_POINTS)]
    dot = [r for r in rows if r["variant"] == chosen and r["merges"] == merges]
    return {**_variants_template(tuple(tokenizers)), "datasets": _as_arrow({"curves": rows, "chosen": dot})}


VARIANT_DASHES = [[1, 0], [8, 4], [2, 3]]  # lines that coincide still show each variant's dashes


@functools.cache
def _variants_template(variants: tuple[str, ...]) -> dict:
    """As wide as the page, the plot 260 px tall whatever the width (the legend beside it): each
    variant in its colour and its dashes, so a line lying on another still shows both."""
    lines = alt.Chart(alt.Data(name="curves")).mark_line(strokeWidth=2.5).encode(
        x=alt.X("merges:Q", title="merges", axis=whole_axis()),
        y=alt.Y("chars per token:Q"),
        color=alt.Color("variant:N", scale=alt.Scale(domain=list(variants))),
        strokeDash=alt.StrokeDash("variant:N", scale=alt.Scale(domain=list(variants),
                                                               range=VARIANT_DASHES[:len(variants)])),
        tooltip=["variant:N", "merges:Q", alt.Tooltip("chars per token:Q", format=".3f")])
    point = alt.Chart(alt.Data(name="chosen")).mark_point(size=160, filled=True, color="#dc2626").encode(
        x="merges:Q", y="chars per token:Q", tooltip=["variant:N", "merges:Q", "chars per token:Q"])
    return (lines + point).properties(width="container", height=260, autosize=FIT_WIDTH).to_dict()
