"""The tokenizer settings both BPE pages show: variant, marker or split regex, number of merges."""

from __future__ import annotations

import streamlit as st

from core.bpe.pretokenize import resolve_pattern

from .render import show_error
from .state import MAX_MERGES, VARIANTS, bind, get_tokenizer_settings, setting

VARIANT_HELP = {
    "char": "Characters of the whole text; merges may cross spaces.",
    "word": "Words split on whitespace, each ending with a marker; merges stay inside a word.",
    "byte": "UTF-8 bytes (256 base tokens), optionally pre-split by a regex as GPT-2/GPT-4 do.",
}


def settings_controls() -> dict | None:
    """Draw the controls; returns the settings, or ``None`` after an error message."""
    c1, c2, c3 = st.columns([2, 2, 1])
    with c1:
        st.radio("BPE variant", VARIANTS, horizontal=True, **bind("variant"),
                 help="\n\n".join(f"**{v}**: {h}" for v, h in VARIANT_HELP.items()))
        st.caption(VARIANT_HELP[setting("variant")])
    with c2:
        variant = setting("variant")
        if variant == "word":
            st.text_input("End-of-word marker", **bind("end_of_word"), max_chars=10)
        elif variant == "byte":
            st.radio("Pre-split regex", ["none", "gpt2", "gpt4", "custom"], horizontal=True,
                     **bind("pattern_choice"), help="Chunks the text before BPE; no merge crosses a chunk.")
            if setting("pattern_choice") == "custom":
                st.text_input("Custom regex", **bind("custom_pattern"))
    with c3:
        st.number_input("Merges", min_value=0, max_value=MAX_MERGES, step=1, **bind("num_merges"),
                        help="How many merges to learn (vocabulary = base symbols + merges).")
    s = get_tokenizer_settings()
    if s["variant"] == "word" and not s["end_of_word"]:
        st.error("The end-of-word marker cannot be empty.")
        return None
    if s["variant"] == "byte" and s["pattern"]:
        try:
            resolve_pattern(s["pattern"])
        except ValueError as exc:
            show_error(exc)
            return None
    return s


def corpus_and_settings() -> tuple[str, str]:
    """The page preamble of the BPE pages: the corpus and the tokenizer controls, or a message
    and ``st.stop()`` when there is no usable corpus or setting.  Returns ``(name, text)``."""
    from .corpus import require_corpus

    corpus = require_corpus()
    if corpus is None or settings_controls() is None:
        st.stop()
    return corpus
