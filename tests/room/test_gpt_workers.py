"""core.room.gpt_workers and the scheduler on a machine with GPUs, run here on a CPU: the same code
path (GPT workers, each given a GPU of its own or shared by ``runs_per_gpu`` GPT workers),
with the runs themselves training on the CPU.  No GPU was lent to this project's tests; the
measurement that sets ``runs_per_gpu`` is bench/bench_gpu_turns.py's."""

import os
import signal
import time

import pytest

from core.room.cpu_policy import BACKGROUND_NICENESS
from core.runfolder.layout import queue_settings, write_queue_settings
from core.runfolder.status import read_status
from core.room.runs import SERVER, launch_run, list_runs, stop_run
from core.room.gpt_workers import LocalWorkers, gpu_for, visible_device
from core.settings import ServerSettings
from conftest import wait_for
from test_runs import ALICE, BOB, CAROL, runs_dir  # noqa: F401  (runs_dir: a fixture)
from training_data import TEXT, tiny_config


def where_am_i() -> dict:
    """Run in a GPT worker: what it was given."""
    import torch

    return {"pid": os.getpid(), "gpu": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "threads": torch.get_num_threads(), "nice": os.getpriority(os.PRIO_PROCESS, 0)}


def turn_result(gpt_workers, future, timeout: float = 300):
    """A turn's result, read as the scheduler reads it (``wait``, then the future), and the GPT
    worker freed."""
    deadline = time.monotonic() + timeout
    while not future.done():
        assert time.monotonic() < deadline, "the turn did not end"
        gpt_workers.wait([future], timeout=1)
    gpt_workers.done(future, lost=False)
    return future.result()


def has_ended(child_pid: int) -> bool:
    """Whether this process's child ``child_pid`` has ended, every thread of it (left for its
    parent to collect, which this does not do)."""
    return os.waitid(os.P_PID, child_pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def test_trainers_spread_over_the_gpus_in_turn():
    assert [gpu_for(gpt_worker, 2) for gpt_worker in range(4)] == [0, 1, 0, 1]
    assert [gpu_for(gpt_worker, 3) for gpt_worker in range(4)] == [0, 1, 2, 0]
    assert gpu_for(0, 0) is None


@pytest.mark.slow
def test_each_gpt_worker_process_gets_its_gpu_threads_and_background_priority():
    gpt_workers = LocalWorkers()
    gpt_workers.configure(4, 1, 2)  # 2 GPUs, 2 runs on each
    try:
        futures = [gpt_workers.submit(where_am_i) for _ in range(4)]
        assert gpt_workers.free() == 0
        found = [turn_result(gpt_workers, f) for f in futures]
    finally:
        gpt_workers.close()
    assert sorted(r["gpu"] for r in found) == ["0", "0", "1", "1"]
    assert len({r["pid"] for r in found}) == 4 and {r["threads"] for r in found} == {1}
    assert min(r["nice"] for r in found) >= os.getpriority(os.PRIO_PROCESS, 0) + BACKGROUND_NICENESS


@pytest.mark.slow
def test_a_gpt_worker_killed_while_idle_is_replaced_at_the_next_turn():
    """The kernel's out-of-memory killer picks an idle GPT worker: the next turn gets a new one,
    and the scheduler goes on."""
    gpt_workers = LocalWorkers()
    gpt_workers.configure(1, 1, 0)
    try:
        pid = turn_result(gpt_workers, gpt_workers.submit(where_am_i))["pid"]
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while not has_ended(pid):  # as the kernel's killer leaves it
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert turn_result(gpt_workers, gpt_workers.submit(where_am_i))["pid"] != pid
    finally:
        gpt_workers.close()


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
