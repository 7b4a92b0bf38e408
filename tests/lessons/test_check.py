"""``python -m core.lessons check``: what a teacher runs before a workshop lists every station
with the answer core computes, and fails, naming the file, on any problem."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from core.lessons import compute_answer, load_path
from core.lessons.check import check_path
from core.lessons.content import station_files
from tests.conftest import shared_path
from tests.lessons.test_content import GOOD

ROOT = Path(__file__).resolve().parents[2]


def check(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core.lessons", "check", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, check=False)


def test_a_broken_station_fails_the_check_and_is_named(tmp_path):
    (tmp_path / "01_fine.toml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "02_broken.toml").write_text(GOOD.replace("first_merge", "first_mergers"), encoding="utf-8")
    result = check("--dir", str(tmp_path), "--runs-dir", str(tmp_path / "runs"))
    assert result.returncode == 1, result.stderr
    assert "answer: l + o  (choices: e + s, l + o)" in result.stdout
    assert "why:    l + o occurs 2 times." in result.stdout
    broken = tmp_path / "02_broken.toml"
    assert f"{broken}: question.compute = 'first_mergers' is not a computation" in result.stdout


def test_an_answer_that_is_not_a_choice_fails_the_check(tmp_path):
    wrong_choices = GOOD.replace('["e + s", "l + o"]', '["e + s", "s + t"]')
    (tmp_path / "01_x.toml").write_text(wrong_choices, encoding="utf-8")
    result = check("--dir", str(tmp_path))
    assert result.returncode == 1
    assert "core computes 'l + o', which is not one of the choices" in result.stdout


@pytest.mark.slow
def test_the_workshop_s_stations_pass_and_each_answer_is_listed(tmp_path):
    shared_path("corpora", "tinyshakespeare.txt")
    result = check("--runs-dir", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith("No problems.")
    for station in load_path().stations:
        assert station.file in result.stdout
        if station.question.computation.live:  # the room's runs are trained during the workshop
            assert "answer: not yet: The room's two models are not trained yet" in result.stdout
        else:
            assert f"  answer: {compute_answer(station).shown}  " in result.stdout


@pytest.mark.slow  # station 4 trains on Tiny Shakespeare
def test_the_shipped_path_passes_its_check(tmp_path):
    """The lessons folder as shipped, checked in the suite as a teacher checks it before a workshop:
    every station read, answered and its words checked against its tool."""
    shared_path("corpora", "tinyshakespeare.txt")
    report = check_path(None, runs_dir=tmp_path)
    assert report.ok, report.problems
    assert report.lines[0] == f"Start here: {len(station_files())} station(s)"
    assert len(load_path().stations) == len(station_files())


def test_the_computations_are_listed_for_teachers():
    result = subprocess.run([sys.executable, "-m", "core.lessons", "computations"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0
    assert "first_merge (choice): The pair BPE merges first" in result.stdout
    assert "room_bpc (choice, live)" in result.stdout
    assert "facts: {answer}, {count}, {tied}, {tied_count}, {new_token}" in result.stdout


# -- a station whose words disagree with its tool fails the check, naming the file and both sides ----
def station_file(folder: Path, replacements: dict[str, str], name: str = "01_station.toml") -> Path:
    text = GOOD
    for old, new in replacements.items():
        assert old in text, old
        text = text.replace(old, new)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_tool_asked_for_more_merges_than_it_learns_fails(tmp_path):
    """Station 6 asked for 10 merges of a text whose pairs run out after 9."""
    path = station_file(tmp_path, {"merges = 10": "merges = 100"})
    result = check("--dir", str(tmp_path))
    assert result.returncode == 1
    assert (f"{path}: tool.params.merges asks for 100 merges, but on sample:low lower newest widest the "
            "tool learns only 15") in result.stdout


def test_station_6_s_ten_new_merges_fail_against_the_nine_gpt4_learns(tmp_path):
    real = (ROOT / "lessons" / "06_extend_gpt4.toml").read_text(encoding="utf-8")
    asked = re.sub(r"merges = \d+ }", "merges = 10 }", real)
    asked = asked.replace("{merges_learned} new merges", "10 new merges")
    (tmp_path / "06_extend_gpt4.toml").write_text(asked, encoding="utf-8")
    result = check("--dir", str(tmp_path))
    assert result.returncode == 1
    assert "asks for 10 merges, but on sample:python source the tool learns only 9" in result.stdout
    assert ("question.ask types a number of merges ('10 new merges'); the tool computes it: quote "
            "{merges_asked} or {merges_learned}") in result.stdout
    assert "{merges_learned} = 9" in result.stdout


def test_words_that_miscount_learn_bpe_s_steps_fail(tmp_path):
    """Station 2 said one press of Next lights the merged pair up; the step view highlights the
    pair to merge at 0 merges done, and Next moves on to the next pair (core.bpe.explain's rule)."""
    old = 'do = "Press **Next ▶** once: the merged pair lights up."'  # station 2's words
    path = station_file(tmp_path, {'do = "Press Next."': old})
    result = check("--dir", str(tmp_path))
    assert result.returncode == 1
    assert (f"{path}: tool.do types how many presses of Next or Previous ('Next ▶** once'); the tool "
            "computes it: quote {first_pair_step} or {first_token_step} or {highlighted_next} "
            "({first_pair_step} = 0, {first_token_step} = 1, {highlighted_next} = 2)") in result.stdout
    assert f"{path}: tool.do sends the attendee through Learn BPE's steps without saying" in result.stdout


def test_words_that_quote_the_step_facts_pass_and_read_as_the_tool_shows(tmp_path):
    new = ('do = "At {first_pair_step} merges done the pair is outlined; press **Next ▶**: merge '
           '{highlighted_next}\'s."')
    station_file(tmp_path, {'do = "Press Next."': new})
    result = check("--dir", str(tmp_path))
    assert result.returncode == 0, result.stdout
    assert "do:     At 0 merges done the pair is outlined; press **Next ▶**: merge 2's." in result.stdout


@pytest.mark.parametrize("where, typed, message", [
    ('ask = "Which pair first?"', 'ask = "After 10 merges, which pair first?"',
     "question.ask types a number of merges ('10 merges')"),
    ('why = "{answer} occurs {count} times."', 'why = "{answer} occurs {count} times in 24 characters."',
     "question.why types 24, which core computes as {corpus_chars}"),
    ('text = "Two sentences. Here."', 'text = "About 3.10 characters per token."',
     "text types characters per token ('3.10 characters per token'); the tool computes it: quote "
     "{corpus_chars_per_token} ({corpus_chars_per_token} = 2.67)"),
])
def test_a_typed_figure_the_tool_computes_fails(tmp_path, where, typed, message):
    path = station_file(tmp_path, {where: typed})
    result = check("--dir", str(tmp_path))
    assert result.returncode == 1
    assert f"{path}: {message}" in result.stdout


def test_an_intro_that_types_the_number_of_stations_fails(tmp_path):
    station_file(tmp_path, {})
    intro = 'title = "Start"\nintro = "Seven short stations."\n'
    (tmp_path / "path.toml").write_text(intro, encoding="utf-8")
    result = check("--dir", str(tmp_path))
    assert result.returncode == 1
    said = f"{tmp_path / 'path.toml'}: intro types the number of stations ('Seven short stations')"
    assert said in result.stdout
