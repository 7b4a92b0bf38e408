"""core.room.turns and core.room.identical, without training: whose turn it is (fair between owners,
newcomers first), identical launches joined and counted once, caps by share, the room's runs,
turns lost to a dead GPT worker, stopping during a turn.  The test holds the runs folder's scheduler
lock, so no scheduler starts, and plays the GPT workers itself."""

import os
import subprocess
import sys
import threading
import time
from collections import Counter

import pytest

from core.runfolder.locks import FileLock
from core.runfolder.layout import ENGINE_LOCK, STOP_FILE
from core.runfolder.status import read_status, write_status
from core.room.runs import (ROOM_OWNER, SERVER, RunAccessError, RunLimitError, Viewer, delete_run,
                           launch_run, list_runs, resume_run, run_info, set_shared, stop_run)
from core.room.turns import MAX_LOST_TURNS, claim_turn, end_turn, lose_turn, next_turn, reclaim_turns
from core.settings import ServerSettings
from training_data import TEXT, tiny_config

ALICE, BOB, CAROL, DAN = (Viewer(f"{name}-0123456789abcdef") for name in ("alice", "bob", "carol", "dan"))
ROOMY = ServerSettings(max_runs_per_owner=4)
SCHEDULER = 424242  # the scheduler these turns are given to (this test plays it)


@pytest.fixture
def runs_dir(tmp_path):
    """A runs folder whose engine lock this test holds: launches queue, nothing trains."""
    blocker = FileLock(tmp_path / ENGINE_LOCK)
    assert blocker.acquire()
    yield tmp_path
    blocker.release()


def launch(runs_dir, who: Viewer, name: str, seed: int = 1337, **kw):
    return launch_run(tiny_config(seed=seed), name, runs_dir, owner=who.owner, text=TEXT,
                      settings=kw.pop("settings", ROOMY), **kw)


def play(runs_dir, turns: int, seconds: float = 1.0) -> list[str]:
    """Give ``turns`` turns one after another, each trained for ``seconds``; the runs' names."""
    order = []
    for _ in range(turns):
        turn = next_turn(runs_dir, SCHEDULER)
        order.append(turn.run_dir.name)
        end_turn(runs_dir, turn, {"outcome": "paused", "step": 10, "seconds": seconds})
    return order


def test_identical_launches_train_once_and_are_theirs_to_watch(runs_dir):
    mine = launch(runs_dir, ALICE, "alices")
    joined = launch(runs_dir, BOB, "bobs")
    assert joined.joined_by == BOB.owner and joined.path == mine.path and joined.name == "bobs"
    assert not (runs_dir / BOB.owner / "bobs" / "status.json").exists()  # nothing trains twice
    assert launch(runs_dir, ALICE, "again").path == mine.path  # her own run back, no new folder
    assert not (runs_dir / ALICE.owner / "again").exists()
    other = launch_run(tiny_config(threads=2), "threads", runs_dir, owner=CAROL.owner, text=TEXT,
                       settings=ROOMY)
    assert other.joined_by == CAROL.owner  # threads change how it runs, not what it learns
    assert launch(runs_dir, CAROL, "seeded", seed=7).joined_by is None

    [seen] = [r for r in list_runs(runs_dir, BOB)]
    assert seen.name == "bobs" and seen.launchers == 3 and seen.status == "queued"
    set_shared(mine.path, ALICE, True)
    assert [r.name for r in list_runs(runs_dir, BOB)] == ["bobs"]  # once, as his
    for action in (lambda: stop_run(joined.path, BOB), lambda: resume_run(mine.path, BOB),
                   lambda: set_shared(joined.join_path, BOB, False)):
        with pytest.raises(RunAccessError, match="trained once for everyone"):
            action()
    delete_run(joined.join_path, BOB)  # leaving it: it trains on for the others
    assert list_runs(runs_dir, BOB)[0].owner == ALICE.owner and run_info(mine.path).active


def test_a_run_others_joined_is_handed_over_not_lost(runs_dir):
    mine = launch(runs_dir, ALICE, "alices")
    launch(runs_dir, BOB, "bobs")
    launch(runs_dir, CAROL, "carols")
    stop_run(mine.path, ALICE)
    delete_run(mine.path, ALICE)
    assert not mine.path.exists() and list_runs(runs_dir, ALICE) == []
    [bobs] = list_runs(runs_dir, BOB)
    assert bobs.owner == BOB.owner and bobs.joined_by is None and BOB.can_manage(bobs)
    [carols] = list_runs(runs_dir, CAROL)
    assert carols.path == bobs.path and carols.joined_by == CAROL.owner


def test_a_run_counts_one_nth_against_each_of_its_n_launchers(runs_dir):
    one_each = ServerSettings(max_runs_per_owner=1)
    launch(runs_dir, ALICE, "a", settings=one_each)
    with pytest.raises(RunLimitError, match="already have 1 run queued or training"):
        launch(runs_dir, ALICE, "b", seed=2, settings=one_each)
    launch(runs_dir, BOB, "joined", settings=one_each)  # half of Alice's run
    with pytest.raises(RunLimitError, match="runs worth 0.5"):
        launch(runs_dir, BOB, "own", seed=3, settings=one_each)
    two_each = ServerSettings(max_runs_per_owner=2)
    launch(runs_dir, BOB, "own", seed=3, settings=two_each)  # 0.5 + 1 <= 2
    with pytest.raises(RunLimitError):
        launch(runs_dir, BOB, "more", seed=4, settings=two_each)  # 1.5 + 1 > 2


def test_turns_are_fair_between_owners_and_a_newcomer_goes_first(runs_dir):
    """Alice's run, which Carol launched too, draws on both their shares: it trains twice as
    often as Bob's.  Dan launches late: the next turn is his, then everyone gets the same time
    (he does not catch up on the turns before he came)."""
    launch(runs_dir, ALICE, "shared")
    launch(runs_dir, BOB, "bobs", seed=2)
    launch(runs_dir, CAROL, "same-as-alice")
    counts = Counter(play(runs_dir, 30))
    assert counts == {"shared": 20, "bobs": 10}
    launch(runs_dir, DAN, "dans", seed=3)
    order = play(runs_dir, 8)
    assert order[0] == "dans"
    assert Counter(order) == {"shared": 4, "bobs": 2, "dans": 2}  # an equal share each from then on
    assert Counter(play(runs_dir, 40)) == {"shared": 20, "bobs": 10, "dans": 10}


def test_two_free_trainers_go_to_two_owners_not_both_to_one(runs_dir):
    """Alice launched two runs before Bob launched his: with two GPT workers free at once, the second
    turn is Bob's, as Alice's first turn under way already counts against her."""
    launch(runs_dir, ALICE, "first")
    launch(runs_dir, ALICE, "second", seed=2)
    launch(runs_dir, BOB, "bobs", seed=3)
    given = [next_turn(runs_dir, SCHEDULER), next_turn(runs_dir, SCHEDULER)]
    assert [turn.run_dir.name for turn in given] == ["first", "bobs"]


def test_the_rooms_runs_train_once_for_every_launcher_and_belong_to_none(runs_dir):
    first = launch(runs_dir, ALICE, "station-char", room=True)
    second = launch(runs_dir, BOB, "my-name-for-it", room=True)
    assert first.path == second.path and first.path.parent.name == ROOM_OWNER
    assert (first.joined_by, second.joined_by) == (ALICE.owner, BOB.owner)
    assert run_info(first.path).shared and [r.name for r in list_runs(runs_dir, CAROL)] == ["station-char"]
    with pytest.raises(RunAccessError):
        stop_run(first.path, ALICE)
    assert stop_run(first.path, SERVER).status == "stopped"  # the instructor manages it


def test_a_room_launch_never_joins_an_attendee_s_private_run(runs_dir):
    """Dan launched the same run privately first: a launch for the room trains a run of the room's
    own, which Dan cannot stop or delete, rather than joining his."""
    dans = launch(runs_dir, DAN, "private")
    station = launch(runs_dir, ALICE, "station-char", room=True)
    assert station.path != dans.path and station.path.parent.name == ROOM_OWNER
    assert not DAN.can_manage(run_info(station.path)) and not run_info(dans.path).shared


def test_a_turn_lost_three_times_fails_and_resumes_by_hand(runs_dir):
    run = launch(runs_dir, ALICE, "crashy")
    for lost in range(1, MAX_LOST_TURNS + 1):
        turn = next_turn(runs_dir, SCHEDULER)
        assert turn.run_dir == run.path
        lose_turn(runs_dir, turn, "BrokenProcessPool: killed")
        assert read_status(run.path)["lost_turns"] == lost
    failed = run_info(run.path)
    assert failed.status == "failed" and "3 times in a row" in failed.error
    assert next_turn(runs_dir, SCHEDULER) is None
    (run.path / "ckpt.pt").write_bytes(b"")  # resumable: it has a checkpoint
    assert resume_run(run.path, ALICE, ROOMY).status == "queued"
    assert next_turn(runs_dir, SCHEDULER).run_dir == run.path


def test_the_turns_of_a_scheduler_that_died_are_given_again(runs_dir):
    run = launch(runs_dir, ALICE, "orphan")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    turn = next_turn(runs_dir, gone.pid)
    assert run_info(run.path).stepping
    reclaim_turns(runs_dir, SCHEDULER, ())
    status = read_status(run.path)
    assert status["turn"] is None and status["lost_turns"] == 1 and status["status"] == "queued"
    end_turn(runs_dir, turn, {"outcome": "paused", "seconds": 1.0})  # the old turn's end: ignored
    assert read_status(run.path).get("turns") is None


def test_a_pid_given_again_to_another_process_is_not_taken_for_the_gpt_worker(runs_dir):
    """After a restart pids count from 1 again: the pids a run's status names may belong to other
    processes now.  Their start times tell them apart: the turn is given again, and a Stop that
    finds the turn unfinished kills nobody."""
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        for name in ("after-restart", "stopped-after-restart"):
            run = launch(runs_dir, ALICE, name)
            turn = next_turn(runs_dir, stranger.pid)
            claim_turn(run.path, turn.id, stranger.pid, os.uname().nodename)
            status = read_status(run.path)
            earlier = status["pid_start"] - 1  # the scheduler and GPT worker that had the pid before
            write_status(run.path, status["status"], pid_start=earlier,
                         turn={**status["turn"], "scheduler_start": earlier})
            if name == "after-restart":
                reclaim_turns(runs_dir, SCHEDULER, ())
                assert read_status(run.path)["lost_turns"] == 1
            else:
                assert stop_run(run.path, ALICE, timeout=0.5).status == "stopped"
        assert stranger.poll() is None, "a process that merely reused the GPT worker's pid was killed"
    finally:
        stranger.kill()
        stranger.wait()


def test_stop_between_turns_is_immediate_and_during_a_turn_waits_for_the_gpt_worker(runs_dir):
    run = launch(runs_dir, ALICE, "stoppable")
    play(runs_dir, 1)
    (run.path / "ckpt.pt").write_bytes(b"")  # as the turn left it
    assert stop_run(run.path, ALICE).status == "stopped"
    resume_run(run.path, ALICE, ROOMY)
    turn = next_turn(runs_dir, SCHEDULER)

    def gpt_worker():  # notices the stop file after its next step, checkpoints, ends its turn
        while not (run.path / STOP_FILE).exists():
            time.sleep(0.01)
        end_turn(runs_dir, turn, {"outcome": "stopped", "step": 20, "seconds": 0.5})

    thread = threading.Thread(target=gpt_worker)
    thread.start()
    stopped = stop_run(run.path, ALICE, timeout=10)
    thread.join()
    assert stopped.status == "stopped" and not (run.path / STOP_FILE).exists()
    assert read_status(run.path)["step"] == 20
