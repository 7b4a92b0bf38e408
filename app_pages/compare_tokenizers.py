"""Compare tokenizers: one text under the tokenizers real models use (GPT-2, GPT-4, GPT-4o, Llama 3,
Qwen 3, offline) and the one trained on this session's corpus, side by side; where they cut
differently; how a token was built; and what each script costs."""

import pandas as pd
import streamlit as st

from core.bpe.display import quoted
from core.digest import text_digest
from ui.plumbing import state
from ui.views.compare_view import (
    CORPUS_CHARS,
    MAX_SHOWN,
    MAX_TEXT_CHARS,
    SESSION,
    VIEW,
    choices,
    clicked_at,
    costs,
    encode_all,
    handle_timeouts,
    marked_tokens,
    spans_html,
    token_options,
    unseen_html,
)
from ui.plumbing.controls import OWN_CHOICE
from ui.plumbing.render import counts_config, draw_html, md_safe
from core.samples import label, load_sample, sample_names
from ui.views.insights_view import premium, token_facts
from ui.views.token_view import clicked_token, show_merge_graph

FIRST_TEXT = "multilingual and emoji"  # the sample the page opens with: every script at once
# the tree's two boxes: which tokenizer, and its token (one box per tokenizer)
TREE_OF = "tokenizers_tree_of"
TREE_TOKEN = "tokenizers_tree_token_"
TREE_FIRST = "o200k_base"  # whose merge tree the page shows first (GPT-4o's)
CORPUS = "__corpus__"  # the pick that means the sidebar's corpus
OWN = "__own__"  # the pick the box says once the attendee typed or pasted their own text
# the pick, the text and the tokenizers shown are kept across pages (``state.keep``: Streamlit
# forgets a widget's own key on a page that does not draw it, and a return to this page found no pick)
PICK, TEXT, SHOWN = "tokenizers_pick", "tokenizers_text", "tokenizers_shown"
PICK_LABELS = {CORPUS: "The corpus in the sidebar", OWN: "Your own text (typed or pasted)"}
SEEN_CORPUS = "tokenizers_seen_corpus"  # the sidebar corpus's hash when the pick last followed it
PANEL_WIDTH = 290  # a tokenizer's panel: three fit beside the sidebar at 1400 px, one at 800 px



def picked_text(pick: str) -> str:
    """The text a pick puts in the box (the attendee's own text is whatever the box holds)."""
    if pick == OWN:
        return state.kept(TEXT) or ""
    if pick == CORPUS:
        return state.corpus()[1][:CORPUS_CHARS]
    return load_sample(pick)[:MAX_TEXT_CHARS]


def choice_label(key: str) -> str:
    """A tokenizer as the select boxes offer it: yours by a name that a retraining leaves alone."""
    return OWN_CHOICE if key == SESSION else labels[key]


def pick_label(pick: str) -> str:
    return PICK_LABELS.get(pick) or label(pick)


def on_pick() -> None:
    """A pick fills the box with its text."""
    state.put_kept(TEXT, picked_text(state.kept(PICK)))


def on_text() -> None:
    """A text typed or pasted that is not the pick's makes the pick say so."""
    if state.kept(TEXT) != picked_text(state.kept(PICK)):
        state.put_kept(PICK, OWN)


def text_count(text: str) -> str:
    """How long the text is in characters as a person counts them (an emoji is one), how much of it
    is compared, and whether it holds carriage returns, which a browser's text box hides and drops."""
    said = text_length(text)
    if "\r" not in text:
        return said
    # an upload's Windows line ends: counted, though the box shows none of them
    return (said.removesuffix(".") + f". It holds {text.count(chr(13)):,} carriage returns (␍, Windows "
            "line ends), counted here: a text box shows them as plain line breaks, and a browser drops "
            "them from whatever is typed or pasted into it.")


def text_length(text: str) -> str:
    if len(text) > MAX_TEXT_CHARS:
        return f"{len(text):,} characters: the first {MAX_TEXT_CHARS:,} are compared."
    corpus = state.corpus()[1]
    if state.kept(PICK) == CORPUS and len(corpus) > CORPUS_CHARS:
        return (f"{len(text):,} characters: the start of the corpus ({len(corpus):,}). Paste more "
                f"into the box to compare up to {MAX_TEXT_CHARS:,}.")
    return f"{len(text):,} characters"


st.title("🔍 Compare tokenizers")
st.caption("The same text under the tokenizers real models use, and yours. Every vocabulary ships "
           "with the app: nothing is downloaded.")

def follow_the_corpus(first: str) -> None:
    """Open on the attendee's newest corpus: the sidebar's once they loaded one (a paste, an upload,
    a sample, a station's), else ``first``; a corpus loaded later is picked when the page shows
    again, as the other pages use it."""
    digest = state.corpus_digest()
    if state.get(SEEN_CORPUS) != digest:
        chosen = state.get(state.CORPUS_SOURCE) is not None or state.get(SEEN_CORPUS) is not None
        state.put_kept(PICK, CORPUS if chosen else first)
        state.put(SEEN_CORPUS, digest)
    if state.kept(TEXT) is None or state.kept(PICK) == CORPUS:  # the sidebar's corpus may have changed
        state.put_kept(TEXT, picked_text(state.kept(PICK)))


labels, missing = choices()
picks = [n for n in sample_names() if n != FIRST_TEXT]
picks = [FIRST_TEXT, *picks, CORPUS, OWN] if FIRST_TEXT in sample_names() else [*picks, CORPUS, OWN]
follow_the_corpus(picks[0])
st.selectbox("Pick a text", picks, format_func=pick_label, **state.keep(PICK, on_change=on_pick))
# no max_chars: Streamlit's counter counts UTF-16 units (an emoji twice); the caption counts characters
text = st.text_area(
    "Text to compare (pick one above or paste your own)",
    height=150,
    help="Any text: other scripts, emoji, code. Press Ctrl+Enter to apply.",
    **state.keep(TEXT, on_change=on_text),
)
st.caption(text_count(text))
text = text[:MAX_TEXT_CHARS]  # a longer text is compared on its first MAX_TEXT_CHARS characters
kept_shown = state.kept(SHOWN)
if kept_shown is None:
    state.put_kept(SHOWN, list(labels)[:MAX_SHOWN])
else:  # those still offered (one may be missing here now)
    state.put_kept(SHOWN, [k for k in kept_shown if k in labels])
shown = st.multiselect("Tokenizers (2 to 6)", list(labels), format_func=choice_label,
                       max_selections=MAX_SHOWN, **state.keep(SHOWN))
for name, why in missing.items():
    st.caption(f"{md_safe(name)} is not shown: {md_safe(why)}")
if len(shown) < 2 or not text:
    st.info("Choose at least two tokenizers and give a text to compare them on.")
    st.stop()

results = encode_all(shown, labels, text)
loaded = [r for r in results if not r.error]
keys = [r.key for r in loaded]
reference = state.choice(
    st.selectbox,
    "Mark (red underline) the tokens cut differently from",
    keys,
    format_func=choice_label,
    key="tokenizers_reference",
    allowed=keys,
    index=keys.index(TREE_FIRST) if TREE_FIRST in keys else 0,
)
reference_result = next((r for r in loaded if r.key == reference), None)


def draw_one(panel: int, r) -> None:
    st.markdown(f"**{md_safe(r.label)}**")
    if r.error:
        st.warning(md_safe(r.error), icon="⚠️")
        if r.unseen:
            draw_html(unseen_html(r))
        return
    marked = marked_tokens(r, reference_result)
    # a line of figures, not metric tiles: a tile as narrow as a panel at 800 px cuts "408" to "4‥"
    unlike = "the reference" if r.key == reference else f"**{len(marked):,}** cut unlike the reference"
    st.markdown(f"**{len(r.tokens):,}** tokens · **{r.chars_per_token:.2f}** chars/token · {unlike}")
    draw_html(spans_html(r, panel, marked))


def draw_spans() -> None:
    # panels of a fixed width in a row that wraps: three side by side on a wide screen, one or two
    # at 800 px, each wide enough to read its tokens
    row = st.container(horizontal=True, gap="small")
    for panel, r in enumerate(results):
        with row.container(width=PANEL_WIDTH, key=f"tokenizers_panel_{panel}"):
            draw_one(panel, r)
    st.caption("Hover a token for its id, text and bytes; click it for how it was built. Byte tokens "
               "that are not whole characters show as \\xNN in orange italics. *Cut unlike the "
               "reference*: tokens over characters that no token of the reference covers exactly.")
    rows = [
        {
            "tokenizer": r.label,
            "vocabulary": r.tok.vocab_size,
            "tokens": len(r.tokens),
            "chars per token": r.chars_per_token,
        }
        for r in loaded
    ]
    ratio = st.column_config.NumberColumn("chars per token", format="%.2f")  # as each panel writes it
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={**counts_config("vocabulary", "tokens"), "chars per token": ratio})


def take_click() -> None:
    """Mount the texts' click listener; a token just clicked picks the tree below."""
    before = state.last_click(VIEW)
    scope = f"{','.join(shown)}:{text_digest(text)}"
    now = clicked_token(VIEW, scope)
    if now is not None and before != (scope, now):
        panel, token_id = clicked_at(now)
        if panel < len(results) and not results[panel].error:
            state.put(TREE_OF, results[panel].key)
            state.put(TREE_TOKEN + results[panel].key, token_id)


def draw_tree() -> None:
    keys = [x.key for x in loaded]
    if state.get(state.restore(TREE_OF, keys)) not in keys:
        state.put(TREE_OF, TREE_FIRST if TREE_FIRST in keys else keys[0])
    c = st.columns(2)
    chosen = state.remember(TREE_OF, c[0].selectbox("Tokenizer", keys, format_func=choice_label, key=TREE_OF))
    r = loaded[keys.index(chosen)]
    ids = token_options(r)
    if state.get(state.restore(TREE_TOKEN + r.key, ids)) not in ids:
        state.put(TREE_TOKEN + r.key, ids[0])
    token = state.remember(TREE_TOKEN + r.key, c[1].selectbox(
        "Token of the text (longest first), or click one above",
        ids,
        key=TREE_TOKEN + r.key,
        format_func=lambda i: f"{quoted(r.tok.token_str(i))} (id {i})",
    ))
    st.markdown(f"How {md_safe(r.label)} built {md_safe(quoted(r.tok.token_str(token)))}:")
    show_merge_graph(r.tok, token)
    corpus = (state.corpus()[1], state.corpus_digest()) if r.key == SESSION else None
    st.caption(token_facts(r.tok, token, corpus))  # can it come out of the tokenizer at all?


def article(word: str) -> str:
    return "an" if word[:1] in "AEIOU" else "a"


def draw_costs() -> None:
    spec, ranked = costs(results, text)
    if spec is None:
        return
    st.vega_lite_chart(spec=spec, width="stretch")
    if ranked:
        said = "; ".join(f"under {md_safe(name)}, {article(worst)} {worst} character costs {x:.1f}× "
                         f"{article(best)} {best} one" for name, (worst, best, x) in ranked.items())
        st.caption(f"The costliest script against the cheapest (emoji and symbols apart): {said}.")
    st.caption("Each token counts as one, shared evenly by the characters it covers; spaces and "
               "punctuation count with the script before them.")
    paid = {r.label: premium(r.tok, "kor") for r in results if r.tok is not None}
    same_text = ", ".join(f"{x:.1f}× English's tokens under {md_safe(name)}"
                          for name, x in paid.items() if x is not None)
    if same_text:  # per character misleads across scripts; the same text in two languages does not
        st.caption("Per character is not per meaning: a Korean syllable writes what two or three Latin "
                   "letters do. On the same text in both languages (fifteen articles of the Universal "
                   f"Declaration of Human Rights), Korean takes {same_text}. Every language: the "
                   "Tokenizer questions page.")


handle_timeouts(draw_spans)
take_click()
st.subheader("How a token was built")
handle_timeouts(draw_tree)
st.subheader("Cost per script: tokens per character")
handle_timeouts(draw_costs)
