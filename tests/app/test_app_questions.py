"""AppTest: the Tokenizer questions page's "why are language models weird" sections show
core.insights' answers on the sidebar's corpus (the opening Sennrich sample), with built-in examples
where it has none of what a question is about."""

import json
import re

import pytest

from app_helpers import (job_progress_texts, open_page, paste_box, poll_until_done, table_with,
                         tables_with)
from core import BPETokenizer
from core.bpe.display import visible
from core.insights import (SAMPLE_RECORDS, format_costs, number_groupings, numbers_in_text, prompt_boundary,
                           python_sample, spelling, trailing_space_prompt, whitespace_cost)
from ui.views.questions_sections import APP_READS_SPECIALS, EXAMPLE_PROMPT
from ui.views.questions_view import NUMBER_EXAMPLE, SPECIAL_EXAMPLE

GPT4 = "GPT-4 (cl100k_base)"


@pytest.fixture(scope="module")
def at():
    return open_page("insights", timeout=300)


@pytest.fixture(scope="module")
def gpt4() -> BPETokenizer:
    return BPETokenizer.from_pretrained("cl100k_base")


def chart_rows(at, field: str) -> list[dict]:
    import pyarrow as pa

    for element in at.main.get("vega_lite_chart"):
        spec = json.loads(element.proto.spec)
        fields = {c.get("field") for c in spec.get("encoding", {}).values() if isinstance(c, dict)}
        if field in fields:
            return pa.ipc.open_stream(element.proto.datasets[0].data.data).read_all().to_pylist()
    raise AssertionError(f"no chart of {field}")


def said(at) -> str:
    return " ".join([c.value for c in at.caption] + [m.value for m in at.main.get("markdown")])


@pytest.mark.slow
def test_a_word_in_every_form_with_its_letters(at, gpt4):
    at.text_input(key="w_questions_word").set_value("strawberry").run()
    at.selectbox(key="questions_letter").set_value("r").run()
    rows = table_with(at, "␣word")
    assert rows.loc[GPT4, "word"] == "str · aw · berry" and rows.loc[GPT4, "␣word"] == "␣strawberry"
    assert rows.loc[GPT4, "'r' per token"] == "str: 1 · aw: 0 · berry: 2"
    assert rows.loc[GPT4, "letters inside longer tokens"] == \
        f"{spelling(gpt4, 'strawberry').letters_in_longer_tokens} of 10"
    assert re.search(r"Of the corpus's \*\*[\d,]+ words?\*\* checked .* are cut into other tokens after a "
                     r"space \(␣word\)", said(at))


@pytest.mark.slow
def test_numbers_fall_back_to_the_built_in_sentence_and_chart_every_grouping(at, gpt4):
    assert NUMBER_EXAMPLE in said(at)  # the Sennrich sample has no numbers
    rows = table_with(at, "number")
    assert rows.loc["␣2024", GPT4].startswith("␣ · 202 · 4")
    bars = [r for r in chart_rows(at, "grouping") if r["tokenizer"] == GPT4]
    expected = number_groupings(gpt4).groupings
    assert {r["grouping"]: r["integers"] for r in bars} == {"-".join(map(str, g)): n
                                                            for g, n in expected.items()}
    assert "1 2 3|4 5" in at.code[0].value


@pytest.mark.slow
def test_whitespace_shares_are_core_s(at, gpt4):
    rows = [r for r in chart_rows(at, "share") if r["tokenizer"] == GPT4 and r["text"].startswith("Python")]
    found = whitespace_cost(gpt4, python_sample())
    assert rows[0]["whitespace tokens"] == found.whitespace_tokens and rows[0]["tokens"] == found.tokens


@pytest.mark.slow
def test_special_token_text_is_read_both_ways_and_the_app_says_what_it_does(at, gpt4):
    at.text_input(key="w_questions_special_text").set_value("<|endoftext|>").run()
    rows = table_with(at, "read as special (ids)")
    assert rows.loc[GPT4, "read as special (ids)"] == "100257"
    as_text = len(gpt4.encode("<|endoftext|>", allowed_special="none"))
    assert rows.loc[GPT4, "tokens"] == str(as_text) and as_text > 1
    assert rows.loc["Llama 3", "read as special (ids)"].startswith("—")
    assert "refuses" in rows.loc[GPT4, "its library, by default"]
    assert APP_READS_SPECIALS in said(at)


@pytest.mark.slow
def test_a_trailing_space_is_cut_otherwise(at, gpt4):
    at.text_input(key="w_questions_prompt").set_value("Hello ").run()
    at.text_input(key="w_questions_continuation").set_value("world").run()
    rows = table_with(at, "cut otherwise")
    found = prompt_boundary(gpt4, "Hello ", "world")
    assert rows.loc[GPT4, "kept"] == f"{found.kept} of 2" and rows.loc[GPT4, "cut otherwise"] == "␣"


@pytest.mark.slow
def test_formats_cost_core_s_counts_and_bad_json_is_named(at, gpt4):
    bars = {r["format"]: r["tokens"] for r in chart_rows(at, "format") if r["tokenizer"] == GPT4}
    assert bars == {f: c["tokens"] for f, c in format_costs(SAMPLE_RECORDS, {"t": gpt4})["t"].items()}
    at.text_area(key="w_questions_records").set_value('{"not": "an array"}').run()
    assert any("not a JSON array of objects" in e.value for e in at.error)
    at.text_area(key="w_questions_records").set_value('[{"a": 1}, {"a": 2}]').run()
    assert "2 records from your JSON" in said(at)


def test_compare_tokenizers_reads_a_pasted_special_token_as_ordinary_text(gpt4):
    from ui.views.compare_view import _encoded

    text = "a <|endoftext|> b"
    found = _encoded("cl100k_base", GPT4, gpt4, text)
    assert [t.id for t in found.tokens] == gpt4.encode(text, allowed_special="none")
    assert 100257 not in [t.id for t in found.tokens]


def _special_box(at) -> str:
    return at.text_input(key="w_questions_special_text").value


def _prompt_boxes(at) -> tuple[str, str]:
    return at.text_input(key="w_questions_prompt").value, at.text_input(key="w_questions_continuation").value


@pytest.mark.slow
def test_the_boxes_follow_a_new_corpus_and_keep_what_was_typed_until_it_changes():
    """Paste while the page is open: each box shows the new corpus's text (or says it is a
    built-in example), never the last corpus's; what the attendee typed stays until the corpus
    changes again."""
    at = open_page("insights", timeout=300)
    assert _special_box(at) == SPECIAL_EXAMPLE  # the opening sample has no special-token text
    pasted = "Once upon a time the story ended.<|endoftext|>Another began, far away."
    paste_box(at).set_value(pasted).run()
    assert "<|endoftext|>" in _special_box(at) and "story ended" in _special_box(at)
    prompt, rest = trailing_space_prompt(pasted)
    assert prompt.startswith("Once upon a time") and prompt.endswith(" ")
    assert _prompt_boxes(at) == (prompt, rest)
    assert "From your corpus" in said(at)

    at.text_input(key="w_questions_prompt").set_value("My own prompt ").run()
    at.run()
    assert at.text_input(key="w_questions_prompt").value == "My own prompt "  # theirs, run after run

    paste_box(at).set_value("a new line of text").run()
    assert at.text_input(key="w_questions_prompt").value == "a new line of "
    paste_box(at).set_value("nospaces\nanywhere").run()
    assert _special_box(at) == SPECIAL_EXAMPLE
    assert _prompt_boxes(at) == EXAMPLE_PROMPT
    assert "a built-in example instead" in said(at)
    assert not at.exception, [e.message for e in at.exception]


@pytest.mark.slow
def test_a_large_corpus_is_read_by_a_job_worker_and_its_answers_shown(gpt4):
    """Past the inline bound the questions' answers come from jobs (progress bars first: that they
    never run on the page's thread is ``test_page_thread.py``'s), and they are the corpus's own:
    its special-token text, its numbers as core cuts them."""
    text = ("Chapter 31337 opens.<|endoftext|>" + "the model reads 2024 tokens and 777 more; " * 7000)
    at = open_page("insights", timeout=300)
    paste_box(at).set_value(text).run()
    assert job_progress_texts(at)  # the page answers at once, its work with the job workers
    poll_until_done(at)
    assert not at.exception, [e.message for e in at.exception]
    assert _special_box(at).startswith("Chapter 31337 opens.<|endoftext|>")
    [_, rows] = tables_with(at, "times")  # the built-in sentence's numbers, then the corpus's
    assert rows.loc["␣2024", "times"] == "7,000"
    [cut] = [n for n in numbers_in_text(gpt4, text) if n.text == " 2024"]
    assert rows.loc["␣2024", GPT4].startswith(" · ".join(visible(t) for t in cut.cut.tokens))


PALETTES = {None: 10, "tableau10": 10, "tableau20": 20, "category10": 10, "category20": 20}


@pytest.mark.slow
def test_every_chart_gives_each_category_its_own_colour_and_names_every_row(at):
    """Read on each chart's spec: a colour per category (no more categories than the palette
    has), and every row of a band axis named (no label dropped for overlap, none cut short)."""
    import pyarrow as pa

    checked = 0
    for element in at.main.get("vega_lite_chart"):
        spec = json.loads(element.proto.spec)
        colour = spec.get("encoding", {}).get("color", {}) if "encoding" in spec else {}
        if colour.get("type") == "nominal":
            rows = pa.ipc.open_stream(element.proto.datasets[0].data.data).read_all().to_pylist()
            categories = {r[colour["field"]] for r in rows}
            scale = colour.get("scale", {})
            room = len(scale["range"]) if "range" in scale else PALETTES[scale.get("scheme")]
            assert len(categories) <= room, (colour["field"], sorted(categories))
            checked += 1
        y = spec.get("encoding", {}).get("y", {})
        if y.get("type") == "nominal":
            assert y.get("axis", {}).get("labelOverlap") is False, y
            assert y["axis"].get("labelLimit", 0) == 0, y  # 0: never cut
    assert checked >= 3  # the groupings, the whitespace shares, the formats


@pytest.mark.slow
def test_a_word_typed_as_html_stays_text_in_its_table(at):
    """A comparison table is drawn with HTML allowed (its box scrolls sideways and takes the
    keyboard's focus: ``ui.plumbing.render.show_table``): what a visitor types into it is text."""
    word = '<img/src=x/onerror=alert(1)>"'
    at.text_input(key="w_questions_word").set_value(word).run()
    [box] = [m for m in at.main.get("markdown") if "bpe-table" in m.value and "reversed" in m.value]
    assert box.proto.allow_html and "<img" not in box.value and "&lt;img" in box.value
    assert table_with(at, "␣word").loc[GPT4, "␣word"].replace(" · ", "") == "␣" + word
    at.text_input(key="w_questions_word").set_value("strawberry").run()  # as the module's other tests expect
