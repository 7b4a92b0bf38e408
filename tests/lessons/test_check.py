"""``python -m core.lessons check``: what a teacher runs before a workshop lists every station
with the answer core computes, and fails, naming the file, on any problem."""

import subprocess
import sys
from pathlib import Path

import pytest

from core.lessons import compute_answer, load_path
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


def test_the_computations_are_listed_for_teachers():
    result = subprocess.run([sys.executable, "-m", "core.lessons", "computations"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0
    assert "first_merge (choice): The pair BPE merges first" in result.stdout
    assert "room_bpc (choice, live)" in result.stdout
    assert "facts: {answer}, {count}, {tied}, {tied_count}, {new_token}" in result.stdout
