"""core.lessons.content: the station files are read in order, and a file with a mistake is left
out with a message that names the file and the problem, never a traceback."""

from pathlib import Path

import pytest

from core.lessons import COMPUTATIONS, StationFileError, load_path, read_station
from core.lessons.content import PAGES, PATH_FILE, station_files
from ui.plumbing.navigation import PAGES as NAVIGATION

ROOT = Path(__file__).resolve().parents[2]
GOOD = '''
title = "The BPE loop"
text = "Two sentences. Here."

[question]
ask = "Which pair first?"
compute = "first_merge"
choices = ["e + s", "l + o"]
why = "{answer} occurs {count} times."

[tool]
page = "learn_bpe"
label = "Step it"
do = "Press Next."
params = { corpus = "sample:low lower newest widest", variant = "word", merges = 10 }
'''


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_path_has_every_station_in_file_order():
    path = load_path()
    assert not path.problems, path.problems
    assert [s.number for s in path.stations] == list(range(1, len(station_files()) + 1))
    assert [s.id for s in path.stations] == [p.stem for p in station_files()]
    assert path.title == "Start here" and path.intro
    assert {s.question.compute for s in path.stations} == set(COMPUTATIONS)  # each computation used


def test_every_station_opens_a_page_the_app_has():
    assert set(PAGES) <= {name for name, _, _ in NAVIGATION}
    assert {s.tool.page for s in load_path().stations} <= set(PAGES)


def test_a_good_file_reads_with_its_params_as_the_url_gives_them(tmp_path):
    station = read_station(write(tmp_path, "02_loop.toml", GOOD))
    assert station.id == "02_loop" and station.short == "The BPE loop"
    assert station.tool.params == {"corpus": "sample:low lower newest widest", "variant": "word",
                                   "merges": "10"}
    assert station.data().merges == 10 and station.question.choices == {"e + s": "e + s", "l + o": "l + o"}


MISTAKES = [  # (what the teacher wrote instead, what the message must say)
    (('ask = "Which pair first?"', 'ask = "Which pair first?'), "not valid TOML"),
    (('compute = "first_merge"', 'compute = "first_merges"'), "'first_merges' is not a computation"),
    (('title = "The BPE loop"', 'titel = "The BPE loop"'), "unknown key 'titel'"),
    (('{count} times', '{counts} times'),
     "uses {counts}, which 'first_merge' and the tool's facts do not give"),
    (('ask = "Which pair first?"', 'ask = "Which pair, {count} times?"'),  # read before answering
     "question.ask uses {count}, which the tool's facts do not give"),

    (('{count} times', '{count.__class__} times'), "uses {count.__class__}"),
    (('choices = ["e + s", "l + o"]', 'choices = ["e + s"]'), "give 2 to 8 of them"),
    (('page = "learn_bpe"', 'page = "learn_bep"'), "tool.page = 'learn_bep' is not a page"),
    (('variant = "word"', 'variant = "words"'), "tool.params.variant = 'words' is not one of"),
    (('merges = 10', 'merges = 9999999'), "tool.params.merges must be a whole number"),
    (('corpus = "sample:low lower newest widest"', 'corpus = "/etc/passwd"'), "is not one of: sample:"),
    (('[question]', '[questions]'), "unknown key 'questions'"),
    (('why = "{answer} occurs {count} times."', ''), "question.why is missing"),
    (('compute = "first_merge"', 'compute = "compression"'),
     "answers with a number: remove question.choices"),
]


@pytest.mark.parametrize("change, message", MISTAKES, ids=[m for _, m in MISTAKES])
def test_a_mistake_names_the_file_and_the_problem(tmp_path, change, message):
    write(tmp_path, "01_fine.toml", GOOD)
    broken = write(tmp_path, "02_broken.toml", GOOD.replace(*change))
    path = load_path(tmp_path)
    assert [s.id for s in path.stations] == ["01_fine"]  # the good station stays
    [problem] = path.problems
    assert isinstance(problem, StationFileError)
    assert str(problem).startswith(f"{broken}: ")
    assert message in str(problem)


def test_a_step_fact_is_learn_bpe_s_and_the_words_quote_it_filled(tmp_path):
    """The step view's facts (which step highlights what) exist for Learn BPE's stations only; the
    words an attendee reads have them filled from core."""
    from core.lessons.words import station_facts, station_words

    steps = GOOD.replace('do = "Press Next."', 'do = "At {first_pair_step} merges done: the pair."')
    station = read_station(write(tmp_path, "01_steps.toml", steps))
    assert station_words(station, station_facts(station)).do == "At 0 merges done: the pair."
    elsewhere = write(tmp_path, "02_elsewhere.toml", steps.replace('"learn_bpe"', '"char_vs_bpe"'))
    with pytest.raises(StationFileError, match="tool.do uses {first_pair_step}, which the tool's facts"):
        read_station(elsewhere)


def test_no_station_names_a_seed_a_reader_never_met():
    """Where a station comes from is named as a reader knows it (a BPE tutorial, the mygpt book)."""
    for path in [*(ROOT / "lessons").glob("*.toml"), ROOT / "ui" / "views" / "lesson_view.py"]:
        assert "seed" not in path.read_text(encoding="utf-8").lower(), path


def test_the_intro_counts_the_stations_it_has(tmp_path):
    write(tmp_path, "01_fine.toml", GOOD)
    write(tmp_path, PATH_FILE, 'title = "Start"\nintro = "{stations} short stations."\n')
    assert load_path(tmp_path).intro == "1 short stations."
    write(tmp_path, PATH_FILE, 'title = "Start"\nintro = "{stationz} short stations."\n')
    assert "intro may quote {stations}" in str(load_path(tmp_path).problems[0])


def test_a_toml_syntax_error_says_where(tmp_path):
    text = GOOD.replace('do = "Press Next."', 'do = Press Next.')
    write(tmp_path, "01_x.toml", text)
    [problem] = load_path(tmp_path).problems
    line = text.splitlines().index("do = Press Next.") + 1
    assert f"(at line {line}, column 6)" in str(problem)


def test_bad_file_names_encodings_and_sizes(tmp_path):
    write(tmp_path, "Station 1.toml", GOOD)
    (tmp_path / "02_latin1.toml").write_bytes(GOOD.replace("Here", "Héré").encode("latin-1"))
    (tmp_path / "03_huge.toml").write_text(GOOD + "#" * 70_000, encoding="utf-8")
    write(tmp_path, PATH_FILE, 'title = "Commencez ici"\nintro = "Bonjour."\n')
    path = load_path(tmp_path)
    assert not path.stations and path.title == "Commencez ici"
    messages = " | ".join(map(str, path.problems))
    assert "file name must be lower-case" in messages and "not UTF-8" in messages
    assert "a station file may have 65,536" in messages


def test_a_missing_folder_is_a_problem_not_a_crash(tmp_path):
    path = load_path(tmp_path / "nowhere")
    assert not path.stations and "no such folder" in str(path.problems[0])


def test_a_translated_station_reads_and_is_answered_in_its_own_script(tmp_path):
    """A teacher translates the texts (any script; the values core compares stay as they are)."""
    from core.lessons import compute_answer, explanation

    korean = (GOOD.replace('"The BPE loop"', '"BPE 반복: 첫 번째 병합"')
                  .replace('"Which pair first?"', '"어느 쌍이 먼저 병합될까요? 🤔"')
                  .replace('["e + s", "l + o"]', '{ "e + s" = "e 와 s", "l + o" = "l 과 o" }')
                  .replace('"{answer} occurs {count} times."', '"{answer} يظهر {count} مرات."'))
    station = read_station(write(tmp_path, "02_loop.toml", korean))
    assert station.title == "BPE 반복: 첫 번째 병합"
    answer = compute_answer(station)
    assert answer.value == "l + o"
    assert explanation(station, answer) == "l 과 o يظهر 2 مرات."
