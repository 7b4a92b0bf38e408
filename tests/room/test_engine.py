"""The runs folder's engine (core.room.engine) as app processes reach it (core.room.engine_link):
started on demand by the first caller, one for every app process (a second one is a child process
of its own here), one budget, one result for identical jobs, fairness by owner across processes, a
bound's message reaching the process that asked, a dead engine replaced, and an idle one gone."""

from __future__ import annotations

import multiprocessing
import os
import signal
from pathlib import Path

import pytest

from core.room.engine import IDLE_ENV
from core.room.engine_link import RemoteEngine, engine_address
from core.room.jobs import JobState, JobStopped
from core.runfolder.layout import ENGINE_LOCK
from core.runfolder.locks import is_locked
from tests.room import job_functions as jf
from conftest import wait_for
from tests.room.test_jobs import WAIT_S, lines

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def runs_dir(tmp_path, monkeypatch):
    """A runs folder whose engine leaves after 3 idle seconds, killed at the end if still there."""
    monkeypatch.setenv(IDLE_ENV, "3")
    folder = tmp_path / "runs"
    yield folder
    found = engine_address(folder)
    if found is not None:
        try:
            os.kill(found[2], signal.SIGKILL)
        except ProcessLookupError:
            pass


def engine(runs_dir, job_workers: int = 2, max_rss: int | None = None) -> RemoteEngine:
    """This test process as one app process of the machine (the first to ask sizes the engine)."""
    return RemoteEngine(runs_dir, job_workers=job_workers, limit_s=120.0, max_rss=max_rss, abandon_s=None,
                        preload=())


def other_process(runs_dir, session: str, owner: str, jobs: list, out: Path):
    """A second app process submitting ``jobs`` and writing their results to ``out``."""
    child = multiprocessing.get_context("spawn").Process(
        target=jf.remote_client, args=(str(runs_dir), False, session, owner, jobs, str(out)), daemon=True)
    child.start()
    return child


@pytest.mark.slow
def test_two_processes_share_the_workers_and_an_identical_jobs_result(runs_dir, tmp_path):
    here = engine(runs_dir, job_workers=2)
    ran, order, gate = tmp_path / "ran", tmp_path / "order", tmp_path / "gate"
    same = (("corpus", "byte", 300), jf.counted, (str(ran), 20))
    mine = [(f"alice-{i}", jf.until_released, (str(order), f"alice-{i}", str(gate))) for i in range(2)]
    theirs = [(f"bob-{i}", jf.until_released, (str(order), f"bob-{i}", str(gate))) for i in range(2)]
    for key, fn, args in [same, *mine]:
        here.submit("tab-1", key, fn, args, owner="alice")
    child = other_process(runs_dir, "tab-2", "bob", [same, *theirs], tmp_path / "out")
    # two job workers for both processes: one of each owner's jobs runs, the others wait
    wait_for(lambda: len(lines(order)) == 2, what="two jobs starting")
    assert sorted(lines(order)) == ["alice-0", "bob-0"]
    assert len(here.worker_pids()) == 2
    assert here.job("alice-1").state is JobState.QUEUED
    gate.touch()
    child.join(WAIT_S)
    assert child.exitcode == 0
    result = here.job(same[0]).result()
    assert (tmp_path / "out").read_text(encoding="utf-8").splitlines()[0] == repr(result)
    assert len(lines(ran)) == 1  # asked by both processes, run once
    assert sorted(lines(order)) == ["alice-0", "alice-1", "bob-0", "bob-1"]


@pytest.mark.slow
def test_one_owners_tabs_in_two_processes_count_as_one(runs_dir, tmp_path):
    here = engine(runs_dir, job_workers=2)
    order, gate = tmp_path / "order", tmp_path / "gate"
    here.submit("tab-1", "alice-0", jf.until_released, (str(order), "alice-0", str(gate)), owner="alice")
    wait_for(lambda: lines(order) == ["alice-0"], what="alice's first job starting")
    child = other_process(runs_dir, "tab-2", "alice",
                          [("alice-1", jf.until_released, (str(order), "alice-1", str(gate)))],
                          tmp_path / "out")
    wait_for(lambda: here.job("alice-1"), what="alice's second tab asking")
    here.submit("tab-3", "bob-0", jf.until_released, (str(order), "bob-0", str(gate)), owner="bob")
    wait_for(lambda: len(lines(order)) == 2, what="bob's job starting")
    assert lines(order) == ["alice-0", "bob-0"]  # alice's other tab waits: her share is one worker
    assert here.job("alice-1").state is JobState.QUEUED
    gate.touch()
    child.join(WAIT_S)
    assert child.exitcode == 0 and lines(order)[-1] == "alice-1"


@pytest.mark.slow
def test_a_job_over_its_memory_ends_with_the_message_in_the_process_that_asked(runs_dir):
    here = engine(runs_dir, job_workers=1, max_rss=400 * 2**20)
    here.submit("tab-1", "hog", jf.hog, (800,), owner="alice")
    job = wait_for(lambda: (j := here.job("hog")) and j.done and j, what="the hog stopped")
    with pytest.raises(JobStopped) as stopped:
        job.result()
    assert stopped.value.reason == "memory"
    assert "more memory than this server allows (400 MiB)" in str(stopped.value)


def test_a_function_that_fails_raises_its_own_error_in_the_process_that_asked(runs_dir):
    here = engine(runs_dir, job_workers=1)
    here.submit("tab-1", "bad", int, ("not a number",), owner="alice")
    job = wait_for(lambda: (j := here.job("bad")) and j.done and j, what="the job failing")
    with pytest.raises(ValueError, match="not a number"):
        job.result()


@pytest.mark.slow
def test_the_first_caller_starts_the_engine_a_dead_one_is_replaced_and_an_idle_one_leaves(runs_dir, tmp_path):
    """Nothing runs before a job is asked for; the engine a caller started holds the folder; killed
    mid-job, its job ends for the page (which asks again: a new engine does it); idle, it leaves."""
    assert engine_address(runs_dir) is None
    here = engine(runs_dir, job_workers=1)
    order, gate = tmp_path / "order", tmp_path / "gate"
    here.submit("tab-1", "slow", jf.until_released, (str(order), "slow", str(gate)), owner="alice")
    first = engine_address(runs_dir)[2]
    assert is_locked(runs_dir / ENGINE_LOCK)
    wait_for(lambda: lines(order) == ["slow"], what="the job starting")
    os.kill(first, signal.SIGKILL)  # its job workers die with it
    assert here.job("slow") is None  # the new engine never heard of it: the page submits again
    second = engine_address(runs_dir)[2]
    assert second != first
    gate.touch()
    job = here.submit("tab-1", "slow", jf.until_released, (str(order), "slow", str(gate)), owner="alice")
    job = wait_for(lambda: (j := here.job("slow")) and j.done and j, what="the job again")
    assert job.result() == "slow"
    wait_for(lambda: engine_address(runs_dir) is None, timeout=60, what="the idle engine leaving")
    wait_for(lambda: not is_locked(runs_dir / ENGINE_LOCK), timeout=10, what="its lock released")


def test_many_callers_at_once_are_all_answered(runs_dir):
    """A room's app processes open their connections at once when the engine starts: each is
    accepted and challenged on its own thread (a backlog of one, challenged in the accepting
    thread, dropped them, and a page waited minutes on TCP's retries)."""
    import threading
    import time

    engine(runs_dir, job_workers=1).worker_pids()  # the engine is up
    answers, callers = [], [engine(runs_dir, job_workers=1) for _ in range(40)]
    threads = [threading.Thread(target=lambda c=c: answers.append(c.worker_pids())) for c in callers]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(answers) == 40, f"{40 - len(answers)} callers not answered in {time.monotonic() - began:.0f} s"


def test_an_engine_stays_its_idle_time_after_a_runs_last_turn(tmp_path, monkeypatch):
    """A run trains for minutes with no job asked: the engine, idle by its jobs all along, stays
    ``idle_s`` after the last turn ended, with what its jobs made (leaving as the run ended, it
    lost them, and every page of the run's corpus asked for them again)."""
    import time

    from core.room import engine as engine_module

    monkeypatch.setattr(engine_module, "QUIET_POLL_S", 0.02)

    class OneRun:  # a scheduler whose one run takes turns for half a second
        runs_dir, in_flight, rested = tmp_path, (), None
        ends = time.monotonic() + 0.5

        def tick(self):
            pass

        def has_work(self):
            return time.monotonic() < self.ends

        def rest(self):
            self.rested = time.monotonic()

    class NothingAsked:  # jobs: none live, none asked for long
        def retire(self, idle_s):
            return True

    run = OneRun()
    engine_module.serve(run, NothingAsked(), idle_s=1.0)
    assert run.rested is not None and time.monotonic() - run.rested >= 1.0


@pytest.mark.slow
def test_a_connection_that_never_proves_the_key_is_cut_and_keyed_callers_are_answered(runs_dir):
    """A local process that connects and says nothing holds no thread of the engine's for ever:
    the engine cuts it once the handshake's time is up, and answers the app processes meanwhile."""
    import socket
    import time

    from core.room.engine_link import HANDSHAKE_S

    here = engine(runs_dir, job_workers=1)
    assert here.worker_pids() == []  # the engine is up
    (host, port), _, pid = engine_address(runs_dir)
    silent = [socket.create_connection((host, port)) for _ in range(20)]
    assert here.submit("tab-1", "k", jf.double, (4,)).done or wait_for(lambda: here.job("k").done)
    assert here.job("k").result() == 8
    deadline = time.monotonic() + HANDSHAKE_S * 6
    for sock in silent:
        sock.settimeout(0.5)
        while True:  # the engine's challenge, then its end of the connection
            try:
                if not sock.recv(4096):
                    break
            except TimeoutError:
                here.worker_pids()  # a call: the engine does not leave for want of callers
                assert time.monotonic() < deadline, "a silent connection was never cut"
        sock.close()
    assert engine_address(runs_dir)[2] == pid  # cut by the same engine, not by its leaving


@pytest.mark.slow
def test_an_engine_file_naming_someone_elses_listener_is_replaced_by_a_new_engine(runs_dir):
    """The engine killed outright leaves its file, and its port may go to another listener (another
    runs folder's engine, any program) that accepts and never answers the key: the app process does
    not hang on it, and starts this folder's engine instead."""
    import json
    import socket
    import threading

    from core.runfolder.layout import ENGINE_FILE

    stranger = socket.create_server(("127.0.0.1", 0))
    port = stranger.getsockname()[1]
    runs_dir.mkdir(parents=True)
    (runs_dir / ENGINE_FILE).write_text(json.dumps(
        {"address": f"127.0.0.1:{port}", "key": os.urandom(32).hex(), "pid": 2**22 + 1}))  # no process
    answered = []
    caller = threading.Thread(target=lambda: answered.append(engine(runs_dir, job_workers=1).worker_pids()),
                              daemon=True)
    caller.start()
    caller.join(WAIT_S)
    stranger.close()
    assert answered == [[]], "the call hung on the stranger, or failed"
    assert engine_address(runs_dir)[0][1] != port
