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


def test_choosing_a_device_names_no_gpu_so_cuda_starts_only_where_a_run_uses_it(monkeypatch):
    """A GPU's name is read by starting CUDA in the process; a CPU run on a GPU machine, or a mere
    choice of device, must not (here two GPUs are made up, and naming one fails the test)."""
    torch = pytest.importorskip("torch")
    from core.gpt.device import describe_device, detect_device
    from core.room.limits import this_machine

    def named(index):
        raise AssertionError(f"GPU {index} was named (CUDA started)")

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "get_device_name", named)
    assert detect_device("auto") == "cuda" and detect_device("cpu") == "cpu"
    assert describe_device("cpu").startswith("cpu (") and this_machine(names=False).gpus == ("", "")
