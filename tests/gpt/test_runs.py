"""core.gpt.runs: real background processes are queued, started, listed, stopped, resumed, shared and
found dead; who may do what; the per-owner cap; the device's model bounds."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core import CharTokenizer
from core.gpt.checkpoint import load_checkpoint
from core.gpt.limits import BACKGROUND_NICENESS, LimitError
from core.gpt.locks import FileLock
from core.gpt.loop import train
from core.gpt.rundir import SCHEDULER_LOCK
from core.gpt.runs import (SERVER, RunAccessError, RunLimitError, Viewer, delete_run, get_run,
                           launch_run, list_runs, pid_alive, read_metrics, read_samples, resume_run,
                           run_info, sample_run, sanitize_run_name, set_shared, stop_run,
                           unique_run_name, validate_owner)
from core.settings import ServerSettings
from test_train import CHARS, TEXT, tiny_config

ROOT = Path(__file__).resolve().parents[2]
ALICE, BOB = Viewer("alice-0123456789"), Viewer("bob-0123456789ab")
ROOMY = ServerSettings(max_running=4, max_runs_per_owner=8)


def wait_for(predicate, timeout=90.0, interval=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {predicate}")


def kill_quietly(pid):
    if pid and pid_alive(pid):
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


@pytest.fixture
def runs_dir(tmp_path):
    """A runs folder whose training processes are all killed at the end, whatever happened."""
    yield tmp_path
    for run in list_runs(tmp_path):
        kill_quietly(run.pid)
        if run.status == "queued":
            stop_run(run.path, SERVER)


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
    assert unique_run_name("a", tmp_path, BOB.owner) == "a" and unique_run_name("b", tmp_path, ALICE.owner) == "b"


def test_launch_list_and_stop_a_real_process(runs_dir):
    config = tiny_config(max_steps=20_000, eval_interval=10, log_interval=5)
    info = launch_run(config, "../sneaky name", runs_dir, owner=ALICE.owner, text=TEXT,
                      tokenizer=CharTokenizer.from_text(TEXT), settings=ROOMY)
    assert info.path == runs_dir / ALICE.owner / "sneaky-name" and info.active
    with pytest.raises(ValueError, match="already exists"):
        launch_run(config, "sneaky name", runs_dir, owner=ALICE.owner, text=TEXT, settings=ROOMY)
    wait_for(lambda: any("val_loss" in r for r in read_metrics(info.path)))
    [listed] = list_runs(runs_dir, ALICE)
    assert listed.name == "sneaky-name" and listed.status == "running" and listed.step >= 10
    assert listed.owner == ALICE.owner and listed.config["vocab_size"] == len(set(TEXT))
    # the trainer gives way to the server that launched it: pages stay quick while runs fill the cores
    assert os.getpriority(os.PRIO_PROCESS, listed.pid) >= os.getpriority(os.PRIO_PROCESS, 0) + BACKGROUND_NICENESS
    stopped = stop_run(info.path, ALICE, timeout=30)
    assert stopped.status == "stopped" and not pid_alive(listed.pid)
    ckpt = load_checkpoint(info.path / "ckpt.pt", tokenizer=CharTokenizer.from_text(TEXT))
    assert ckpt.step >= stopped.step  # the final checkpoint was written on the way out
    assert read_samples(info.path) is not None


def test_a_killed_run_is_failed_resumes_and_never_logs_a_step_twice(runs_dir):
    config = tiny_config(max_steps=20_000, eval_interval=10, log_interval=5)
    info = launch_run(config, "interrupted", runs_dir, owner=ALICE.owner, text=TEXT, settings=ROOMY)
    wait_for(lambda: (info.path / "ckpt.pt").is_file())
    first = run_info(info.path)
    os.kill(first.pid, signal.SIGKILL)
    wait_for(lambda: not pid_alive(first.pid), timeout=10)
    dead = run_info(info.path)
    assert dead.status == "failed" and "ended without finishing" in dead.error and dead.resumable
    assert stop_run(info.path, ALICE).status == "failed"  # stopping a dead run changes nothing
    saved = load_checkpoint(info.path / "ckpt.pt").step

    resume_run(info.path, ALICE, ROOMY)
    with pytest.raises(ValueError, match="already (queued|starting|running)"):
        resume_run(info.path, ALICE, ROOMY)
    wait_for(lambda: read_metrics(info.path)[-1]["step"] >= saved + 20)
    resumed = run_info(info.path)
    assert resumed.status == "running" and resumed.pid != first.pid
    assert stop_run(info.path, ALICE, timeout=30).resumable
    steps = [r["step"] for r in read_metrics(info.path)]
    assert steps == sorted(set(steps)), "a step logged twice, or out of order"
    assert saved in steps and saved + 5 in steps  # the record at the checkpoint, then onwards
    assert load_checkpoint(info.path / "ckpt.pt").step >= saved + 20


def test_two_resumes_at_once_start_one_trainer(runs_dir):
    """Both threads call resume_run at the same moment: one run is queued, the other refused; the
    checkpoint's step only ever grows and no step is logged twice."""
    config = tiny_config(max_steps=20_000, eval_interval=5, log_interval=5)
    info = launch_run(config, "twice", runs_dir, owner=ALICE.owner, text=TEXT, settings=ROOMY)
    wait_for(lambda: (info.path / "ckpt.pt").is_file())
    stop_run(info.path, ALICE, timeout=30)
    saved = load_checkpoint(info.path / "ckpt.pt").step
    barrier, outcomes = threading.Barrier(2), []

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
    assert len({run_info(info.path).pid}) == 1 and _trainers_of(info.path) == 1
    stop_run(info.path, ALICE, timeout=30)
    steps = [r["step"] for r in read_metrics(info.path)]
    assert steps == sorted(set(steps)), "a step logged twice"


def _ckpt_step(run_dir) -> int:
    try:
        return load_checkpoint(run_dir / "ckpt.pt").step
    except ValueError:  # replaced between listing and reading: read the next one
        return 0


def _trainers_of(run_dir: Path) -> int:
    """Live trainer processes (``core.gpt.worker``) whose command line names this run folder."""
    count = 0
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if b"core.gpt.worker" in cmd and str(run_dir.resolve()).encode() in cmd and state != "Z":
            count += 1
    return count


def test_the_queue_runs_one_at_a_time_in_order_and_leaves_no_zombies(runs_dir):
    """Cap 1: three runs launched at once train one after another, first in first out."""
    cap_one = ServerSettings(max_running=1, max_runs_per_owner=3)
    names = ["first", "second", "third"]
    for name in names:
        launch_run(tiny_config(max_steps=30), name, runs_dir, owner=ALICE.owner, text=TEXT,
                   settings=cap_one)
    queued = {r.name: r for r in list_runs(runs_dir, ALICE) if r.status == "queued"}
    assert queued["third"].queue_position == len(queued) and len(queued) >= 2
    order, most = [], 0

    def all_done():
        nonlocal most
        runs = list_runs(runs_dir)
        training = [r.name for r in runs if r.training]
        most = max(most, len(training))
        order.extend(n for n in training if n not in order)
        return all(r.status == "finished" for r in runs)

    wait_for(all_done, timeout=180, interval=0.1)
    assert most == 1 and order == names
    assert wait_for(lambda: not _zombies_of(os.getpid()) and not _trainers_of(runs_dir), timeout=10)


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


def test_an_owner_gets_a_few_slots_and_a_clear_refusal(runs_dir):
    settings = ServerSettings(max_running=1, max_runs_per_owner=2)
    accepted, refused = [], []
    for k in range(8):
        try:
            accepted.append(launch_run(tiny_config(max_steps=20_000), f"run{k}", runs_dir,
                                       owner=ALICE.owner, text=TEXT, settings=settings))
        except RunLimitError as exc:
            refused.append(str(exc))
    assert len(accepted) == 2 and len(refused) == 6
    assert "already have 2 runs queued or training" in refused[0]
    assert launch_run(tiny_config(), "bobs", runs_dir, owner=BOB.owner, text=TEXT, settings=settings)
    stop_run(accepted[1].path, ALICE)  # a queued run leaves the queue at once, freeing a slot
    assert run_info(accepted[1].path).status == "stopped"
    assert launch_run(tiny_config(), "again", runs_dir, owner=ALICE.owner, text=TEXT, settings=settings)


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


def test_sampling_runs_out_of_process_with_clear_errors(trained):
    runs_dir, run_dir = trained
    with pytest.raises(ValueError, match="cannot be encoded"):
        sample_run(run_dir, ALICE, "€")
    text = sample_run(run_dir, ALICE, "the cat", 16, temperature=0.5, top_k=5)
    assert text.startswith("the cat") and len(text) > len("the cat")


def test_delete_a_run_but_never_a_queued_one_or_another_folder(runs_dir):
    blocker = FileLock(runs_dir / SCHEDULER_LOCK)  # no scheduler: the run stays queued
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


def test_queued_runs_show_their_place_and_wait(runs_dir):
    """One run training (this process stands in for it) at 0.1 s a step with 100 steps left; the
    queue behind it waits about 10 s, then 10 s more per run of 100 steps ahead."""
    blocker = FileLock(runs_dir / SCHEDULER_LOCK)
    assert blocker.acquire()
    try:
        busy = runs_dir / BOB.owner / "busy"
        busy.mkdir(parents=True)
        (busy / "status.json").write_text(json.dumps({"status": "running", "pid": os.getpid(),
                                                      "max_steps": 200, "started": "2026"}))
        (busy / "metrics.jsonl").write_text("".join(json.dumps(
            {"step": s, "train_loss": 1.0, "lr": 1e-3, "tokens_per_s": 1, "elapsed_s": s / 10}) + "\n"
            for s in (10, 100)))
        for name in ("a", "b"):
            launch_run(tiny_config(max_steps=100), name, runs_dir, owner=ALICE.owner, text=TEXT,
                       settings=ServerSettings(max_running=1, max_runs_per_owner=2))
        queued = {r.name: r for r in list_runs(runs_dir, ALICE)}
        assert queued["a"].queue_position == 1 and queued["a"].wait_s == pytest.approx(10.0)
        assert queued["b"].queue_position == 2 and queued["b"].wait_s == pytest.approx(20.0)
        for name in ("a", "b"):
            stop_run(queued[name].path, ALICE)
    finally:
        blocker.release()


def test_list_runs_of_a_missing_folder(tmp_path):
    assert list_runs(tmp_path / "none") == []


def test_training_modules_do_not_load_streamlit_and_the_scheduler_not_torch():
    code = ("import sys, core.gpt.model, core.gpt.loop, core.gpt.checkpoint, core.gpt.runs, "
            "core.gpt.device; print('streamlit' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "False", out.stderr
    code = "import sys, core.gpt.scheduler; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "False", out.stderr
