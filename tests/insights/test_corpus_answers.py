"""What the questions read from a whole corpus (core.insights.corpus_answers), gathered in one pass:
each part equals the answer of its own module, for every tokenizer, and the text's findings say
what a corpus has (special-token text, a line to cut a prompt from, records) or that it has none."""

from __future__ import annotations

import json

from core.bpe import BPETokenizer
from core.insights import number_groupings, numbers_in_text, trailing_space_prompt, whitespace_cost
from core.insights.corpus_answers import (MOST_NUMBERS, MOST_WORDS, corpus_questions, text_findings,
                                          tokenizer_answers)
from core.insights.spelling import words_cut_differently
from core.insights import question_jobs

TEXT = ("The shop sold 12345678 apples in 2024.\n    def f(x):\n        return x  # indented\n"
        "One story ends here.<|endoftext|>The next one begins. Hello world again.\n") * 20


def test_each_answer_is_its_own_module_s():
    tok = BPETokenizer.from_text(TEXT, 60, variant="byte", pattern="gpt4")
    found = tokenizer_answers(tok, TEXT)
    assert found.words == words_cut_differently(tok, TEXT, MOST_WORDS)
    assert found.numbers == numbers_in_text(tok, TEXT, MOST_NUMBERS)
    assert found.whitespace == whitespace_cost(tok, TEXT)


def test_the_text_s_findings_or_their_absence():
    found = text_findings(TEXT, ("<|endoftext|>",))
    assert found.special_snippet == "One story ends here.<|endoftext|>The next one begins. Hello world again."
    assert found.prompt == trailing_space_prompt(TEXT) and found.prompt[0].endswith(" ")
    assert found.has_numbers and found.records is None
    none = text_findings("nothing special", ("<|endoftext|>",))
    assert none.special_snippet == "" and not none.has_numbers
    records = [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Alan"}]
    assert text_findings(json.dumps(records, indent=2), ()).records == records


def test_a_job_worker_is_given_real_tokenizers_by_name_and_finds_the_same():
    """What ``question_jobs.questions`` computes from names equals what the page computes inline
    from the tokenizers themselves."""
    gpt4 = BPETokenizer.from_pretrained("cl100k_base")
    inline = corpus_questions(TEXT, {"GPT-4": gpt4}, ("<|endoftext|>",))
    by_name = question_jobs.questions(TEXT, {"GPT-4": "cl100k_base"}, ("<|endoftext|>",))
    assert by_name == inline
    assert question_jobs.with_tokenizer(number_groupings, "cl100k_base") == number_groupings(gpt4)


def test_the_answers_carry_the_numbers_the_page_shows_and_no_more():
    """A large corpus's answers come back from a job worker and are read on the page's thread:
    its most frequent numbers, as many as the page's table shows, most frequent first."""
    from ui.views.questions_view import number_rows

    text = " ".join(f"{n} " * (200 - n) for n in range(100, 200))  # 100 numbers, 100 the most frequent
    found = tokenizer_answers(BPETokenizer.from_text(TEXT, 60, variant="byte", pattern="gpt4"), text)
    assert [n.text.strip() for n in found.numbers] == [str(n) for n in range(100, 100 + MOST_NUMBERS)]
    assert len(number_rows({"yours": found.numbers})) == len(found.numbers)
