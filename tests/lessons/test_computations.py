"""Each station's answer is what ``core`` computes on the station's data: the registry's answer
for every station file, against core called directly on the same corpus and settings (and the
figures of the BPE tutorial and the mygpt book the stations come from, where they give one)."""

import pytest

from core import BPETokenizer
from core.bpe.compare import script_costs
from core.bpe.display import visible
from core.corpus import read_corpus, sample_corpora
from core.lessons import AnswerNotReady, LessonError, StationData, compute_answer, load_path
from core.lessons.computations import COMPUTATIONS
from tests.conftest import shared_path
from tests.lessons.room_fixtures import GPT_STATION, finished_room_runs

PATH = load_path()


def sample(name: str) -> str:
    return read_corpus(sample_corpora()[name])


def _bytes(station) -> object:
    text = station.question.args["text"]
    return len(text.encode("utf-8"))  # naïve café 👋: 12 characters, 17 bytes


def _first_merge(station) -> object:
    tok = BPETokenizer.from_text(sample("low lower newest widest"), 1, variant="word")
    step = tok.trace[0]
    return f"{tok.token_str(step.left)} + {tok.token_str(step.right)}"


def _split_words(station) -> object:
    tok = BPETokenizer.from_text(sample("sennrich"), 10, variant="word")
    assert tok.tokenize("slow") == ["s", "low</w>"]  # the tutorial's figures
    assert tok.tokenize("lowest") == ["low", "e", "s", "t", "</w>"]
    return "; ".join(f"{w} → {' · '.join(tok.tokenize(w))}" for w in ("lowest", "slow"))


def _compression(station) -> object:
    text = shared_path("corpora", "tinyshakespeare.txt").read_text(encoding="utf-8")
    tok = BPETokenizer.from_text(text, 512)
    assert len(tok.encode(text)) == 487_961  # the mygpt book's figure: 2.29x
    return round(len(text) / 487_961, 2)


def _costliest(station) -> object:
    gpt4 = BPETokenizer.from_pretrained("cl100k_base")
    text = sample("multilingual and emoji")
    costs = [c for c in script_costs(text, gpt4.encode_tokens(text)) if c.script != "Emoji & symbols"]
    return max(costs, key=lambda c: c.tokens_per_char).script


def _first_new_token(station) -> object:
    gpt4 = BPETokenizer.from_pretrained("cl100k_base")
    extended = gpt4.extended(sample("python source"), station.data().merges)
    return visible(extended.token_str(extended.trace[0].new_id))


EXPECTED = {"01_characters_bytes_tokens": _bytes, "02_first_merge": _first_merge,
            "03_end_of_word": _split_words, "04_shakespeare": _compression,
            "05_languages": _costliest, "06_extend_gpt4": _first_new_token}
SLOW = {"04_shakespeare"}


@pytest.mark.parametrize("station_id", [pytest.param(i, marks=pytest.mark.slow) if i in SLOW else i
                                        for i in EXPECTED])
def test_each_station_s_answer_is_core_s_on_its_data(station_id):
    station = PATH.station(station_id)
    answer = compute_answer(station)
    assert answer.value == EXPECTED[station_id](station)
    if station.question.choices:
        assert answer.value in station.question.choices  # an attendee can pick it
    assert set(station.question.computation.facts) <= set(answer.facts)  # and the tool's, quoted in why


def test_every_station_is_covered():
    insight_stations = {"08_vocabulary_size", "09_what_a_language_pays"}  # test_insight_questions.py
    token_stations = {"10_spelling", "11_numbers", "12_formats"}  # test_token_questions.py
    chat_stations = {"13_chat_templates"}  # test_chat_questions.py
    covered = set(EXPECTED) | {GPT_STATION} | insight_stations | token_stations | chat_stations
    assert covered == {s.id for s in PATH.stations}


@pytest.mark.parametrize("char_bpc, bpe_bpc, winner", [(2.4, 2.1, "bpe"), (2.0, 2.3, "char")])
def test_the_gpt_station_reads_the_room_s_runs_own_metrics(tmp_path, char_bpc, bpe_bpc, winner):
    station = PATH.station(GPT_STATION)
    with pytest.raises(AnswerNotReady, match="not trained yet"):
        compute_answer(station, tmp_path)
    finished_room_runs(tmp_path, char_bpc, bpe_bpc)
    answer = compute_answer(station, tmp_path)
    assert answer.value == winner
    assert (answer.facts["char_bpc"], answer.facts["bpe_bpc"]) == (f"{char_bpc:.3f}", f"{bpe_bpc:.3f}")
    assert answer.facts["steps"] == "400" and answer.facts["held_out_chars_per_token"] == "2.30"


def test_the_gpt_station_waits_while_the_runs_train(tmp_path):
    from core.runfolder.status import write_status

    paths = finished_room_runs(tmp_path)
    write_status(paths["bpe"], "queued")
    with pytest.raises(AnswerNotReady, match="still training .*BPE: queued"):
        compute_answer(PATH.station(GPT_STATION), tmp_path)
    write_status(paths["bpe"], "failed")
    with pytest.raises(AnswerNotReady, match="failed: the instructor can resume it"):
        compute_answer(PATH.station(GPT_STATION), tmp_path)


def test_a_corpus_the_app_does_not_have_is_refused():
    with pytest.raises(LessonError, match="not a corpus this app has"):
        StationData(corpus="file:/etc/passwd").text()


def test_nothing_to_merge_is_a_message():
    data = StationData(corpus="sample:the cat sat", start="cl100k_base", merges=5)
    with pytest.raises(LessonError, match="no pair to merge"):
        COMPUTATIONS["first_new_token"].run(data)


SAMPLES = sorted(sample_corpora())


@pytest.mark.parametrize("name", SAMPLES)
@pytest.mark.parametrize("compute", ["first_merge", "compression", "split_words"])
@pytest.mark.parametrize("variant", ["char", "word", "byte"])
def test_every_sample_s_script_gets_an_answer_or_a_plain_message(name, compute, variant):
    """Every script the samples hold (accents, Cyrillic, Greek, Hangul, Han, Kana, Arabic, emoji,
    code) goes through the computations a station may point at them."""
    text = sample(name)
    words = text.split()[:2] + ["👩‍💻", "세계"]
    data = StationData(corpus=f"sample:{name}", variant=variant, merges=5, args={"words": words})
    try:
        answer = COMPUTATIONS[compute].run(data)
    except LessonError as exc:  # e.g. a corpus with no pair to merge
        assert "no pair to merge" in str(exc)
        return
    assert answer.shown and all(isinstance(v, str) for v in answer.facts.values())


@pytest.mark.parametrize("name", SAMPLES)
def test_every_sample_extends_gpt4_or_says_there_is_nothing_to_merge(name):
    data = StationData(corpus=f"sample:{name}", start="cl100k_base", merges=3)
    try:
        answer = COMPUTATIONS["first_new_token"].run(data)
    except LessonError as exc:
        assert "no pair to merge" in str(exc)
        return
    assert answer.facts["example"] and answer.facts["example_cut"]
