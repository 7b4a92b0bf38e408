"""Learn BPE: train once on the corpus, then step or play through the merges one at a time."""

import time

import pandas as pd
import streamlit as st

from core.bpe.display import quoted
from core.bpe.explain import explain_step, merge_tree, occurrence_indices, segment, text_window, tree_lines
from ui.charts import curves_spec, pair_frequency_spec
from ui.controls import corpus_and_settings
from ui.frame import require_frame
from core.bpe import PatternTimeoutError
from ui import state
from ui.cache import TRAINING_ERRORS, session_tokenizer
from ui.render import md_safe, show_error, show_tokens
from ui.token_view import clicked_token, forget_click, show_merge_graph

WINDOW = 2000
SPEEDS = [1, 2, 5, 10, 20]

require_frame()
st.title("🎞️ Learn BPE")
st.caption("Byte-pair encoding starts from single characters (or bytes) and, again and again, glues "
           "together the pair of neighbouring tokens that occurs most often. Step through the merges "
           "below and watch the tokens grow.")

name, text = corpus_and_settings()
try:
    tok = session_tokenizer()
except TRAINING_ERRORS as exc:
    show_error(exc)
    st.stop()

n = len(tok.merge_triples)
if tok.exhausted:
    st.info(f"The corpus ran out of pairs after {n} merges: every chunk is a single token now.")
if n == 0:
    st.warning("Nothing to merge: ask for at least one merge, or use a corpus with repeated pairs.")
    st.stop()

window_start = 0
if len(text) > WINDOW:
    window_start = st.number_input(
        "Show the text from character", 0, len(text) - 1, 0, step=WINDOW, key="learn_window_start",
        help=f"The corpus is long; the animation shows about {WINDOW:,} characters of it. "
             "Counts are always for the whole corpus.")
window = text_window(text, int(window_start), WINDOW)

top = st.columns([3, 2])
speed = top[1].select_slider("Play speed (merges per second)", SPEEDS, value=5, key="learn_speed")
state.set_learn_step(min(max(state.learn_step(), 0), n))
playing = state.playing()


def _go(delta: int | None = None, to: int | None = None) -> None:
    state.set_learn_step(min(max((to if to is not None else state.learn_step() + delta), 0), n))


def _pause() -> None:
    state.set_playing(False)
    st.rerun()


@st.fragment(run_every=1.0 / speed if playing else None)
def stepper() -> None:
    started = time.perf_counter()
    if state.playing():
        if state.learn_step() >= n:
            _pause()
        state.set_learn_step(state.learn_step() + 1)
    b = st.container(horizontal=True)  # buttons as wide as their labels, wrapping when narrow
    b.button("⏮ Reset", on_click=_go, kwargs={"to": 0})
    b.button("◀ Previous", on_click=_go, args=(-1,), disabled=state.learn_step() == 0)
    if state.playing():
        if b.button("⏸ Pause", type="primary"):
            _pause()
    elif b.button("▶ Play", type="primary", disabled=state.learn_step() >= n):
        state.set_playing(True)
        st.rerun()
    b.button("Next ▶", on_click=_go, args=(1,), disabled=state.learn_step() >= n)
    b.button("All merges ⏭", on_click=_go, kwargs={"to": n})
    st.slider("Merges done", 0, n, key=state.LEARN_STEP)
    try:
        show_step(state.learn_step())
    except PatternTimeoutError as exc:  # a custom split pattern too slow even for the window of text
        show_error(exc)
    state.put(state.LEARN_STEP_MS, (time.perf_counter() - started) * 1000)  # read by bench/bench_app.py


def show_step(k: int) -> None:
    tokens = segment(tok, window, k)
    hits = occurrence_indices(tok, tokens, k) if k < n else []
    if k < n:
        st.markdown(f"**{md_safe(explain_step(tok, k))}**")
        where = "in the text below" if len(window) == len(text) else "in the window below"
        st.caption(f"{len(hits):,} occurrence(s) {where} are highlighted in yellow; each coloured box is "
                   f"one token after {k} merge(s). Hover a token for its id; click it to see how it was built.")
    else:
        st.markdown(f"**All {n} merges done**: the vocabulary has {tok.vocab_size} tokens and the corpus "
                    f"is {tok.trace[-1].length_after:,} tokens long (from {tok.initial_length:,}).")
        st.caption("Each coloured box is one final token. Hover a token for its id; click it to see how it was built.")
    m = st.columns(3)
    m[0].metric("Vocabulary size", f"{tok.vocab_size - n + k:,}")
    m[1].metric("Corpus tokens", f"{(tok.trace[k - 1].length_after if k else tok.initial_length):,}")
    m[2].metric("Tokens in the text shown", f"{len(tokens):,}")
    show_tokens(tok, window, tokens, hits, height=320, view="learn")
    left, right = st.columns([1, 1])
    with left:
        if k < n:
            spec = pair_frequency_spec(tok, k)
            st.vega_lite_chart(spec=spec, width="stretch", height=spec["height"] + 60)
            st.caption("Ties are orange: same count as the winner, but the winner occurs first in the text.")
        else:
            st.caption("No more merges to choose.")
    with right:
        st.markdown("**Merges so far**")
        rows = [{"step": s.index + 1, "pair": f"{quoted(tok.token_str(s.left))} + {quoted(tok.token_str(s.right))}",
                 "new token": quoted(tok.token_str(s.new_id)), "id": s.new_id, "count": s.count}
                for s in tok.trace[:k]]
        st.dataframe(pd.DataFrame(rows, columns=["step", "pair", "new token", "id", "count"]),
                     hide_index=True, width="stretch", height=300)
    st.vega_lite_chart(spec=curves_spec(tok, len(text), k))


stepper()

st.subheader("How was a token built?")
ids = list(range(tok.vocab_size - len(tok.special_tokens)))
# a new key per tokenizer, so a token picked for another corpus is not carried over
alphabet = tuple(tok.chars) if tok.variant_rules.has_alphabet else tok.pattern
tree_key = f"learn_tree_{abs(hash((tok.variant, alphabet, tuple(tok.merge_triples)))) % 10**12}"
clicked = clicked_token("learn", tree_key)
token_id = st.selectbox("Token (or click a token in the text above)", ids, index=len(ids) - 1, key=tree_key,
                        format_func=lambda i: f"{i}: {quoted(tok.token_str(i))}",
                        on_change=forget_click, args=("learn",))
if clicked is not None and clicked in ids:
    token_id = clicked
    st.caption(f"Token {clicked}, clicked in the text:")
show_merge_graph(tok, token_id)
st.caption("Each merged token points down to the two tokens it was made from, down to single "
           f"{'characters' if tok.variant_rules.has_alphabet else 'bytes'}; a token used twice is "
           "drawn once. Each box gives the merge that made the token and how often its pair occurred.")
with st.expander("The same tree as text"):
    st.code("\n".join(tree_lines(merge_tree(tok, token_id))), language=None)
