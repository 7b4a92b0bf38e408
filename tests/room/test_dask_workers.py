"""GPT turns on Dask workers (core.room.dask_jobs): the runs folder's scheduler sends turns to a
Dask cluster through the engine's interface (a scheduler
and two worker processes on loopback here, as on other machines), with the same queue, owners and
files; a worker killed in the middle of a turn loses no step: Dask runs the turn again on the
other worker, which carries on from the run's last checkpoint.  Needs the ``dist`` extra (under
``CI=true`` its absence fails, never skips)."""

import os
import signal

import pytest

from conftest import IN_CI
from core.room.dask_jobs import parse_resources
from core.runfolder.status import read_status
from core.room.runs import launch_run, list_runs, read_metrics, run_info
from core.settings import ServerSettings
from conftest import wait_for
from test_runs import ALICE, BOB, runs_dir  # noqa: F401  (runs_dir: a fixture)
from training_data import TEXT, tiny_config
from tests.room.dask_cluster import dask_cluster

STEPS = 8_000  # several turns of each run (a step of this model takes a few milliseconds)

if not IN_CI:
    pytest.importorskip("distributed", reason="the optional extra: pip install -e .[dist]")


@pytest.fixture
def cluster():
    """A Dask scheduler and two single-threaded workers without nannies (a killed worker stays
    dead, as a machine that went away), on loopback; yields (address, worker processes)."""
    with dask_cluster([["--nthreads", "1", "--no-nanny"]] * 2) as (address, workers):
        yield address, workers


def test_resources_are_read_as_dask_declares_them():
    assert parse_resources("GPU=1") == {"GPU": 1.0}
    assert parse_resources("GPU=1, MEM=4e9") == {"GPU": 1.0, "MEM": 4e9}
    assert parse_resources("") is None
    with pytest.raises(ValueError, match="GPU=1"):
        parse_resources("GPU")


@pytest.mark.slow
def test_turns_on_dask_workers_and_a_killed_worker_loses_no_step(cluster, runs_dir, monkeypatch):  # noqa: F811
    address, workers = cluster
    monkeypatch.setenv("BPE_EXPLORER_DASK_SCHEDULER", address)  # the scheduler the launch starts
    settings = ServerSettings(max_runs_per_owner=2)
    runs = [launch_run(tiny_config(max_steps=STEPS, eval_interval=500, log_interval=10, seed=seed), name,
                       runs_dir, owner=who.owner, text=TEXT, settings=settings)
            for seed, name, who in ((1, "mine", ALICE), (2, "bobs", BOB))]
    worker_pids = {w.pid for w in workers}
    victim = wait_for(lambda: (s := read_status(runs[0].path)).get("pid") in worker_pids
                      and (runs[0].path / "ckpt.pt").is_file() and s["pid"], timeout=180)
    os.kill(victim, signal.SIGKILL)
    survivor = (worker_pids - {victim}).pop()
    wait_for(lambda: read_status(runs[0].path).get("pid") == survivor, timeout=120)
    wait_for(lambda: all(run_info(r.path).status == "finished" for r in runs), timeout=600)
    for run in runs:
        steps = [r["step"] for r in read_metrics(run.path)]
        assert steps == list(range(10, STEPS + 1, 10)), "a step lost, or logged twice"
    assert {r.status for r in list_runs(runs_dir)} == {"finished"}
