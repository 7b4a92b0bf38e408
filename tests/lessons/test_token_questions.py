"""The spelling, numbers and formats stations (core.lessons.token_questions): each answer and the
tokens its feedback names are the library's (tiktoken for GPT-4, quicktok for Qwen 3), encoded
directly, not through core; a wrong prediction's hint names tokens."""

import json

import pytest
import yaml

from core.bpe.display import visible
from core.insights.formats import FORMATS, SAMPLE_RECORDS, written
from core.lessons import COMPUTATIONS, LessonError, StationData, compute_answer, hint, load_path, read_given
from tests.insights.references import reference_encoding, reference_tokens

PATH = load_path()
SPELLING, NUMBERS, FORMATS_STATION = "10_spelling", "11_numbers", "12_formats"


def shown(enc, text: str) -> str:
    """``text`` as the library cuts it, drawn as the stations draw tokens."""
    return " · ".join(visible(t) for t in reference_tokens(enc, enc.encode_ordinary(text)))


def wrong(station, answer):
    if station.question.choices:
        return read_given(station, next(v for v in station.question.choices if v != answer.value))
    return read_given(station, float(answer.value) + 1)


def test_the_spelling_station_counts_the_library_s_tokens():
    station = PATH.station(SPELLING)
    args = station.question.args
    enc = reference_encoding(args["tokenizer"])
    word, letter = args["word"], args["letter"]
    answer = compute_answer(station)
    tokens = reference_tokens(enc, enc.encode_ordinary(word))
    assert answer.value == len(tokens)
    assert answer.facts["tokens"] == shown(enc, word)
    assert answer.facts["spaced"] == shown(enc, " " + word)
    assert answer.facts["capital"] == shown(enc, word[0].upper() + word[1:])
    assert answer.facts["upper"] == shown(enc, word.upper())
    assert answer.facts["reversed"] == shown(enc, word[::-1])
    assert answer.facts["places"] == " · ".join(f"{visible(t)}: {t.lower().count(letter)}" for t in tokens)
    hidden = sum(len(t) for t in tokens if len(t) >= 2)
    assert (answer.facts["hidden"], answer.facts["letters"]) == (f"{hidden:,}", f"{len(word):,}")
    assert answer.facts["spaced"] in hint(station, answer, wrong(station, answer))


def test_the_spelling_station_counts_the_word_s_most_frequent_letter_by_default():
    answer = COMPUTATIONS["word_tokens"].run(StationData(args={"word": "banana"}))
    assert answer.facts["letter"] == "a"  # three a's, two n's
    with pytest.raises(LessonError, match="args.word"):
        COMPUTATIONS["word_tokens"].run(StationData(args={"word": "two words"}))


def _digits_per_token(tokens) -> str:
    return "-".join(str(sum(c.isdigit() for c in t)) for t in tokens if any(c.isdigit() for c in t))


def test_the_numbers_station_groups_the_digits_as_the_library_cuts_them():
    station = PATH.station(NUMBERS)
    args = station.question.args
    enc, compare = reference_encoding(args["tokenizer"]), reference_encoding(args["compare"])
    answer = compute_answer(station)
    number = args["number"]
    assert answer.value == _digits_per_token(reference_tokens(enc, enc.encode_ordinary(number)))
    assert answer.value in station.question.choices
    assert answer.facts["tokens"] == shown(enc, number)
    assert answer.facts["spaced"] == shown(enc, " " + number)
    assert answer.facts["example_tokens"] == shown(enc, args["example"])
    assert answer.facts["compare_tokens"] == shown(compare, number)
    numbers = [str(n) for n in range(10, 10_000)]
    longer = [reference_tokens(enc, ids) for ids in enc.encode_ordinary_batch(numbers)]
    alone = sum(_digits_per_token(tokens).endswith("-1") for tokens in longer)
    assert answer.facts["units_alone"] == f"{alone / len(longer):.0%}"
    assert answer.facts["upto"] == "9,999"
    assert answer.facts["example_tokens"] in hint(station, answer, wrong(station, answer))


def test_a_number_that_is_not_digits_is_refused():
    with pytest.raises(LessonError, match="digits 0-9"):
        COMPUTATIONS["digit_groups"].run(StationData(args={"number": "12.5"}))


LIBRARY_WRITERS = {"json": lambda r: json.dumps(r, indent=2, ensure_ascii=False),
                   "json_compact": lambda r: json.dumps(r, separators=(",", ":"), ensure_ascii=False),
                   "yaml": lambda r: yaml.safe_dump(r, sort_keys=False, allow_unicode=True)}


def test_the_formats_station_finds_the_cheapest_format_by_the_library_s_count():
    station = PATH.station(FORMATS_STATION)
    args = station.question.args
    enc = reference_encoding(args["tokenizer"])
    answer = compute_answer(station)

    def text(fmt: str, records=SAMPLE_RECORDS) -> str:
        return LIBRARY_WRITERS.get(fmt, lambda r: written(r, fmt))(records)

    tokens = {fmt: reference_tokens(enc, enc.encode_ordinary(text(fmt))) for fmt in FORMATS}
    assert answer.value == min(args["formats"], key=lambda fmt: len(tokens[fmt]))
    assert answer.value in station.question.choices
    for fmt in FORMATS:
        assert answer.facts[f"{fmt}_tokens"] == f"{len(tokens[fmt]):,}", fmt
        assert answer.facts[f"{fmt}_whitespace"] == f"{sum(t.isspace() for t in tokens[fmt]):,}", fmt
        assert answer.facts[f"{fmt}_record"] == shown(enc, text(fmt, SAMPLE_RECORDS[:1])), fmt
    assert answer.facts["table"].split(", ") == [f"{fmt} {len(tokens[fmt]):,}"
                                                 for fmt in sorted(FORMATS, key=lambda f: len(tokens[f]))]
    assert answer.facts["yaml_record"] in hint(station, answer, wrong(station, answer))


def test_formats_that_are_not_the_page_s_are_refused():
    with pytest.raises(LessonError, match="at least two of"):
        COMPUTATIONS["cheapest_format"].run(StationData(args={"formats": ["json", "toml"]}))


@pytest.mark.parametrize("station_id", [SPELLING, NUMBERS, FORMATS_STATION])
def test_each_station_gives_every_fact_it_declares_and_opens_the_tokenizer_questions(station_id):
    station = PATH.station(station_id)
    answer = compute_answer(station)
    assert set(station.question.computation.facts) <= set(answer.facts)
    assert station.tool.page == "insights"
