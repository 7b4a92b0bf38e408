"""The Tokenizer questions page's "why are language models weird" sections, one per question:
spelling, numbers, code and whitespace, special tokens in text, a trailing space, JSON or YAML.
Each is computed on the sidebar's corpus (a built-in example where the corpus has nothing the
question is about) under every tokenizer given, and says in one line what it does to a model.

Leaves out: the answers and their caching (``ui.views.questions_view``, over ``core.insights``).
"""

from __future__ import annotations

import hashlib
import json

import streamlit as st

from core import BPETokenizer
from core.insights.corpus_answers import MOST_WORDS, CorpusQuestions
from core.insights.formats import FORMAT_HELP, MAX_RECORDS_BYTES, SAMPLE_RECORDS, read_records, yaml_verdict

from ..plumbing import state
from ..plumbing.charts import vega_spec
from ..plumbing.render import md_safe, plural, show_error, show_table
from . import questions_view as qv

APP_READS_SPECIALS = (
    "**What this app does with it:** Compare tokenizers, Char vs BPE and this page read your text as "
    "ordinary text, so a pasted special token's text is cut into pieces there, never made the special "
    "token. Learn BPE, when it starts from a real tokenizer, keeps that tokenizer's special tokens in "
    "your corpus as one token each, never merged: the document boundaries they are in its own training.")


READ_CHARS = 1_000_000  # of the corpus: what a job worker reads for the answers within the job's time
# bound (docs/benchmarks.md, "Tokenizer questions"), whatever an attendee pasted
EXAMPLE_PROMPT = ("Hello ", "world")


def show(tokenizers: dict[str, BPETokenizer], names: dict[str, str], corpus_name: str, text: str,
         digest: str) -> None:
    """Every section, in the order people ask the questions (``names``: label -> real name), on
    the corpus's first ``READ_CHARS`` characters; the sections' boxes filled from the corpus
    (until the attendee types into them, or the corpus changes)."""
    if len(text) > READ_CHARS:
        st.caption(f"Your corpus has {len(text):,} characters: these questions read its first "
                   f"{READ_CHARS:,}.")
        text, digest = text[:READ_CHARS], f"{digest}:{READ_CHARS}"
    found = qv.corpus_questions(tokenizers, names, text, digest)
    if found is None:  # a job worker reads the corpus: its progress bar is drawn
        return
    seen = found.findings
    prompt, rest = seen.prompt if seen.prompt[0] else EXAMPLE_PROMPT
    state.follow_corpus(digest, {"questions_special_text": seen.special_snippet or qv.SPECIAL_EXAMPLE,
                                 "questions_prompt": prompt, "questions_continuation": rest,
                                 "questions_records": ""})
    spelling_section(tokenizers, found)
    numbers_section(tokenizers, names, found, len(text))
    whitespace_section(tokenizers, corpus_name, found)
    specials_section(tokenizers, names, found)
    boundary_section(tokenizers, found)
    formats_section(tokenizers, names, found)


def spelling_section(tokenizers, found: CorpusQuestions) -> None:
    st.subheader("Why can't a model spell, or count the r's in a word?")
    word = st.text_input("A word", **state.keep("questions_word", default=qv.EXAMPLE_WORD),
                         help="The word of the famous question, to start with; try one of your corpus's "
                              "(below: those a space or a capital cuts otherwise).").strip()
    try:
        letters = sorted({c.lower() for c in word if c.isalpha()}, key=lambda c: -word.lower().count(c))
        letter = state.choice(st.selectbox, "Count the letter", letters, key="questions_letter",
                              allowed=letters) if letters else ""
        show_table(qv.spelling_rows(tokenizers, word, letter or ""), f"{word}, cut by each tokenizer")
    except ValueError as exc:
        show_error(exc)
        return
    counting = f"to count the {letter!r}s in {md_safe(word)}" if letter else f"to spell {md_safe(word)}"
    st.caption(f"A model is given the ids of these tokens, not their letters: {counting} it must have "
               f"learned what each id spells, and the same word is other ids after a space (␣word), with a "
               f"capital, or in capitals.")
    label = state.choice(st.selectbox, "Your corpus's words, cut by", list(tokenizers),
                         key="questions_words_of", allowed=tokenizers)
    cuts = found.answers[label].words
    # a sentence, not metric tiles: a tile a third of an 800 px column cut "Cut otherwise after a s…"
    st.markdown(f"Of the corpus's **{plural(cuts.words, 'word')}** checked (its {MOST_WORDS:,} most "
                f"frequent at most), **{cuts.by_space / max(1, cuts.words):.0%}** are cut into other tokens "
                f"after a space (␣word), and **{cuts.by_capital / max(1, cuts.words):.0%}** with a capital.")
    if cuts.examples:
        st.caption("The most frequent of them: " + ", ".join(md_safe(w) for w in cuts.examples) + ".")


def numbers_section(tokenizers, names: dict[str, str], found: CorpusQuestions, size: int) -> None:
    st.subheader("Why is a model bad at arithmetic?")
    st.caption(f"The numbers of a built-in sentence: “{qv.NUMBER_EXAMPLE}”")
    show_table(qv.number_rows(qv.example_numbers(tokenizers)), "The sentence's numbers, by tokenizer")
    if not found.findings.has_numbers:
        st.caption("Your corpus has no numbers of its own.")
    else:
        st.caption("Your corpus's most frequent numbers, each a run of digits: a comma or a point ends one "
                   "(1,284.5 is three), and every tokenizer here cuts there too.")
        show_table(qv.number_rows({label: a.numbers for label, a in found.answers.items()}),
                   "Your corpus's numbers, cut by each tokenizer")
    frame = qv.grouping_frame(tokenizers, names, size)
    if frame is not None:  # else a job worker counts them: its progress bar is drawn
        st.vega_lite_chart(vega_spec("number groupings", frame, qv.grouping_chart), width="stretch")
    st.caption("Each integer from 0 to 9,999 written plainly, by how its digits are grouped into tokens "
               "(3-1: `202 · 4`). Where the groups change from one number to the next, the same place "
               "value (units, tens) sits in a different token, at a different position.")
    c = st.columns(2)
    a = c[0].number_input("a", 0, 10**15, **state.keep("questions_a", default=12345))
    b = c[1].number_input("b", 0, 10**15, **state.keep("questions_b", default=678))
    st.code(qv.aligned_sum(tokenizers, int(a), int(b)), language=None)
    st.caption("The addition as each tokenizer cuts each number, digits aligned by place value; `|` where "
               "a token ends. The model adds ids, not digits: the digits it must line up sit in tokens "
               "that do not line up.")


def whitespace_section(tokenizers, corpus_name: str, found: CorpusQuestions) -> None:
    st.subheader("Why did GPT-2 struggle with Python?")
    shown = {label: tok for label, tok in tokenizers.items() if tok.variant != "word"}
    if len(shown) < len(tokenizers):
        st.caption("A word tokenizer is left out: it splits words at whitespace, so none of its tokens is "
                   "whitespace.")
    frame = qv.whitespace_frame(shown, found, f"your corpus ({corpus_name})"[:60])
    st.vega_lite_chart(vega_spec("whitespace", frame, qv.whitespace_chart), width="stretch")
    show_table(frame, "Whitespace tokens by tokenizer", {"share": "{:.1%}"})
    st.caption("Tokens whose text is whitespace only (indentation, runs of spaces, new lines), on your "
               "corpus and on a built-in Python file. Each is a step of the model's context spent on "
               "spaces: GPT-2 has a token for one space, not for a run of them.")


def specials_section(tokenizers, names: dict[str, str], found: CorpusQuestions) -> None:
    st.subheader("Why does a model stop at the text `<|endoftext|>`?")
    if not found.findings.special_snippet:
        st.caption("Your corpus holds no special token's text: a built-in example instead.")
    else:
        st.caption("From your corpus: its first special token's text, with what stands around it.")
    shown = st.text_input("Text", **state.keep("questions_special_text"))
    show_table(qv.special_rows(tokenizers, names, shown), "The text, read by each tokenizer")
    st.caption("Read as text, the special token's characters are a few ordinary tokens; read as the "
               "special token, they are one id that the model was trained to see only where a document "
               "ends, so what comes after it is a new document to the model.")
    st.markdown(APP_READS_SPECIALS)


def boundary_section(tokenizers, found: CorpusQuestions) -> None:
    st.subheader("Why the warning about a trailing space?")
    if found.findings.prompt[0]:
        st.caption("From your corpus: its first line's start, cut after a space, and the word after it.")
    else:
        st.caption("Your corpus has no line with a space to end a prompt on: a built-in example instead.")
    c = st.columns(2)
    prompt = c[0].text_input("Prompt", **state.keep("questions_prompt"))
    rest = c[1].text_input("Continuation", **state.keep("questions_continuation"))
    show_table(qv.boundary_rows(tokenizers, prompt, rest), "The prompt and its continuation, by tokenizer")
    st.caption("The prompt's last tokens that its continuation cuts otherwise: a prompt ending in a space "
               "hands the model a lone space token where its training text mostly had a space joined to "
               "the next word. Token healing removes those tokens and lets the model write them again.")


def formats_section(tokenizers, names: dict[str, str], found: CorpusQuestions) -> None:
    st.subheader("Why prefer YAML to JSON?")
    records, where = found.findings.records, "your corpus"
    raw = st.text_area("Your own JSON (an array of flat objects)", height=100,
                       help=f"At most {MAX_RECORDS_BYTES >> 10} KiB. Left empty: your corpus if it is such "
                            "JSON, else a built-in sample.", **state.keep("questions_records"))
    if raw.strip():
        try:
            records, where = read_records(raw, "the JSON"), "your JSON"
        except ValueError as exc:
            show_error(exc)
            return
    if records is None:
        records, where = SAMPLE_RECORDS, "a built-in sample"
    key = hashlib.blake2b(json.dumps(records).encode(), digest_size=12).hexdigest()
    costs = qv.format_costs_of(tokenizers, names, records, key)
    if costs is None:  # a job worker counts them: its progress bar is drawn
        return
    frame = qv.format_frame(costs)
    st.markdown(md_safe(yaml_verdict({label: {fmt: cell["tokens"] for fmt, cell in formats.items()}
                                      for label, formats in costs.items()})))
    st.vega_lite_chart(vega_spec("formats", frame, qv.format_chart), width="stretch")
    label = next((t for t in tokenizers if t.startswith("GPT-4 ")), next(iter(tokenizers)))
    gpt = frame[frame["tokenizer"] == label].set_index("format")["tokens"]
    st.caption(f"{plural(len(records), 'record')} from {where}. A model's context and its price are counted "
               f"in tokens: under {md_safe(label)} the same records take {gpt.max():,} tokens as "
               f"{gpt.idxmax()} and {gpt.min():,} as {gpt.idxmin()}.")
    with st.expander("How each format is written"):
        st.markdown("\n".join(f"- **{fmt}**: `{how}`" for fmt, how in FORMAT_HELP.items()))
