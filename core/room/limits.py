"""What this machine trains on (:func:`this_machine`), how big a model, and how many steps, its
device may be asked to train, how many runs train at the same moment, and how long each one's turn
lasts.

Widgets' maxima are a convenience; :func:`check_config` is the rule, applied by
``core.room.runs.launch_run`` whatever the caller sent.  On a 2-core CPU, one torch thread
(``core.room.probe``), the largest model the CPU bound allows (6 layers × 256, context 256, 4,096
tokens a step, ~5 M parameters) takes seconds a step and a few hundred MB; a 24 × 1024, context
1024, batch 512 model is refused.  On a CUDA GPU the bound allows GPT-2-small shapes (12 × 768,
context 1024, 65,536 tokens a step); nanoGPT's small preset (6 × 384, 16,384 tokens a step) trains
in well under a minute on an H100.  MPS sits between.  Why: docs/benchmarks.md, "Time-per-step
estimate" and "GPT training to a target loss".
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from dataclasses import dataclass

from ..gpt.machine import Machine, read_machine
from .worker_process import WorkerLost, call

MACHINE_TIMEOUT_S = 120.0  # for a child to load torch and read the GPUs, on a busy machine
_asked: list[Machine] = []  # this process's machine, once a child said
_asking = threading.Lock()


def this_machine(names: bool = True) -> Machine:
    """What this machine trains on: read here where torch is loaded (a GPT worker, a script) or no
    child may be started (a daemonic process), GPUs named only with ``names`` (``read_machine``),
    else asked of a one-call child once per process, so that a web server never loads torch (why:
    ``core.gpt.machine``)."""
    if "torch" in sys.modules or multiprocessing.current_process().daemon:
        return read_machine(names)
    with _asking:
        if not _asked:
            try:
                _asked.append(call(read_machine, timeout=MACHINE_TIMEOUT_S))
            except (TimeoutError, WorkerLost) as exc:  # asked again next time
                raise RuntimeError(f"PyTorch did not say what this machine trains on: {exc}") from None
        return _asked[0]


def detect_device(requested: str) -> str:
    """The device a run asking for ``requested`` trains on here (``core.gpt.machine.Machine.pick``)."""
    return this_machine(names=False).pick(requested)


class LimitError(ValueError):
    """A run that asks for more than this machine's device allows (the message says the bound).
    ``by_vocabulary``: the tokenizer's vocabulary is most of the model (a character tokenizer of a
    text in many scripts has a token per distinct character), so what helps is a tokenizer with
    fewer tokens, not a narrower model that would barely learn."""

    def __init__(self, message: str, by_vocabulary: bool = False) -> None:
        super().__init__(message)
        self.by_vocabulary = by_vocabulary


@dataclass(frozen=True)
class ModelLimits:
    device_kind: str            # "cpu", "cuda" or "mps"
    n_layer: int
    n_embd: int
    n_head: int
    block_size: int
    batch_size: int
    tokens_per_step: int        # batch_size × block_size
    params: int                 # an estimate, before the vocabulary is known (see estimate_params)
    max_steps: int

    def describe(self) -> str:
        """The line shown next to the model-size controls, e.g. "on this CPU: up to 6 layers × 256
        wide, 8 heads, context 256, batch 64 (4,096 tokens a step), 5 M parameters, 20,000 steps"."""
        where = {"cpu": "this CPU", "cuda": "this GPU", "mps": "this Mac's GPU"}[self.device_kind]
        return (f"on {where}: up to {self.n_layer} layers × {self.n_embd} wide, "
                f"{self.n_head} heads, context {self.block_size}, batch {self.batch_size} "
                f"({self.tokens_per_step:,} tokens a step), {self.params / 1e6:,.0f} M parameters, "
                f"{self.max_steps:,} steps")


LIMITS = {
    "cpu": ModelLimits("cpu", 6, 256, 8, 256, 64, 4_096, 5_000_000, 20_000),
    "mps": ModelLimits("mps", 8, 512, 8, 512, 64, 16_384, 30_000_000, 20_000),
    "cuda": ModelLimits("cuda", 12, 768, 12, 1024, 128, 65_536, 130_000_000, 50_000),
}


def limits_for(device: str) -> ModelLimits:
    """The bounds for a device string such as ``"cpu"`` or ``"cuda:0"``."""
    kind = device.split(":")[0]
    if kind not in LIMITS:
        raise LimitError(f"No limits known for device {device!r}.")
    return LIMITS[kind]


def estimate_params(n_layer: int, n_embd: int, block_size: int, vocab_size: int = 0) -> int:
    """Parameters of the GPT (tied embeddings): 12·d² per layer, plus the embeddings."""
    return n_layer * 12 * n_embd * n_embd + (vocab_size + block_size) * n_embd


def training_memory(config, vocab_size: int) -> int:
    """Bytes a run of ``config`` (a ``TrainConfig``) holds while it trains, roughly, in float32: the
    weights, their gradients and AdamW's two moments (16 bytes a parameter), and a step's
    activations (Korthikanti et al.'s count per layer and token: 17 numbers per unit of width and
    2.5 per attention score, which a fused attention kernel does not keep; then the logits and
    their gradient).  What the page states before Launch: a bound to set beside the machine's
    memory, not a measurement."""
    params = estimate_params(config.n_layer, config.n_embd, config.block_size, vocab_size)
    tokens = config.batch_size * config.block_size
    per_layer = 17 * config.n_embd + 2.5 * config.n_head * config.block_size
    return int(16 * params + 4 * tokens * (config.n_layer * per_layer + 3 * vocab_size))


SIZES = ("n_layer", "n_embd", "n_head", "block_size", "batch_size", "max_steps")
CONTROLS = {"max_steps": "Steps"}  # the page's control for a setting, where it is not the setting's name


def check_config(config, device: str, vocab_size: int = 0) -> None:
    """Raise :class:`LimitError` naming every setting of ``config`` (a ``TrainConfig``) that is
    over ``device``'s bound."""
    lim = limits_for(device)
    over = [f"{name} {getattr(config, name):,} (at most {getattr(lim, name):,})"
            for name in SIZES if getattr(config, name) > getattr(lim, name)]
    tokens = config.batch_size * config.block_size
    if tokens > lim.tokens_per_step:
        over.append(f"batch × context = {tokens:,} tokens a step (at most {lim.tokens_per_step:,})")
    params = estimate_params(config.n_layer, config.n_embd, config.block_size, vocab_size)
    by_vocabulary = params > lim.params and vocab_size * config.n_embd > params / 2
    if params > lim.params:
        over.append(f"about {params / 1e6:,.1f} M parameters (at most {lim.params / 1e6:,.0f} M)"
                    + (f", {vocab_size * config.n_embd / 1e6:,.1f} M of them for the "
                       f"{vocab_size:,} tokens of its tokenizer" if by_vocabulary else ""))
    if over:
        fewer = ("Use a tokenizer with fewer tokens (BPE on bytes reads any text with 256 tokens and "
                 "its merges), or lower " if by_vocabulary else "Lower ")
        raise LimitError(f"This model is too big {lim.describe().split(':')[0]}: " + "; ".join(over)
                         + ". " + fewer + ", ".join(_advice(config, lim, vocab_size)) + ".", by_vocabulary)


def _advice(config, lim: ModelLimits, vocab_size: int) -> list[str]:
    """Which settings to lower, and to what, so the model fits ``lim`` with the others as they are
    (each bound passed, then tokens a step, then parameters, with the lowered values): fewer steps
    never made a step of too many tokens fit, as the refusal once advised."""
    advice = [f"{CONTROLS.get(name, name)} to {getattr(lim, name):,}"
              for name in SIZES if getattr(config, name) > getattr(lim, name)]
    block = min(config.block_size, lim.block_size)
    batch = min(config.batch_size, lim.batch_size)
    if batch * block > lim.tokens_per_step:
        advice.append(f"batch_size to {lim.tokens_per_step // block:,} "
                      f"(or block_size to {lim.tokens_per_step // batch:,})")
    layers, width, step = min(config.n_layer, lim.n_layer), min(config.n_embd, lim.n_embd), config.n_head
    if estimate_params(layers, width, block, vocab_size) > lim.params:
        while width > step and estimate_params(layers, width, block, vocab_size) > lim.params:
            width -= step  # a multiple of the heads, as n_embd must be
        advice.append(f"n_embd to {width:,} (or n_layer)")
    return advice


def cpu_cores() -> int:
    """Cores this process may use (its affinity mask, not the machine's total)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


# Runs trained at the same moment on one GPU (one GPT worker process each): a small model leaves most
# of a GPU idle, so several can share it.  Chosen from bench/bench_gpu_turns.py (tokens/s of 1..N
# small runs at once, each and in all, and memory): the fewest runs that reach 90 % of the best
# total, recorded by the name torch gives the GPU; a GPU not named here trains one run at a time.
# On an H200 two small runs at once trained less in all than one alone (its CUDA-graph step keeps
# the GPU busy; docs/benchmarks.md, "Runs per GPU").
RUNS_PER_GPU: dict[str, int] = {"NVIDIA H200": 1}

# On a CPU: one GPT worker process per this many cores, each with that many torch threads.
CORES_PER_GPT_WORKER = 1

# A run's turn: the seconds a GPT worker gives it before the next run (core.room.turns).  Changing runs
# inside a GPT worker costs a checkpoint written and, when the next run was last trained elsewhere,
# one read: a small share of a turn, where starting a process for each turn (python, torch and
# core.gpt imported) would cost more than the turn (why: docs/benchmarks.md, "Training in a room").
# Short enough that a run launched into a room of 11 on 2 GPT workers logs its first steps within 30 s.
TURN_S = 3.0


def runs_per_gpu(gpu_name: str | None) -> int:
    """Runs trained at once on one GPU of this name (:data:`RUNS_PER_GPU`; 1 when not measured)."""
    return RUNS_PER_GPU.get(gpu_name or "", 1)


def default_max_running(device: str, gpu_count: int = 1, per_gpu: int = 1) -> int:
    """Runs trained at the same moment unless the server says otherwise: ``per_gpu`` on each CUDA
    GPU, one on MPS, and on a CPU one per :data:`CORES_PER_GPT_WORKER` cores (at least 1)."""
    kind = device.split(":")[0]
    if kind == "cuda":
        return max(1, gpu_count) * max(1, per_gpu)
    if kind == "mps":
        return 1
    return max(1, cpu_cores() // CORES_PER_GPT_WORKER)


def threads_per_run(max_running: int) -> int:
    """Torch threads for one CPU GPT worker, so ``max_running`` of them share the cores without
    thrashing."""
    return max(1, cpu_cores() // max(1, max_running))
