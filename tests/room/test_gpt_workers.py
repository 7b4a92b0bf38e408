"""GPT workers in the engine's one queue (core.room.jobs, set up by core.room.gpt_workers) and the
scheduler on a machine with GPUs, run here on a CPU: the same code path (GPT workers, each given
a GPU of its own or shared by ``runs_per_gpu`` GPT workers),
with the runs themselves training on the CPU.  No GPU was lent to this project's tests; the
measurement that sets ``runs_per_gpu`` is bench/bench_gpu_turns.py's."""

import multiprocessing
import os
import signal

import pytest

from core.room.cpu_policy import BACKGROUND_NICENESS
from core.runfolder.layout import queue_settings, write_queue_settings
from core.runfolder.status import read_status
from core.room.runs import SERVER, launch_run, list_runs, stop_run
from core.room.gpt_workers import gpu_for, visible_device
from core.room.jobs import JobEngine, JobState, JobStopped
from core.room.scheduler import SESSION
from core.settings import ServerSettings
from conftest import wait_for
from test_runs import ALICE, BOB, CAROL, runs_dir  # noqa: F401  (runs_dir: a fixture)
from training_data import TEXT, tiny_config
from tests.room import job_functions as jf


def where_am_i() -> dict:
    """Run in a GPT worker: what it was given."""
    import torch

    return {"pid": os.getpid(), "gpu": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "threads": torch.get_num_threads(), "nice": os.getpriority(os.PRIO_PROCESS, 0)}


@pytest.fixture
def jobs_waiting():
    """The event the GPT workers give way to (core.room.cpu_policy)."""
    return multiprocessing.get_context("spawn").Event()


@pytest.fixture
def engine(jobs_waiting):
    """The engine's one queue, as the engine makes it (one job worker)."""
    made = JobEngine(job_workers=1, jobs_waiting=jobs_waiting)
    yield made
    made.close()


def test_trainers_spread_over_the_gpus_in_turn():
    assert [gpu_for(gpt_worker, 2) for gpt_worker in range(4)] == [0, 1, 0, 1]
    assert [gpu_for(gpt_worker, 3) for gpt_worker in range(4)] == [0, 1, 2, 0]
    assert gpu_for(0, 0) is None


@pytest.mark.slow
def test_each_gpt_worker_process_gets_its_gpu_threads_and_background_priority(engine):
    assert engine.set_gpt_workers(4, 1, 2) == 4  # 2 GPUs, 2 runs on each
    turns = [engine.submit(SESSION, f"turn {k}", where_am_i, gpt_turn=True) for k in range(4)]
    found = [turn.result(timeout=300) for turn in turns]
    assert sorted(r["gpu"] for r in found) == ["0", "0", "1", "1"]
    assert len({r["pid"] for r in found}) == 4 and {r["threads"] for r in found} == {1}
    assert min(r["nice"] for r in found) >= os.getpriority(os.PRIO_PROCESS, 0) + BACKGROUND_NICENESS


@pytest.mark.slow
def test_a_gpt_worker_killed_while_idle_is_replaced_at_the_next_turn(engine):
    """The kernel's out-of-memory killer picks an idle GPT worker: the next turn gets a new one,
    and the queue goes on."""
    engine.set_gpt_workers(1, 1, 0)
    pid = engine.submit(SESSION, "first", where_am_i, gpt_turn=True).result(timeout=300)["pid"]
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: pid not in engine.worker_pids(), what="the dead GPT worker noticed")
    assert engine.submit(SESSION, "second", where_am_i, gpt_turn=True).result(timeout=300)["pid"] != pid


@pytest.mark.slow
def test_turns_and_jobs_share_one_queue_on_workers_of_their_own_kind(engine, jobs_waiting, tmp_path):
    """A turn under way neither takes the job worker nor holds up a job, and only a job tells the
    GPT workers to give way (core.room.cpu_policy); a GPT worker that dies in a turn ends it
    stopped, which the scheduler records as a lost turn."""
    engine.set_gpt_workers(1, 1, 0)
    order, gate = tmp_path / "order", tmp_path / "gate"
    turn = engine.submit(SESSION, "turn", jf.until_released, (str(order), "turn", str(gate)), gpt_turn=True)
    wait_for(lambda: turn.state is JobState.RUNNING, timeout=300, what="the turn under way")
    assert not jobs_waiting.is_set()
    job = engine.submit("alice", "job", jf.counted, (str(tmp_path / "runs"), 3))
    assert job.result(timeout=120)[0] == 3  # beside the turn, on the job worker
    assert engine.set_gpt_workers(1, 1, 0) == 1 and turn.state is JobState.RUNNING
    gpt_pid = next(p for p in engine.worker_pids() if p != job.result()[1])
    os.kill(gpt_pid, signal.SIGKILL)
    with pytest.raises(JobStopped) as stopped:
        turn.result(timeout=60)
    assert stopped.value.reason == "crashed"


def test_a_server_s_own_gpu_mask_is_kept(monkeypatch):
    """A server started with CUDA_VISIBLE_DEVICES=2,3 gives its GPT workers GPUs 2 and 3, not 0 and 1."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert [visible_device(gpu) for gpu in range(2)] == ["2", "3"]
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert [visible_device(gpu) for gpu in range(2)] == ["0", "1"]


@pytest.mark.slow
def test_the_scheduler_trains_runs_per_gpu_at_once_on_every_gpu(runs_dir):  # noqa: F811
    """The caps of a server with 2 GPUs and 2 runs per GPU: four runs train at the same moment,
    two on each GPU's GPT workers (the runs train on the CPU here; their turns say which GPU)."""
    settings = ServerSettings(max_running=4, max_runs_per_owner=2)
    runs = [launch_run(tiny_config(max_steps=20_000, seed=k), f"run{k}", runs_dir,
                       owner=(ALICE, BOB, CAROL)[k % 3].owner, text=TEXT, settings=settings)
            for k in range(4)]
    write_queue_settings(runs_dir, max_running=4, gpus=2, runs_per_gpu=2)  # as launch_run on 2 GPUs
    assert queue_settings(runs_dir) == {"max_running": 4, "gpus": 2, "runs_per_gpu": 2}
    gpus_seen = set()

    def four_at_once():
        statuses = [read_status(run.path) for run in runs]
        on = [s.get("gpu") for s in statuses if s.get("turn") and s.get("pid")]
        gpus_seen.update(on)
        return sorted(on) == ["0", "0", "1", "1"]

    wait_for(four_at_once, timeout=300, interval=0.1)
    assert gpus_seen == {"0", "1"}
    assert sum(r.stepping for r in list_runs(runs_dir)) <= 4
    for run in runs:
        stop_run(run.path, SERVER, timeout=30)
