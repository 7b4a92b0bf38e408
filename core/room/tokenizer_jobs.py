"""The room's heavy BPE work as jobs for ``core.room.jobs``: module-level functions (a job worker
process imports them by name) that report their progress (merges done / asked) with
``report_progress`` and return what the page shows.

- :func:`train`: a tokenizer trained on a corpus with the page's settings;
- :func:`extend`: a real tokenizer (GPT-2, GPT-4, ...) with the merges it would add for a corpus;
- :func:`named`: a tokenizer a job is given by name where it is a real model's (loading one is
  cheaper than sending it).

A corpus's statistics are counted by ``core.corpus.corpus_stats`` itself; the Tokenizer questions
page's jobs are ``core.insights.question_jobs``.

The same work runs inline for small corpora (``core.room.jobs.INLINE_BELOW``); these functions
are what a job worker runs, and nothing here knows about pages.
"""

from __future__ import annotations

import functools

from ..bpe import BPETokenizer, extension_trainer
from .worker_process import report_progress


def train(text: str, variant: str, num_merges: int, options: dict) -> BPETokenizer:
    """``num_merges`` merges of ``variant`` BPE on ``text`` (``options``: ``from_text``'s other
    keyword arguments); raises what ``BPETrainer`` raises (``CorpusTooLargeError`` over its
    ``max_memory``, a bad or too slow ``pattern``)."""
    return BPETokenizer.from_text(text, num_merges, variant, progress=report_progress, **options)


def extend(start: str, text: str, num_merges: int, max_memory: int) -> BPETokenizer:
    """The real tokenizer ``start`` with up to ``num_merges`` merges learned from ``text``."""
    trainer = extension_trainer(_pretrained(start), text, max_memory=max_memory)
    for _ in trainer.run(num_merges, progress=report_progress):
        pass
    return BPETokenizer.from_trainer(trainer)


@functools.lru_cache(maxsize=8)
def _pretrained(name: str) -> BPETokenizer:
    """A real tokenizer, loaded once per job worker (GPT-4's takes seconds and tens of MB): cheaper
    than sending one (pickling o200k's 200,000 tokens takes longer than loading them)."""
    return BPETokenizer.from_pretrained(name)


def named(ref: str | BPETokenizer) -> BPETokenizer:
    """A tokenizer, or a real model's by its name (``core.bpe.pretrained``), loaded once per job
    worker."""
    return _pretrained(ref) if isinstance(ref, str) else ref
