"""The tokenizer settings both BPE pages show: variant, marker or split regex, number of merges;
on Learn BPE also what BPE starts from (characters/bytes, or a real model's tokenizer, which fixes
the variant and split pattern: they are not shown then)."""

from __future__ import annotations

import streamlit as st

from core.bpe import PRETRAINED_NAMES, VARIANTS, PatternError, PatternTimeoutError
from core.bpe.example_text import ExampleText, example_text
from core.bpe.pretokenize import resolve_pattern

from ui.plumbing import state
from ui.plumbing.cache import short_label
from ui.plumbing.corpus_sidebar import require_corpus
from ui.plumbing.render import show_error

MAX_MERGES = state.MAX_MERGES
MARKER_CHARS = 10  # the longest end-of-word marker (the URL's is cut the same)
VARIANT_HELP = {
    "char": "Characters of the whole text; merges may cross spaces.",
    "word": "Words split on whitespace, each ending with a marker; merges stay inside a word.",
    "byte": "UTF-8 bytes (256 base tokens), optionally pre-split by a regex as GPT-2/GPT-4 do.",
}


def _keep_setting(name: str, max_chars: int | None = None) -> dict:
    """A settings widget's keyword arguments: kept across pages (cut to ``max_chars``); a change
    sends Learn BPE back to its first step."""
    return state.keep(name, on_change=state.reset_learn_step, max_chars=max_chars)


def _marker_input() -> None:
    # cut here, not by max_chars: Streamlit's counter counts UTF-16 units (an emoji twice)
    st.text_input("End-of-word marker", **_keep_setting("end_of_word", MARKER_CHARS),
                  help=f"Up to {MARKER_CHARS} characters.")


def _pattern_inputs() -> None:
    st.radio(
        "Pre-split regex",
        ["none", "gpt2", "gpt4", "custom"],
        horizontal=True,
        **_keep_setting("pattern_choice"),
        help="Chunks the text before BPE; no merge crosses a chunk.",
    )
    if state.kept("pattern_choice") == "custom":
        st.text_input("Custom regex", **_keep_setting("custom_pattern"))


VARIANT_INPUTS = {"word": _marker_input, "byte": _pattern_inputs}  # what a variant adds
STARTS = (state.FROM_SCRATCH, *PRETRAINED_NAMES)


def start_label(start: str) -> str:
    """The radio's label: characters / bytes, or a real tokenizer's short name (GPT-4)."""
    return "characters / bytes" if start == state.FROM_SCRATCH else short_label(start)


def _start_input() -> str:
    st.radio("Start from", STARTS, horizontal=True, format_func=start_label, **_keep_setting("start"),
             help="BPE starts from single characters or bytes, or from a real model's tokenizer: then "
                  "every token of that tokenizer stays, and BPE learns the merges it would add for "
                  "your corpus (new ids after all of its ids).")
    return state.kept("start")


def settings_controls(starts: bool = False) -> state.TokenizerSettings | None:
    """Draw the controls (``starts``: the start-from choice too); returns the settings, or
    ``None`` after an error message."""
    start = _start_input() if starts else state.FROM_SCRATCH
    c1, c2, c3 = st.columns([2, 2, 1])
    if start != state.FROM_SCRATCH:  # a real tokenizer fixes the variant and the split pattern
        c1.caption(f"Byte-level, split by {start_label(start)}'s own pattern, its special tokens kept: "
                   "a real tokenizer fixes both.")
        with c3:
            _merges_input()
        return state.tokenizer_settings()
    with c1:
        st.radio("BPE variant", VARIANTS, horizontal=True, **_keep_setting("variant"),
                 help="\n\n".join(f"**{v}**: {h}" for v, h in VARIANT_HELP.items()))
        st.caption(VARIANT_HELP[state.kept("variant")])
    with c2:
        VARIANT_INPUTS.get(state.kept("variant"), lambda: None)()
    with c3:
        _merges_input()
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


def _merges_input() -> None:
    st.number_input("Merges", min_value=0, max_value=MAX_MERGES, step=1, **_keep_setting("num_merges"),
                    help="How many merges to learn (vocabulary = base symbols + merges).")


# Your tokenizer as a select box or multiselect offers it.  The browser holds a choice by its name,
# so an option's name must not change while it is shown: a paste that retrained "Yours (char, 10
# merges)" to 50 merges left the browser a name no option had, and the next rerun dropped the choice
OWN_CHOICE = "Yours"


def own_label(tok) -> str:
    """Your tokenizer as every page names it: by the settings these controls set (a widget's
    option is :data:`OWN_CHOICE`)."""
    return f"Yours ({tok.variant}, {len(tok.merge_triples):,} merges)"


def use_byte_variant() -> None:
    """A button callback: BPE on UTF-8 bytes, which has a token for any text."""
    state.put_kept("variant", "byte")
    state.reset_learn_step()


def default_test_text(corpus: str) -> ExampleText | None:
    """Char vs BPE's test text is the corpus's example (``core.bpe.example_text``) until the person
    types their own: that example while it is in use, so the page can say how it was made."""
    if state.get(state.CHARBPE_TEST_EDITED):
        return None
    made = _corpus_example(state.corpus_digest(), corpus)
    state.put_kept("test_text", made.text)
    return made


@st.cache_data(show_spinner=False, max_entries=64)
def _corpus_example(digest: str, _corpus: str) -> ExampleText:
    """Once per corpus (by its hash): checking that the new word is new scans the whole corpus,
    64 MB at most, at every rerun of Char vs BPE otherwise."""
    return example_text(_corpus)


def mark_test_text_edited() -> None:
    state.put(state.CHARBPE_TEST_EDITED, True)


def corpus_and_settings(starts: bool = False) -> tuple[str, str]:
    """The page preamble of the BPE pages: the corpus and the tokenizer controls (``starts``: the
    start-from choice too), or a message and ``st.stop()`` when there is no usable corpus or
    setting.  Returns ``(name, text)``."""
    corpus = require_corpus()
    if corpus is None or settings_controls(starts) is None:
        st.stop()
    return corpus


# -- what a reload restores ------------------------------------------------------------------------
def _url_value(name: str, value: str):
    """A kept setting read from the URL, or ``None`` when it is not one the control allows."""
    if name == "num_merges":
        return min(int(value), MAX_MERGES) if value.isdigit() else None
    if name == "variant":
        return value if value in VARIANTS else None
    if name == "pattern_choice":
        return value if value in state.PATTERNS else None
    if name == "start":
        return value if value in STARTS else None
    return value[:MARKER_CHARS] if name == "end_of_word" else value


def restore_settings(params: dict) -> None:
    """The settings, the step and the selected run from the URL as it was when the session
    opened (after its corpus was loaded: a load resets them); invalid values are ignored."""
    for param, name in state.URL_SETTINGS.items():
        value = _url_value(name, params[param]) if param in params else None
        if value is not None:
            state.put_kept(name, value)
    if params.get(state.STEP_PARAM, "").isdigit():
        state.set_learn_step(int(params[state.STEP_PARAM]))  # the step view clamps it to the merges
    if params.get(state.RUN_PARAM):
        state.select_run(params[state.RUN_PARAM])


def sync_settings_url() -> None:
    """Write the kept settings into the URL: defaults left out, except the number of merges
    (its default depends on the corpus), the regex only when it is used."""
    custom = state.kept("pattern_choice") == "custom"
    for param, name in state.URL_SETTINGS.items():
        value = state.kept(name)
        hidden = name != "num_merges" and value == state.KEPT_DEFAULTS[name]
        unused = name == "custom_pattern" and not custom
        state.url_put(param, None if hidden or unused else value)
