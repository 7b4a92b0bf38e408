"""Where a model runs: the device a run asked for, checked against this machine as torch sees it
(``core.gpt.machine``), and the speed-ups only CUDA gets.

bf16 autocast, CUDA graphs and (when asked for) ``torch.compile`` are used on CUDA only; on MPS
and CPU the model runs in plain float32 and eager mode (they are slower or unsupported there).
Owns no training logic.
"""

from __future__ import annotations

import contextlib

import torch

from .machine import read_machine


def detect_device(requested: str = "auto") -> str:
    """This machine's device for ``requested`` (``core.gpt.machine.Machine.pick``).

    >>> detect_device("cpu")
    'cpu'
    """
    return read_machine(names=False).pick(requested)


def describe_device(device: str) -> str:
    """``device`` in words, a CPU with this process's torch threads: ``"cpu (2 threads)"``."""
    return read_machine(names=device.startswith("cuda")).describe(device, torch.get_num_threads())


def use_bf16(device: str) -> bool:
    return device.startswith("cuda") and torch.cuda.is_bf16_supported()


def autocast(device: str, cache_enabled: bool = True):
    """bf16 autocast on CUDA (where supported); a no-op context everywhere else."""
    if use_bf16(device):
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16, cache_enabled=cache_enabled)
    return contextlib.nullcontext()


def should_compile(device: str, requested: bool | None = None) -> bool:
    """``torch.compile`` on CUDA when asked for (``requested=True``).  Off by default: on the
    small preset its compiling before the first step is won back over the CUDA-graph step only on
    long runs (why: docs/benchmarks.md, "One optimizer step by mode")."""
    return device.startswith("cuda") and requested is True


def should_graph(device: str, requested: bool | None = None, distributed: bool = False) -> bool:
    """Replay training steps from a CUDA graph (``core.gpt.optimizer_step.GraphOptimizerStep``): on
    CUDA in a single process (DDP's gradient hooks are not recorded here); ``requested=False``
    turns it off."""
    return device.startswith("cuda") and not distributed and requested is not False
