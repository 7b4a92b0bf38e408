"""Learn BPE: train once on the corpus (from characters/bytes, or continuing a real model's
tokenizer), then step or play through the merges one at a time."""

import json
import time

import pandas as pd
import streamlit as st

from core.bpe.display import quoted
from core.bpe.explain import (explain_step, merge_tree, occurrence_indices, segment, shown_text, text_window,
                              tree_lines)
from core.bpe.interop import hf_tokenizer_json
from ui.charts import curves_spec, pair_frequency_spec
from ui.controls import corpus_and_settings, start_label
from core.bpe import PatternTimeoutError
from ui import animation, state
from ui.cache import START_ERRORS, learn_tokenizers
from ui.render import md_safe, show_error, show_tokens
from ui.token_view import clicked_token, forget_click, show_merge_graph, tokenizer_scope

WINDOW = 2000
SPEEDS = [1, 2, 5, 10, 20]

st.title("🎞️ Learn BPE")
st.caption("Byte-pair encoding starts from single characters (or bytes) and, again and again, glues "
           "together the pair of neighbouring tokens that occurs most often. Step through the merges "
           "below and watch the tokens grow.")

name, text = corpus_and_settings(starts=True)
start = state.kept("start")
try:
    tok, real = learn_tokenizers()  # real: the real tokenizer it continues, or None
except START_ERRORS as exc:
    show_error(exc, f"Could not start from {start_label(start)}: " if start != state.FROM_SCRATCH else "")
    if start != state.FROM_SCRATCH:
        st.info("Choose another start above: characters / bytes always works.")
    st.stop()

n = len(tok.trace)  # the merges learned here (a real tokenizer's own merges are not steps)
label = start_label(start)
if real is not None and n:
    specials = len(real.special_tokens)
    st.caption(f"{label} already has {real.vocab_size - specials:,} tokens (and {specials} special "
               f"{'one' if specials == 1 else 'ones'}); these are the {n:,} merges it would add for your text, "
               f"new tokens from id {tok.trace[0].new_id:,}. With 0 merges done, the text is cut as {label} cuts it.")
if real is not None and n == 0:
    st.info(f"Every piece of this corpus (as {label}'s split pattern cuts it) is already a single {label} "
            "token: there is nothing to merge. Try a longer corpus, such as a sample from the sidebar.")
    st.stop()
if tok.exhausted:
    st.info(f"The corpus ran out of pairs after {n} merges: every chunk is a single token now.")
if n == 0:
    st.warning("Nothing to merge: ask for at least one merge, or use a corpus with repeated pairs.")
    st.stop()

window_start = 0
if len(text) > WINDOW:
    window_start = st.number_input(
        "Show the text from character", 0, len(text) - 1, 0, step=WINDOW, key="learn_window_start",
        disabled=state.playing(),  # the browser plays this window's merges: pause to move it
        help=f"The corpus is long; the animation shows about {WINDOW:,} characters of it. "
             "Counts are always for the whole corpus.")
window = shown_text(tok, text_window(text, int(window_start), WINDOW))  # NFC for Qwen
start_tokens = real.encode_tokens(window) if real is not None else None  # merge 0: the real cut

top = st.columns([3, 2])
speed = top[1].select_slider("Play speed (merges per second)", SPEEDS, value=5, key="learn_speed")
state.set_learn_step(min(max(state.learn_step(), 0), n))


def _go(delta: int | None = None, to: int | None = None) -> None:
    state.set_learn_step(min(max((to if to is not None else state.learn_step() + delta), 0), n))


def _play() -> None:
    state.put(state.LEARN_PLAY, int(state.get(state.LEARN_PLAY, 0)) + 1)  # a new animation in the browser
    state.set_playing(True)


def _stop(at: int | None = None) -> None:
    """Pause: at the step the browser's animation reports (``at``), or where the server is (AppTest,
    or a click before the animation started: the browser's animation catches the others)."""
    if at is not None:
        state.set_learn_step(at)
    state.set_playing(False)


@st.fragment
def stepper() -> None:
    started = time.perf_counter()
    k = state.learn_step()
    playing = state.playing() and k < n
    b = st.container(horizontal=True)  # buttons as wide as their labels, wrapping when narrow
    b.button("⏮ Reset", on_click=_go, kwargs={"to": 0}, disabled=playing)
    b.button("◀ Previous", on_click=_go, args=(-1,), disabled=playing or k == 0)
    if playing:
        b.button("⏸ Pause", type="primary", key=animation.PAUSE_KEY, on_click=_stop)
    else:
        b.button("▶ Play", type="primary", disabled=k >= n, on_click=_play)
    b.button("Next ▶", on_click=_go, args=(1,), disabled=playing or k >= n)
    b.button("All merges ⏭", on_click=_go, kwargs={"to": n}, disabled=playing)
    st.slider("Merges done", 0, n, key=state.LEARN_STEP, disabled=playing)
    try:
        if playing:  # the browser plays the merges; the server waits for where it stops
            animation.play(tok, window, k, speed, int(state.get(state.LEARN_PLAY, 0)), _stop)
            st.caption("The pair chart, the merge table and the curves follow when you pause.")
        else:
            show_step(k)
    except PatternTimeoutError as exc:  # a custom split pattern too slow even for the window of text
        show_error(exc)
    state.put(state.LEARN_STEP_MS, (time.perf_counter() - started) * 1000)  # read by bench/bench_app.py


def show_step(k: int) -> None:
    tokens = segment(tok, window, k, start_tokens)
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
# every token, or a real tokenizer's new ones (its 100k-200k old ones can be clicked in the text)
ids = list(range(tok.vocab_size - len(tok.special_tokens))) if real is None else [s.new_id for s in tok.trace]
# a new key per tokenizer, so a token picked for another corpus is not carried over
tree_key = f"learn_tree_{start}_{tokenizer_scope(tok)}"
clicked = clicked_token("learn", tree_key)
token_id = st.selectbox("Token (or click a token in the text above)", ids, index=len(ids) - 1, key=tree_key,
                        format_func=lambda i: f"{i}: {quoted(tok.token_str(i))}",
                        on_change=forget_click, args=("learn",))
clickable = real is not None and (tok.merge_parts(clicked) is not None or clicked in tok.byte_ids)
if clicked is not None and (clicked in ids or clickable):
    token_id = clicked
    st.caption(f"Token {clicked}, clicked in the text:")
show_merge_graph(tok, token_id)
st.caption("Each merged token points down to the two tokens it was made from, down to single "
           f"{'characters' if tok.variant_rules.has_alphabet else 'bytes'}; a token used twice is "
           "drawn once unless its lines would cross. Each box gives the merge that made the token and how "
           "often its pair occurred.")
if real is not None:
    st.caption(f"Below the new tokens are {label}'s own merges (recovered from its vocabulary): they say "
               f"“merged”, as {label}'s training counts are not published.")
with st.expander("The same tree as text"):
    st.code("\n".join(tree_lines(merge_tree(tok, token_id))), language=None)


def show_downloads() -> None:
    """The extended tokenizer, built on click (a few MB: not on every rerun)."""
    st.subheader(f"Download {label} with your {n:,} merges")
    d = st.columns(2)
    d[0].download_button("Our tokenizer (JSON)", lambda: json.dumps(tok.to_dict(), ensure_ascii=False),
                         file_name=f"{start}-plus-{n}.json", mime="application/json")
    d[1].download_button("Hugging Face tokenizer.json", lambda: hf_tokenizer_json(tok),
                         file_name="tokenizer.json", mime="application/json")
    st.caption("Load ours with `BPETokenizer.load(path)` (`from core import BPETokenizer`), or as tiktoken: "
               "`tiktoken_encoding(BPETokenizer.load(path))` (`from core import tiktoken_encoding`). "
               "Both give the ids shown here"
               + (f" for text in {tok.normalization} form ({label} normalizes first; the files do not)."
                  if tok.normalization else "."))


if real is not None:
    show_downloads()
