"""The Tokenizer questions page's helpers: ``core.insights``'s answers cached for every session,
and their charts.

- ``curve(text, digest, variant, max_vocab)``: the vocabulary curve, one training per corpus and
  settings; ``curve_chart(curve)``: characters per token of both parts against vocabulary size.
- ``findings(tok)``: a tokenizer's unreachable and part-character tokens, once per tokenizer;
  ``residue_frame(tok, text)``: what a training here left unused; ``token_facts(tok, id)``: one
  token's, where a page shows a token.
- ``embedding_frame(run_dir)``, ``embedding_chart(frame)``: a GPT trained here, each token's training
  count against its embedding's norm (where under-trained tokens would show);
- ``language_frame(keys)``: tokens and premium per language of the parallel corpus, per
  tokenizer (each counted once); ``premium_chart(frame)``: the grouped bars.
- ``sweep_tokenizers_of(text, digest, sizes)``: the tokenizers a sweep launches with, trained once;
  ``sweep_chart(points)``: a sweep's validation bits per character against vocabulary size;
  ``sweep_rows``: a row for every size asked, launched or not.

Leaves out: the answers themselves (``core.insights``), the page layout (``app_pages/insights.py``).
"""

from __future__ import annotations

from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from core import BPETokenizer
from core.bpe.display import visible
from core.insights import (UDHR_DIR, Unreachable, language_index, read_parallel, residues, token_count,
                           token_counts, token_reach, unreachable_tokens)
from core.insights.embeddings import RARE, embedding_use
from core.insights.sweep import SweepPoint
from core.runfolder.layout import CHECKPOINT_FILE, CORPUS_FILE

from core.insights import question_jobs

from ..serving.bounded_cache import BoundedCache
from ..plumbing.cache import server_settings, tokenizer_bytes, tokenizer_key
from ..plumbing.charts import FIT_WIDTH, grouped_height, whole_axis
from ..plumbing.heavy_jobs import computed, training_advice
from ..plumbing.render import md_safe

CURVE_POINTS = 400  # points drawn per line: enough for 800 px
PARTS = ("training part (first 90%)", "held-out part (last 10%)")
REFERENCE = "eng"


# -- vocabulary size -------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def _curves() -> BoundedCache:
    """Vocabulary curves by (corpus hash, variant, largest size): a curve holds its tokenizer."""
    return BoundedCache(16, 96 * 2**20, lambda c: tokenizer_bytes(c.tokenizer))


def curve(text: str, digest: str, variant: str, max_vocab: int):
    """The corpus's vocabulary curve; ``None``, under a progress bar, while a job worker trains on
    a large corpus."""
    args = (text, max_vocab, variant, "gpt4" if variant == "byte" else None)
    with st.spinner(f"Training {variant} BPE up to {max_vocab:,} tokens on the training part…"):
        return computed(server_settings(), _curves(), ("curve", digest, variant, max_vocab),
                        question_jobs.curve, args, len(text),
                        f"Training {variant} BPE up to {max_vocab:,} tokens", " merges",
                        advice=training_advice(variant))


def curve_frame(c) -> pd.DataFrame:
    sizes = c.vocab_sizes.tolist()
    step = max(1, len(sizes) // CURVE_POINTS)
    shown = sizes[::step] + ([sizes[-1]] if (len(sizes) - 1) % step else [])
    rows = []
    for row in c.rows(shown):
        rows.append({"vocabulary size": row["vocab_size"], "part": PARTS[0],
                     "characters per token": round(row["train_chars_per_token"], 4)})
        rows.append({"vocabulary size": row["vocab_size"], "part": PARTS[1],
                     "characters per token": round(row["held_out_chars_per_token"], 4)})
    return pd.DataFrame(rows)


def curve_chart(frame: pd.DataFrame) -> alt.Chart:
    return alt.Chart(frame).mark_line(strokeWidth=2.5).encode(
        x=alt.X("vocabulary size:Q", title="vocabulary size (tokens)",
                axis=whole_axis()),  # whole tokens, even over 256 to 265
        y=alt.Y("characters per token:Q", title="characters per token"),
        color=alt.Color("part:N", sort=list(PARTS), legend=alt.Legend(orient="bottom", title=None)),
        tooltip=["vocabulary size", "part", "characters per token"],
    ).properties(width="container", height=320, autosize=FIT_WIDTH)


@st.cache_resource(show_spinner=False)
def _sweeps() -> BoundedCache:
    """A sweep's tokenizers by (corpus hash, sizes), kept for whoever launches the same next."""
    return BoundedCache(8, 64 * 2**20, lambda toks: sum(tokenizer_bytes(t) for t in toks.values()))


def sweep_tokenizers_of(text: str, digest: str, sizes: tuple[int, ...]) -> dict[int, BPETokenizer] | None:
    """The tokenizers a sweep of ``sizes`` trains its GPTs with; ``None``, under a progress bar,
    while a job worker trains them on a large corpus."""
    return computed(server_settings(), _sweeps(), ("sweep", digest, sizes), question_jobs.sweep,
                    (text, sizes), len(text), f"Training byte-level BPE up to {max(sizes):,} tokens for the "
                    f"sweep", " merges", advice=training_advice("byte"))


def sweep_rows(sizes, points: list[SweepPoint], refused: dict[int, int]) -> list[dict]:
    """One row per vocabulary size asked, in order: its run as it stands, or why there is none
    (``refused``: the sizes a launch refused as too short, with the tokens the shorter part holds)."""
    found = {p.vocab_size: p for p in points}
    rows = []
    for size in sorted({int(s) for s in sizes}):
        p = found.get(size)
        if p is None:
            status = (f"not launched: {refused[size]:,} tokens in the shorter part" if size in refused
                      else "not launched")
            rows.append({"vocabulary": size, "status": status, "step": None, "val bits/char": None,
                         "parameters": None, "embedding share": None})
            continue
        rows.append({"vocabulary": size, "status": p.status, "step": f"{p.step:,} / {p.max_steps:,}",
                     "val bits/char": None if p.val_bpc is None else round(p.val_bpc, 3),
                     "parameters": p.n_params,
                     "embedding share": None if p.embedding_share is None else f"{p.embedding_share:.0%}"})
    return rows


def sweep_chart(points: list[SweepPoint]) -> alt.Chart | None:
    """Validation bits per character against vocabulary size, one point per evaluated run, each
    size's embedding share written under it on the axis: an axis label takes the theme's text colour
    (Streamlit's chart theme), where a text mark in the plot is drawn black in either theme."""
    rows = [{"vocabulary size": p.vocab_size, "validation bits per character": round(p.val_bpc, 4),
             "parameters": p.n_params, "embedding share": f"{p.embedding_share:.0%}",
             "status": p.status} for p in points if p.val_bpc is not None]
    if not rows:
        return None
    sizes = [r["vocabulary size"] for r in rows]
    lines = " : ".join(f"datum.value == {r['vocabulary size']} ? "
                       f"['{r['vocabulary size']:,}', '{r['embedding share']}']" for r in rows)
    axis = alt.Axis(values=sizes, labelExpr=f"{lines} : datum.label", labelOverlap=False,
                    title="vocabulary size (log scale), embedding share under it")
    return alt.Chart(pd.DataFrame(rows)).mark_line(point=alt.OverlayMarkDef(size=90)).encode(
        x=alt.X("vocabulary size:Q", scale=alt.Scale(type="log", base=2), axis=axis),
        y=alt.Y("validation bits per character:Q", scale=alt.Scale(zero=False)),
        tooltip=["vocabulary size", "validation bits per character", "parameters", "embedding share",
                 "status"],
    ).properties(width="container", height=300, autosize=FIT_WIDTH)


# -- tokens that never appear -------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def _findings() -> BoundedCache:
    return BoundedCache(8, 64 * 2**20, lambda entry: 8 * (len(entry[1].partial) + len(entry[1].unreachable)))


def findings(tok: BPETokenizer) -> Unreachable:
    """``tok``'s unreachable and part-character tokens, checked once per tokenizer object."""
    with st.spinner("Encoding every token's own text…"):
        return _findings().made_for(tok, "unreachable", lambda: unreachable_tokens(tok))


def unreachable_frame(tok: BPETokenizer, found: Unreachable) -> pd.DataFrame:
    rows = []
    for i in found.unreachable:
        text = tok.token_str(i)
        cut = [tok.token_str(j) for j in tok.encode(text, allowed_special="none")]
        rows.append({"id": i, "token": visible(text), "its text encodes as": " · ".join(map(visible, cut))})
    return pd.DataFrame(rows, columns=["id", "token", "its text encodes as"])


def reach_line(tok: BPETokenizer, token_id: int) -> str:
    """Markdown saying whether ``token_id`` can come out of ``tok`` (``core.insights.token_reach``)."""
    if tok.variant == "word":
        return ""
    reach = token_reach(tok, token_id)
    if reach == "reachable":
        return "Its own text encodes to this one token: it can come out of this tokenizer."
    if reach == "partial":
        return "Not text on its own: part of a character's bytes, it comes out only beside the rest."
    if reach == "special":
        return "A special token: never ordinary text."
    cut = " · ".join(md_safe(visible(tok.token_str(i))) for i in reach)
    return (f"**Never comes out of this tokenizer**: its own text encodes as {cut}, so a model trained "
            f"with it never sees this token (an under-trained, 'glitch' token).")


def token_facts(tok: BPETokenizer, token_id: int, counts: np.ndarray | None = None) -> str:
    """:func:`reach_line`, and with ``counts`` (:func:`corpus_token_counts` of ``tok``'s training
    text) how often that text, encoded, holds the token."""
    line = reach_line(tok, token_id)
    if counts is None:
        return line
    seen = int(counts[token_id]) if token_id < len(counts) else 0
    return f"{line} Your corpus, encoded, holds it {seen:,} times.".strip()


@st.cache_resource(show_spinner=False)
def _token_counts() -> BoundedCache:
    """Each token's count in a corpus, by (corpus hash, tokenizer): 8 bytes a token."""
    return BoundedCache(16, 32 * 2**20, lambda counts: counts.nbytes)


def corpus_token_counts(tok: BPETokenizer, text: str, digest: str) -> np.ndarray | None:
    """How often ``text`` (hash ``digest``), encoded by ``tok``, holds each token; ``None``, under a
    progress bar, while a job worker encodes a large corpus."""
    return computed(server_settings(), _token_counts(), ("token counts", digest, tokenizer_key(tok)),
                    question_jobs.with_tokenizer, (token_counts, tok, text), len(text),
                    "Counting each token in your corpus")


def residue_frame(tok: BPETokenizer, counts: np.ndarray) -> pd.DataFrame:
    """The tokens ``tok`` minted that its training corpus (``counts``: each token's count there)
    encoded never holds."""
    found = set(residues(tok, "", counts))
    rows = [{"id": s.new_id, "token": visible(tok.token_str(s.new_id)), "merge": s.index + 1,
             "count when minted": s.count} for s in tok.trace if s.new_id in found]
    return pd.DataFrame(rows, columns=["id", "token", "merge", "count when minted"])


@st.cache_resource(show_spinner=False)
def _uses() -> BoundedCache:
    """Token counts and embedding norms by (run folder, checkpoint's time)."""
    return BoundedCache(8, 32 * 2**20, lambda use: 2 * 8 * len(use.counts) + tokenizer_bytes(use.tokenizer))


def embedding_frame(run_dir: Path) -> tuple[pd.DataFrame, int] | None:
    """Each token of the run: its training count, its embedding's norm, and whether it is rare;
    the checkpoint's step.  ``None``, under a progress bar, while a job worker reads the checkpoint
    and counts the tokens of the run's training text: always a job, whatever its size, since a
    checkpoint is read with torch, which the server never loads (``core.gpt.machine``)."""
    key = ("embedding use", str(run_dir), (run_dir / CHECKPOINT_FILE).stat().st_mtime_ns)
    size = (run_dir / CORPUS_FILE).stat().st_size
    use = computed(server_settings(), _uses(), key, embedding_use, (str(run_dir),), size,
                   "Reading the run's checkpoint and counting its tokens", inline_below=0)
    if use is None:
        return None
    tok = use.tokenizer
    frame = pd.DataFrame({"id": range(len(use.counts)), "seen": use.counts, "norm": use.norms.round(4)})
    frame["token"] = [visible(tok.token_str(i)) for i in frame["id"]]
    frame["kind"] = np.where(frame["seen"] == 0, "never in its training text",
                             np.where(frame["seen"] < RARE, f"seen fewer than {RARE} times", "seen often"))
    return frame, use.step


KINDS = ("never in its training text", f"seen fewer than {RARE} times", "seen often")


def embedding_chart(frame: pd.DataFrame) -> alt.Chart:
    """Training count (log scale, +1 so that a count of 0 shows) against embedding norm."""
    shown = frame.assign(**{"seen + 1": frame["seen"] + 1})
    return alt.Chart(shown).mark_circle(size=40, opacity=0.7).encode(
        x=alt.X("seen + 1:Q", scale=alt.Scale(type="log"),
                title="times in the training text + 1 (log scale)"),
        y=alt.Y("norm:Q", title="embedding norm", scale=alt.Scale(zero=False)),
        color=alt.Color("kind:N", sort=list(KINDS), scale=alt.Scale(range=["#dc2626", "#f59e0b", "#2563eb"]),
                        legend=alt.Legend(orient="bottom", title=None, columns=2)),
        tooltip=["id", "token", "seen", "norm"],
    ).properties(width="container", height=300, autosize=FIT_WIDTH)


# -- what a language pays ----------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def parallel_texts() -> tuple[dict[str, str], dict[str, dict]]:
    """The shipped parallel corpus and its index of languages and scripts."""
    return read_parallel(UDHR_DIR), language_index(UDHR_DIR)


@st.cache_resource(show_spinner=False)
def _counts() -> BoundedCache:
    return BoundedCache(16, 2**20, lambda entry: 100 * len(entry[1]))


def language_counts(tok: BPETokenizer) -> dict[str, int]:
    texts, _ = parallel_texts()
    return _counts().made_for(tok, "languages", lambda: {c: token_count(tok, t) for c, t in texts.items()})


def premium(tok: BPETokenizer, code: str) -> float | None:
    """The tokens of the parallel text in ``code`` over English's, under ``tok``; ``None`` where
    ``tok``'s alphabet lacks a character of either (it would count each as one token)."""
    texts, _ = parallel_texts()
    if tok.alphabet is not None and (tok.unknown_characters(texts[code])
                                     or tok.unknown_characters(texts[REFERENCE])):
        return None
    counts = language_counts(tok)
    return counts[code] / max(1, counts[REFERENCE])


def language_frame(tokenizers: dict[str, BPETokenizer], codes: list[str]) -> pd.DataFrame:
    """Tokens and premium over English per language (of ``codes``) and tokenizer (by label)."""
    _, index = parallel_texts()
    rows = []
    for label, tok in tokenizers.items():
        counts = language_counts(tok)
        for code in codes:
            entry = index.get(code, {})
            rows.append({"language": _language_label(code, entry),
                         "code": code, "tokenizer": label, "tokens": counts[code],
                         "premium": round(counts[code] / max(1, counts[REFERENCE]), 3)})
    return pd.DataFrame(rows)


def _language_label(code: str, entry: dict) -> str:
    """"Hindi (Devanagari)"; "Thai" where the script has the language's name."""
    language, script = entry.get("language", code), entry.get("script", "")
    return language if not script or language.startswith(script) else f"{language} ({script})"


def unseen_note(yours: BPETokenizer | None) -> str:
    """What the session's tokenizer does with a character its corpus never had, by its variant
    (``core.lessons.agreement.unseen_problems`` holds words to the same rule)."""
    if yours is None:
        return ""
    if yours.variant == "byte":
        return "Yours reads a character its corpus never had as that character's UTF-8 bytes, a token each."
    return "Yours counts a character its corpus never had as one token (it has no token for it)."


def premium_chart(frame: pd.DataFrame) -> alt.Chart:
    """One group of bars per language (labelled on the axis), one bar per tokenizer; a rule at 1×
    (English)."""
    order = (frame.groupby("language")["premium"].max().sort_values(ascending=False).index.tolist())
    tokenizers = list(dict.fromkeys(frame["tokenizer"]))
    bars = alt.Chart(frame).mark_bar().encode(
        y=alt.Y("language:N", sort=order, title=None, axis=alt.Axis(labelLimit=0, labelOverlap=False)),
        yOffset=alt.YOffset("tokenizer:N", sort=tokenizers),
        x=alt.X("premium:Q", title="tokens for the same text, × English's"),
        color=alt.Color("tokenizer:N", sort=tokenizers,
                        legend=alt.Legend(orient="top", title=None, columns=2, labelLimit=0)),
        tooltip=["language", "tokenizer", "tokens", "premium"])
    rule = alt.Chart(pd.DataFrame({"premium": [1.0]})).mark_rule(strokeDash=[4, 3]).encode(x="premium:Q")
    return (bars + rule).properties(width="container", height=grouped_height(len(order), len(tokenizers)),
                                    autosize=FIT_WIDTH)
