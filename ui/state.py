"""Session state every page shares, and cached training.  Other pages (``pages/train_gpt.py``) read
the corpus and the tokenizer through three functions:

- ``get_corpus() -> (name, text)``: the corpus chosen in the sidebar (``text`` may be empty).
- ``get_tokenizer_settings() -> dict``: ``variant``, ``num_merges``, ``end_of_word`` (word only,
  else ``None``), ``pattern`` (byte only: ``None``, ``"gpt2"``, ``"gpt4"`` or a regex).
- ``get_trained_tokenizer(progress=True)``: the ``BPETokenizer`` for the corpus and settings,
  trained once per corpus + settings and shared by every page and session (a fewer-merges request
  reuses a longer run through ``truncated``, the prefix property).  Raises ``ValueError`` with a
  readable message on an empty corpus or a bad regex.

Settings live under ``persistent`` keys (``_bpe_*``): Streamlit forgets a widget's own key on a
page that does not draw it, so widgets copy into these on change (``bind``).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import streamlit as st

from core import BPETokenizer, BPETrainer
from core.corpus import corpus_stats

from .samples import DEFAULT_SAMPLE, label, load_sample

CORPUS_NAME = "corpus_name"
CORPUS_TEXT = "corpus_text"
STEP = "learn_step"
PLAYING = "learn_playing"
VARIANTS = ("char", "word", "byte")
PATTERNS = {"none": None, "gpt2": "gpt2", "gpt4": "gpt4", "custom": None}
MAX_MERGES = 5000

DEFAULTS = {
    "variant": "char",
    "end_of_word": "</w>",
    "pattern_choice": "gpt2",
    "custom_pattern": r"\s+|\w+|[^\w\s]+",
    "num_merges": 10,
}


def init_state() -> None:
    """Load the default sample on first open and fill in default settings."""
    ss = st.session_state
    if CORPUS_TEXT not in ss:
        set_corpus(label(DEFAULT_SAMPLE), load_sample(DEFAULT_SAMPLE))
    for key, value in DEFAULTS.items():
        ss.setdefault("_bpe_" + key, value)
    ss.setdefault(STEP, 0)
    ss.setdefault(PLAYING, False)


def default_merges(text: str) -> int:
    """Enough merges to see words form, without long training on a big corpus."""
    n = len(text)
    if n < 200:
        return 10 if n > 30 else 5
    if n < 5_000:
        return 50
    if n < 50_000:
        return 200
    return 300


def set_corpus(name: str, text: str) -> None:
    """Make ``text`` the shared corpus; the step resets and merges get a default that fits."""
    ss = st.session_state
    ss[CORPUS_NAME] = name
    ss[CORPUS_TEXT] = text
    ss["_bpe_num_merges"] = default_merges(text)
    ss[STEP] = 0
    ss[PLAYING] = False


def get_corpus() -> tuple[str, str]:
    init_state()
    return st.session_state[CORPUS_NAME], st.session_state[CORPUS_TEXT]


def setting(key: str):
    init_state()
    return st.session_state["_bpe_" + key]


def bind(key: str) -> dict:
    """Keyword arguments for a settings widget whose value survives page switches."""
    init_state()
    st.session_state["w_" + key] = st.session_state["_bpe_" + key]

    def copy() -> None:
        st.session_state["_bpe_" + key] = st.session_state["w_" + key]
        st.session_state[STEP] = 0
        st.session_state[PLAYING] = False

    return {"key": "w_" + key, "on_change": copy}


def get_tokenizer_settings() -> dict:
    variant = setting("variant")
    choice = setting("pattern_choice")
    pattern = None
    if variant == "byte":
        pattern = setting("custom_pattern") if choice == "custom" else PATTERNS[choice]
    return {
        "variant": variant,
        "num_merges": int(setting("num_merges")),
        "end_of_word": setting("end_of_word") if variant == "word" else None,
        "pattern": pattern,
    }


# -- cached training --------------------------------------------------------------------------
_LOCK = threading.Lock()


@st.cache_resource(show_spinner=False)
def _store() -> OrderedDict:
    """Trained tokenizers by (corpus hash, variant, marker, pattern), shared by all sessions."""
    return OrderedDict()


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def train_tokenizer(text: str, variant: str, num_merges: int, end_of_word: str | None = None,
                    pattern: str | None = None, progress: bool = True) -> BPETokenizer:
    """The tokenizer for these settings, trained at most once (with a progress bar when asked).

    One run with more merges serves every smaller request through ``truncated``."""
    key = (_digest(text), variant, end_of_word or "", pattern or "")
    store = _store()
    with _LOCK:
        tok = store.get(key)
        if tok is not None:
            store.move_to_end(key)
    if tok is not None and (len(tok.merge_triples) >= num_merges or tok.exhausted):
        return _prefix(tok, num_merges)
    bar = st.progress(0.0, text=f"Training {variant} BPE: 0 / {num_merges} merges") if progress else None

    def report(done: int, total: int) -> None:
        if bar is not None:
            bar.progress(done / max(total, 1), text=f"Training {variant} BPE: {done:,} / {total:,} merges")

    try:
        trainer = BPETrainer(text, variant=variant, end_of_word=end_of_word or "</w>", pattern=pattern)
        for _ in trainer.run(num_merges, progress=report):
            pass
        tok = trainer.tokenizer()
    finally:
        if bar is not None:
            bar.empty()
    with _LOCK:
        store[key] = tok
        store.move_to_end(key)
        while len(store) > 12:
            store.popitem(last=False)
    return tok


def _prefix(tok: BPETokenizer, num_merges: int) -> BPETokenizer:
    if len(tok.merge_triples) <= num_merges:
        return tok
    cache = tok.__dict__.setdefault("_prefixes", {})
    if num_merges not in cache:
        cache[num_merges] = tok.truncated(num_merges)
    return cache[num_merges]


def get_trained_tokenizer(progress: bool = True) -> BPETokenizer:
    _, text = get_corpus()
    s = get_tokenizer_settings()
    return train_tokenizer(text, s["variant"], s["num_merges"], s["end_of_word"], s["pattern"], progress)


@st.cache_data(show_spinner=False, max_entries=8)
def stats_of(text: str):
    return corpus_stats(text)
