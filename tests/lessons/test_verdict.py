"""core.lessons.verdict: a prediction is read, checked against core's answer with the station's
tolerance, recorded, and answered with the station's feedback filled from core's facts."""

import pytest

from core.lessons import (Answer, LessonError, ProgressStore, answer_station, explanation, hint, is_right,
                          load_path, read_given)

PATH = load_path()
BYTES = PATH.station("01_characters_bytes_tokens")   # an exact count
SHAKESPEARE = PATH.station("04_shakespeare")         # a number within 15%
FIRST = PATH.station("02_first_merge")               # a choice
OWNER = "alice-0123456789ab"


def test_a_choice_must_be_one_of_the_choices():
    assert read_given(FIRST, "l + o").text == "l + o"
    for bad in ("l+o", "", None, 3):
        with pytest.raises(LessonError, match="Pick one of the choices"):
            read_given(FIRST, bad)


@pytest.mark.parametrize("raw", ["abc", None, float("nan"), float("inf"), 1e13, "1e999"])
def test_a_number_must_be_a_finite_number(raw):
    with pytest.raises(LessonError):
        read_given(BYTES, raw)


@pytest.mark.parametrize("given, right", [(17, True), ("17", True), (16, False), (18, False), (17.4, False)])
def test_an_exact_count_is_right_only_when_exact(given, right):
    assert is_right(BYTES, read_given(BYTES, given), Answer(17, {})) is right


@pytest.mark.parametrize("given, right", [(2.29, True), (2.0, True), (2.6, True), (1.9, False), (2.7, False)])
def test_an_estimate_is_right_within_the_tolerance(given, right):
    assert SHAKESPEARE.question.tolerance == 0.15
    assert is_right(SHAKESPEARE, read_given(SHAKESPEARE, given), Answer(2.29, {})) is right


def test_a_wrong_number_hears_higher_or_lower_then_the_hint():
    answer = Answer(17, {"text": "", "chars": "12", "bytes": "17", "wide": "", "gpt4_tokens": "6",
                         "gpt4_pieces": ""})
    assert hint(BYTES, answer, read_given(BYTES, 30)).startswith("The answer is lower. Count one byte")
    assert hint(BYTES, answer, read_given(BYTES, 12)).startswith("The answer is higher.")


def test_the_feedback_fills_the_station_s_text_from_core_s_facts(tmp_path):
    verdict = answer_station(ProgressStore(tmp_path), OWNER, FIRST, "e + s")
    assert not verdict.right and not verdict.progress.done
    assert verdict.feedback == FIRST.question.hint  # no {facts} in this hint
    verdict = answer_station(ProgressStore(tmp_path), OWNER, FIRST, "l + o")
    assert verdict.right and verdict.progress.done and verdict.answer.value == "l + o"
    assert verdict.feedback == explanation(FIRST, verdict.answer)
    assert "6 pairs occur 2 times each: l + o, o + w, w + e, e + s, s + t, t + </w>" in verdict.feedback
    assert "the first new token is lo." in verdict.feedback


def test_escaping_applies_to_core_s_facts_not_the_teacher_s_markdown():
    answer = Answer("l + o", {"count": "2", "tied": "a_b", "tied_count": "1", "new_token": "*"})
    text = explanation(FIRST, answer, escape=lambda s: s.replace("_", "\\_").replace("*", "\\*"))
    assert "a\\_b" in text and "\\*" in text
