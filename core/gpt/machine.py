"""What this machine can train on (its CUDA GPUs, Apple's MPS backend) and the device a run asks
for, checked against it.

Torch-free on purpose: the facts are read by a process that has torch (:func:`read_machine`), and a
web server asks a one-call child for them (``core.room.limits.this_machine``), so that an app process
never loads torch (its modules hold more memory than the rest of the app, and a full garbage
collection walks them all while every page waits).
"""

from __future__ import annotations

from dataclasses import dataclass

DEVICES = ("auto", "cpu", "cuda", "mps")


@dataclass(frozen=True)
class Machine:
    gpus: tuple[str, ...] = ()  # each CUDA GPU's name, in torch's order
    mps: bool = False

    def pick(self, requested: str = "auto") -> str:
        """``"auto"`` picks CUDA, then MPS, then CPU; an explicit choice is checked, never ignored.

        >>> Machine().pick("auto"), Machine(gpus=("H100",)).pick("auto")
        ('cpu', 'cuda')
        """
        requested = (requested or "auto").lower()
        kind = requested.split(":")[0]
        if kind not in DEVICES:
            raise ValueError(f"Unknown device {requested!r}: choose one of {', '.join(DEVICES)}.")
        if kind == "auto":
            return "cuda" if self.gpus else "mps" if self.mps else "cpu"
        if kind == "cuda" and not self.gpus:
            raise ValueError("Device 'cuda' was asked for, but this PyTorch sees no CUDA GPU. "
                             "Use --device auto or cpu.")
        if kind == "mps" and not self.mps:
            raise ValueError("Device 'mps' was asked for, but Apple's MPS backend is not available here. "
                             "Use --device auto or cpu.")
        return requested

    def describe(self, device: str, threads: int | None = None) -> str:
        """A one-line human description, e.g. ``"cuda (NVIDIA H100)"`` or ``"cpu (2 threads)"``
        (the CPU's ``threads`` are a process's own: torch's in the one that trains)."""
        if device.startswith("cuda") and self.gpus:
            index = int(device.partition(":")[2] or 0)
            return f"{device} ({self.gpus[min(index, len(self.gpus) - 1)]})"
        if device == "cpu" and threads:
            return f"cpu ({threads} thread{'s' if threads != 1 else ''})"
        return device


def read_machine(names: bool = True) -> Machine:
    """The facts as torch sees them: torch is imported here, by whoever asks.  A GPU's name is
    read only with ``names`` (reading it starts CUDA in this process, which a run on the CPU, or a
    choice of device, must not pay for: its GPUs are then named ``""``)."""
    import torch

    backend = getattr(torch.backends, "mps", None)
    gpus = range(torch.cuda.device_count()) if torch.cuda.is_available() else ()
    return Machine(tuple(torch.cuda.get_device_name(i) if names else "" for i in gpus),
                   bool(backend is not None and backend.is_available()))
