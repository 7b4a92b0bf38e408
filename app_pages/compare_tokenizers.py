"""Compare tokenizers: one text under the tokenizers real models use (GPT-2, GPT-4, GPT-4o, Llama 3,
Qwen 3, offline) and the one trained on this session's corpus, side by side; where they cut
differently; how a token was built; and what each script costs."""

import pandas as pd
import streamlit as st

from core.bpe.compare import differing, spans
from core.bpe.display import quoted
from ui.plumbing import state
from ui.views.compare_view import (
    MAX_SHOWN,
    VIEW,
    choices,
    clicked_at,
    costs,
    encode_all,
    handle_timeouts,
    spans_html,
    token_options,
    unseen_html,
)
from ui.plumbing.render import md_safe
from core.samples import label, load_sample, sample_names
from ui.views.token_view import clicked_token, show_merge_graph

MAX_TEXT_CHARS = 20_000
FIRST_TEXT = "multilingual and emoji"  # the sample the page opens with: every script at once
# the tree's two boxes: which tokenizer, and its token (one box per tokenizer)
TREE_OF = "tokenizers_tree_of"
TREE_TOKEN = "tokenizers_tree_token_"
TREE_FIRST = "o200k_base"  # whose merge tree the page shows first (GPT-4o's)
CORPUS = "__corpus__"  # the pick that means the sidebar's corpus

st.title("🔍 Compare tokenizers")
st.caption("The same text under the tokenizers real models use, and yours. Every vocabulary ships "
           "with the app: nothing is downloaded.")

labels, missing = choices()
picks = [n for n in sample_names() if n != FIRST_TEXT]
picks = [FIRST_TEXT, *picks, CORPUS] if FIRST_TEXT in sample_names() else [*picks, CORPUS]
pick = st.selectbox(
    "Pick a text",
    picks,
    key="tokenizers_pick",
    format_func=lambda n: "The corpus in the sidebar" if n == CORPUS else label(n),
)
first = state.corpus()[1] if pick == CORPUS else load_sample(pick)
text = st.text_area(
    "Text to compare (pick one above or paste your own)",
    value=first[:MAX_TEXT_CHARS],
    height=150,
    max_chars=MAX_TEXT_CHARS,
    key=f"tokenizers_text_{pick}",
    help="Any text: other scripts, emoji, code. Press Ctrl+Enter to apply.",
)
text = text[:MAX_TEXT_CHARS]  # the box's limit, kept here too: a client can send more
shown = st.multiselect(
    "Tokenizers (2 to 6)",
    list(labels),
    default=list(labels)[:MAX_SHOWN],
    format_func=labels.get,
    max_selections=MAX_SHOWN,
    key="tokenizers_shown",
)
for name, why in missing.items():
    st.caption(f"{md_safe(name)} is not shown: {md_safe(why)}")
if len(shown) < 2 or not text:
    st.info("Choose at least two tokenizers and give a text to compare them on.")
    st.stop()

results = encode_all(shown, labels, text)
loaded = [r for r in results if not r.error]
keys = [r.key for r in loaded]
reference = st.selectbox(
    "Mark (red underline) the tokens cut differently from",
    keys,
    format_func=labels.get,
    key="tokenizers_reference",
    index=keys.index(TREE_FIRST) if TREE_FIRST in keys else 0,
)
ref_spans = next((spans(r.tokens) for r in loaded if r.key == reference), frozenset())


def draw_one(panel: int, r) -> None:
    st.markdown(f"**{md_safe(r.label)}**")
    if r.error:
        st.warning(md_safe(r.error), icon="⚠️")
        if r.unseen:
            st.html(unseen_html(r))
        return
    marked = [] if r.key == reference else differing(r.tokens, ref_spans)
    m = st.columns(3)
    m[0].metric("Tokens", f"{len(r.tokens):,}")
    m[1].metric("Chars/token", f"{r.chars_per_token:.2f}")
    m[2].metric("Cut unlike", "ref." if r.key == reference else f"{len(marked):,}",
                help="Tokens over characters that no token of the reference covers exactly.")
    st.html(spans_html(r, panel, marked))


def draw_spans() -> None:
    for row in range(0, len(results), 3):
        for panel, col in enumerate(st.columns(3), start=row):
            if panel < len(results):
                with col:
                    draw_one(panel, results[panel])
    st.caption("Hover a token for its id, text and bytes; click it for how it was built. Byte tokens "
               "that are not whole characters show as \\xNN in orange italics.")
    rows = [
        {
            "tokenizer": r.label,
            "vocabulary": r.tok.vocab_size,
            "tokens": len(r.tokens),
            "chars per token": round(r.chars_per_token, 3),
        }
        for r in loaded
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def take_click() -> None:
    """Mount the texts' click listener; a token just clicked picks the tree below."""
    before = state.last_click(VIEW)
    scope = f"{','.join(shown)}:{state.text_digest(text)}"
    now = clicked_token(VIEW, scope)
    if now is not None and before != (scope, now):
        panel, token_id = clicked_at(now)
        if panel < len(results) and not results[panel].error:
            state.put(TREE_OF, results[panel].key)
            state.put(TREE_TOKEN + results[panel].key, token_id)


def draw_tree() -> None:
    keys = [x.key for x in loaded]
    if state.get(TREE_OF) not in keys:
        state.put(TREE_OF, TREE_FIRST if TREE_FIRST in keys else keys[0])
    c = st.columns(2)
    chosen = c[0].selectbox("Tokenizer", keys, format_func=labels.get, key=TREE_OF)
    r = loaded[keys.index(chosen)]
    ids = token_options(r)
    if state.get(TREE_TOKEN + r.key) not in ids:
        state.put(TREE_TOKEN + r.key, ids[0])
    token = c[1].selectbox(
        "Token of the text (longest first), or click one above",
        ids,
        key=TREE_TOKEN + r.key,
        format_func=lambda i: f"{quoted(r.tok.token_str(i))} (id {i})",
    )
    st.markdown(f"How {md_safe(r.label)} built {md_safe(quoted(r.tok.token_str(token)))}:")
    show_merge_graph(r.tok, token)


def draw_costs() -> None:
    spec, ratios = costs(results, text)
    if spec is None:
        return
    st.vega_lite_chart(spec=spec, width="stretch")
    if ratios:
        korean = ", ".join(f"{x:.1f}× a Latin one under {md_safe(name)}" for name, x in ratios.items())
        st.caption(f"A Korean character costs {korean}.")
    st.caption("Each token counts as one, shared evenly by the characters it covers; spaces and "
               "punctuation count with the script before them.")


handle_timeouts(draw_spans)
take_click()
st.subheader("How a token was built")
handle_timeouts(draw_tree)
st.subheader("Cost per script: tokens per character")
handle_timeouts(draw_costs)
