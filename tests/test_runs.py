"""core.runs: real background processes are launched, listed, stopped, and found dead."""

import os
import signal
import time

import pytest

from core import CharTokenizer
from core.checkpoint import load_checkpoint
from core.runs import (delete_run, launch_run, list_runs, pid_alive, read_metrics, read_samples,
                       resume_run, run_info, sanitize_run_name, stop_run, unique_run_name)
from test_train import TEXT, tiny_config


def wait_for(predicate, timeout=60.0, interval=0.2):
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


@pytest.mark.parametrize("name, expected", [("char tiny", "char-tiny"), ("../../etc/passwd", "etc-passwd"),
                                            ("/abs/path", "abs-path"), ("run_1.2", "run_1.2"),
                                            ("..", None), ("", None), ("  ", None)])
def test_sanitize_run_name(name, expected):
    if expected is None:
        with pytest.raises(ValueError):
            sanitize_run_name(name)
    else:
        assert sanitize_run_name(name) == expected


def test_unique_run_name(tmp_path):
    (tmp_path / "a").mkdir()
    assert unique_run_name("a", tmp_path) == "a-2" and unique_run_name("b", tmp_path) == "b"


def test_launch_list_and_stop_a_real_process(tmp_path):
    config = tiny_config(max_steps=100_000, eval_interval=10, log_interval=5)
    info = launch_run(config, "../sneaky name", tmp_path, text=TEXT, tokenizer=CharTokenizer.from_text(TEXT))
    try:
        assert info.path == tmp_path / "sneaky-name" and info.active and pid_alive(info.pid)
        with pytest.raises(ValueError, match="already exists"):
            launch_run(config, "sneaky name", tmp_path, text=TEXT)
        wait_for(lambda: any("val_loss" in r for r in read_metrics(info.path)))
        [listed] = list_runs(tmp_path)
        assert listed.name == "sneaky-name" and listed.status == "running" and listed.step >= 10
        assert listed.config["vocab_size"] == len(set(TEXT))
        stopped = stop_run(info.path, timeout=30)
        assert stopped.status == "stopped" and not pid_alive(info.pid)
        ckpt = load_checkpoint(info.path / "ckpt.pt", tokenizer=CharTokenizer.from_text(TEXT))
        assert ckpt.step >= stopped.step  # the final checkpoint was written on the way out
        assert read_samples(info.path) is not None
    finally:
        kill_quietly(info.pid)


def test_a_killed_run_is_failed_and_its_checkpoint_loads(tmp_path):
    config = tiny_config(max_steps=100_000, eval_interval=10)
    info = launch_run(config, "doomed", tmp_path, text=TEXT)
    try:
        wait_for(lambda: (info.path / "ckpt.pt").is_file())
        os.kill(info.pid, signal.SIGKILL)
        wait_for(lambda: not pid_alive(info.pid), timeout=10)
        dead = run_info(info.path)
        assert dead.status == "failed" and "ended without finishing" in dead.error
        assert run_info(info.path).status == "failed"  # recorded, not recomputed
        assert load_checkpoint(info.path / "ckpt.pt").step >= 10
        assert stop_run(info.path).status == "failed"  # stopping a dead run changes nothing
    finally:
        kill_quietly(info.pid)


def test_a_killed_run_resumes_from_its_checkpoint(tmp_path):
    config = tiny_config(max_steps=100_000, eval_interval=10, log_interval=5)
    info = launch_run(config, "interrupted", tmp_path, text=TEXT)
    resumed = None
    try:
        wait_for(lambda: (info.path / "ckpt.pt").is_file())
        os.kill(info.pid, signal.SIGKILL)
        wait_for(lambda: not pid_alive(info.pid), timeout=10)
        dead = run_info(info.path)
        assert dead.status == "failed" and dead.resumable
        saved = load_checkpoint(info.path / "ckpt.pt").step

        resumed = resume_run(info.path)
        assert resumed.active and resumed.pid != info.pid and pid_alive(resumed.pid)
        with pytest.raises(ValueError, match="still running"):
            resume_run(info.path)
        wait_for(lambda: read_metrics(info.path)[-1]["step"] >= saved + 20)
        assert run_info(info.path).status == "running"
        stopped = stop_run(info.path, timeout=30)
        assert stopped.status == "stopped" and stopped.resumable

        records = read_metrics(info.path)
        steps = [r["step"] for r in records]
        assert steps == sorted(set(steps)), "a step logged twice, or out of order"
        assert saved in steps and saved + 5 in steps  # the record at the checkpoint, then onwards
        elapsed = [r["elapsed_s"] for r in records]
        assert elapsed == sorted(elapsed)  # the clock goes on from the checkpoint's time too
        assert load_checkpoint(info.path / "ckpt.pt").step >= saved + 20
    finally:
        kill_quietly(info.pid)
        kill_quietly(resumed.pid if resumed else None)


def test_delete_a_run_but_never_a_running_one_or_another_folder(tmp_path):
    info = launch_run(tiny_config(max_steps=100_000), "to-delete", tmp_path, text=TEXT)
    try:
        with pytest.raises(ValueError, match="still running"):
            delete_run(info.path)
        stop_run(info.path, timeout=30)
        delete_run(info.path)
        assert not info.path.exists() and list_runs(tmp_path) == []
        (tmp_path / "precious").mkdir()
        with pytest.raises(ValueError, match="not a run folder"):
            delete_run(tmp_path / "precious")
        assert (tmp_path / "precious").is_dir()
    finally:
        kill_quietly(info.pid)


def test_a_run_that_fails_reports_why(tmp_path):
    info = launch_run(tiny_config(block_size=64), "too-short", tmp_path, text="tiny corpus " * 5)
    try:
        done = wait_for(lambda: (lambda r: r if not r.active else None)(run_info(info.path)))
        assert done.status == "failed" and "block size" in done.error
        assert not done.resumable  # it died before any checkpoint: nothing to resume from
    finally:
        kill_quietly(info.pid)


def test_list_runs_of_a_missing_folder(tmp_path):
    assert list_runs(tmp_path / "none") == []


def test_training_modules_do_not_load_streamlit():
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys, core.model, core.train, core.checkpoint, core.runs, core.device; "
            "print('streamlit' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parent.parent,
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
