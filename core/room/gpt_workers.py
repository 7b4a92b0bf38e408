"""What a GPT worker is: a long-lived process of the engine's (``core.room.jobs.JobEngine``, which
starts, feeds and replaces it) that trains one run's turn at a time
(``core.room.turn_runner.run_turn``), set up here before torch loads.

Why long-lived processes: a GPT worker imports torch once and keeps the runs it trained in memory, so
changing runs between turns costs a checkpoint; a process per turn would cost more in start and
imports than the turn (``core.room.limits.TURN_S``; why: docs/benchmarks.md, "Training in a room").
Each is a fresh interpreter (``spawn``), so one that dies (killed, out of memory) loses only its own
turn.  GPT workers run at background priority, with ``cores / max_running`` torch threads each and,
on a machine with GPUs, a GPU of their own or shared with ``runs_per_gpu - 1`` others (``gpu_for``):
:func:`start_gpt_process`, which the probe's step-time estimate runs too, so that it times a step in
a process set up as the run's.  On a Dask cluster a Dask worker takes their place
(``core.room.dask_jobs``).

Torch-free itself: torch is imported in the GPT worker processes only.
"""

from __future__ import annotations

import os

from .cpu_policy import CPU_SHARING_ENV, yield_cpu_to_server


def gpu_for(gpt_worker: int, gpus: int) -> int | None:
    """The GPU GPT worker number ``gpt_worker`` uses: the GPT workers spread over the GPUs in turn (with
    2 GPUs and 2 runs per GPU, GPT workers 0-3 use GPUs 0, 1, 0, 1); None without GPUs."""
    return gpt_worker % gpus if gpus else None


def visible_device(gpu: int) -> str:
    """``CUDA_VISIBLE_DEVICES`` for a GPT worker on the server's GPU number ``gpu``: the server's own
    mask, if it was started with one (``2,3``, or MIG UUIDs), names the devices it may use."""
    inherited = [d.strip() for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    return inherited[gpu] if gpu < len(inherited) else str(gpu)


def train_turn(run_dir: str, turn_id: str, seconds: float) -> dict:
    """``core.room.turn_runner.run_turn``, run in a GPT worker: what the scheduler sends (a reference by
    name that it can pass without importing torch itself)."""
    from .turn_runner import run_turn

    return run_turn(run_dir, turn_id, seconds)


def start_gpt_process(threads: int | None, gpu: int | None, background: bool = True,
                      trains: bool = True) -> None:
    """A worker's setup, before torch loads: its GPU, waiting threads that do not spin, background
    priority (unless someone waits for it: ``background=False``); then torch, with ``threads``
    threads (``None``: torch's default), and for a GPT worker (``trains``) the training code, so
    its first turn starts at once."""
    if gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = visible_device(gpu)
    for name, value in CPU_SHARING_ENV.items():
        os.environ.setdefault(name, value)
    if background:
        yield_cpu_to_server()
    import torch

    if threads:
        torch.set_num_threads(threads)
    if trains:
        from . import turn_runner  # noqa: F401  (loaded before the first turn, not during it)
