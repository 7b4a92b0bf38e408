"""The tokenizer settings both BPE pages show: variant, marker or split regex, number of merges."""

from __future__ import annotations

import streamlit as st

from core.bpe import VARIANTS, PatternError, PatternTimeoutError
from core.bpe.pretokenize import resolve_pattern

from . import state
from .corpus import require_corpus
from .render import show_error

MAX_MERGES = 5000
VARIANT_HELP = {
    "char": "Characters of the whole text; merges may cross spaces.",
    "word": "Words split on whitespace, each ending with a marker; merges stay inside a word.",
    "byte": "UTF-8 bytes (256 base tokens), optionally pre-split by a regex as GPT-2/GPT-4 do.",
}


def _keep_setting(name: str) -> dict:
    """A settings widget's keyword arguments: kept across pages; a change restarts the animation."""
    return state.keep(name, on_change=state.reset_animation)


def _marker_input() -> None:
    st.text_input("End-of-word marker", **_keep_setting("end_of_word"), max_chars=10)


def _pattern_inputs() -> None:
    st.radio("Pre-split regex", ["none", "gpt2", "gpt4", "custom"], horizontal=True,
             **_keep_setting("pattern_choice"), help="Chunks the text before BPE; no merge crosses a chunk.")
    if state.kept("pattern_choice") == "custom":
        st.text_input("Custom regex", **_keep_setting("custom_pattern"))


VARIANT_INPUTS = {"word": _marker_input, "byte": _pattern_inputs}  # what a variant adds


def settings_controls() -> state.TokenizerSettings | None:
    """Draw the controls; returns the settings, or ``None`` after an error message."""
    c1, c2, c3 = st.columns([2, 2, 1])
    with c1:
        st.radio("BPE variant", VARIANTS, horizontal=True, **_keep_setting("variant"),
                 help="\n\n".join(f"**{v}**: {h}" for v, h in VARIANT_HELP.items()))
        st.caption(VARIANT_HELP[state.kept("variant")])
    with c2:
        VARIANT_INPUTS.get(state.kept("variant"), lambda: None)()
    with c3:
        st.number_input("Merges", min_value=0, max_value=MAX_MERGES, step=1, **_keep_setting("num_merges"),
                        help="How many merges to learn (vocabulary = base symbols + merges).")
    s = state.tokenizer_settings()
    if s.end_of_word == "":
        st.error("The end-of-word marker cannot be empty.")
        return None
    if s.pattern:
        try:
            resolve_pattern(s.pattern)
        except (PatternError, PatternTimeoutError) as exc:
            show_error(exc)
            return None
    return s


def corpus_and_settings() -> tuple[str, str]:
    """The page preamble of the BPE pages: the corpus and the tokenizer controls, or a message
    and ``st.stop()`` when there is no usable corpus or setting.  Returns ``(name, text)``."""
    corpus = require_corpus()
    if corpus is None or settings_controls() is None:
        st.stop()
    return corpus
