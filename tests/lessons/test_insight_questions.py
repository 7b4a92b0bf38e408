"""The tokenizer-question stations (core.lessons.insight_questions): the language station's answer
is core.insights' premium on the parallel corpus; the vocabulary station reads the room's sweep of
GPTs (run folders from room_fixtures, found by what they train, as a launch finds them)."""

import pytest

from core.insights import UDHR_DIR, named_tokenizer, read_parallel, token_count
from core.lessons import AnswerNotReady, compute_answer, load_path
from tests.lessons.room_fixtures import VOCABULARY_STATION as VOCABULARY
from tests.lessons.room_fixtures import finished_sweep_runs

PATH = load_path()
LANGUAGES = "09_what_a_language_pays"


def test_the_language_station_answers_the_highest_premium_under_its_tokenizer():
    station = PATH.station(LANGUAGES)
    answer = compute_answer(station)
    args = station.question.args
    tok, texts = named_tokenizer(args["tokenizer"]), read_parallel(UDHR_DIR)
    premium = {c: token_count(tok, texts[c]) / token_count(tok, texts["eng"]) for c in args["languages"]}
    assert answer.value == max(premium, key=premium.get)
    assert answer.value in station.question.choices
    assert answer.facts["english_tokens"] == f"{token_count(tok, texts['eng']):,}"
    assert set(answer.facts) == set(station.question.computation.facts)


@pytest.mark.slow  # trains the sweep's tokenizer on Tiny Shakespeare, imports torch
def test_the_vocabulary_station_reads_the_room_s_sweep(tmp_path):
    station = PATH.station(VOCABULARY)
    with pytest.raises(AnswerNotReady, match="not trained yet"):
        compute_answer(station, tmp_path)
    finished_sweep_runs(tmp_path, {320: 2.31, 512: 2.22, 1024: 2.40})
    answer = compute_answer(station, tmp_path)
    assert answer.value == "512" and answer.value in station.question.choices
    assert answer.facts["best_bpc"] == "2.220"
    assert answer.facts["share"] == f"{512 * 96 / (300_000 + 96 * 512):.0%}"


@pytest.mark.slow
def test_the_vocabulary_station_waits_while_the_sweep_trains(tmp_path):
    finished_sweep_runs(tmp_path, {320: 2.31, 512: 2.22, 1024: 2.40}, status="queued")
    with pytest.raises(AnswerNotReady, match="still training .*320: step 300 of 300 \\(queued\\)"):
        compute_answer(PATH.station(VOCABULARY), tmp_path)


@pytest.mark.slow
def test_the_vocabulary_station_trains_the_sweep_s_tokenizers_once(tmp_path, monkeypatch):
    """Its answer is asked for at every run of Start here once an attendee answered (the room's runs
    go on training), and the tokenizers it finds them by never change."""
    import core.lessons.insight_questions as questions
    from core.insights import sweep

    trained = []
    monkeypatch.setattr(questions, "sweep_tokenizers", lambda text, sizes: trained.append(sizes)
                        or sweep.sweep_tokenizers(text, sizes))
    questions._sweep_tokenizers.cache_clear()
    finished_sweep_runs(tmp_path, {320: 2.31, 512: 2.22, 1024: 2.40}, status="queued")
    for _ in range(3):
        with pytest.raises(AnswerNotReady, match="still training"):
            compute_answer(PATH.station(VOCABULARY), tmp_path)
    assert trained == [(320, 512, 1024)]
    questions._sweep_tokenizers.cache_clear()
