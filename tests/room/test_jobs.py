"""The room's job engine (core.room.jobs): fair between sessions, shared when identical, cancelled,
bounded in time and memory, with progress.  Each test waits on what the engine reports (a job's
state, its progress, a file a job wrote), with generous bounds for a busy 2-core machine."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import wait_for
from core.room.jobs import JobEngine, JobState, JobStopped
from tests.room import job_functions as jf

WAIT_S = 60  # a worker's first start imports core on a busy machine
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def engines():
    made = []

    def make(**kwargs) -> JobEngine:
        made.append(JobEngine(**kwargs))
        return made[-1]

    yield make
    for engine in made:
        engine.close()


def lines(path) -> list[str]:
    return path.read_text(encoding="utf-8").split() if path.exists() else []


def test_imports_without_torch_or_streamlit():
    code = "import sys, core.room.jobs; print(sorted({'torch', 'streamlit'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
def test_a_heavy_job_does_not_delay_another_sessions_small_one(engines, tmp_path):
    engine = engines(job_workers=2)
    heavy = engine.submit("alice", "big", jf.forever)
    second = engine.submit("alice", "big too", jf.forever)  # alice may hold one of the two workers
    wait_for(lambda: heavy.progress[0] > 0, what="the heavy job's progress")
    small = engine.submit("bob", "small", jf.counted, (str(tmp_path / "runs"), 5))
    assert small.result(timeout=WAIT_S)[0] == 5
    assert small.progress == (5, 5)
    assert heavy.state is JobState.RUNNING and second.state is JobState.QUEUED
    before = heavy.progress[0]
    wait_for(lambda: heavy.progress[0] > before, what="more progress")  # still reporting


@pytest.mark.slow
def test_changing_key_cancels_the_job_and_frees_its_worker(engines, tmp_path):
    engine = engines(job_workers=1)
    old = engine.submit("alice", ("corpus 1", "char"), jf.forever)
    wait_for(lambda: old.progress[0] > 0, what="the first job's progress")
    old_pids = engine.worker_pids()
    assert engine.cancel("alice", ("corpus 1", "char")) == 1
    with pytest.raises(JobStopped) as stopped:
        old.result(timeout=WAIT_S)
    assert stopped.value.reason == "cancelled" and old.state is JobState.CANCELLED
    new = engine.submit("alice", ("corpus 2", "char"), jf.double, (21,))
    assert new.result(timeout=WAIT_S) == 42
    assert engine.worker_pids() != old_pids  # the killed worker was replaced
    assert engine.job(("corpus 1", "char")) is None  # a cancelled job is not kept


@pytest.mark.slow
def test_cancelling_all_of_a_sessions_jobs_leaves_a_shared_one_running(engines, tmp_path):
    engine = engines(job_workers=1)
    shared = engine.submit("alice", "shared", jf.counted, (str(tmp_path / "runs"), 50))
    queued = engine.submit("alice", "mine", jf.double, (1,))
    engine.submit("bob", "shared", jf.counted, (str(tmp_path / "runs"), 50))
    assert engine.cancel("alice") == 1  # her own job; bob still wants the shared one
    assert queued.state is JobState.CANCELLED
    assert shared.result(timeout=WAIT_S)[0] == 50


@pytest.mark.slow
def test_a_job_over_its_time_ends_with_the_message(engines):
    engine = engines(job_workers=1, limit_s=1.0)
    job = engine.submit("alice", "endless", jf.forever)
    with pytest.raises(JobStopped) as stopped:
        job.result(timeout=WAIT_S)
    assert stopped.value.reason == "time"
    assert "longer than this server allows (1 s, on the CPU time the room" in str(stopped.value)
    assert engine.submit("alice", "endless", jf.forever) is job  # a rerun of the page reads the message
    assert engine.submit("bob", "next", jf.double, (2,)).result(timeout=WAIT_S) == 4


@pytest.mark.slow
def test_a_job_over_its_memory_ends_with_the_message(engines):
    engine = engines(job_workers=1, max_rss=400 * 2**20)
    job = engine.submit("alice", "hog", jf.hog, (800,))
    with pytest.raises(JobStopped) as stopped:
        job.result(timeout=WAIT_S)
    assert stopped.value.reason == "memory" and "more memory than this server allows (400 MiB)" in str(
        stopped.value)


@pytest.mark.slow
def test_identical_jobs_from_two_sessions_run_once(engines, tmp_path):
    engine = engines(job_workers=2)
    runs = tmp_path / "runs"
    first = engine.submit("alice", ("corpus", "char", 300), jf.counted, (str(runs), 20))
    second = engine.submit("bob", ("corpus", "char", 300), jf.counted, (str(runs), 20))
    assert second is first
    assert first.result(timeout=WAIT_S) == second.result(timeout=WAIT_S)
    later = engine.submit("carol", ("corpus", "char", 300), jf.counted, (str(runs), 20))
    assert later.result(timeout=WAIT_S) == first.result()  # kept: not run again
    assert len(lines(runs)) == 1


@pytest.mark.slow
def test_the_next_free_job_worker_serves_the_sessions_served_least(engines, tmp_path):
    engine = engines(job_workers=1)
    order, gate = tmp_path / "order", tmp_path / "gate"
    blocker = engine.submit("alice", "a0", jf.until_released, (str(order), "a0", str(gate)))
    wait_for(lambda: blocker.progress[0] > 0, what="the first job's progress")
    jobs = [engine.submit(session, name, jf.record, (str(order), name))
            for session, name in [("alice", "a1"), ("alice", "a2"), ("bob", "b1"), ("alice", "a3"),
                                ("carol", "c1"), ("bob", "b2")]]
    gate.touch()
    for job in jobs:
        job.result(timeout=WAIT_S)
    # bob and carol had nothing yet: each goes before alice's second job, in turn
    assert lines(order) == ["a0", "b1", "c1", "a1", "b2", "a2", "a3"]


@pytest.mark.slow
def test_a_failure_reaches_the_caller_and_an_abandoned_job_is_cancelled(engines):
    engine = engines(job_workers=1, abandon_s=1.0)
    with pytest.raises(ValueError, match="bad pattern"):
        engine.submit("alice", "bad", jf.fails, ("bad pattern",)).result(timeout=WAIT_S)
    left = engine.submit("bob", "left", jf.forever)
    wait_for(lambda: left.done, what="the abandoned job's end")  # looking, not asking (result() asks)
    assert left.state is JobState.CANCELLED and left.error.reason == "cancelled"
    assert "nobody was waiting" in str(left.error)


@pytest.mark.slow
def test_workers_start_when_jobs_wait_and_stop_when_idle(engines):
    engine = engines(job_workers=2, idle_s=1.0)
    assert engine.worker_pids() == []  # nothing started before a job
    assert engine.submit("alice", "one", jf.double, (3,)).result(timeout=WAIT_S) == 6
    assert len(engine.worker_pids()) == 1  # one job: one worker
    wait_for(lambda: engine.worker_pids() == [], what="the idle worker's stop")
    assert engine.submit("alice", "two", jf.double, (4,)).result(timeout=WAIT_S) == 8


@pytest.mark.slow
def test_a_training_job_gives_the_tokenizer_trained_inline_and_its_progress(engines):
    from core import BPETokenizer
    from core.room import tokenizer_jobs

    text = (ROOT / "sample_corpora" / "sennrich.txt").read_text(encoding="utf-8") * 50
    options = {"end_of_word": "</w>", "pattern": None, "regex_timeout": 2.0, "max_memory": 2**30}
    job = engines(job_workers=1).submit("alice", "train", tokenizer_jobs.train, (text, "char", 40, options))
    tok = job.result(timeout=WAIT_S)
    assert tok.merge_triples == BPETokenizer.from_text(text, 40, variant="char").merge_triples
    assert job.progress == (len(tok.trace), 40) or tok.exhausted


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SCHED_IDLE and PDEATHSIG are Linux's")
def test_a_worker_takes_only_idle_cpu_and_ends_with_its_parent(engines):
    """A job worker runs on CPU time nobody else wants (the room's pages and browsers first) and is
    killed when its parent ends, so a server killed outright leaves no worker behind."""
    import os
    import signal

    job = engines(job_workers=1).submit("alice", "how", jf.scheduling)
    assert job.result(timeout=WAIT_S) == (os.SCHED_IDLE, signal.SIGKILL)


def test_the_gpt_workers_event_is_set_while_jobs_wait_or_run_and_cleared_after(engines, tmp_path):
    """What the engine's GPT turns give way to (core.room.cpu_policy): set while a job waits or
    runs, cleared once none does."""
    jobs_waiting = multiprocessing.get_context("spawn").Event()
    engine = engines(job_workers=1, jobs_waiting=jobs_waiting)
    order, gate = tmp_path / "order", tmp_path / "gate"
    job = engine.submit("alice", "a0", jf.until_released, (str(order), "a0", str(gate)))
    wait_for(jobs_waiting.is_set, what="the event set")
    gate.touch()
    job.result(timeout=WAIT_S)
    wait_for(lambda: not jobs_waiting.is_set(), what="the event cleared")


def test_every_engine_is_used_through_the_one_interface():
    """The page's plumbing knows only ``Jobs``: the machine's engine and a Dask cluster's each offer
    all of it (and the job engine inside the machine's); the engine's scheduler knows only
    ``TurnQueue``, the same queue with GPT turns, which the job engine and a Dask cluster offer."""
    from core.room.dask_jobs import DaskJobs
    from core.room.engine_link import RemoteEngine
    from core.room.jobs import Jobs, TurnQueue

    for engine in (JobEngine, RemoteEngine, DaskJobs):
        missing = [name for name in ("submit", "job", "cancel", "forget", "worker_pids", "close")
                   if not callable(getattr(engine, name, None))]
        assert not missing, f"{engine.__name__} lacks {missing}"
    for engine in (JobEngine, DaskJobs):  # the scheduler's GPT turns go into the same queue
        assert callable(getattr(engine, "set_gpt_workers", None)), engine.__name__
    engine = JobEngine(job_workers=1)
    try:
        assert isinstance(engine, Jobs) and isinstance(engine, TurnQueue)
    finally:
        engine.close()


def test_a_worker_whose_pipe_ended_before_its_process_leaves_the_collector_waiting(engines, monkeypatch):
    """A killed job worker's pipe reads as ended before its process is gone (one that runs only on
    idle CPU, freeing a big job's memory, can take a second to die on a busy machine).  The
    collector waits for the process's end meanwhile: reading the ended pipe again at every turn of
    its loop took a core from the room until then, and kept the dying worker off it."""
    from core.room import jobs as room_jobs

    ticks = []
    tick = room_jobs.JobEngine._tick
    monkeypatch.setattr(room_jobs.JobEngine, "_tick", lambda engine: (ticks.append(1), tick(engine)))
    engine = engines(job_workers=1, limit_s=1.0)
    began = time.monotonic()
    job = engine.submit("alice", "hangs up", jf.hangs_up)
    with pytest.raises(JobStopped) as stopped:
        job.result(timeout=WAIT_S)
    assert stopped.value.reason == "time"
    # a tick every TICK_S while a job is live, and one per message: about ten a second, never thousands
    assert len(ticks) / (time.monotonic() - began) < 50, len(ticks)
    assert engine.submit("bob", "next", jf.double, (2,)).result(timeout=WAIT_S) == 4


@pytest.mark.slow
def test_a_job_whose_worker_died_before_it_was_sent_ends_as_a_crash_and_the_next_runs(engines, monkeypatch):
    """A job worker killed between being given a job and being sent it (the kernel's out-of-memory
    killer may pick an idle worker that holds a big job's memory): the job ends with a message, is
    no longer live (the GPT turns stop giving way, the engine may retire) and the next job runs."""
    from core.room import jobs as room_jobs

    jobs_waiting = multiprocessing.get_context("spawn").Event()
    engine = engines(job_workers=1, jobs_waiting=jobs_waiting)
    assert engine.submit("alice", "warm", jf.double, (1,)).result(timeout=WAIT_S) == 2
    send = room_jobs._Worker.send_job

    def killed_first(worker, job):
        if job.key == "victim":
            worker.process.kill()
            worker.process.join()
        return send(worker, job)

    monkeypatch.setattr(room_jobs._Worker, "send_job", killed_first)
    victim = engine.submit("alice", "victim", jf.double, (21,))
    with pytest.raises(JobStopped, match="killed") as stopped:
        victim.result(timeout=WAIT_S)
    assert stopped.value.reason == "crashed"
    assert not engine.busy()
    assert engine.submit("bob", "next", jf.double, (4,)).result(timeout=WAIT_S) == 8
    wait_for(lambda: not jobs_waiting.is_set(), what="the GPT workers' event cleared")


@pytest.mark.slow
def test_a_job_that_does_not_pickle_fails_and_leaves_its_worker_free(engines):
    engine = engines(job_workers=1)
    bad = engine.submit("alice", "bad", jf.double, (lambda: 0,))  # a lambda does not pickle
    wait_for(lambda: bad.done, what="the unpicklable job's end")
    assert bad.state is JobState.FAILED and not engine.busy()
    assert engine.submit("alice", "good", jf.double, (5,)).result(timeout=WAIT_S) == 10


@pytest.mark.slow
def test_a_shared_job_is_kept_until_every_session_that_asked_has_read_it(engines, tmp_path):
    """Two sessions (say of two app processes) wait for one job: the first to read it lets go of it,
    and the second still finds it done, rather than gone and run again."""
    engine = engines(job_workers=1)
    runs = tmp_path / "runs"
    job = engine.submit("tab-1", "shared", jf.counted, (str(runs), 5))
    assert engine.submit("tab-2", "shared", jf.counted, (str(runs), 5)) is job
    job.result(timeout=WAIT_S)
    engine.forget("shared", "tab-1")
    assert engine.submit("tab-2", "shared", jf.counted, (str(runs), 5)) is job  # not run again
    engine.forget("shared", "tab-2")
    assert engine.job("shared") is None
    assert len(lines(runs)) == 1
    engine.submit("tab-3", "again", jf.double, (1,)).result(timeout=WAIT_S)
    engine.cancel("tab-3")  # a session that moved on: what it alone asked for goes
    assert engine.job("again") is None


@pytest.mark.slow
def test_while_no_worker_can_start_the_bounds_still_hold_and_a_later_tick_starts_one(engines, monkeypatch):
    """A machine out of processes or descriptors for a while: a job nobody waits for any more is
    still cancelled meanwhile, and once a worker can start again the next job runs."""
    from core.room import jobs as room_jobs

    start, out_of_processes = room_jobs.JobEngine._new_worker, [True]

    def maybe_fails(engine, slot):
        if out_of_processes[0]:
            raise OSError(11, "Resource temporarily unavailable")
        return start(engine, slot)

    monkeypatch.setattr(room_jobs.JobEngine, "_new_worker", maybe_fails)
    engine = engines(job_workers=1, abandon_s=1.0)
    left = engine.submit("alice", "left", jf.double, (3,))
    wait_for(lambda: left.done, what="the abandoned job's end")  # looking, not asking
    assert left.state is JobState.CANCELLED and engine.worker_pids() == []
    out_of_processes[0] = False
    assert engine.submit("bob", "two", jf.double, (4,)).result(timeout=WAIT_S) == 8
