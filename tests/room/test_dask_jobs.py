"""core.room.dask_jobs: a room served from two hosts (two app processes here, on loopback) with one
runs folder and one Dask cluster.  The same tokenizer job asked on each host trains once, with its
progress; a GPT run launched on one host is seen, stopped and resumed from the other.  Needs the
``dist`` extra (under ``CI=true`` its absence fails, never skips)."""

from __future__ import annotations

import multiprocessing

import pytest

from conftest import IN_CI
from core.room.jobs import JobState
from core.runfolder.status import read_status
from core.room.runs import list_runs, read_metrics, resume_run, run_info, stop_run
from core.settings import ServerSettings
from test_dask_workers import cluster  # noqa: F401  (a fixture)
from conftest import wait_for
from test_runs import ALICE, runs_dir  # noqa: F401  (runs_dir: a fixture)
from tests.room import job_functions as jf
from tests.room.test_jobs import lines

if not IN_CI:
    pytest.importorskip("distributed", reason="the optional extra: pip install -e .[dist]")


def other_host(target, *args):
    child = multiprocessing.get_context("spawn").Process(target=target, args=args, daemon=True)
    child.start()
    return child


@pytest.mark.slow
def test_a_job_asked_on_two_hosts_trains_once_with_its_progress(cluster, tmp_path):  # noqa: F811
    from core.room.dask_jobs import DaskJobs

    address, _ = cluster
    here = DaskJobs(address)
    order, gate, out = tmp_path / "order", tmp_path / "gate", tmp_path / "out"
    shared = ("train", "digest-of-a-corpus", "byte", 300)
    job_args = (str(order), "shared", str(gate))
    here.submit("tab-1", shared, jf.until_released, job_args, owner="alice")
    running = wait_for(lambda: (j := here.job(shared)).state is JobState.RUNNING and j.progress[0] > 0 and j,
                       timeout=120, interval=0.05)
    assert running.progress[1] == 10**9  # the job's own count, sent from its Dask worker
    host_b = other_host(jf.remote_client, address, True, "tab-2", "bob",
                        [(shared, jf.until_released, job_args)], str(out))
    wait_for(lambda: (tmp_path / "out.asked").exists(), timeout=120)
    gate.touch()
    assert here.job(shared).result() == "shared"
    host_b.join(120)
    assert host_b.exitcode == 0
    assert out.read_text(encoding="utf-8") == repr("shared")
    assert lines(order) == ["shared"]  # asked on both hosts, trained once
    here.close()


@pytest.mark.slow
def test_a_run_launched_on_one_host_is_stopped_and_resumed_from_the_other(cluster, runs_dir,  # noqa: F811
                                                                         monkeypatch):
    address, workers = cluster
    monkeypatch.setenv("BPE_EXPLORER_DASK_SCHEDULER", address)  # host B's setting, as host A's
    on_dask = {w.pid for w in workers}
    host_a = other_host(jf.launch_on_host, address, str(runs_dir), ALICE.owner, 20_000)
    host_a.join(180)
    assert host_a.exitcode == 0
    run = wait_for(lambda: next(iter(list_runs(runs_dir)), None), timeout=60)  # seen on host B
    assert run.name == "from-host-a"
    wait_for(lambda: read_metrics(run.path), timeout=240)
    assert read_status(run.path).get("pid") in on_dask  # its turns train on the cluster
    assert stop_run(run.path, ALICE).status == "stopped"
    logged = len(read_metrics(run.path))
    resume_run(run.path, ALICE, ServerSettings())
    wait_for(lambda: len(read_metrics(run.path)) > logged, timeout=240)  # training again
    assert run_info(run.path).active and read_status(run.path).get("pid") in on_dask
    stop_run(run.path, ALICE)
