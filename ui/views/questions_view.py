"""The "why are language models weird" answers of the Tokenizer questions page, cached for every
session, as the rows and charts the page draws (its layout: ``ui.views.questions_sections``).

Each answer is ``core.insights``'s, made once per tokenizer object and corpus (by its hash) in a
bounded cache shared by every session, so a rerun of the page computes none of them again; the
corpus-wide ones read at most a few thousand distinct words or numbers.

- ``spelling_rows``, ``word_cuts``: a word in six forms; the corpus's words a space or a capital
  cuts otherwise.
- ``number_rows``, ``grouping_frame`` / ``grouping_chart``, ``aligned_sum``: numbers of the text;
  how the integers 0..9,999 are grouped; an addition laid out by token.
- ``whitespace_frame`` / ``whitespace_chart``: whitespace tokens on the corpus and on Python.
- ``special_rows``, ``special_snippet``: both readings of special-token text.
- ``boundary_rows``; ``format_frame`` / ``format_chart``, ``corpus_records``.

Leaves out: the answers themselves (``core.insights``).
"""

from __future__ import annotations

import altair as alt
import pandas as pd
import regex
import streamlit as st

from core import BPETokenizer
from core.bpe.display import visible
from core.insights.boundary import prompt_boundary
from core.insights.cuts import cut
from core.insights.formats import FORMATS, format_costs, read_records
from core.insights.numbers import grouping, number_groupings, numbers_in_text
from core.insights.specials import LIBRARY_DEFAULTS, special_readings, special_strings
from core.insights.spelling import FORMS, letter_places, spelling, words_cut_differently
from core.insights.whitespace import python_sample, whitespace_cost

from ..serving.bounded_cache import BoundedCache

EXAMPLE_WORD = "strawberry"
NUMBER_EXAMPLE = "In 2024 the shop sold 12345678 apples at 19.99, then 1000 more: 999 + 1 = 1000."
SPECIAL_EXAMPLE = "The first story ends here.<|endoftext|>The next one begins."
PAGE_WORDS = 5_000  # the corpus's most frequent words checked for a space or a capital
PAGE_NUMBERS = 2_000
SNIPPET_CHARS = 40
FORM_LABELS = {"word": "word", " word": "␣word", "Word": "Word", " Word": "␣Word", "WORD": "WORD",
               "reversed": "reversed"}


@st.cache_resource(show_spinner=False)
def _answers() -> BoundedCache:
    """Answers by (tokenizer, question, corpus hash, argument): small tables, a few KB each."""
    return BoundedCache(256, 32 * 2**20, lambda entry: 16 * 1024)


def _answer(tok: BPETokenizer, key: tuple, make):
    return _answers().made_for(tok, key, make)


def joined(tokens) -> str:
    """Tokens as every page draws them in text: visible whitespace, ``·`` between them."""
    return " · ".join(visible(t) for t in tokens)


# -- spelling -----------------------------------------------------------------------------------
def spelling_rows(tokenizers: dict[str, BPETokenizer], word: str, letter: str) -> pd.DataFrame:
    rows = []
    for label, tok in tokenizers.items():
        found = _answer(tok, ("spelling", word), lambda tok=tok: spelling(tok, word))
        row = {"tokenizer": label}
        row.update({FORM_LABELS[f]: joined(found.forms[f].tokens) for f in FORMS})
        row["letters inside longer tokens"] = f"{found.letters_in_longer_tokens} of {len(word)}"
        if letter:
            places = letter_places(tok, word, letter)
            row[f"'{letter}' per token"] = " · ".join(f"{visible(t)}: {n}" for t, n in places)
        rows.append(row)
    return pd.DataFrame(rows)


def word_cuts(tok: BPETokenizer, text: str, digest: str):
    return _answer(tok, ("words", digest), lambda: words_cut_differently(tok, text, PAGE_WORDS))


# -- numbers ------------------------------------------------------------------------------------
def number_rows(tokenizers: dict[str, BPETokenizer], text: str, digest: str, shown: int = 12) -> pd.DataFrame:
    """The text's most frequent numbers, each as every tokenizer cuts it, and its grouping."""
    rows: dict[str, dict] = {}
    for label, tok in tokenizers.items():
        found = _answer(tok, ("numbers", digest), lambda tok=tok: numbers_in_text(tok, text, PAGE_NUMBERS))
        for number in found[:shown]:
            row = rows.setdefault(number.text, {"number": visible(number.text), "times": number.count})
            row[label] = f"{joined(number.cut.tokens)}  ({'-'.join(map(str, number.grouping))})"
    return pd.DataFrame(list(rows.values()))


def grouping_frame(tokenizers: dict[str, BPETokenizer]) -> pd.DataFrame:
    rows = []
    for label, tok in tokenizers.items():
        found = _answer(tok, ("groupings",), lambda tok=tok: number_groupings(tok))
        for groups, n in sorted(found.groupings.items(), key=lambda item: (sum(item[0]), item[0])):
            rows.append({"tokenizer": label, "grouping": "-".join(map(str, groups)), "integers": n,
                         "digits": sum(groups)})
    return pd.DataFrame(rows)


def grouping_chart(frame: pd.DataFrame) -> alt.Chart:
    """One bar per tokenizer, cut by how many of 0..9,999 take each grouping."""
    order = list(dict.fromkeys(frame.sort_values(["digits", "grouping"])["grouping"]))
    return alt.Chart(frame).mark_bar(stroke="white", strokeWidth=0.5).encode(
        y=alt.Y("tokenizer:N", sort=list(dict.fromkeys(frame["tokenizer"])), title=None,
                axis=alt.Axis(labelLimit=220)),
        x=alt.X("integers:Q", title="integers 0 to 9,999"),
        color=alt.Color("grouping:N", sort=order, legend=alt.Legend(orient="bottom", columns=6,
                                                                    title="digits per token")),
        order=alt.Order("digits:Q"),
        tooltip=["tokenizer", "grouping", "integers"],
    ).properties(height=40 * frame["tokenizer"].nunique() + 40)


def aligned_sum(tokenizers: dict[str, BPETokenizer], a: int, b: int) -> str:
    """``a + b = c`` as each tokenizer cuts each number written plainly, digits aligned by place
    value, ``|`` where a token ends inside the number."""
    numbers = [str(a), str(b), str(a + b)]
    width = max(map(len, numbers))
    lines = []
    for label, tok in tokenizers.items():
        for sign, digits in zip(("  ", "+ ", "= "), numbers):
            groups = grouping(tok, cut(tok, digits), digits)
            ends = [sum(groups[:k]) for k in range(len(groups) + 1)]
            drawn = "|".join(" ".join(digits[lo:hi]) for lo, hi in zip(ends, ends[1:]))
            lines.append(f"{label[:22] if sign == '  ' else '':<22}  {sign}{drawn:>{2 * width - 1}}")
        lines.append("")
    return "\n".join(lines)


# -- whitespace ----------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def _python_text() -> str:
    return python_sample()


def whitespace_frame(tokenizers: dict[str, BPETokenizer], text: str, digest: str,
                     corpus_label: str) -> pd.DataFrame:
    rows = []
    for label, tok in tokenizers.items():
        for which, source, key in ((corpus_label, text, digest), ("Python (core/bpe/_educational.py)",
                                                                  _python_text(), "python")):
            found = _answer(tok, ("whitespace", key),
                            lambda tok=tok, source=source: whitespace_cost(tok, source))
            rows.append({"tokenizer": label, "text": which, "tokens": found.tokens,
                         "whitespace tokens": found.whitespace_tokens, "share": round(found.share, 4)})
    return pd.DataFrame(rows)


def whitespace_chart(frame: pd.DataFrame) -> alt.Chart:
    tokenizers = list(dict.fromkeys(frame["tokenizer"]))
    return alt.Chart(frame).mark_bar().encode(
        y=alt.Y("tokenizer:N", sort=tokenizers, title=None, axis=alt.Axis(labelLimit=220)),
        yOffset=alt.YOffset("text:N"),
        x=alt.X("share:Q", axis=alt.Axis(format="%"), title="tokens that are whitespace only"),
        color=alt.Color("text:N", legend=alt.Legend(orient="bottom", title=None)),
        tooltip=["tokenizer", "text", "tokens", "whitespace tokens", alt.Tooltip("share:Q", format=".1%")],
    ).properties(height=44 * len(tokenizers) + 30)


# -- special tokens -----------------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=32)
def special_snippet(digest: str, _text: str, specials: tuple[str, ...]) -> str:
    """Some text around the first special-token text in the corpus ("" when there is none)."""
    found = [(_text.find(s), s) for s in specials if s in _text]
    if not found:
        return ""
    at, special = min(found)
    return _text[max(0, at - SNIPPET_CHARS):at + len(special) + SNIPPET_CHARS]


def special_rows(tokenizers: dict[str, BPETokenizer], names: dict[str, str], text: str) -> pd.DataFrame:
    rows = []
    for label, tok in tokenizers.items():
        found = special_readings(tok, text)
        rows.append({"tokenizer": label, "read as text": joined(found.as_text.tokens),
                     "tokens": len(found.as_text.ids),
                     "read as special (ids)": " ".join(map(str, found.as_special)) or "— (none of its own)",
                     "its library, by default": LIBRARY_DEFAULTS.get(names.get(label, ""), "—")})
    return pd.DataFrame(rows)


def all_specials(tokenizers: dict[str, BPETokenizer]) -> tuple[str, ...]:
    return tuple(special_strings(tokenizers.values()))


# -- a trailing space ---------------------------------------------------------------------------
def boundary_rows(tokenizers: dict[str, BPETokenizer], prompt: str, continuation: str) -> pd.DataFrame:
    rows = []
    for label, tok in tokenizers.items():
        found = prompt_boundary(tok, prompt, continuation)
        rows.append({"tokenizer": label, "prompt": joined(found.prompt.tokens),
                     "prompt + continuation": joined(found.joined.tokens),
                     "kept": f"{found.kept} of {len(found.prompt.ids)}",
                     "cut otherwise": joined(found.lost) or "—"})
    return pd.DataFrame(rows)


# -- formats ------------------------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=32)
def corpus_records(digest: str, _text: str) -> list[dict] | None:
    """The corpus's records when it is itself a JSON array of flat objects, else ``None``."""
    if not regex.match(r"\s*\[", _text[:100]):
        return None
    try:
        return read_records(_text)
    except ValueError:
        return None


def format_frame(tokenizers: dict[str, BPETokenizer], records: list[dict], key: str) -> pd.DataFrame:
    """Tokens and characters per format and tokenizer (``key``: the records' hash)."""
    rows = []
    for label, tok in tokenizers.items():
        costs = _answer(tok, ("formats", key), lambda tok=tok: format_costs(records, {"t": tok})["t"])
        rows += [{"tokenizer": label, "format": fmt, "tokens": cell["tokens"],
                  "characters": cell["characters"]} for fmt, cell in costs.items()]
    return pd.DataFrame(rows)


def format_chart(frame: pd.DataFrame) -> alt.Chart:
    tokenizers = list(dict.fromkeys(frame["tokenizer"]))
    return alt.Chart(frame).mark_bar().encode(
        y=alt.Y("format:N", sort=list(FORMATS), title=None),
        yOffset=alt.YOffset("tokenizer:N", sort=tokenizers),
        x=alt.X("tokens:Q", title="tokens for the same records"),
        color=alt.Color("tokenizer:N", sort=tokenizers, legend=alt.Legend(orient="bottom", title=None,
                                                                          columns=3, labelLimit=220)),
        tooltip=["format", "tokenizer", "tokens", "characters"],
    ).properties(height=len(FORMATS) * (14 * len(tokenizers) + 8))
