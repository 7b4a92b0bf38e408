"""What the "why are language models weird" questions read from a whole corpus, gathered in one
pass per tokenizer, so that a page can have them computed anywhere (inline for a small corpus, by
a job worker for a large one: ``core.insights.question_jobs``) and only draw them.

- :func:`tokenizer_answers`: one tokenizer on one corpus: the words a space or a capital cuts
  otherwise, the corpus's numbers as it cuts them, its whitespace tokens;
- :func:`text_findings`: what the questions take from the text itself, whatever the tokenizer:
  special-token text with some context, a prompt ending in a space, the records of a JSON corpus;
- :func:`corpus_questions`: both, for every tokenizer a page shows.

Leaves out: each answer's own rule (``spelling``, ``numbers``, ``whitespace``, ``specials``,
``boundary``, ``formats``).
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from ..bpe import BPETokenizer
from .boundary import trailing_space_prompt
from .formats import read_records
from .numbers import NUMBER, NumberCut, numbers_in_text
from .spelling import WordCuts, words_cut_differently
from .whitespace import WhitespaceCost, whitespace_cost

MOST_WORDS = 5_000  # the corpus's most frequent words checked for a space or a capital
# the corpus's most frequent numbers, each as every tokenizer cuts it: the rows the page shows
# (a job's answers are read back on the page's thread: why, docs/benchmarks.md, "A heavy job's copies")
MOST_NUMBERS = 12
SNIPPET_CHARS = 40  # of context on each side of special-token text


@dataclass(frozen=True)
class TokenizerAnswers:
    """One tokenizer's answers on one corpus."""

    words: WordCuts
    numbers: list[NumberCut]       # the most frequent first
    whitespace: WhitespaceCost


def tokenizer_answers(tok: BPETokenizer, text: str) -> TokenizerAnswers:
    return TokenizerAnswers(words_cut_differently(tok, text, MOST_WORDS),
                            numbers_in_text(tok, text, MOST_NUMBERS), whitespace_cost(tok, text))


@dataclass(frozen=True)
class TextFindings:
    """What the questions take from the text itself (empty where it has none of it)."""

    special_snippet: str        # text around the first special-token text ("" when none)
    prompt: tuple[str, str]     # a prompt ending in a space, and the word after it (("", "") when none)
    records: list[dict] | None  # the corpus's records when it is a JSON array of flat objects
    has_numbers: bool


def text_findings(text: str, specials: tuple[str, ...]) -> TextFindings:
    return TextFindings(special_snippet(text, specials), trailing_space_prompt(text), json_records(text),
                        NUMBER.search(text) is not None)


def special_snippet(text: str, specials: tuple[str, ...]) -> str:
    """Some text around the first special-token text in ``text``, within its line (a one-line box
    shows it), or "" when there is none."""
    found = [(text.find(s), s) for s in specials if s in text]
    if not found:
        return ""
    at, special = min(found)
    end = text.find("\n", at + len(special))
    start = max(at - SNIPPET_CHARS, text.rfind("\n", 0, at) + 1)
    return text[start:min(at + len(special) + SNIPPET_CHARS, len(text) if end < 0 else end)]


def json_records(text: str) -> list[dict] | None:
    """``text``'s records when it is itself a JSON array of flat objects (within the formats'
    bound), else ``None``."""
    if not regex.match(r"\s*\[", text[:100]):
        return None
    try:
        return read_records(text)
    except ValueError:  # not such JSON, or over the bound
        return None


@dataclass(frozen=True)
class CorpusQuestions:
    """Every tokenizer's answers on one corpus (by the page's label), and the text's findings."""

    answers: dict[str, TokenizerAnswers]
    findings: TextFindings


def corpus_questions(text: str, tokenizers: dict[str, BPETokenizer], specials: tuple[str, ...],
                     progress=None) -> CorpusQuestions:
    """:func:`tokenizer_answers` for each of ``tokenizers`` and :func:`text_findings`, reporting
    ``progress(done, total)`` tokenizer by tokenizer."""
    answers = {}
    for done, (label, tok) in enumerate(tokenizers.items()):
        if progress is not None:
            progress(done, len(tokenizers))
        answers[label] = tokenizer_answers(tok, text)
    return CorpusQuestions(answers, text_findings(text, specials))
