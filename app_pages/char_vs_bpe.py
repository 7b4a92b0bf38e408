"""Char vs BPE: what a tokenizer does to a test text, how much BPE compresses, and GPT-2 beside ours.

Each section runs on its own: a failure in one (a split pattern that times out on the test text, a
broken GPT-2 or tokenizer file) ends in an ``st.error`` naming the problem, and the rest still shows.
"""

import json

import pandas as pd
import streamlit as st

from core import BPETokenizer, loads_tokenizer
from core.bpe import VARIANTS, GPT2FileError, PatternTimeoutError, TokenizerFileError
from core.bpe.display import visible
from core.bpe.explain import coinciding_curves
from core.bpe.gpt2 import MAX_FILE_BYTES
from core.bpe.interop import ExportError, hf_tokenizer_json
from core.corpus import shared_file
from core.digest import text_digest
from ui.plumbing import state
from ui.plumbing.cache import (TRAINING_ERRORS, corpus_unseen_words, gpt2_from_files, gpt2_tokenizer,
                               session_tokenizer, train_tokenizer)
from ui.plumbing.charts import variants_spec
from ui.plumbing.controls import (corpus_and_settings, default_test_text, mark_test_text_edited,
                                  use_byte_variant)
from ui.plumbing.render import draw_html, md_safe, plural, show_error, show_tokens, string_tokens_html
from ui.serving.bounded_cache import BoundedCache
from ui.views.token_view import show_clicked_tree

MAX_TEST_CHARS = 20_000
MAX_TOKENIZER_FILE_BYTES = 16 * 2**20  # far above a 5,000-merge tokenizer's file
NAMED_UNSEEN = 20  # unseen characters the warning names; the rest it counts

st.title("⚖️ Char vs BPE")
st.caption("A character tokenizer spends one token per character. BPE spends fewer on text like its "
           "corpus: the ratio *characters per token* says how much it compresses.")

name, text = corpus_and_settings()
try:
    tok = session_tokenizer()
    char_tok = train_tokenizer(text, "char", 0, progress=False, digest=state.corpus_digest())
except TRAINING_ERRORS as exc:
    show_error(exc)
    st.stop()

example = default_test_text(text)
# no max_chars: Streamlit's counter counts UTF-16 units (an emoji twice), not characters
test = st.text_area(
    "Test text",
    height=90,
    **state.keep("test_text", mark_test_text_edited, MAX_TEST_CHARS),
    help=f"Any text: words the corpus never saw, other scripts, emoji, code. Up to {MAX_TEST_CHARS:,} "
         "characters: a longer one is cut there.",
)
test = test[:MAX_TEST_CHARS]  # state.keep cuts it too; a client can send more
test_digest = text_digest(test)
st.caption(f"{len(test):,} characters")
if example is not None and test == example.text:
    made = "the corpus's first words"
    rest = text.lstrip()[len(example.opening):]  # what the opening leaves of the corpus
    if rest and not rest[0].isspace():  # a text without spaces (Japanese, Thai) is cut anywhere
        made = f"the corpus's first {len(example.opening):,} characters"
    elif rest.strip():
        made += ", cut at the end of a word"
    if example.new_word:
        a, b = example.halves
        made += (f", then **{md_safe(example.new_word)}**: a word the corpus never contains, made of the "
                 f"first half of “{md_safe(a)}” and the second half of “{md_safe(b)}”, two of its longest "
                 "words, to show how BPE cuts a word it never saw")
    st.caption(f"Made from the corpus: {made}. Type your own text to try any other.")


@st.cache_resource(show_spinner=False)
def _test_work() -> BoundedCache:
    """What the page makes of a test text, by tokenizer and text: made once for the room, as its
    token spans are (``show_tokens``), where a full box was cut into tokens four times at every
    click on the page."""
    return BoundedCache(64, 32 * 2**20, cost=_cost)


def _cost(made) -> int:
    """Bytes, about: a count's, a markup's, or a tuple of characters'."""
    return 100 + (len(made.value) * (60 if isinstance(made.value, tuple) else 1)
                  if isinstance(made.value, (str, tuple)) else 0)


def once(t, what: str, make):
    """``make()`` for ``t`` and the test text, kept in the room's cache."""
    return _test_work().made_for(t, (what, test_digest), make)


def tokens_in_test(t) -> int:
    """How many tokens ``t`` cuts the test text into."""
    return once(t, "count", lambda: len(t.tokenize(test))) if test else 0


def chars_per_token(chars: int, tokens: int) -> float | None:
    return round(chars / tokens, 3) if tokens else None


def figure(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def show_counts() -> None:
    n = len(tok.merge_triples)
    corpus_chars = len(text)
    char_corpus = char_tok.initial_length
    bpe_corpus = tok.trace[-1].length_after if n else tok.initial_length
    char_test = tokens_in_test(char_tok)
    bpe_test = tokens_in_test(tok)
    m = [*st.columns(2), *st.columns(2)]  # two by two: four tiles in a row cut their labels when narrow
    m[0].metric("Char tokens (test text)", f"{char_test:,}")
    m[1].metric(f"BPE tokens (test text, {n} merges)", f"{bpe_test:,}",
                delta=f"{bpe_test - char_test:,}" if test else None, delta_color="inverse")
    m[2].metric("Char: chars per token (corpus)", f"{corpus_chars / char_corpus:.2f}")
    m[3].metric("BPE: chars per token (corpus)", f"{corpus_chars / bpe_corpus:.2f}")
    # a measure a row, a tokenizer a column: three columns fit 800 px, where six were cut
    columns = {
        "char": (char_tok.vocab_size, char_corpus, char_test, len(test)),
        f"BPE ({tok.variant}, {n} merges)": (tok.vocab_size, bpe_corpus, bpe_test, len(test)),
    }
    table = pd.DataFrame({
        name: [f"{vocab:,}", f"{corpus:,}", figure(chars_per_token(corpus_chars, corpus)), f"{tokens:,}",
               figure(chars_per_token(chars, tokens))]
        for name, (vocab, corpus, tokens, chars) in columns.items()
    }, index=["vocabulary", "corpus tokens", "corpus chars/token", "test tokens", "test chars/token"])
    st.dataframe(table, width="stretch")
    if tok.end_of_word:
        st.caption("The word variant counts one end-of-word marker per word and drops the spaces.")


def unseen_characters() -> tuple[str, ...]:
    """The test text's characters the tokenizer has no token for, each once, in order (the word
    variant drops whitespace rather than encoding it: not an unseen character there)."""
    unseen = tok.unknown_characters(test)
    return tuple(dict.fromkeys(ch for _, ch in unseen if not (tok.end_of_word and ch.isspace())))


def show_test_tokens() -> None:
    chars = once(tok, "unseen", unseen_characters)
    if chars:
        named = ", ".join(f"{md_safe(repr(c))} (U+{ord(c):04X})" for c in chars[:NAMED_UNSEEN])
        if len(chars) > NAMED_UNSEEN:
            named += f" and {plural(len(chars) - NAMED_UNSEEN, 'other character')}"
        st.warning(f"The corpus never contains {named}, so this tokenizer has no token for them "
                   "(shown in red, one each). A byte-level tokenizer can encode any text.", icon="🔤")
        if tok.variant != "byte":
            st.button("Use a byte-level tokenizer", key="charbpe_use_bytes", on_click=use_byte_variant)
        draw_html(once(tok, "unseen spans", lambda: string_tokens_html(tok.tokenize(test), set(chars))))
    elif test:
        show_tokens(tok, test, show_ids=show_ids, height=300, view="charbpe")
        show_clicked_tree(tok, "charbpe")
    st.caption("Hover a token to see its id and bytes. Byte tokens that split a character sit under "
               "that character in one purple outline.")
    words = corpus_unseen_words(state.corpus_digest(), text, test)
    if words:
        st.markdown("**Words the corpus never contained**, cut into this tokenizer's pieces: the test "
                    "text is not the corpus, so a word in it can be new (a typo, another form of a word, "
                    "a name). A piece of one character is not a learned token: no merge covers it there.")
        rows = []
        for w in words[:30]:
            pieces = tok.tokenize(w)
            # each word once, however often the text holds it: its pieces are counted, not its occurrences
            rows.append({"word": w, "BPE tokens": " · ".join(map(visible, pieces)), "pieces": len(pieces)})
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def show_curves() -> None:
    st.caption("One training run per variant: the first k merges of a run are the tokenizer with k "
               "merges (the prefix property), so each curve costs one run.")
    n = len(tok.merge_triples)
    tokenizers = {}
    for variant in VARIANTS:
        settings = state.tokenizer_settings(variant)
        try:
            tokenizers[variant] = train_tokenizer(text, variant, n, settings.end_of_word, settings.pattern,
                                                  digest=state.corpus_digest())
        except TRAINING_ERRORS as exc:
            st.warning(f"{variant}: {md_safe(str(exc))}")
    st.vega_lite_chart(spec=variants_spec(tokenizers, len(text), tok.variant, n), width="stretch")
    for names in coinciding_curves(tokenizers, len(text)):
        st.caption(f"The {' and '.join(names)} curves are the same on this corpus (the same characters "
                   "per token after every merge): their lines lie on each other, told apart by their "
                   "dashes.")


def gpt2() -> BPETokenizer | None:
    """GPT-2's tokenizer: from ``../shared``'s files, or from the visitor's uploads (kept in memory:
    nothing is written to disk, so one visitor's files never reach another); ``None`` until both
    are uploaded."""
    vocab_path = shared_file("gpt2", "vocab.bpe")
    encoder_path = shared_file("gpt2", "encoder.json")
    if vocab_path is not None and encoder_path is not None:
        return gpt2_from_files(vocab_path, encoder_path)
    up = st.columns(2)
    limit = MAX_FILE_BYTES // 2**20
    vocab_up = up[0].file_uploader("GPT-2 vocab.bpe", type=["bpe"], key="charbpe_gpt2_vocab",
                                   max_upload_size=limit)
    enc_up = up[1].file_uploader("GPT-2 encoder.json", type=["json"], key="charbpe_gpt2_encoder",
                                 max_upload_size=limit)
    if not (vocab_up and enc_up):
        st.caption("GPT-2's files (vocab.bpe and encoder.json) are not on this machine: upload both to "
                   "compare.")
        return None
    for upload in (vocab_up, enc_up):
        if upload.size > MAX_FILE_BYTES:
            raise GPT2FileError(f"{upload.name} is {upload.size / 2**20:.1f} MB; GPT-2's files are "
                                f"under {limit} MB.")
    return gpt2_tokenizer(vocab_up.getvalue(), enc_up.getvalue(), vocab_up.name, enc_up.name)


def show_gpt2() -> None:
    try:
        if not test or (tokenizer := gpt2()) is None:
            return
        metric = st.empty()  # above the text, once its tokens are counted
        gtokens = show_tokens(tokenizer, test, show_ids=show_ids, height=300,
                              allowed_special="none")  # a paste is ordinary text
    except (GPT2FileError, PatternTimeoutError) as exc:
        show_error(exc, "Could not load GPT-2's tokenizer: ")
        return
    metric.metric("GPT-2 tokens (test text)", f"{len(gtokens):,}")


def show_downloads() -> None:
    """Ours built on click, as Learn BPE's (a pasted alphabet's is MBs: not on every rerun); Hugging
    Face's at each run, since whether it can be made at all is shown up front."""
    n = len(tok.merge_triples)
    d = st.columns(2)
    d[0].download_button("Download our tokenizer (JSON)",
                         lambda: json.dumps(tok.to_dict(), ensure_ascii=False),
                         file_name=f"bpe-{tok.variant}-{n}.json", mime="application/json")
    if tok.variant_rules.has_alphabet:
        d[1].caption("Hugging Face tokenizer.json export is for the byte variant.")
        return
    try:
        d[1].download_button("Download Hugging Face tokenizer.json", hf_tokenizer_json(tok),
                             file_name="tokenizer.json", mime="application/json")
    except ExportError as exc:
        d[1].caption(f"Hugging Face export: {md_safe(str(exc))}")


def show_loaded_tokenizer() -> None:
    uploaded = st.file_uploader("Load a tokenizer file (ours, or the mygpt book's {chars, merges} JSON)",
                                type=["json"], key="charbpe_tokenizer_upload",
                                max_upload_size=MAX_TOKENIZER_FILE_BYTES // 2**20)
    if uploaded is None:
        return
    try:
        if uploaded.size > MAX_TOKENIZER_FILE_BYTES:
            raise TokenizerFileError(f"{uploaded.name} is {uploaded.size / 2**20:.1f} MB; a tokenizer "
                                     f"file may be at most {MAX_TOKENIZER_FILE_BYTES // 2**20} MB.")
        loaded = loads_tokenizer(uploaded.getvalue(), uploaded.name)
        pieces = loaded.tokenize(test) if test else None
    except (TokenizerFileError, PatternTimeoutError) as exc:
        show_error(exc)
        return
    st.success(f"Loaded {md_safe(uploaded.name)}: {loaded.variant} tokenizer, "
               f"{loaded.vocab_size:,} tokens, {len(loaded.merge_triples):,} merges.")
    if pieces is not None:
        st.metric("Its tokens (test text)", f"{len(pieces):,}")
        missing = {ch for _, ch in loaded.unknown_characters(test)}
        draw_html(string_tokens_html(pieces, missing))


def section(draw, title: str | None = None) -> None:
    """A section of the page; a split pattern too slow for the test text becomes a message there
    and the page goes on (each section catches its own file errors)."""
    if title:
        st.subheader(title)
    try:
        draw()
    except PatternTimeoutError as exc:
        show_error(exc)


section(show_counts)
st.subheader("The test text, token by token")
show_ids = state.choice(st.toggle, "Show ids and bytes", key="charbpe_show_ids")
section(show_test_tokens)
section(show_curves, "Compression vs number of merges")
section(show_gpt2, "GPT-2's tokenizer on the same text")
section(show_downloads, "Save or load a tokenizer")
section(show_loaded_tokenizer)
