"""core.room.turn_runner: a GPT worker carries a run on from memory only while the run is as it left it."""

import multiprocessing
import os

from core.room import cpu_policy, turn_runner
from core.runfolder.layout import CHECKPOINT_FILE
from core.runfolder.status import read_status
from core.room.runs import launch_run
from core.room.turns import end_turn, next_turn
from training_data import TEXT, tiny_config
from test_turns import ALICE, ROOMY, SCHEDULER, runs_dir  # noqa: F401  (runs_dir: a fixture)


def test_a_run_in_memory_is_dropped_once_another_gpt_worker_wrote_its_checkpoint(runs_dir):  # noqa: F811
    """Dask runs a dead worker's turn again elsewhere; that worker wrote a checkpoint before it
    died.  A GPT worker still holding the run from the turn before must load that checkpoint, not
    carry on from memory (it would log the same steps twice and overwrite the newer checkpoint)."""
    long = tiny_config(max_steps=20_000)  # a turn of 0.3 s ends paused on any machine
    run = launch_run(long, "held", runs_dir, owner=ALICE.owner, text=TEXT, settings=ROOMY)
    turn = next_turn(runs_dir, SCHEDULER)
    outcome = turn_runner.run_turn(run.path, turn.id, 0.3)
    assert outcome["outcome"] == "paused"
    end_turn(runs_dir, turn, outcome)
    last = read_status(run.path)["last_turn_id"]
    held = turn_runner._held[str(run.path)].training
    assert turn_runner._training(run.path, last) is held  # nobody trained it since: from memory
    turn_runner._hold(run.path, held, last)

    checkpoint = run.path / CHECKPOINT_FILE
    stat = checkpoint.stat()
    os.utime(checkpoint, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # another GPT worker's save
    again = turn_runner._training(run.path, last)
    assert again is not held and again.step == held.step  # from the checkpoint on disk


def test_a_turn_gives_way_while_an_attendee_waits_for_a_job_of_its_engine(runs_dir):  # noqa: F811
    """The room's CPU policy: while the engine's event says an attendee waits at a progress bar, a
    GPT run's turn trains no step; once it is cleared, the next turn trains."""
    run = launch_run(tiny_config(max_steps=20_000), "polite", runs_dir, owner=ALICE.owner, text=TEXT,
                     settings=ROOMY)
    jobs_waiting = multiprocessing.get_context("spawn").Event()
    cpu_policy.give_way_to(jobs_waiting)  # the GPT worker's setup step
    try:
        jobs_waiting.set()
        turn = next_turn(runs_dir, SCHEDULER)
        outcome = turn_runner.run_turn(run.path, turn.id, 0.5)
        assert outcome["outcome"] == "paused" and outcome["step"] == 0
        end_turn(runs_dir, turn, outcome)

        jobs_waiting.clear()
        turn = next_turn(runs_dir, SCHEDULER)
        outcome = turn_runner.run_turn(run.path, turn.id, 0.5)
        assert outcome["outcome"] == "paused" and outcome["step"] > 0
        end_turn(runs_dir, turn, outcome)
    finally:
        cpu_policy.give_way_to(None)
