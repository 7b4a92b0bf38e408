"""Altair charts of a training trace: pair frequencies at a step, vocabulary and length curves.

Altair spends ~70 ms turning a chart into Vega-Lite, too slow for 5+ steps a second, so each chart
is built with Altair once as a template (the pair chart once per process, the curves once per
tokenizer, in a bounded cache shared by all sessions) and each step only fills in its data and the
current-step rule.
"""

from __future__ import annotations

import copy
import weakref

import altair as alt
import pandas as pd
import streamlit as st

from core import BPETokenizer
from core.bpe.explain import compression_curve, quoted

from .cache import BoundedCache

STATUS = ["winner", "tie (lost on order)", "other"]
MAX_CURVE_POINTS = 1000  # a longer curve is thinned evenly (altair refuses more than 5,000 rows)
_STEP = -987654  # placeholder for the current step in a cached template


@st.cache_resource(show_spinner=False)
def _curve_templates() -> BoundedCache:
    """Curve templates by (id of the tokenizer, corpus characters), each with a weak reference
    that proves the id still means that tokenizer; ~250 bytes a point."""
    return BoundedCache(16, 32 * 2**20,
                        cost=lambda entry: 250 * sum(map(len, entry[1].get("datasets", {}).values())))


@st.cache_resource(show_spinner=False)
def _pair_template() -> dict:
    bars = alt.Chart(alt.Data(name="pairs")).mark_bar().encode(
        x=alt.X("count:Q", title="occurrences in the corpus"),
        y=alt.Y("pair:N", sort=alt.EncodingSortField(field="rank", op="min", order="ascending"), title=None,
                axis=alt.Axis(labelOverlap=False, labelLimit=220, labelFontSize=12)),
        color=alt.Color("status:N", scale=alt.Scale(domain=STATUS, range=["#ca8a04", "#f97316", "#93c5fd"]),
                        legend=alt.Legend(orient="bottom", title=None)),
        tooltip=["pair:N", "count:Q", "status:N"])
    return bars.properties(title="Top pairs").to_dict()


def pair_frequency_spec(tok: BPETokenizer, k: int) -> dict:
    """Vega-Lite spec: the top pairs counted before merge ``k``; winner and ties coloured."""
    step = tok.trace[k]
    rows = []
    for rank, (a, b, c) in enumerate(step.competitors):
        status = STATUS[0] if rank == 0 else (STATUS[1] if c == step.count else STATUS[2])
        rows.append({"pair": f"{quoted(tok.token_str(a))} + {quoted(tok.token_str(b))}",
                     "count": c, "status": status, "rank": rank})
    spec = copy.deepcopy(_pair_template())
    spec["datasets"] = {"pairs": rows}
    spec["height"] = 26 * len(rows) + 20
    spec["title"] = f"Top pairs before merge {k + 1}"
    return spec


def thin(points: list, limit: int) -> list:
    """At most ``limit`` (>= 2) of ``points``, evenly spaced, the first and the last always kept."""
    if len(points) <= limit:
        return list(points)
    last = len(points) - 1
    return [points[round(i * last / (limit - 1))] for i in range(limit)]


def _curves_template(tok: BPETokenizer, characters: int) -> dict:
    key = (id(tok), characters)
    entry = _curve_templates().get(key)
    if entry is not None and entry[0]() is tok:
        return entry[1]
    pts = thin(compression_curve(tok, characters), MAX_CURVE_POINTS)
    df = pd.DataFrame([{"merges": p.merges, "vocabulary size": p.vocab_size, "corpus tokens": p.tokens}
                       for p in pts])
    rule = alt.Chart(df.head(1)).mark_rule(color="#dc2626", strokeWidth=2).encode(x=alt.datum(_STEP))

    def one(measure: str, colour: str) -> alt.LayerChart:
        line = alt.Chart(df).mark_line(color=colour, point=len(pts) < 60).encode(
            x=alt.X("merges:Q", title="merges done"),
            y=alt.Y(f"{measure}:Q", title=measure, scale=alt.Scale(zero=False)),
            tooltip=["merges", measure])
        return alt.layer(line, rule).properties(height=200, width=330)

    template = alt.hconcat(one("vocabulary size", "#6d4aff"), one("corpus tokens", "#0891b2")).to_dict()
    _curve_templates().put(key, (weakref.ref(tok), template))
    return template


def curves_spec(tok: BPETokenizer, characters: int, k: int) -> dict:
    """Vega-Lite spec: vocabulary size and corpus tokens after each merge, a red rule at ``k``."""
    spec = copy.deepcopy(_curves_template(tok, characters))
    for part in spec["hconcat"]:
        for layer in part["layer"]:
            x = layer.get("encoding", {}).get("x", {})
            if x.get("datum") == _STEP:
                x["datum"] = k
    return spec
