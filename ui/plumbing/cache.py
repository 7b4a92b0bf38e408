"""Cached wrappers around ``core``, shared by every session: the server's settings, trained
tokenizers, corpus statistics, GPT-2's tokenizer.  Each takes what it computes from as explicit
arguments (the session's values are read in ``ui.plumbing.state``); every cache lives in Streamlit's caches
and is bounded (entries and estimated bytes), so the server's memory returns to its baseline when
visitors leave.

- ``train_tokenizer(text, variant, num_merges, end_of_word, pattern, progress, digest)``: trained
  once per corpus + settings (a fewer-merges request reuses a longer run through ``truncated``,
  the prefix property).  Raises one of ``TRAINING_ERRORS`` (``core.bpe``'s ``PatternError``,
  ``PatternTimeoutError``, ``CorpusTooLargeError``).
- ``session_tokenizer(progress=True)``: the same for the session's corpus and settings.
- ``pretrained(name)``: a real model's tokenizer (GPT-2, GPT-4, ...), loaded once per server.
- ``extended_tokenizer(text, start, num_merges, progress, digest)``: the real tokenizer ``start``
  with the merges it would add for ``text`` (``core.bpe.extend``), learned once per corpus + start;
  ``learn_tokenizers()``: what Learn BPE steps through for the session, and the real tokenizer it
  started from.  Raise one of ``START_ERRORS`` (GPT-2's files missing, too big a corpus).
- ``server_settings() -> ServerSettings``: what the person running the server set (environment or
  ``.streamlit/secrets.toml``): instructor key, caps, corpus folder.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from dataclasses import asdict
from pathlib import Path

import streamlit as st

from core import PRETRAINED_NAMES, BPETokenizer, BPETrainer
from core.bpe import (CorpusTooLargeError, GPT2FileError, PatternError, PatternTimeoutError,
                      extension_trainer, load_gpt2_bytes)
from core.bpe.checks import EmptyCorpusError
from core.digest import text_digest
from core.bpe.explain import unseen_words
from core.bpe.pretokenize import set_regex_timeout
from core.corpus import CorpusStats, corpus_stats
from core.room import tokenizer_jobs
from core.room.jobs import INLINE_BELOW
from core.settings import PREFIX, SETTING_NAMES, ServerSettings

from ui.plumbing import heavy_jobs, state
from ui.plumbing.render import tokenizer_digest
from ui.serving.bounded_cache import BoundedCache, KeyLocks

_log = logging.getLogger(__name__)

# Shared caches, bounded: a large tokenizer, GPT-2's once it has encoded, holds tens of MB.
# Entries: a room of 50 attendees, each with a corpus of their own (at 16, thirty of them evicted
# each other's tokenizers and every page run trained again; why: docs/benchmarks.md, "A page run
# in AppTest"); the bytes bound the memory.
STORE_ENTRIES = 64
STORE_BYTES = 96 * 2**20
PREFIX_ENTRIES = 64
PREFIX_BYTES = 64 * 2**20  # a prefix rebuilds its base: tens of MB for a pasted alphabet
GPT2_ENTRIES = 3
# An extended real tokenizer holds its own copy of the real one's 100k-200k tokens, a little under
# EXTENDED_TOKEN_BYTES each (tracemalloc, GPT-4's).
EXTENDED_ENTRIES = 4
EXTENDED_BYTES = 400 * 2**20
EXTENDED_TOKEN_BYTES = 640
PRETRAINED_LABELS = {
    "gpt2": "GPT-2",
    "cl100k_base": "GPT-4 (cl100k_base)",
    "o200k_base": "GPT-4o (o200k_base)",
    "llama3": "Llama 3",
    "qwen3": "Qwen 3",
}
# What training a tokenizer on the session's corpus may refuse with: a bad or too slow split
# pattern, a corpus over the server's training-memory limit, a training over the server's bounds.
TRAINING_ERRORS = (EmptyCorpusError, PatternError, PatternTimeoutError, CorpusTooLargeError,
                   heavy_jobs.TooHeavyError)
# What loading a real tokenizer may fail with: GPT-2's files or the quicktok package missing.
PRETRAINED_ERRORS = (GPT2FileError, ImportError, OSError)
START_ERRORS = TRAINING_ERRORS + PRETRAINED_ERRORS
# a tokenizer the room asks for at once is trained by the first session; the others wait for it
_training = KeyLocks()
SHARED_WAIT = ("Someone in the room is training this same tokenizer: it is shared, so it is yours in a "
               "moment…")


def short_label(name: str) -> str:
    """A real tokenizer's name as people say it: "GPT-4" for ``cl100k_base``."""
    return PRETRAINED_LABELS.get(name, name).split(" (")[0]


# -- server settings --------------------------------------------------------------------------
def server_settings() -> ServerSettings:
    """The server's settings: ``BPE_EXPLORER_*`` environment variables, then
    ``.streamlit/secrets.toml`` for names unset there (``core.settings``).  Parsed once per distinct
    environment and secrets, so a changed setting counts after a restart, or a few seconds after
    the secrets file changed.
    A setting that cannot be used is left unset and named in ``problems`` (the sidebar shows them;
    the server log names each once), so a typo never breaks a page.
    """
    env = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(PREFIX)))
    settings = _settings_for(env, _secrets())
    set_regex_timeout(settings.regex_timeout_s)  # custom split patterns, whichever page runs them
    return settings


SECRETS_READ_EVERY_S = 5.0
_read_secrets: list = [float("-inf"), None, ()]  # when, from which secrets object, what was read


def _secrets() -> tuple:
    """The settings' names found in ``st.secrets`` (none when there is no secrets file: reading
    ``st.secrets`` then raises), read at most every few seconds: looking for the file on every
    call cost a room's server a sixth of its time (a page run asks for the settings many times)."""
    now, secrets = time.monotonic(), st.secrets  # AppTest gives each run secrets of its own
    if now - _read_secrets[0] >= SECRETS_READ_EVERY_S or _read_secrets[1] is not secrets:
        found = ()
        if secrets.load_if_toml_exists():
            found = tuple((n, str(secrets[n])) for n in SETTING_NAMES if n in secrets)
        _read_secrets[:] = [now, secrets, found]
    return _read_secrets[2]


@st.cache_resource(show_spinner=False, max_entries=4)
def _settings_for(env: tuple, secrets: tuple) -> ServerSettings:
    settings = ServerSettings.from_env(dict(env), dict(secrets))
    for problem in settings.problems:  # once per distinct environment and secrets: this is cached
        _log.warning("Server setting ignored: %s", problem)
    return settings


# -- bounded caches (``ui.serving.bounded_cache``) ---------------------------------------------------------
def tokenizer_bytes(tok: BPETokenizer) -> int:
    """Estimated memory of a trained tokenizer, rounded up from tracemalloc: 2 KB per merge (its
    trace record with the competing pairs, its vocabulary entry) and 256 bytes per base symbol (its
    string, its bytes).  At 2 KB for every token, a paste of random Unicode counted many times what
    it held, over the whole store's bound, so storing it evicted every other attendee's tokenizer,
    and theirs evicted it, in turn (why: docs/benchmarks.md, "A room that does not behave")."""
    merges = tok.vocab_size - tok.base_size
    return 2048 * (merges + 1) + 256 * tok.base_size


@st.cache_resource(show_spinner=False)
def _store() -> BoundedCache:
    """Trained tokenizers by (corpus hash, variant, marker, pattern), shared by all sessions."""
    return BoundedCache(STORE_ENTRIES, STORE_BYTES, tokenizer_bytes)


@st.cache_resource(show_spinner=False)
def _prefixes() -> BoundedCache:
    """Fewer-merges views of stored tokenizers, by (store key, merges)."""
    return BoundedCache(PREFIX_ENTRIES, PREFIX_BYTES, tokenizer_bytes)


@st.cache_resource(show_spinner=False)
def _digests() -> BoundedCache:
    return BoundedCache(256, 256 * 1024, lambda entry: 1024)


def tokenizer_key(tok: BPETokenizer) -> str:
    """``ui.plumbing.render.tokenizer_digest``, once per tokenizer object: a job's key for work on
    that tokenizer (hashing 50,000 merges at every rerun would cost each page run tens of ms)."""
    return _digests().made_for(tok, "digest", lambda: tokenizer_digest(tok))


# -- cached training ---------------------------------------------------------------------------
def train_tokenizer(text: str, variant: str, num_merges: int, end_of_word: str | None = None,
                    pattern: str | None = None, progress: bool = True,
                    digest: str | None = None) -> BPETokenizer:
    """The tokenizer for these settings, trained at most once (with a progress bar when asked);
    ``digest`` is ``text``'s hash when the caller has it (``ui.plumbing.state.corpus_digest``).

    One run with more merges serves every smaller request through ``truncated``.  A corpus of
    ``INLINE_BELOW`` characters or more is trained by the room's job engine (``ui.plumbing.heavy_jobs``):
    until it is done the page shows its progress and stops there."""
    key = (digest or text_digest(text), variant, end_of_word or "", pattern or "")
    with _training.hold(key, on_wait=lambda: st.spinner(SHARED_WAIT)):
        tok = _store().get(key)
        if tok is not None and (len(tok.merge_triples) >= num_merges or tok.exhausted):
            return _prefix(key, tok, num_merges)
        limits = server_settings()  # a corpus too big to train, a split pattern too slow: refused
        options = {"end_of_word": end_of_word or "</w>", "pattern": pattern,
                   "regex_timeout": limits.regex_timeout_s, "max_memory": limits.max_train_memory}
        doing = f"Training {variant} BPE"
        if len(text) >= INLINE_BELOW:
            tok = heavy_jobs.job_result(limits, ("train", key, num_merges), tokenizer_jobs.train,
                                        (text, variant, num_merges, options), doing, " merges",
                                        advice=heavy_jobs.training_advice(variant))
        else:
            trainer = _trained(lambda: BPETrainer(text, variant=variant, **options), num_merges, progress,
                               doing, " merges")
            tok = BPETokenizer.from_trainer(trainer)
        _store().put(key, tok)
        return tok


def _trained(make_trainer, num_merges: int, progress: bool, doing: str, unit: str = "") -> BPETrainer:
    """``make_trainer()``'s trainer after ``num_merges`` more merges, under a progress bar reading
    "``doing``: done / total``unit``" when ``progress`` (gone once done, or on an error)."""
    def says(done: int, total: int) -> str:
        return f"{doing}: {done:,} / {total:,}{unit}"

    bar = st.progress(0.0, text=says(0, num_merges)) if progress else None

    def report(done: int, total: int) -> None:
        if bar is not None:
            bar.progress(done / max(total, 1), text=says(done, total))

    try:
        trainer = make_trainer()
        for _ in trainer.run(num_merges, progress=report):
            pass
        return trainer
    finally:
        if bar is not None:
            bar.empty()


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


def corpus_statistics(digest: str, text: str) -> CorpusStats | None:
    """Statistics of a corpus, counted once per corpus (by its hash, ``digest``) and kept here;
    ``None``, with a progress bar, while a job worker counts a large one.  Kept in this process, not
    only by the engine, which forgets it when it leaves idle (after a run trained with no job
    asked): every page of a large corpus counted it again then, and the count's end reran the whole
    page, dropping what a click had just drawn."""
    return heavy_jobs.computed(server_settings(), _counted(), ("statistics", digest),
                               corpus_stats, (text,), len(text), "Counting the corpus")


@st.cache_resource(show_spinner=False)
def _counted() -> BoundedCache:
    return BoundedCache(256, 256 * 1024, lambda stats: 1024)


def corpus_unseen_words(digest: str, text: str, test: str) -> list[str]:
    """``core.bpe.explain.unseen_words``, once per corpus (by its hash) and test text: splitting a
    corpus of megabytes into words holds the room's one process for half a second, at every rerun
    of the page otherwise."""
    return _unseen_words(digest, test, text)


@st.cache_data(show_spinner=False, max_entries=64)
def _unseen_words(digest: str, test: str, _text: str) -> list[str]:
    return unseen_words(_text, test)


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


def gpt2_from_files(vocab: Path, encoder: Path) -> BPETokenizer:
    """GPT-2's tokenizer from its files on this machine, found by their paths, sizes and times:
    reading and hashing them at every page run was a visible share of Char vs BPE's server time
    (why: docs/benchmarks.md, "What one page run costs the server")."""
    stats = [(p, p.stat()) for p in (vocab, encoder)]
    return _gpt2_files(tuple((str(p), s.st_size, s.st_mtime_ns) for p, s in stats))


@st.cache_resource(show_spinner=False, max_entries=GPT2_ENTRIES)
def _gpt2_files(stamps: tuple[tuple[str, int, int], ...]) -> BPETokenizer:
    (vocab, *_), (encoder, *_) = stamps
    return gpt2_tokenizer(Path(vocab).read_bytes(), Path(encoder).read_bytes())


@st.cache_resource(show_spinner="Loading GPT-2's 50,000 merges…", max_entries=GPT2_ENTRIES)
def _gpt2(digest: str, _vocab: bytes, _encoder: bytes, _vocab_name: str,
          _encoder_name: str) -> BPETokenizer:
    return load_gpt2_bytes(_vocab, _encoder, _vocab_name, _encoder_name)


# -- real tokenizers, and the merges they would add ------------------------------------------------
@st.cache_resource(show_spinner="Loading a real tokenizer's vocabulary…", max_entries=len(PRETRAINED_NAMES))
def pretrained(name: str) -> BPETokenizer:
    """A real model's tokenizer (``core.bpe.pretrained``), loaded once and shared by every session;
    a failure (GPT-2's files missing) is not cached, so files put in place later are found."""
    return BPETokenizer.from_pretrained(name)


@st.cache_resource(show_spinner=False)
def _extended() -> BoundedCache:
    """Extended real tokenizers by (corpus hash, start) and (corpus hash, start, fewer merges)."""
    return BoundedCache(EXTENDED_ENTRIES, EXTENDED_BYTES, lambda tok: EXTENDED_TOKEN_BYTES * tok.vocab_size)


def extended_tokenizer(text: str, start: str, num_merges: int, progress: bool = True,
                       digest: str | None = None) -> BPETokenizer:
    """``pretrained(start)`` extended with ``num_merges`` merges learned from ``text``, learned at
    most once per corpus and start (fewer merges: a prefix of a longer run's steps)."""
    key = (digest or text_digest(text), start)
    with _training.hold(key, on_wait=lambda: st.spinner(SHARED_WAIT)):
        base, tok = pretrained(start), _extended().get(key)
        if tok is not None and (len(tok.trace) >= num_merges or tok.exhausted):
            return _extension_prefix(key, base, tok, num_merges)
        limits, doing = server_settings(), f"Learning {short_label(start)}'s new merges"
        if len(text) >= INLINE_BELOW:
            tok = heavy_jobs.job_result(limits, ("extend", key, num_merges), tokenizer_jobs.extend,
                                        (start, text, num_merges, limits.max_train_memory), doing,
                                        advice="Ask for fewer merges, or use a smaller text.")
        else:
            trainer = _trained(lambda: extension_trainer(base, text, max_memory=limits.max_train_memory),
                               num_merges, progress, doing)
            tok = BPETokenizer.from_trainer(trainer)
        _extended().put(key, tok)
        return tok


def _extension_prefix(key: tuple, base: BPETokenizer, tok: BPETokenizer, num_merges: int) -> BPETokenizer:
    if len(tok.trace) <= num_merges:
        return tok
    short = _extended().get((*key, num_merges))
    if short is None:
        short = tok.truncated(len(base.merge_triples) + num_merges)
        _extended().put((*key, num_merges), short)
    return short


def learn_tokenizers(progress: bool = True) -> tuple[BPETokenizer, BPETokenizer | None]:
    """What Learn BPE steps through for the session's corpus and settings, and the real tokenizer it
    starts from (``None``: from characters or bytes, the session's own tokenizer)."""
    start = state.kept("start")  # a name of ``core.bpe.pretrained``, or characters/bytes
    if start == state.FROM_SCRATCH:
        return session_tokenizer(progress), None
    _, text = state.corpus()
    tok = extended_tokenizer(text, start, int(state.kept("num_merges")), progress, state.corpus_digest())
    return tok, pretrained(start)
