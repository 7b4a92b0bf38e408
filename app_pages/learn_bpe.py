"""Learn BPE: train once on the corpus (from characters/bytes, or continuing a real model's
tokenizer), then step or play through the merges one at a time."""

import json
import time

import streamlit as st

from core.bpe import PatternTimeoutError
from core.bpe.explain import shown_text, text_window
from core.bpe.interop import hf_tokenizer_json
from ui.plumbing import state
from ui.views import step_view
from ui.plumbing.cache import START_ERRORS, learn_tokenizers
from ui.plumbing.controls import corpus_and_settings, start_label
from ui.plumbing.heavy_jobs import TooHeavyError
from ui.plumbing.render import show_error
from ui.views.token_view import (PICKER_BASE_MAX, clicked_token, forget_click, picker_names,
                                 show_merge_graph, tokenizer_scope, tree_text)

WINDOW = 2000


def nothing_learned(asked: int, alphabet: bool) -> str:
    """Why no merge was learned: none asked, or none possible on this corpus."""
    if asked == 0:
        return "Nothing to merge: ask for at least one merge in **Merges** above."
    symbols = "characters" if alphabet else "bytes"
    return (f"No merge could be learned of the {asked:,} asked: this corpus has no pair of neighbouring "
            f"{symbols} to merge (one {symbols[:-1]}, or chunks of one). Paste a longer text, or pick a "
            "sample in the sidebar.")

started = time.perf_counter()
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
               f"{'one' if specials == 1 else 'ones'}); these are the {n:,} merges it would add for "
               f"your text, new tokens from id {tok.trace[0].new_id:,}. With 0 merges done, the text "
               f"is cut as {label} cuts it.")
if real is not None and n == 0:
    st.info(f"Every piece of this corpus (as {label}'s split pattern cuts it) is already a single "
            f"{label} token: there is nothing to merge. Try a longer corpus, such as a sample from the "
            "sidebar.")
    st.stop()
asked = state.tokenizer_settings().num_merges
if n == 0:
    st.warning(nothing_learned(asked, tok.variant_rules.has_alphabet))
    st.stop()
if tok.exhausted:
    st.info(f"The corpus ran out of pairs after {n:,} of the {asked:,} merges asked: every chunk is a "
            "single token now.")

window_start = 0
if len(text) > WINDOW:
    window_start = state.choice(
        st.number_input, "Show the text from character", 0, len(text) - 1, 0, step=WINDOW,
        key="learn_window_start", allowed=range(len(text)),
        help=f"The corpus is long; the merges are shown on about {WINDOW:,} characters of it. "
             "Counts are always for the whole corpus.")
window = shown_text(tok, text_window(text, int(window_start), WINDOW))  # NFC for Qwen
try:
    start_tokens = real.encode_tokens(window) if real is not None else None  # merge 0: the real cut
    # every step is drawn in the browser, from data sent once for this tokenizer and window
    step_view.show(tok, window, len(text), start_tokens)
except (PatternTimeoutError, TooHeavyError) as exc:  # a split pattern too slow even for the window
    show_error(exc)

@st.fragment
def tree_section() -> None:
    """How a token was built: a fragment, so a click on a token in the text (or another pick)
    redraws this section alone, not the page."""
    st.subheader("How was a token built?")
    # every token, or only the merges learned here where the rest would be a list of 100,000s (a real
    # tokenizer's own tokens, or a corpus of that many distinct characters): those are clicked in the text
    new_only = real is not None or tok.base_size > PICKER_BASE_MAX
    names = picker_names(tok, new_only=new_only)
    ids = list(names)
    # a new key per tokenizer, so a token picked for another corpus is not carried over
    tree_key = f"learn_tree_{start}_{tokenizer_scope(tok)}"
    clicked = clicked_token("learn", tree_key)
    token_id = state.choice(
        st.selectbox, "Token (or click a token in the text above)", ids, index=len(ids) - 1,
        key=tree_key, allowed=names, format_func=names.get, on_change=forget_click, args=("learn",))
    clickable = new_only and clicked is not None and (tok.merge_parts(clicked) is not None
                                                      or clicked in (tok.byte_ids or range(tok.base_size)))
    if new_only and real is None:
        st.caption(f"The corpus has {tok.base_size:,} distinct "
                   f"{'characters' if tok.variant_rules.has_alphabet else 'bytes'}: the list holds the "
                   "merges learned here; click any other token in the text above.")
    if clicked is not None and (clicked in ids or clickable):
        token_id = clicked
        st.caption(f"Token {clicked}, clicked in the text:")
    show_merge_graph(tok, token_id)
    st.caption("Each merged token points down to the two tokens it was made from, down to single "
               f"{'characters' if tok.variant_rules.has_alphabet else 'bytes'}; a token used twice is "
               "drawn once unless its lines would cross. Each box gives the merge that made the token "
               "and how often its pair occurred.")
    if real is not None:
        st.caption(f"Below the new tokens are {label}'s own merges (recovered from its vocabulary): they "
                   f"say “merged”, as {label}'s training counts are not published.")
    # built only when opened: a closed expander's code block would still make every fresh tab
    # download Streamlit's syntax highlighter (why: docs/benchmarks.md, "A new attendee's first page load")
    text_view = st.expander("The same tree as text", key="learn_tree_text", on_change="rerun")
    if text_view.open:
        text_view.code(tree_text(tok, token_id), language=None)


tree_section()


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
state.put(state.LEARN_RUN_MS, (time.perf_counter() - started) * 1000)  # read by bench/bench_app.py
