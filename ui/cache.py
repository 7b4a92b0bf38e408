"""Cached wrappers around ``core``, shared by every session: the server's settings, trained
tokenizers, corpus statistics, GPT-2's tokenizer.  Each takes what it computes from as explicit
arguments (the session's values are read in ``ui.state``); every cache lives in Streamlit's caches
and is bounded (entries and estimated bytes), so the server's memory returns to its baseline when
visitors leave.

- ``train_tokenizer(text, variant, num_merges, end_of_word, pattern, progress, digest)``: trained
  once per corpus + settings (a fewer-merges request reuses a longer run through ``truncated``,
  the prefix property).  Raises one of ``TRAINING_ERRORS`` (``core.bpe``'s ``PatternError``,
  ``PatternTimeoutError``, ``CorpusTooLargeError``).
- ``session_tokenizer(progress=True)``: the same for the session's corpus and settings.
- ``server_settings() -> ServerSettings``: what the person running the server set (environment or
  ``.streamlit/secrets.toml``): instructor key, caps, corpus folder.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from dataclasses import asdict, fields

import streamlit as st

from core import BPETokenizer, BPETrainer
from core.bpe import CorpusTooLargeError, PatternError, PatternTimeoutError, load_gpt2_bytes
from core.bpe.pretokenize import set_regex_timeout
from core.corpus import CorpusStats, corpus_stats
from core.settings import PREFIX, ServerSettings

from . import state

# Shared caches, bounded: a 5,000-merge tokenizer is ~10 MB, GPT-2's ~35 MB once it has encoded.
STORE_ENTRIES, STORE_BYTES = 16, 96 * 2**20
PREFIX_ENTRIES, PREFIX_BYTES = 32, 32 * 2**20
GPT2_ENTRIES = 3
# What training a tokenizer on the session's corpus may refuse with: a bad or too slow split
# pattern, a corpus over the server's training-memory limit.
TRAINING_ERRORS = (PatternError, PatternTimeoutError, CorpusTooLargeError)


# -- server settings --------------------------------------------------------------------------
def server_settings() -> ServerSettings:
    """The server's settings: ``BPE_EXPLORER_*`` environment variables, then
    ``.streamlit/secrets.toml`` for names unset there (``core.settings``).  Parsed once per distinct
    environment and secrets, so a changed setting counts after a restart or a reload of secrets.
    Raises :class:`~core.settings.SettingsError` (a ``ValueError``) for a setting that cannot be used.
    """
    env = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(PREFIX)))
    settings = _settings_for(env, _secrets())
    set_regex_timeout(settings.regex_timeout_s)  # custom split patterns, whichever page runs them
    return settings


def _secrets() -> tuple:
    """The settings' names found in ``st.secrets``; none when there is no secrets file (reading
    ``st.secrets`` then raises)."""
    if not st.secrets.load_if_toml_exists():
        return ()
    names = [f.name for f in fields(ServerSettings)]
    return tuple((n, str(st.secrets[n])) for n in names if n in st.secrets)


@st.cache_resource(show_spinner=False, max_entries=4)
def _settings_for(env: tuple, secrets: tuple) -> ServerSettings:
    return ServerSettings.from_env(dict(env), dict(secrets))


# -- bounded caches ----------------------------------------------------------------------------
class BoundedCache:
    """A least-recently-used dict shared by every session, bounded by entries and by an estimated
    size in bytes (``cost(value)``), so memory stays flat however many visitors come and go."""

    def __init__(self, max_entries: int, max_bytes: int, cost=lambda value: 0) -> None:
        self.max_entries, self.max_bytes, self.cost = max_entries, max_bytes, cost
        self._items: OrderedDict = OrderedDict()  # key -> (value, cost)
        self._lock = threading.Lock()
        self.bytes = 0

    def get(self, key):
        with self._lock:
            entry = self._items.get(key)
            if entry is None:
                return None
            self._items.move_to_end(key)
            return entry[0]

    def put(self, key, value) -> None:
        size = self.cost(value)
        with self._lock:
            old = self._items.pop(key, None)
            self.bytes += size - (old[1] if old else 0)
            self._items[key] = (value, size)
            while len(self._items) > 1 and (len(self._items) > self.max_entries
                                            or self.bytes > self.max_bytes):
                _, (_, dropped) = self._items.popitem(last=False)
                self.bytes -= dropped

    def __len__(self) -> int:
        return len(self._items)


def tokenizer_bytes(tok: BPETokenizer) -> int:
    """Estimated memory of a trained tokenizer: measured ~1.5 KB per merge (its trace record with
    the competing pairs, its vocabulary entry), rounded up to 2 KB per token."""
    return 2048 * (tok.vocab_size + 1)


@st.cache_resource(show_spinner=False)
def _store() -> BoundedCache:
    """Trained tokenizers by (corpus hash, variant, marker, pattern), shared by all sessions."""
    return BoundedCache(STORE_ENTRIES, STORE_BYTES, tokenizer_bytes)


@st.cache_resource(show_spinner=False)
def _prefixes() -> BoundedCache:
    """Fewer-merges views of stored tokenizers, by (store key, merges)."""
    return BoundedCache(PREFIX_ENTRIES, PREFIX_BYTES, tokenizer_bytes)


# -- cached training ---------------------------------------------------------------------------
def train_tokenizer(text: str, variant: str, num_merges: int, end_of_word: str | None = None,
                    pattern: str | None = None, progress: bool = True,
                    digest: str | None = None) -> BPETokenizer:
    """The tokenizer for these settings, trained at most once (with a progress bar when asked);
    ``digest`` is ``text``'s hash when the caller has it (``ui.state.corpus_digest``).

    One run with more merges serves every smaller request through ``truncated``."""
    key = (digest or state.text_digest(text), variant, end_of_word or "", pattern or "")
    tok = _store().get(key)
    if tok is not None and (len(tok.merge_triples) >= num_merges or tok.exhausted):
        return _prefix(key, tok, num_merges)
    bar = st.progress(0.0, text=f"Training {variant} BPE: 0 / {num_merges} merges") if progress else None

    def report(done: int, total: int) -> None:
        if bar is not None:
            bar.progress(done / max(total, 1), text=f"Training {variant} BPE: {done:,} / {total:,} merges")

    try:
        limits = server_settings()  # a corpus too big to train, a split pattern too slow: refused
        trainer = BPETrainer(text, variant=variant, end_of_word=end_of_word or "</w>", pattern=pattern,
                             regex_timeout=limits.regex_timeout_s, max_memory=limits.max_train_memory)
        for _ in trainer.run(num_merges, progress=report):
            pass
        tok = BPETokenizer.from_trainer(trainer)
    finally:
        if bar is not None:
            bar.empty()
    _store().put(key, tok)
    return tok


def _prefix(key: tuple, tok: BPETokenizer, num_merges: int) -> BPETokenizer:
    if len(tok.merge_triples) <= num_merges:
        return tok
    cache = _prefixes()
    short = cache.get((key, num_merges))
    if short is None:
        short = tok.truncated(num_merges)
        cache.put((key, num_merges), short)
    return short


def session_tokenizer(progress: bool = True, variant: str | None = None) -> BPETokenizer:
    """The tokenizer for the session's corpus and settings (``variant``: another variant with the
    same marker and regex)."""
    _, text = state.corpus()
    return train_tokenizer(text, **asdict(state.tokenizer_settings(variant)), progress=progress,
                           digest=state.corpus_digest())


@st.cache_data(show_spinner=False, max_entries=64)
def corpus_statistics(digest: str, _text: str) -> CorpusStats:
    """Statistics of a corpus, computed once per corpus (by its hash, ``digest``)."""
    return corpus_stats(_text)


# -- GPT-2 ---------------------------------------------------------------------------------------
def gpt2_tokenizer(vocab_bpe: bytes, encoder_json: bytes, vocab_name: str = "vocab.bpe",
                   encoder_name: str = "encoder.json") -> BPETokenizer:
    """GPT-2's tokenizer from its two files' bytes, built once per content and shared: two
    visitors uploading different files each get their own, and nothing is written to disk."""
    h = hashlib.blake2b(len(vocab_bpe).to_bytes(8, "little"), digest_size=16)  # no two pairs alike
    h.update(vocab_bpe)
    h.update(encoder_json)
    digest = h.hexdigest()
    return _gpt2(digest, vocab_bpe, encoder_json, vocab_name, encoder_name)


@st.cache_resource(show_spinner="Loading GPT-2's 50,000 merges…", max_entries=GPT2_ENTRIES)
def _gpt2(digest: str, _vocab: bytes, _encoder: bytes, _vocab_name: str,
          _encoder_name: str) -> BPETokenizer:
    return load_gpt2_bytes(_vocab, _encoder, _vocab_name, _encoder_name)
