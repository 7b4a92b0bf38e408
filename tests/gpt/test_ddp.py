"""Distributed training: ``torchrun --nproc_per_node 2 -m core.train`` (gloo on CPU) takes the same
steps as one process.

What is compared: both runs use the same global batch (``batch_size`` 16 windows drawn from a
generator seeded by (seed, step); each of the 2 ranks trains on 8 of them and DDP averages the
gradients), dropout 0, 3 steps.  After them the checkpointed parameters and the evaluated
validation loss must agree with a single-process run up to float rounding (the gradient mean is
summed in a different order).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from core.gpt.checkpoint import load_checkpoint
from core.gpt.loop import train
from training_data import CHARS, TEXT, tiny_config

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not torch.distributed.is_available(),
                                reason="this PyTorch build has no torch.distributed")


@pytest.mark.slow
def test_two_gloo_processes_match_one(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    settings = dict(max_steps=3, eval_interval=3, log_interval=1, sample_tokens=0, dropout=0.0)
    config = tiny_config(**settings)
    single = train(config, TEXT, CHARS, tmp_path / "one")

    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           "-m", "core.train", "--corpus", str(corpus), "--run-dir", str(tmp_path / "two"),
           "--n-layer", "1", "--n-head", "2", "--n-embd", "32", "--block-size", "16",
           "--batch-size", "16", "--max-steps", "3", "--eval-interval", "3", "--eval-iters", "4",
           "--log-interval", "1", "--sample-tokens", "0", "--lr", str(config.lr),
           "--min-lr", str(config.min_lr), "--warmup-steps", str(config.warmup_steps),
           "--device", "cpu", "--threads", "1"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]

    info = json.loads((tmp_path / "two" / "config.json").read_text())
    assert info["world_size"] == 2
    assert proc.stdout.count("step      3/3") == 1  # only rank 0 prints and writes
    one = load_checkpoint(tmp_path / "one" / "ckpt.pt").model.state_dict()
    two = load_checkpoint(tmp_path / "two" / "ckpt.pt").model.state_dict()
    assert one.keys() == two.keys()
    for name in one:
        assert torch.allclose(one[name], two[name], atol=2e-5, rtol=1e-4), name
    metrics = [json.loads(line) for line in (tmp_path / "two" / "metrics.jsonl").read_text().splitlines()]
    assert metrics[-1]["step"] == 3
    assert metrics[-1]["val_loss"] == pytest.approx(single.val_loss, abs=1e-4)
