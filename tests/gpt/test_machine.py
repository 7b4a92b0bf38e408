"""core.gpt.machine: the device a run asks for, checked against what this machine has, decided
without torch; and the facts, read once by a child where the asking process has no torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from core.gpt.machine import Machine

ROOT = Path(__file__).resolve().parents[2]


def test_auto_picks_cuda_then_mps_then_the_cpu():
    assert Machine(gpus=("A100",), mps=True).pick() == "cuda"
    assert Machine(mps=True).pick("auto") == "mps"
    assert Machine().pick("") == "cpu"


def test_an_explicit_choice_is_checked_never_ignored():
    assert Machine(gpus=("A100", "A100")).pick("cuda:1") == "cuda:1"
    assert Machine().pick("CPU") == "cpu"
    for asked, said in (("cuda", "no CUDA GPU"), ("mps", "MPS backend"), ("tpu", "Unknown device")):
        with pytest.raises(ValueError, match=said):
            Machine().pick(asked)


def test_a_device_is_described_by_its_gpu_s_name_or_its_threads():
    machine = Machine(gpus=("NVIDIA A100", "NVIDIA H100"))
    assert machine.describe("cuda") == "cuda (NVIDIA A100)"
    assert machine.describe("cuda:1") == "cuda:1 (NVIDIA H100)"
    assert machine.describe("cpu", 1) == "cpu (1 thread)" and machine.describe("cpu", 4) == "cpu (4 threads)"
    assert Machine(mps=True).describe("mps") == "mps"


ASK = """
import sys
from core.room.limits import detect_device, this_machine
from core.gpt.machine import read_machine
asked = this_machine()
print("torch" in sys.modules, asked == read_machine(), detect_device("auto") == asked.pick())
"""


@pytest.mark.slow  # a child loads torch
def test_a_process_without_torch_asks_a_child_and_stays_without_it():
    done = subprocess.run([sys.executable, "-c", ASK], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "True", "True"]
