"""The Tokenizer questions page's heavy work as jobs for the room's job workers
(``core.room.jobs``): module-level functions a job worker imports by name, each reporting its
progress and returning what the page draws.  A page runs the same functions inline on a small
corpus (``ui.plumbing.heavy_jobs.computed`` chooses).

A real model's tokenizer is given by its name and loaded once per job worker
(``core.room.tokenizer_jobs.named``); the corpus's own tokenizer is sent.

- :func:`questions`: the "why are language models weird" answers on a corpus
  (``corpus_answers``);
- :func:`formats`: what the same records cost in each format (``formats``);
- :func:`curve`: characters per token at every vocabulary size (``vocab_curve``);
- :func:`sweep`: the tokenizers a sweep of small GPTs trains with (``sweep``);
- :func:`with_tokenizer`: any other function of a tokenizer (its groupings of digits, each
  token's count in the corpus).
"""

from __future__ import annotations

from ..bpe import BPETokenizer
from ..room.tokenizer_jobs import named
from ..room.worker_process import report_progress
from .corpus_answers import CorpusQuestions, corpus_questions
from .formats import format_costs
from .sweep import sweep_tokenizers
from .vocab_curve import VocabCurve, vocabulary_curve


def questions(text: str, refs: dict[str, str | BPETokenizer], specials: tuple[str, ...]) -> CorpusQuestions:
    """The answers on ``text`` for each tokenizer (by label), tokenizer by tokenizer."""
    return corpus_questions(text, {label: named(ref) for label, ref in refs.items()}, specials,
                            report_progress)


def formats(records: list[dict], refs: dict[str, str | BPETokenizer]) -> dict[str, dict[str, dict]]:
    return format_costs(records, {label: named(ref) for label, ref in refs.items()})


def curve(text: str, max_vocab: int, variant: str, pattern: str | None) -> VocabCurve:
    return vocabulary_curve(text, max_vocab, variant, pattern=pattern, progress=report_progress)


def sweep(text: str, sizes: tuple[int, ...]) -> dict[int, BPETokenizer]:
    return sweep_tokenizers(text, sizes, progress=report_progress)


def with_tokenizer(fn, ref: str | BPETokenizer, *args):
    """``fn(tokenizer, *args)``, ``fn`` a module-level function of ``core``."""
    return fn(named(ref), *args)
