"""The "why are language models weird" answers of the Tokenizer questions page, cached for every
session, as the rows and charts the page draws (its layout: ``ui.views.questions_sections``).

Each answer is ``core.insights``'s, made once per tokenizer object and corpus (by its hash) in a
bounded cache shared by every session, so a rerun of the page computes none of them again.  What
reads the whole corpus comes from :func:`corpus_questions`, every tokenizer at once: on the page's
thread for a small corpus, by a job worker for a large one (``ui.plumbing.heavy_jobs.computed``).

- ``corpus_questions``: the corpus's answers (its words, numbers, whitespace; its special-token
  text, a prompt ending in a space, its records), ``None`` while a job reads it.
- ``spelling_rows``: a word in six forms.
- ``number_rows``, ``example_numbers``, ``grouping_frame`` / ``grouping_chart``, ``aligned_sum``:
  numbers of a text; how the integers 0..9,999 are grouped; an addition laid out by token.
- ``whitespace_frame`` / ``whitespace_chart``: whitespace tokens on the corpus and on Python.
- ``special_rows``: both readings of special-token text.
- ``boundary_rows``; ``format_costs_of``, ``format_frame`` / ``format_chart``.

Leaves out: the answers themselves (``core.insights``).
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from core import BPETokenizer
from core.bpe.display import visible
from core.insights.boundary import prompt_boundary
from core.insights.corpus_answers import MOST_NUMBERS, CorpusQuestions
from core.insights.cuts import cut
from core.insights.formats import FORMATS
from core.insights.numbers import NumberCut, grouping, number_groupings, numbers_in_text
from core.insights.specials import LIBRARY_DEFAULTS, special_readings, special_strings
from core.insights.spelling import FORMS, letter_places, spelling
from core.insights.whitespace import python_sample, whitespace_cost
from core.insights import question_jobs

from ..plumbing.cache import server_settings, tokenizer_key
from ..plumbing.charts import FIT_WIDTH, grouped_height
from ..plumbing.heavy_jobs import computed
from ..serving.bounded_cache import BoundedCache

EXAMPLE_WORD = "strawberry"
NUMBER_EXAMPLE = "In 2024 the shop sold 12345678 apples at 19.99, then 1000 more: 999 + 1 = 1000."
SPECIAL_EXAMPLE = "The first story ends here.<|endoftext|>The next one begins."
QUESTIONS_BYTES = 64 * 1024  # one corpus's answers under six tokenizers, at most (a few dozen cuts each)
TABLE_BYTES = 16 * 1024  # a tokenizer's digit groupings (at most 15), six formats' costs under six tokenizers
FORM_LABELS = {"word": "word", " word": "␣word", "Word": "Word", " Word": "␣Word", "WORD": "WORD",
               "reversed": "reversed"}


@st.cache_resource(show_spinner=False)
def _answers() -> BoundedCache:
    """Answers by (tokenizer, question, corpus hash, argument): small tables, a few KB each."""
    return BoundedCache(256, 32 * 2**20, lambda entry: 16 * 1024)


def _answer(tok: BPETokenizer, key: tuple, make):
    return _answers().made_for(tok, key, make)


@st.cache_resource(show_spinner=False)
def _corpora() -> BoundedCache:
    """Every tokenizer's answers on a corpus, by (corpus hash, tokenizers)."""
    return BoundedCache(32, 32 * QUESTIONS_BYTES, lambda found: QUESTIONS_BYTES)


@st.cache_resource(show_spinner=False)
def _tables() -> BoundedCache:
    """Small answers a job may compute, by key: a tokenizer's digit groupings, records' costs (a
    few KB each; costed as a corpus's answers, a room's five real tokenizers' groupings took five
    of their 32 places and were computed again once pushed out)."""
    return BoundedCache(256, 256 * TABLE_BYTES, lambda found: TABLE_BYTES)


def corpus_questions(tokenizers: dict[str, BPETokenizer], names: dict[str, str], text: str,
                     digest: str) -> CorpusQuestions | None:
    """What the sections read from the whole corpus (``core.insights.corpus_answers``), for every
    tokenizer by label (``names``: a real one's name, which a job worker loads rather than being
    sent it); ``None``, under a progress bar, while a job worker reads a large corpus."""
    specials = all_specials(tokenizers)
    return computed(server_settings(), _corpora(), ("questions", digest, _keys(tokenizers, names)),
                    question_jobs.questions, (text, dict(tokenizers), specials), len(text),
                    "Reading your corpus for these questions", " tokenizers",
                    sent=(text, _sent(tokenizers, names), specials))


def _keys(tokenizers: dict[str, BPETokenizer], names: dict[str, str]) -> tuple:
    """The tokenizers as a job's key spells them, the same in every process: a real one's name,
    else its merges' hash."""
    return tuple((label, names.get(label) or tokenizer_key(tok)) for label, tok in tokenizers.items())


def _sent(tokenizers: dict[str, BPETokenizer], names: dict[str, str]) -> dict:
    """The tokenizers as a job worker is given them: a real one by its name (it loads it once)."""
    return {label: names.get(label, tok) for label, tok in tokenizers.items()}


def joined(tokens) -> str:
    """Tokens as every page draws them in text: visible whitespace, ``·`` between them."""
    return " · ".join(visible(t) for t in tokens)


# -- spelling -----------------------------------------------------------------------------------
def spelling_rows(tokenizers: dict[str, BPETokenizer], word: str, letter: str) -> pd.DataFrame:
    """The word as each tokenizer cuts it: first what the question asks (the word's tokens, the
    letters hidden inside longer ones, the letter counted per token), then its other five forms."""
    rows = []
    for label, tok in tokenizers.items():
        found = _answer(tok, ("spelling", word), lambda tok=tok: spelling(tok, word))
        row = {"tokenizer": label, "word": joined(found.forms["word"].tokens),
               "letters inside longer tokens": f"{found.letters_in_longer_tokens} of {len(word)}"}
        if letter:
            places = letter_places(tok, word, letter)
            row[f"'{letter}' per token"] = " · ".join(f"{visible(t)}: {n}" for t, n in places)
        row.update({FORM_LABELS[f]: joined(found.forms[f].tokens) for f in FORMS if f != "word"})
        rows.append(row)
    return pd.DataFrame(rows)


# -- numbers ------------------------------------------------------------------------------------
def example_numbers(tokenizers: dict[str, BPETokenizer]) -> dict[str, list[NumberCut]]:
    """The numbers of the built-in sentence, as each tokenizer (by label) cuts them."""
    return {label: _answer(tok, ("numbers", "example"), lambda tok=tok: numbers_in_text(tok, NUMBER_EXAMPLE))
            for label, tok in tokenizers.items()}


def number_rows(numbers: dict[str, list[NumberCut]], shown: int = MOST_NUMBERS) -> pd.DataFrame:
    """A text's most frequent numbers (``numbers``: each tokenizer's, by label), each as every
    tokenizer cuts it, and its grouping."""
    rows: dict[str, dict] = {}
    for label, found in numbers.items():
        for number in found[:shown]:
            row = rows.setdefault(number.text, {"number": visible(number.text), "times": number.count})
            row[label] = f"{joined(number.cut.tokens)}  ({'-'.join(map(str, number.grouping))})"
    return pd.DataFrame(list(rows.values()))


def grouping_frame(tokenizers: dict[str, BPETokenizer], names: dict[str, str],
                   size: int) -> pd.DataFrame | None:
    """How each tokenizer groups the digits of 0..9,999 (once per tokenizer for the room); ``None``,
    under progress bars, while job workers count them for the tokenizers of a large corpus
    (``size``: its characters; its own tokenizer is new with each corpus)."""
    found = {label: computed(server_settings(), _tables(), ("groupings", key), question_jobs.with_tokenizer,
                             (number_groupings, tokenizers[label]), size, "Grouping the digits of 0 to 9,999",
                             sent=(number_groupings, names.get(label, tokenizers[label])))
             for label, key in _keys(tokenizers, names)}
    if any(groupings is None for groupings in found.values()):
        return None
    rows = []
    for label, groupings in found.items():
        for groups, n in sorted(groupings.groupings.items(), key=lambda item: (sum(item[0]), item[0])):
            rows.append({"tokenizer": label, "grouping": "-".join(map(str, groups)), "integers": n,
                         "digits": sum(groups)})
    return pd.DataFrame(rows)


GROUPING_COLOURS = "tableau20"  # 20 colours, none alike: 0..9,999 have at most 15 groupings (1+2+4+8)
ROW_AXIS = alt.Axis(labelLimit=0, labelOverlap=False)  # every tokenizer's row named, in full


def grouping_chart(frame: pd.DataFrame) -> alt.Chart:
    """One bar per tokenizer, cut by how many of 0..9,999 take each grouping, a colour each."""
    order = list(dict.fromkeys(frame.sort_values(["digits", "grouping"])["grouping"]))
    return alt.Chart(frame).mark_bar(stroke="white", strokeWidth=0.5).encode(
        y=alt.Y("tokenizer:N", sort=list(dict.fromkeys(frame["tokenizer"])), title=None, axis=ROW_AXIS),
        x=alt.X("integers:Q", title="integers 0 to 9,999"),
        color=alt.Color("grouping:N", sort=order, scale=alt.Scale(scheme=GROUPING_COLOURS),
                        legend=alt.Legend(orient="bottom", columns=5, title="digits per token")),
        order=alt.Order("digits:Q"),
        tooltip=["tokenizer", "grouping", "integers"],
    ).properties(width="container", height=grouped_height(frame["tokenizer"].nunique(), 2),
                 autosize=FIT_WIDTH)  # a stacked bar per tokenizer, as tall as two: its name has room


def aligned_sum(tokenizers: dict[str, BPETokenizer], a: int, b: int) -> str:
    """``a + b = c`` as each tokenizer cuts each number written plainly, digits aligned by place
    value, ``|`` where a token ends inside the number."""
    numbers = [str(a), str(b), str(a + b)]
    width, named = max(map(len, numbers)), max(map(len, tokenizers))
    lines = []
    for label, tok in tokenizers.items():
        for sign, digits in zip(("  ", "+ ", "= "), numbers):
            groups = grouping(tok, cut(tok, digits), digits)
            ends = [sum(groups[:k]) for k in range(len(groups) + 1)]
            drawn = "|".join(" ".join(digits[lo:hi]) for lo, hi in zip(ends, ends[1:]))
            lines.append(f"{label if sign == '  ' else '':<{named}}  {sign}{drawn:>{2 * width - 1}}")
        lines.append("")
    return "\n".join(lines)


# -- whitespace ----------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def _python_text() -> str:
    return python_sample()


def whitespace_frame(tokenizers: dict[str, BPETokenizer], found: CorpusQuestions,
                     corpus_label: str) -> pd.DataFrame:
    rows = []
    for label, tok in tokenizers.items():
        python = _answer(tok, ("whitespace", "python"), lambda tok=tok: whitespace_cost(tok, _python_text()))
        for which, cost in ((corpus_label, found.answers[label].whitespace),
                            ("Python (core/bpe/_educational.py)", python)):
            rows.append({"tokenizer": label, "text": which, "tokens": cost.tokens,
                         "whitespace tokens": cost.whitespace_tokens, "share": round(cost.share, 4)})
    return pd.DataFrame(rows)


def whitespace_chart(frame: pd.DataFrame) -> alt.Chart:
    tokenizers = list(dict.fromkeys(frame["tokenizer"]))
    return alt.Chart(frame).mark_bar().encode(
        y=alt.Y("tokenizer:N", sort=tokenizers, title=None, axis=ROW_AXIS),
        yOffset=alt.YOffset("text:N"),
        x=alt.X("share:Q", axis=alt.Axis(format="%"), title="tokens that are whitespace only"),
        color=alt.Color("text:N", legend=alt.Legend(orient="bottom", title=None, columns=1, labelLimit=0)),
        tooltip=["tokenizer", "text", "tokens", "whitespace tokens", alt.Tooltip("share:Q", format=".1%")],
    ).properties(width="container", height=grouped_height(len(tokenizers), 2), autosize=FIT_WIDTH)


# -- special tokens -----------------------------------------------------------------------------
def special_rows(tokenizers: dict[str, BPETokenizer], names: dict[str, str], text: str) -> pd.DataFrame:
    rows = []
    for label, tok in tokenizers.items():
        found = special_readings(tok, text)
        rows.append({"tokenizer": label, "tokens": len(found.as_text.ids),
                     "read as special (ids)": " ".join(map(str, found.as_special))
                     or "— (not a special token of this tokenizer)",
                     "read as text": joined(found.as_text.tokens),
                     "its library, by default": LIBRARY_DEFAULTS.get(names.get(label, ""), "—")})
    return pd.DataFrame(rows)


def all_specials(tokenizers: dict[str, BPETokenizer]) -> tuple[str, ...]:
    return tuple(special_strings(tokenizers.values()))


# -- a trailing space ---------------------------------------------------------------------------
def boundary_rows(tokenizers: dict[str, BPETokenizer], prompt: str, continuation: str) -> pd.DataFrame:
    rows = []
    for label, tok in tokenizers.items():
        found = prompt_boundary(tok, prompt, continuation)
        rows.append({"tokenizer": label, "kept": f"{found.kept} of {len(found.prompt.ids)}",
                     "cut otherwise": joined(found.lost) or "—", "prompt": joined(found.prompt.tokens),
                     "prompt + continuation": joined(found.joined.tokens)})
    return pd.DataFrame(rows)


# -- formats ------------------------------------------------------------------------------------
def format_costs_of(tokenizers: dict[str, BPETokenizer], names: dict[str, str], records: list[dict],
                    key: str) -> dict[str, dict[str, dict]] | None:
    """Tokens and characters per tokenizer and format (``key``: the records' hash); ``None``, under
    a progress bar, while a job worker counts records of a large text."""
    size = sum(len(str(value)) + len(name) for record in records for name, value in record.items())
    return computed(server_settings(), _tables(), ("formats", key, _keys(tokenizers, names)),
                    question_jobs.formats, (records, dict(tokenizers)), 6 * size,
                    "Writing and counting the records", sent=(records, _sent(tokenizers, names)))


def format_frame(costs: dict[str, dict[str, dict]]) -> pd.DataFrame:
    return pd.DataFrame([{"tokenizer": label, "format": fmt, "tokens": cell["tokens"],
                          "characters": cell["characters"]}
                         for label, formats in costs.items() for fmt, cell in formats.items()])


def format_chart(frame: pd.DataFrame) -> alt.Chart:
    tokenizers = list(dict.fromkeys(frame["tokenizer"]))
    return alt.Chart(frame).mark_bar().encode(
        y=alt.Y("format:N", sort=list(FORMATS), title=None, axis=ROW_AXIS),
        yOffset=alt.YOffset("tokenizer:N", sort=tokenizers),
        x=alt.X("tokens:Q", title="tokens for the same records"),
        color=alt.Color("tokenizer:N", sort=tokenizers, legend=alt.Legend(orient="bottom", title=None,
                                                                          columns=2, labelLimit=0)),
        tooltip=["format", "tokenizer", "tokens", "characters"],
    ).properties(width="container", height=grouped_height(len(FORMATS), len(tokenizers)), autosize=FIT_WIDTH)
