"""core.gpt.loop and core.gpt.cli: the loss goes down, the files a run writes, bits per character,
resume, training in turns, the CLI."""

import json
import math
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from core import BPETokenizer, CharTokenizer
from core.gpt.checkpoint import load_checkpoint
from core.gpt.config import PRESETS, default_preset, make_config
from core.gpt.data import prepare_data
from core.runfolder.locks import FileLock
from core.gpt.loop import Hooks, RunLockedError, Training, train
from core.gpt.optimizer_step import get_lr
from training_data import CHARS, TEXT, tiny_config

ROOT = Path(__file__).resolve().parents[2]
@pytest.fixture(autouse=True)
def restore_threads():
    old = torch.get_num_threads()
    yield
    torch.set_num_threads(old)


def test_a_few_steps_make_the_loss_go_down(tmp_path):
    result = train(tiny_config(max_steps=60), TEXT, CHARS, tmp_path)
    evals = [r for r in result.records if "val_loss" in r]
    assert result.status == "finished" and result.step == 60
    assert evals[-1]["val_loss"] < evals[0]["val_loss"] - 0.3
    assert evals[-1]["val_loss"] < math.log(len(set(TEXT)))  # better than uniform guessing


def test_run_files(tmp_path):
    seen = []
    train(tiny_config(max_steps=20, eval_interval=10), TEXT, CHARS, tmp_path, Hooks(on_step=seen.append))
    lines = (tmp_path / "metrics.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert records == seen and [r["step"] for r in records] == [5, 10, 15, 20]
    for r in records:
        assert {"step", "train_loss", "lr", "tokens_per_s", "elapsed_s"} <= r.keys()
    assert {"val_loss", "val_bpc", "val_bpb", "train_loss_est"} <= records[1].keys()
    samples = [json.loads(line) for line in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert samples[-1]["step"] == 20 and isinstance(samples[-1]["text"], str)
    status = json.loads((tmp_path / "status.json").read_text())
    assert status["status"] == "finished" and status["error"] is None and status["ended"]
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["vocab_size"] == len(set(TEXT)) and config["context_chars"] == pytest.approx(16.0)
    assert load_checkpoint(tmp_path / "ckpt.pt").step == 20


def test_a_run_s_samples_span_its_evaluations_each_with_its_bits_per_character(tmp_path):
    """A sample at every evaluation, with the bits per character measured there, across a resume:
    the history a newcomer steps through to watch the text improve."""
    train(tiny_config(max_steps=20, eval_interval=10, sample_interval=1000), TEXT, CHARS, tmp_path)
    train(tiny_config(max_steps=30, eval_interval=10, sample_interval=1000, resume=True), TEXT, CHARS,
          tmp_path)
    metrics = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    samples = [json.loads(line) for line in (tmp_path / "samples.jsonl").read_text().splitlines()]
    evaluated = {r["step"]: r["val_bpc"] for r in metrics if "val_bpc" in r}
    assert [r["step"] for r in samples] == list(evaluated) == [10, 20, 30]
    assert all(r["val_bpc"] == evaluated[r["step"]] and r["text"] for r in samples)


def test_bits_per_character_is_fair_across_tokenizers():
    """Same val text, so loss * tokens / chars / ln 2 compares a char and a BPE tokenizer."""
    char = prepare_data(TEXT, CharTokenizer.from_text(TEXT), 16)
    bpe = prepare_data(TEXT, BPETokenizer.from_text(TEXT, 40), 16)
    assert char.val_chars == bpe.val_chars == len(TEXT) - int(len(TEXT) * 0.9)
    assert char.chars_per_token == 1.0 and bpe.chars_per_token > 1.5
    assert char.bits_per_char(math.log(2)) == pytest.approx(1.0)
    # a BPE model that predicts each token with loss L spends L * tokens / chars nats per char
    assert bpe.bits_per_char(1.0) == pytest.approx(len(bpe.val) / bpe.val_chars / math.log(2))
    text = "héllo wörld, 한국어 " * 40
    data = prepare_data(text, CharTokenizer.from_text(text), 8)
    assert data.val_bytes > data.val_chars and data.bits_per_byte(1.0) < data.bits_per_char(1.0)


def test_resume_continues_the_step_count(tmp_path):
    config = tiny_config(max_steps=20, eval_interval=10)
    train(config, TEXT, CHARS, tmp_path)
    result = train(tiny_config(max_steps=30, eval_interval=10, resume=True), TEXT, CHARS, tmp_path)
    assert result.step == 30
    steps = [json.loads(line)["step"] for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert steps == [5, 10, 15, 20, 25, 30]
    assert load_checkpoint(tmp_path / "ckpt.pt").step == 30


def test_resume_after_a_kill_logs_each_step_once(tmp_path):
    train(tiny_config(max_steps=20, eval_interval=10), TEXT, CHARS, tmp_path)  # checkpoint at 20
    with open(tmp_path / "metrics.jsonl", "a") as f:  # then it logged on, and died mid-line
        f.write(json.dumps({"step": 25, "train_loss": 9.0, "lr": 0.0, "tokens_per_s": 0.0,
                            "elapsed_s": 99.0}) + "\n" + '{"step": 30, "train_lo')
    with open(tmp_path / "samples.jsonl", "a") as f:
        f.write(json.dumps({"step": 25, "text": "lost"}) + "\n")
    train(tiny_config(max_steps=30, eval_interval=10, resume=True), TEXT, CHARS, tmp_path)
    metrics = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in metrics] == [5, 10, 15, 20, 25, 30]
    assert metrics[4]["train_loss"] != 9.0  # step 25 is the resumed run's, not the dead one's
    samples = [json.loads(line) for line in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert [r["step"] for r in samples] == [10, 20, 30]


def test_training_in_turns_gives_the_same_model_as_training_at_once(tmp_path):
    """Turns of 10 ms (a step takes longer than 1 ms here), each ending with a checkpoint, some
    carried on in memory and some from the checkpoint (as a run's next turn in another GPT worker):
    the same steps logged once each, and the same weights as one uninterrupted run (dropout 0,
    batches drawn by step)."""
    config = tiny_config(max_steps=80, eval_interval=20, dropout=0.0)
    once = train(config, TEXT, CHARS, tmp_path / "once")
    data = prepare_data(TEXT, CHARS, config.block_size)
    (tmp_path / "turns").mkdir()
    training = Training(config, CHARS, data, tmp_path / "turns")
    turns = 0
    while training.advance(until=time.monotonic() + 0.01) == "paused":
        training.save()
        turns += 1
        if turns % 2:  # the next turn elsewhere: from the checkpoint alone
            training = Training(replace(config, resume=True), CHARS, data, tmp_path / "turns")
    training.save()
    assert turns >= 4 and training.step == 80
    metrics = (tmp_path / "turns" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["step"] for line in metrics] == list(range(5, 81, 5))
    a = load_checkpoint(once.checkpoint).model.state_dict()
    b = load_checkpoint(tmp_path / "turns" / "ckpt.pt").model.state_dict()
    assert all(torch.equal(a[name], b[name]) for name in a)


def test_every_checkpoint_is_written_after_its_step_is_logged(tmp_path, monkeypatch):
    """A GPT worker killed between the two must not leave a checkpoint whose evaluation was never
    logged: the run would resume after it, and that step's bits per character would be lost."""
    from core.gpt import loop

    saved, real = [], loop.save_checkpoint

    def save(path, model, tokenizer, step, *args, **kwargs):
        metrics = tmp_path / "metrics.jsonl"
        lines = metrics.read_text().splitlines() if metrics.exists() else []
        logged = [json.loads(line)["step"] for line in lines]
        saved.append((step, step in logged))
        return real(path, model, tokenizer, step, *args, **kwargs)

    monkeypatch.setattr(loop, "save_checkpoint", save)
    train(tiny_config(max_steps=30, eval_interval=10), TEXT, CHARS, tmp_path)
    assert saved == [(10, True), (20, True), (30, True)]


def test_resume_needs_a_checkpoint_and_the_same_tokenizer(tmp_path):
    with pytest.raises(ValueError, match="no checkpoint"):
        train(tiny_config(resume=True), TEXT, CHARS, tmp_path / "empty")
    assert json.loads((tmp_path / "empty" / "status.json").read_text())["status"] == "failed"
    train(tiny_config(max_steps=10), TEXT, CHARS, tmp_path)
    with pytest.raises(ValueError, match="different tokenizer"):
        train(tiny_config(max_steps=20, resume=True), TEXT, BPETokenizer.from_text(TEXT, 5), tmp_path)


def test_should_stop_ends_cleanly_with_a_checkpoint(tmp_path):
    calls = []
    result = train(tiny_config(max_steps=1000), TEXT, CHARS, tmp_path,
                   Hooks(should_stop=lambda: calls.append(1) or len(calls) > 7))
    assert result.status == "stopped" and result.step == 7
    assert json.loads((tmp_path / "status.json").read_text())["status"] == "stopped"
    assert load_checkpoint(tmp_path / "ckpt.pt").step == 7


def test_bpe_tokenizer_trains(tmp_path):
    result = train(tiny_config(max_steps=10, eval_interval=10), TEXT, BPETokenizer.from_text(TEXT, 30),
                   tmp_path)
    ckpt = load_checkpoint(tmp_path / "ckpt.pt", tokenizer=BPETokenizer.from_text(TEXT, 30))
    assert result.step == 10 and ckpt.model_config.vocab_size == len(set(TEXT)) + 30


def test_too_short_corpus_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="block size"):
        train(tiny_config(block_size=64), "short text " * 10, CharTokenizer.from_text("short text "),
              tmp_path)


def test_schedule_and_presets():
    config = make_config("small")
    assert (config.n_layer, config.n_head, config.n_embd, config.block_size, config.batch_size,
            config.dropout, config.max_steps, config.warmup_steps, config.min_lr) == (
        6, 6, 384, 256, 64, 0.2, 2000, 100, 1e-4)
    assert get_lr(0, config) < get_lr(99, config) <= config.lr
    assert get_lr(100, config) == pytest.approx(config.lr)
    assert get_lr(2000, config) == config.min_lr
    assert all(get_lr(s, config) >= config.min_lr for s in range(100, 2001, 50))
    assert set(PRESETS) == {"quick", "tiny", "small"}
    assert [default_preset(d) for d in ("cpu", "mps", "cuda:1")] == ["quick", "quick", "small"]
    with pytest.raises(ValueError, match="Unknown training setting"):
        make_config("tiny", n_layers=3)
    with pytest.raises(ValueError, match="preset"):
        make_config("huge")


@pytest.mark.slow
def test_the_command_line_sets_passive_cpu_threads_before_torch_loads():
    """``python -m core.train`` waits like the app's GPT workers (no spinning threads on shared
    cores), unless whoever started it chose otherwise."""
    code = ("import os, sys; import core.train; "
             "print(os.environ['OMP_WAIT_POLICY'], 'torch' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["PASSIVE", "True"], out.stderr
    env["OMP_WAIT_POLICY"] = "ACTIVE"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.stdout.split()[0] == "ACTIVE"


def _cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "core.train", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.slow
def test_cli_writes_metrics_and_checkpoint(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    run_dir = tmp_path / "run"
    proc = _cli("--corpus", str(corpus), "--tokenizer", "char", "--preset", "tiny", "--n-layer", "1",
                "--n-head", "2", "--n-embd", "32", "--block-size", "16", "--batch-size", "8",
                "--max-steps", "12", "--eval-interval", "6", "--eval-iters", "2", "--device", "cpu",
                "--threads", "1", "--run-dir", str(run_dir))
    assert proc.returncode == 0, proc.stderr
    assert "step     12/12" in proc.stdout and "bits/char" in proc.stdout
    assert (run_dir / "metrics.jsonl").is_file() and load_checkpoint(run_dir / "ckpt.pt").step == 12


def test_cli_fails_clearly_on_a_missing_corpus(tmp_path):
    proc = _cli("--corpus", str(tmp_path / "nope.txt"), "--run-dir", str(tmp_path / "run"),
                "--device", "cpu")
    assert proc.returncode != 0
    assert "error: Cannot read" in proc.stderr and "nope.txt" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_fails_clearly_on_bad_sizes(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text(TEXT)
    proc = _cli("--corpus", str(corpus), "--n-embd", "30", "--n-head", "4", "--run-dir", str(tmp_path / "r"))
    assert proc.returncode != 0 and "divisible" in proc.stderr and "Traceback" not in proc.stderr


def test_a_second_gpt_worker_for_a_folder_changes_nothing(tmp_path):
    """While one process trains in a folder (it holds train.lock), another one, in this process
    or from the command line, leaves status, metrics and checkpoint exactly as they were."""
    run_dir = tmp_path / "run"
    train(tiny_config(max_steps=20), TEXT, CHARS, run_dir)
    before = {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file()}
    holder = FileLock(run_dir / "train.lock")
    assert holder.acquire()
    try:
        with pytest.raises(RunLockedError, match="already training"):
            train(tiny_config(max_steps=40, resume=True), TEXT, CHARS, run_dir)
        corpus = tmp_path / "corpus.txt"
        corpus.write_text(TEXT)
        out = subprocess.run([sys.executable, "-m", "core.train", "--corpus", str(corpus),
                              "--run-dir", str(run_dir), "--resume", "--max-steps", "40",
                              "--n-layer", "1", "--n-embd", "32", "--n-head", "2",
                              "--block-size", "16", "--device", "cpu"],
                             cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert out.returncode == 1 and "already training" in out.stderr
    finally:
        holder.release()
    assert {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file()} == before
