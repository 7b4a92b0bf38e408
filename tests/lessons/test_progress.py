"""core.lessons.progress: each attendee's progress in a file of their own, kept across sessions
and restarts, bounded, written atomically; the room's counts only for the instructor."""

import json
import threading

import pytest

from core.room.owners import RunAccessError, Viewer
from core.lessons import ProgressStore
from core.lessons.progress import FOLDER, MAX_ANSWER_CHARS, MAX_ANSWERS, MAX_STATIONS

ALICE, BOB = "alice-0123456789ab", "bob-0123456789abcd"
INSTRUCTOR = Viewer("teacher-0123456789", instructor=True)


def test_answers_are_kept_in_order_and_survive_a_new_store(tmp_path):
    store = ProgressStore(tmp_path)
    store.open_station(ALICE, "02_first_merge")
    store.record_answer(ALICE, "02_first_merge", "e + s", False)
    progress = store.record_answer(ALICE, "02_first_merge", "l + o", True)
    assert progress.done and not progress.first_try_right and progress.tries == 2
    again = ProgressStore(tmp_path).of(ALICE)  # a restarted server reads the same file
    assert again["02_first_merge"].answers == (("e + s", False), ("l + o", True))
    assert (tmp_path / FOLDER / f"{ALICE}.json").is_file()
    assert ProgressStore(tmp_path).of(BOB) == {}  # nobody else's


@pytest.mark.parametrize("owner", ["../alice", "a/b", "", "x" * 65, "é"])
def test_an_owner_id_never_names_a_path(tmp_path, owner):
    store = ProgressStore(tmp_path)
    with pytest.raises(RunAccessError, match="not a valid owner"):
        store.record_answer(owner, "02_first_merge", "x", False)
    with pytest.raises(RunAccessError):
        store.of(owner)
    assert not list(tmp_path.rglob("*.json"))


def test_a_station_id_is_checked(tmp_path):
    with pytest.raises(ValueError, match="not a station id"):
        ProgressStore(tmp_path).record_answer(ALICE, "../x", "a", True)


def test_sizes_are_bounded_and_the_first_answer_is_kept(tmp_path):
    store = ProgressStore(tmp_path)
    for n in range(3 * MAX_ANSWERS):
        store.record_answer(ALICE, "s", f"{n}" + "x" * 500, n == 0)
    progress = store.of(ALICE)["s"]
    assert len(progress.answers) == MAX_ANSWERS and progress.tries == 3 * MAX_ANSWERS
    assert progress.first_try_right and progress.answers[0][0].startswith("0")
    assert progress.answers[-1][0].startswith(str(3 * MAX_ANSWERS - 1))
    assert all(len(a) == MAX_ANSWER_CHARS for a, _ in progress.answers)
    for n in range(MAX_STATIONS + 5):
        store.open_station(ALICE, f"station-{n}")
    assert len(store.of(ALICE)) == MAX_STATIONS
    assert (tmp_path / FOLDER / f"{ALICE}.json").stat().st_size < 64 * 1024


def test_a_damaged_file_reads_as_empty_and_is_rewritten(tmp_path):
    store = ProgressStore(tmp_path)
    store.open_station(ALICE, "s")
    (tmp_path / FOLDER / f"{ALICE}.json").write_text("{not json", encoding="utf-8")
    assert store.of(ALICE) == {}
    store.record_answer(ALICE, "s", "a", True)
    saved = json.loads((tmp_path / FOLDER / f"{ALICE}.json").read_text())
    assert saved["stations"]["s"]["answers"] == [["a", True]]


def test_two_tabs_answering_at_once_lose_nothing(tmp_path):
    store = ProgressStore(tmp_path)
    threads = [threading.Thread(target=store.record_answer, args=(ALICE, f"s{n}", "a", True))
               for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(store.of(ALICE)) == sorted(f"s{n}" for n in range(8))
    assert not [p for p in (tmp_path / FOLDER).iterdir() if p.suffix == ".tmp"]


def test_the_room_counts_each_attendee_once_and_only_for_the_instructor(tmp_path):
    store = ProgressStore(tmp_path)
    for answer, right in (("e + s", False), ("e + s", False), ("l + o", True)):
        store.record_answer(ALICE, "02", answer, right)
    store.record_answer(BOB, "02", "s + t", False)
    store.record_answer(BOB, "02", "e + s", False)
    store.reveal(BOB, "02")
    store.reveal(BOB, "02")  # asked twice: counted once
    store.open_station(BOB, "03")
    with pytest.raises(RunAccessError, match="Only the instructor"):
        store.room(Viewer(ALICE), ["02"])
    two, three, four = store.room(INSTRUCTOR, ["02", "03", "04"])
    assert (two.reached, two.answered, two.first_try_right, two.revealed, two.done) == (2, 2, 0, 1, 1)
    assert store.of(BOB)["02"].revealed and not store.of(ALICE)["02"].revealed
    assert (two.common_wrong, two.common_wrong_count) == ("e + s", 2)  # Alice's two tries count once
    assert two.first_try_share == 0.0
    assert (three.reached, three.answered, three.common_wrong, three.first_try_share) == (1, 0, None, None)
    assert four.reached == 0
