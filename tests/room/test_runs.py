"""core.room.runs: real GPT workers give runs turns that are listed, stopped, resumed, shared, lost to a
killed GPT worker or a restarted engine without losing a step; who may do what; the per-owner cap;
the device's model bounds.  (Whose turn it is, without training: test_turns.py.)"""

import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from core import CharTokenizer
from core.gpt.checkpoint import load_checkpoint
from core.room.cpu_policy import BACKGROUND_NICENESS
from core.room.limits import TURN_S, LimitError
from core.runfolder.locks import FileLock
from core.gpt.loop import train
from core.runfolder.layout import CORPUS_FILE, ENGINE_LOCK
from core.runfolder.status import read_status
from core.room.runs import (SERVER, RunAccessError, RunLimitError, Viewer, delete_run, get_run,
                           launch_run, list_runs, pid_alive, read_metrics, read_samples, resume_run,
                           run_info, sample_run, sanitize_run_name, set_shared, stop_run,
                           unique_run_name, validate_owner)
from core.room.turns import MAX_LOST_TURNS
from core.settings import ServerSettings
from conftest import wait_for
from training_data import CHARS, TEXT, tiny_config

ROOT = Path(__file__).resolve().parents[2]
ALICE = Viewer("alice-0123456789")
BOB = Viewer("bob-0123456789ab")
CAROL = Viewer("carol-0123456789")
ROOMY = ServerSettings(max_running=4, max_runs_per_owner=8)


def kill_quietly(pid):
    if pid and pid_alive(pid):
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def engines_of(runs_dir) -> list[int]:
    """The live engine processes of ``runs_dir`` (their command line names the folder)."""
    folder = str(Path(runs_dir).resolve()).encode()
    return [pid for pid, cmd in _processes()
            if b"core.room.engine" in (args := cmd.split(b"\0")) and folder in args]


def _processes():
    """(pid, command line) of every live process."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            yield int(proc.name), cmd


@pytest.fixture
def runs_dir(tmp_path):
    """A runs folder whose training processes are all killed at the end, whatever happened: its
    engine first (a session of its own, with its GPT workers), which would replace a killed GPT worker
    and train on after the suite has ended; then, with its lock held so that listing the runs
    starts no other, each run's own process."""
    yield tmp_path
    for pid in engines_of(tmp_path):
        kill_quietly(pid)
    blocker = FileLock(tmp_path / ENGINE_LOCK)
    wait_for(blocker.acquire, timeout=30)  # the killed engine's lock goes with it
    try:
        for run in list_runs(tmp_path):
            kill_quietly(run.pid)
            if run.status == "queued":
                stop_run(run.path, SERVER)
    finally:
        blocker.release()


def training_now(runs_dir):
    return wait_for(lambda: next((r for r in list_runs(runs_dir) if r.status == "running"), None))


@pytest.mark.parametrize("name, expected", [("char tiny", "char-tiny"), ("../../etc/passwd", "etc-passwd"),
                                            ("/abs/path", "abs-path"), ("run_1.2", "run_1.2"),
                                            ("..", None), ("", None), ("  ", None)])
def test_sanitize_run_name(name, expected):
    if expected is None:
        with pytest.raises(ValueError):
            sanitize_run_name(name)
    else:
        assert sanitize_run_name(name) == expected


@pytest.mark.parametrize("owner", ["../x", "a/b", "", ".", "..", "x" * 65, "é", None, "a b"])
def test_owner_ids_never_name_a_path(owner):
    with pytest.raises(RunAccessError, match="not a valid owner"):
        validate_owner(owner)
    with pytest.raises(ValueError):
        Viewer(owner)


def test_unique_run_name(tmp_path):
    (tmp_path / ALICE.owner / "a").mkdir(parents=True)
    assert unique_run_name("a", tmp_path, ALICE.owner) == "a-2"
    assert unique_run_name("a", tmp_path, BOB.owner) == "a"
    assert unique_run_name("b", tmp_path, ALICE.owner) == "b"


@pytest.mark.slow
def test_launch_list_and_stop_a_real_process(runs_dir):
    config = tiny_config(max_steps=20_000, eval_interval=10, log_interval=5)
    info = launch_run(config, "../sneaky name", runs_dir, owner=ALICE.owner, text=TEXT,
                      tokenizer=CharTokenizer.from_text(TEXT), settings=ROOMY)
    assert info.path == runs_dir / ALICE.owner / "sneaky-name" and info.active
    with pytest.raises(ValueError, match="already exists"):
        launch_run(replace(config, seed=2), "sneaky name", runs_dir, owner=ALICE.owner, text=TEXT,
                   settings=ROOMY)
    wait_for(lambda: any("val_loss" in r for r in read_metrics(info.path)))
    listed = wait_for(lambda: next((r for r in list_runs(runs_dir, ALICE) if r.pid), None))
    assert listed.name == "sneaky-name" and listed.status == "running" and listed.step >= 10
    assert listed.owner == ALICE.owner and listed.config["vocab_size"] == len(set(TEXT))
    assert listed.stepping and listed.taking_turns == 1
    # the GPT worker gives way to the server that launched it: pages stay quick while runs fill the cores
    server = os.getpriority(os.PRIO_PROCESS, 0)
    assert os.getpriority(os.PRIO_PROCESS, listed.pid) >= server + BACKGROUND_NICENESS
    stopped = stop_run(info.path, ALICE, timeout=30)
    assert stopped.status == "stopped" and stopped.pid is None
    ckpt = load_checkpoint(info.path / "ckpt.pt", tokenizer=CharTokenizer.from_text(TEXT))
    assert ckpt.step >= stopped.step  # the final checkpoint was written on the way out
    assert read_samples(info.path) is not None
    wait_for(lambda: not pid_alive(listed.pid), timeout=30)  # nothing left to train: GPT workers stop


@pytest.mark.slow
def test_a_killed_gpt_worker_costs_its_turn_only_and_no_step_is_logged_twice(runs_dir):
    """The GPT worker dies mid-turn (SIGKILL): the run carries on from its last checkpoint in a new
    GPT worker by itself, and every step appears once; killed in every turn, the run fails, keeps
    its checkpoint and resumes by hand (once: a second Resume is refused)."""
    config = tiny_config(max_steps=20_000, eval_interval=10, log_interval=5)
    info = launch_run(config, "interrupted", runs_dir, owner=ALICE.owner, text=TEXT, settings=ROOMY)
    wait_for(lambda: (info.path / "ckpt.pt").is_file())
    first = _gpt_worker_of(info.path)
    os.kill(first, signal.SIGKILL)
    saved = load_checkpoint(info.path / "ckpt.pt").step
    wait_for(lambda: read_metrics(info.path)[-1]["step"] >= saved + 20)
    again = run_info(info.path)
    assert again.status == "running" and again.pid != first and not again.error

    wait_for(lambda: read_status(info.path).get("lost_turns") == 0)  # a whole turn since the kill
    for kill in range(1, MAX_LOST_TURNS + 1):
        pid = _gpt_worker_of(info.path)
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: read_status(info.path).get("lost_turns") == kill, timeout=60)
    dead = run_info(info.path)
    assert dead.status == "failed"
    assert "ended during this run's turn 3 times in a row" in dead.error and dead.resumable
    assert stop_run(info.path, ALICE).status == "failed"  # stopping an ended run changes nothing
    saved = load_checkpoint(info.path / "ckpt.pt").step
    resume_run(info.path, ALICE, ROOMY)
    with pytest.raises(ValueError, match="already (queued|running)"):
        resume_run(info.path, ALICE, ROOMY)
    wait_for(lambda: read_metrics(info.path)[-1]["step"] >= saved + 20)
    assert stop_run(info.path, ALICE, timeout=30).resumable
    steps = [r["step"] for r in read_metrics(info.path)]
    assert steps == sorted(set(steps)), "a step logged twice, or out of order"
    # the record at the checkpoint when its step is a logged one (a turn may end between two), then onwards
    assert (saved in steps) == (saved % 5 == 0) and saved - saved % 5 + 5 in steps
    assert load_checkpoint(info.path / "ckpt.pt").step >= saved + 20


def _gpt_worker_of(run_dir: Path) -> int:
    """The pid of the GPT worker in the middle of this run's turn (waits for one)."""
    return wait_for(lambda: (s := read_status(run_dir)).get("turn") and s.get("pid"))


@pytest.mark.slow
def test_a_stop_a_resume_and_a_server_restart_mid_turn_lose_no_step_and_log_none_twice(runs_dir):
    """Stopped mid-turn, resumed, then the engine and its GPT workers killed mid-turn (the
    machine restarting under a room): a page that lists the runs starts an engine, which gives
    the run its turn again; it ends at its last step with every step logged once."""
    config = tiny_config(max_steps=3_000, eval_interval=50, log_interval=10)
    info = launch_run(config, "restarted", runs_dir, owner=ALICE.owner, text=TEXT, settings=ROOMY)
    wait_for(lambda: (info.path / "ckpt.pt").is_file())
    stopped = stop_run(info.path, ALICE, timeout=30)
    assert stopped.status == "stopped" and load_checkpoint(info.path / "ckpt.pt").step >= stopped.step
    resume_run(info.path, ALICE, ROOMY)
    before = wait_for(lambda: load_checkpoint(info.path / "ckpt.pt").step > stopped.step and
                      _gpt_worker_of(info.path))
    engine, = engines_of(runs_dir)
    for pid in (engine, before):
        os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not pid_alive(engine) and not pid_alive(before), timeout=10)
    wait_for(lambda: list_runs(runs_dir) and run_info(info.path).status == "finished", timeout=300)
    steps = [r["step"] for r in read_metrics(info.path)]
    assert steps == list(range(10, 3_001, 10)), "a step lost, or logged twice"
    assert load_checkpoint(info.path / "ckpt.pt").step == 3_000


def _trainers_of(runs_dir: Path) -> list[int]:
    """The GPT workers of the engine of ``runs_dir`` (its spawned children)."""
    engines = set(engines_of(runs_dir))
    return [pid for pid, cmd in _processes() if b"spawn_main" in cmd and _parent(pid) in engines]


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


@pytest.mark.slow
def test_two_resumes_at_once_queue_one_run_and_one_gpt_worker_trains_it(runs_dir):
    """Both threads call resume_run at the same moment: one run is queued, the other refused; the
    checkpoint's step only ever grows and no step is logged twice."""
    config = tiny_config(max_steps=20_000, eval_interval=5, log_interval=5)
    info = launch_run(config, "twice", runs_dir, owner=ALICE.owner, text=TEXT, settings=ROOMY)
    wait_for(lambda: (info.path / "ckpt.pt").is_file())
    stop_run(info.path, ALICE, timeout=30)
    saved = load_checkpoint(info.path / "ckpt.pt").step
    barrier = threading.Barrier(2)
    outcomes = []

    def click():
        barrier.wait()
        try:
            outcomes.append(resume_run(info.path, ALICE, ROOMY).status)
        except ValueError as exc:
            outcomes.append(str(exc))

    threads = [threading.Thread(target=click) for _ in range(2)]
    [t.start() for t in threads]
    [t.join(60) for t in threads]
    assert sorted(o.split()[0] for o in outcomes) == ["Run", "queued"], outcomes
    steps_seen = []
    wait_for(lambda: steps_seen.append(_ckpt_step(info.path)) or steps_seen[-1] >= saved + 30)
    assert steps_seen == sorted(steps_seen), "the checkpoint went backwards"
    stop_run(info.path, ALICE, timeout=30)
    steps = [r["step"] for r in read_metrics(info.path)]
    assert steps == sorted(set(steps)), "a step logged twice"


def _ckpt_step(run_dir) -> int:
    try:
        return load_checkpoint(run_dir / "ckpt.pt").step
    except ValueError:  # replaced between listing and reading: read the next one
        return 0


@pytest.mark.slow
def test_every_run_in_a_room_moves_before_any_finishes(runs_dir):
    """Three owners' long runs on one GPT worker: each logs steps within a few turns of the others,
    taking turns, long before the first could finish."""
    one_gpt_worker = ServerSettings(max_running=1, max_runs_per_owner=2)
    runs = [launch_run(tiny_config(max_steps=20_000, seed=k), f"run{k}", runs_dir, owner=who.owner,
                       text=TEXT, settings=one_gpt_worker)
            for k, who in enumerate((ALICE, BOB, CAROL))]
    wait_for(lambda: all(read_metrics(r.path) for r in runs), timeout=120)
    listed = list_runs(runs_dir)
    assert all(r.status == "running" and r.step < 20_000 for r in listed)
    assert sum(r.stepping for r in listed) <= 1 and {r.taking_turns for r in listed} == {3}
    assert len(_trainers_of(runs_dir)) == 1


@pytest.mark.slow
def test_one_gpt_worker_gives_first_turns_in_launch_order_and_leaves_no_zombies(runs_dir):
    """Cap 1: three short runs launched at once train one at a time, their first turns in launch
    order (a new run goes first).  Seen from each run's metrics file, which its first turn creates
    (step 0 is logged) and which stays: polling which run steps can miss a 30-step run that starts
    and ends between two looks, and the order they finish in depends on whether a run ends within
    one turn, i.e. on the machine's speed."""
    cap_one = ServerSettings(max_running=1, max_runs_per_owner=3)
    names = ["first", "second", "third"]
    for seed, name in enumerate(names):
        launch_run(tiny_config(max_steps=30, seed=seed), name, runs_dir, owner=ALICE.owner, text=TEXT,
                   settings=cap_one)
    queued = {r.name: r for r in list_runs(runs_dir, ALICE) if r.status == "queued"}
    assert queued["third"].queue_position == len(queued) and len(queued) >= 2
    metrics = {name: runs_dir / ALICE.owner / name / "metrics.jsonl" for name in names}
    most, looks, first_seen = 0, 0, {}

    def all_done():
        nonlocal most, looks
        looks += 1
        runs = list_runs(runs_dir)  # before the files: a run finished here has its file below
        for name in names:
            if name not in first_seen and metrics[name].is_file():
                first_seen[name] = looks
        most = max(most, sum(r.stepping for r in runs))
        return all(r.status == "finished" for r in runs)

    wait_for(all_done, timeout=180, interval=0.05)
    assert most == 1
    assert first_seen["first"] <= first_seen["second"] <= first_seen["third"], first_seen
    assert wait_for(lambda: not _zombies_of(os.getpid()) and not _trainers_of(runs_dir), timeout=30)


def _zombies_of(pid: int) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] == "Z" and int(fields[1]) == pid:
            found.append(int(proc.name))
    return found


@pytest.mark.slow
def test_an_owner_gets_a_few_slots_and_a_clear_refusal(runs_dir):
    settings = ServerSettings(max_running=1, max_runs_per_owner=2)
    accepted = []
    refused = []
    for k in range(8):
        try:
            accepted.append(launch_run(tiny_config(max_steps=20_000, seed=k), f"run{k}", runs_dir,
                                       owner=ALICE.owner, text=TEXT, settings=settings))
        except RunLimitError as exc:
            refused.append(str(exc))
    assert len(accepted) == 2 and len(refused) == 6
    assert "already have 2 runs queued or training" in refused[0]
    assert launch_run(tiny_config(seed=99), "bobs", runs_dir, owner=BOB.owner, text=TEXT, settings=settings)
    stop_run(accepted[1].path, ALICE)  # out of the queue, or stopped between turns, at once
    assert run_info(accepted[1].path).status == "stopped"
    assert launch_run(tiny_config(seed=100), "again", runs_dir, owner=ALICE.owner, text=TEXT,
                      settings=settings)


def test_a_model_too_big_for_the_device_is_refused_before_anything_is_written(tmp_path):
    big = tiny_config(n_layer=24, n_head=16, n_embd=1024, block_size=1024, batch_size=512)
    with pytest.raises(LimitError, match=r"too big on this CPU.*n_layer 24 \(at most"):
        launch_run(big, "huge", tmp_path, owner=ALICE.owner, text=TEXT)
    with pytest.raises(LimitError, match="steps"):
        launch_run(tiny_config(max_steps=10**7), "long", tmp_path, owner=ALICE.owner, text=TEXT)
    assert list_runs(tmp_path) == [] and not (tmp_path / ALICE.owner / "huge").exists()


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A finished run of Alice's, trained in this process (no scheduler involved)."""
    runs_dir = tmp_path_factory.mktemp("runs")
    run_dir = runs_dir / ALICE.owner / "private"
    train(tiny_config(max_steps=20), TEXT, CHARS, run_dir)
    return runs_dir, run_dir


@pytest.mark.slow
def test_owners_see_and_manage_only_their_own_runs(trained):
    runs_dir, run_dir = trained
    set_shared(run_dir, ALICE, False)
    assert [r.name for r in list_runs(runs_dir, ALICE)] == ["private"]
    assert list_runs(runs_dir, BOB) == []
    for action in (lambda: get_run(run_dir, BOB), lambda: stop_run(run_dir, BOB),
                   lambda: resume_run(run_dir, BOB), lambda: delete_run(run_dir, BOB),
                   lambda: set_shared(run_dir, BOB, True), lambda: sample_run(run_dir, BOB, "the")):
        with pytest.raises(RunAccessError, match="no run 'private' you can see"):
            action()

    assert set_shared(run_dir, ALICE, True).shared
    [seen] = list_runs(runs_dir, BOB)
    assert seen.shared and seen.owner == ALICE.owner and not BOB.can_manage(seen)
    for action in (lambda: stop_run(run_dir, BOB), lambda: delete_run(run_dir, BOB),
                   lambda: resume_run(run_dir, BOB), lambda: set_shared(run_dir, BOB, False)):
        with pytest.raises(RunAccessError, match="shared by another attendee"):
            action()
    assert sample_run(run_dir, BOB, "the ", 8).startswith("the ")  # read-only use is allowed
    assert run_dir.is_dir()

    teacher = Viewer("teacher-123456789", instructor=True)
    assert set_shared(run_dir, teacher, False).shared is False
    assert [r.name for r in list_runs(runs_dir, teacher)] == ["private"]
    assert stop_run(run_dir, teacher).status == "finished"


@pytest.mark.slow
def test_sampling_runs_out_of_process_with_clear_errors(trained):
    runs_dir, run_dir = trained
    with pytest.raises(ValueError, match="cannot be encoded"):
        sample_run(run_dir, ALICE, "€")
    text = sample_run(run_dir, ALICE, "the cat", 16, temperature=0.5, top_k=5)
    assert text.startswith("the cat") and len(text) > len("the cat")


def test_delete_a_run_but_never_a_queued_one_or_another_folder(runs_dir):
    blocker = FileLock(runs_dir / ENGINE_LOCK)  # no engine: the run stays queued
    assert blocker.acquire()
    try:
        info = launch_run(tiny_config(), "to-delete", runs_dir, owner=ALICE.owner, text=TEXT)
        assert run_info(info.path).status == "queued"
        with pytest.raises(ValueError, match="still queued"):
            delete_run(info.path, ALICE)
        stop_run(info.path, ALICE)
        delete_run(info.path, ALICE)
        assert not info.path.exists() and list_runs(runs_dir) == []
    finally:
        blocker.release()
    precious = runs_dir / ALICE.owner / "precious"
    precious.mkdir()
    with pytest.raises(ValueError, match="not a run folder"):
        delete_run(precious, ALICE)
    assert precious.is_dir()


def test_a_run_of_the_same_corpus_links_its_file_and_deleting_one_leaves_the_other_whole(runs_dir):
    """A sweep's runs share their corpus (``corpus_of``): written once, not once a run."""
    blocker = FileLock(runs_dir / ENGINE_LOCK)  # no engine: the runs stay queued
    assert blocker.acquire()
    try:
        first = launch_run(tiny_config(), "first", runs_dir, owner=ALICE.owner, text=TEXT, settings=ROOMY)
        second = launch_run(tiny_config(seed=2), "second", runs_dir, owner=ALICE.owner, text=TEXT,
                            settings=ROOMY, corpus_of=first.path)
        other = launch_run(tiny_config(seed=3), "other", runs_dir, owner=ALICE.owner, text=TEXT + "!",
                           settings=ROOMY, corpus_of=first.path)  # not the same text: written, not linked
        corpus = [run.path / CORPUS_FILE for run in (first, second, other)]
        assert corpus[0].samefile(corpus[1]) and not corpus[0].samefile(corpus[2])
        assert corpus[2].read_text(encoding="utf-8") == TEXT + "!"
        stop_run(first.path, ALICE)
        delete_run(first.path, ALICE)
        assert corpus[1].read_text(encoding="utf-8") == TEXT
    finally:
        for run in list_runs(runs_dir):
            if run.status == "queued":
                stop_run(run.path, SERVER)
        blocker.release()


def test_the_queue_says_what_trains_what_waits_and_for_about_how_long(runs_dir):
    """One GPT worker; a run training (this process stands in for its GPT worker) at 0.1 s a step with
    100 steps left, and two runs waiting for a first turn: they get one in about one and two
    turns; the training one, taking turns with them, ends in about 3 x 10 s."""
    blocker = FileLock(runs_dir / ENGINE_LOCK)
    assert blocker.acquire()
    try:
        busy = runs_dir / BOB.owner / "busy"
        busy.mkdir(parents=True)
        (busy / "status.json").write_text(json.dumps({
            "status": "running", "in_turns": True, "pid": os.getpid(), "max_steps": 200,
            "started": "2026", "turn": {"id": "t", "scheduler": os.getpid(), "host": os.uname().nodename}}))
        (busy / "metrics.jsonl").write_text("".join(json.dumps(
            {"step": s, "train_loss": 1.0, "lr": 1e-3, "tokens_per_s": 1, "elapsed_s": s / 10}) + "\n"
            for s in (10, 100)))
        for seed, name in enumerate(("a", "b")):
            launch_run(tiny_config(max_steps=100, seed=seed), name, runs_dir, owner=ALICE.owner, text=TEXT,
                       settings=ServerSettings(max_running=1, max_runs_per_owner=2))
        runs = {r.name: r for r in list_runs(runs_dir)}
        assert runs["a"].queue_position == 1 and runs["a"].wait_s == pytest.approx(TURN_S)
        assert runs["b"].queue_position == 2 and runs["b"].wait_s == pytest.approx(2 * TURN_S)
        assert runs["busy"].stepping and runs["busy"].taking_turns == 3 and runs["busy"].runs_at_once == 1
        assert runs["busy"].eta_s == pytest.approx(30.0)
        for name in ("a", "b"):
            stop_run(runs[name].path, ALICE)
    finally:
        blocker.release()


def test_list_runs_of_a_missing_folder(tmp_path):
    assert list_runs(tmp_path / "none") == []


@pytest.mark.slow
def test_training_modules_do_not_load_streamlit_and_the_engine_not_torch():
    code = ("import sys, core.gpt.model, core.gpt.loop, core.gpt.checkpoint, core.room.runs, "
            "core.gpt.device; print('streamlit' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "False", out.stderr
    code = "import sys, core.room.engine, core.room.dask_jobs; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "False", out.stderr
