"""Where a model runs: picking CUDA -> MPS -> CPU, and the speed-ups only CUDA gets.

bf16 autocast, CUDA graphs and (when asked for) ``torch.compile`` are used on CUDA only; on MPS
and CPU the model runs in plain float32 and eager mode (they are slower or unsupported there).
Owns no training logic.
"""

from __future__ import annotations

import contextlib

import torch

DEVICES = ("auto", "cpu", "cuda", "mps")


def mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def detect_device(requested: str = "auto") -> str:
    """``"auto"`` picks CUDA, then MPS, then CPU; an explicit choice is checked, never ignored.

    >>> detect_device("cpu")
    'cpu'
    """
    requested = (requested or "auto").lower()
    kind = requested.split(":")[0]
    if kind not in DEVICES:
        raise ValueError(f"Unknown device {requested!r}: choose one of {', '.join(DEVICES)}.")
    if kind == "auto":
        if torch.cuda.is_available():
            return "cuda"
        return "mps" if mps_available() else "cpu"
    if kind == "cuda" and not torch.cuda.is_available():
        raise ValueError("Device 'cuda' was asked for, but this PyTorch sees no CUDA GPU. "
                         "Use --device auto or cpu.")
    if kind == "mps" and not mps_available():
        raise ValueError("Device 'mps' was asked for, but Apple's MPS backend is not available here. "
                         "Use --device auto or cpu.")
    return requested


def describe_device(device: str) -> str:
    """A one-line human description, e.g. ``"cuda (NVIDIA H100)"`` or ``"cpu (2 threads)"``."""
    if device.startswith("cuda"):
        return f"{device} ({torch.cuda.get_device_name(torch.device(device))})"
    if device == "cpu":
        threads = torch.get_num_threads()
        return f"cpu ({threads} thread{'s' if threads != 1 else ''})"
    return device


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
