"""The one interface pages know (``core.room.jobs.Jobs``), held to each promise on both of its
implementations: this machine's engine (``core.room.engine_link.RemoteEngine``, a runs folder's
engine process) and a Dask cluster's (``core.room.dask_jobs.DaskJobs``: a scheduler and two
workers under nannies on loopback, each capped by ``--memory-limit`` as a real cluster's are).
Each test uses only what the interface offers: submit, a job's state, progress and result, cancel
and the bounds' :class:`~core.room.jobs.JobStopped`.  The Dask cases need the ``dist`` extra
(under ``CI=true`` its absence fails, never skips)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import IN_CI
from core.room.jobs import Jobs, JobState, JobStopped
from tests.room.dask_cluster import dask_cluster
from tests.room import job_functions as jf
from tests.room.test_engine import runs_dir  # noqa: F401  (a fixture)
from conftest import wait_for
from tests.room.test_jobs import WAIT_S, lines

MEMORY_MB = 400      # the bound on a job's memory, both implementations
# a Dask worker that dies once fails its job (Dask's default gives it to three more first); its
# jobs run in processes of its own (``core.room.dask_jobs.run_watched``), which a daemon cannot start
DASK_ENV = {"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0", "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}


@pytest.fixture(scope="module")
def bounded_cluster():
    """A Dask scheduler and two single-threaded workers, each under a nanny that restarts it past
    ``MEMORY_MB``, on loopback; yields the scheduler's address."""
    if not IN_CI:
        pytest.importorskip("distributed", reason="the optional extra: pip install -e .[dist]")
    options = ["--nworkers", "2", "--nthreads", "1", "--memory-limit", f"{MEMORY_MB}MiB"]
    with dask_cluster([options], env=DASK_ENV) as (address, _):
        yield address


@pytest.fixture(params=["engine", pytest.param("dask", marks=pytest.mark.slow)])
def make_jobs(request):
    """``make(limit_s)``: a fresh caller of one implementation, closed after the test."""
    made: list[Jobs] = []
    if request.param == "engine":
        from core.room.engine_link import RemoteEngine

        folder = request.getfixturevalue("runs_dir")

        def make(limit_s: float = 120.0) -> Jobs:
            return RemoteEngine(folder, job_workers=2, limit_s=limit_s, max_rss=MEMORY_MB * 2**20,
                                abandon_s=None, preload=())
    else:
        from core.room.dask_jobs import DaskJobs

        address = request.getfixturevalue("bounded_cluster")

        def make(limit_s: float = 120.0) -> Jobs:
            return DaskJobs(address, limit_s=limit_s)

    def made_one(limit_s: float = 120.0) -> Jobs:
        made.append(make(limit_s))
        return made[-1]

    yield made_one
    for jobs in made:
        jobs.close()


def finished(jobs: Jobs, key):
    """The job for ``key`` once it is done (the interface's own look at it)."""
    return wait_for(lambda: (j := jobs.job(key)) is not None and j.done and j, what=f"{key} ending")


def gone(pid: int) -> None:
    """Wait until process ``pid`` has ended (a zombie, ended but not yet collected, counts)."""
    def ended() -> bool:
        try:
            return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] in "ZX"
        except OSError:
            return True
    wait_for(ended, what=f"the job's process {pid} ending")


def stopped_by(jobs: Jobs, key) -> JobStopped:
    with pytest.raises(JobStopped) as stopped:
        finished(jobs, key).result()
    return stopped.value


def test_a_job_shows_its_progress_while_it_runs_then_its_result(make_jobs, tmp_path):
    jobs = make_jobs()
    order, gate = tmp_path / "order", tmp_path / "gate"
    key = ("train", str(tmp_path), "progress")
    jobs.submit("tab-1", key, jf.until_released, (str(order), "it", str(gate)), owner="alice")
    running = wait_for(lambda: (j := jobs.job(key)) and j.state is JobState.RUNNING
                       and j.progress[0] > 0 and j, what="its progress")
    assert running.progress[1] == 10**9 and not running.done
    gate.touch()
    assert finished(jobs, key).result() == "it"


def test_identical_jobs_from_two_attendees_run_once(make_jobs, tmp_path):
    jobs = make_jobs()
    ran, key = tmp_path / "ran", ("train", str(tmp_path), "identical")
    for session, owner in (("tab-1", "alice"), ("tab-2", "bob")):
        jobs.submit(session, key, jf.counted, (str(ran), 20), owner=owner)
    steps, _ = finished(jobs, key).result()
    assert steps == 20 and len(lines(ran)) == 1


def test_a_functions_own_error_reaches_the_caller(make_jobs, tmp_path):
    jobs = make_jobs()
    key = ("bad", str(tmp_path))
    jobs.submit("tab-1", key, jf.fails, ("not a number",), owner="alice")
    with pytest.raises(ValueError, match="not a number"):
        finished(jobs, key).result()


def test_a_job_over_its_time_ends_with_the_time_bound_and_stops_running(make_jobs, tmp_path):
    """The attendee is told at the bound, and the job's process is killed: a job left running
    would hold a core of the room's for nothing."""
    jobs = make_jobs(limit_s=2.0)
    key, pids = ("slow", str(tmp_path)), tmp_path / "pids"
    jobs.submit("tab-1", key, jf.forever_in, (str(pids),), owner="alice")
    stopped = stopped_by(jobs, key)
    assert stopped.reason == "time" and "longer than this server allows (2 s" in str(stopped)
    gone(int(lines(pids)[0]))


@pytest.mark.slow
def test_a_job_over_its_memory_ends_with_the_memory_bound(make_jobs, tmp_path):
    jobs = make_jobs()
    key = ("hog", str(tmp_path))
    jobs.submit("tab-1", key, jf.hog, (2 * MEMORY_MB,), owner="alice")
    stopped = stopped_by(jobs, key)
    assert stopped.reason == "memory" and "memory" in str(stopped)


@pytest.mark.slow
def test_a_job_whose_process_dies_ends_stopped(make_jobs, tmp_path):
    """The kernel's out-of-memory killer, or a crash: the caller is told, never left waiting."""
    jobs = make_jobs()
    key = ("dies", str(tmp_path))
    jobs.submit("tab-1", key, jf.dies, owner="alice")
    stopped_by(jobs, key)


def test_a_job_its_only_attendee_cancels_is_let_go_and_stops_running(make_jobs, tmp_path):
    jobs = make_jobs()
    key, pids = ("slow", str(tmp_path), "cancelled"), tmp_path / "pids"
    jobs.submit("tab-1", key, jf.forever_in, (str(pids),), owner="alice")
    wait_for(lambda: (j := jobs.job(key)) and j.progress[0] > 0, what="the job running")
    assert jobs.cancel("tab-1", key) == 1
    job = jobs.job(key)
    if job is not None:  # kept a while, as cancelled: a result never comes
        with pytest.raises(JobStopped):
            finished(jobs, key).result()
    gone(int(lines(pids)[0]))


@pytest.mark.slow
@pytest.mark.parametrize("make_jobs", ["engine"], indirect=True)
def test_an_attendee_with_one_job_goes_before_another_attendees_third(make_jobs, tmp_path):
    """Two job workers; alice asks for three jobs, then bob for one: bob's starts before alice's
    third.  The engine only: Dask's priority orders the tasks one Dask worker holds, and Dask hands
    a few tasks to its workers as they come, so across a cluster it is no promise (measured here:
    alice's three ran before bob's)."""
    jobs = make_jobs()
    order = tmp_path / "order"
    names = ["a0", "a1", "a2", "b0"]
    gates = {name: tmp_path / f"gate-{name}" for name in names}
    keys = {name: ("fair", str(tmp_path), name) for name in names}

    def submit(name: str, owner: str) -> None:
        jobs.submit(f"tab-{owner}", keys[name], jf.until_released, (str(order), name, str(gates[name])),
                    owner=owner)

    for name in names[:3]:
        submit(name, "alice")
    wait_for(lambda: lines(order), what="alice's first job starting")
    submit("b0", "bob")
    released: list[str] = []
    while len(released) < len(names):  # the longest running job ends first, one at a time
        wait_for(lambda: len(lines(order)) > len(released), timeout=WAIT_S, what="the next job starting")
        name = lines(order)[len(released)]
        gates[name].touch()
        released.append(name)
        finished(jobs, keys[name])
    assert released.index("b0") < released.index("a2"), released
