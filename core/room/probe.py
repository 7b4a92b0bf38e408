"""Model work the web server must not do itself: timing a training step, and sampling from a
checkpoint, each in a child process with a time limit and a memory limit (one call of
``core.room.worker_process``, set up as a GPT worker is: ``core.room.gpt_workers.start_gpt_process``).

A forward pass of a big model in the server process would stall every visitor's page (a big one
takes several GB); here it costs a short-lived process, killed at ``timeout`` seconds, whose
address space is capped (on CPU: CUDA maps far more virtual memory than it uses, so there the model
bounds of ``core.room.limits`` are the guard).  Bad input, a time or memory bound and a crash all
end in :class:`ProbeError`, whose message a page shows.

Why the estimate is timed the way it is: on a machine shared with other busy processes a step takes
anywhere from its time to many times it from one second to the next (torch threads that spin while
they wait: ``core.room.cpu_policy.CPU_SHARING_ENV``; why: docs/benchmarks.md, "Time-per-step estimate"),
so no single moment, nor a figure cached from one, may decide.  The child starts like a GPT
worker (same environment, threads, priority and device), runs the loop's own iteration
(``core.gpt.step_timing``: ``get_batch``, ``get_lr``, ``make_optimizer_step``) past its untimed
settle steps (``settle_steps``: allocation, kernel loading), and reports the median of several
blocks of steps, each ended by reading the loss as the loop does when it logs: the figure the run's
metrics will show (``tokens_per_s``), measured now, never cached.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass, replace
from pathlib import Path

from ..bpe import UnknownCharacterError
from ..gpt.config import TrainConfig
from .gpt_workers import start_gpt_process
from .limits import detect_device
from .queries import process_start
from .worker_process import WorkerLost, call, cap_address_space

DEFAULT_MEMORY = 3 * 2**30   # bytes of address space a child may map beyond torch and its own start
MEMORY_MESSAGE = "This needs more memory than the server allows for it; try a smaller model or fewer tokens."


class ProbeError(ValueError):
    """The probe failed, ran out of time or memory, or was given bad input (the message says)."""


def _run(fn, args: tuple, timeout: float, memory: int | None, threads: int | None,
         background: bool):
    """``fn(*args)`` in a child set up as a GPT worker with ``threads`` torch threads (at the
    background priority a run has, or not), its address space capped at ``memory`` bytes."""
    setup = ((start_gpt_process, (threads, None, background, False)), (cap_address_space, (memory,)))
    try:
        return call(fn, args, setup=setup, timeout=timeout)
    except TimeoutError:
        raise ProbeError(f"This took longer than {timeout:.0f} s and was stopped; try a smaller "
                         f"model or fewer tokens.") from None
    except (ValueError, OSError, WorkerLost) as exc:  # bad input, or the child died: the message says
        raise ProbeError(str(exc)) from None
    except MemoryError:
        raise ProbeError(MEMORY_MESSAGE) from None
    except Exception as exc:  # torch's allocator raises RuntimeError
        if isinstance(exc, RuntimeError) and "allocate" in str(exc):
            raise ProbeError(MEMORY_MESSAGE) from None
        raise ProbeError(f"The helper process failed: {type(exc).__name__}: {exc}"[:300]) from None


@dataclass(frozen=True)
class StepEstimate:
    """A step time measured now, and what an evaluation and a sample cost beside it: what a page
    needs to say what a run will take and what the figure assumes."""

    seconds: float    # per optimizer step, the median of the timed blocks
    device: str       # e.g. "cpu" or "cuda"
    threads: int      # torch's CPU threads in the measuring process (the run's own count)
    steps: int        # steps timed after the settle steps
    eval_batch_s: float = 0.0   # one batch of an evaluation (a forward pass, no gradients)
    token_s: float = 0.0        # one token of a sample
    start_s: float = 0.0        # a GPT worker's start to its first steady step: a process, torch and
                                # the training code loaded, the model on its device, the settle steps
    checkpoint_s: float = 0.0   # one checkpoint written (model and optimizer), as at each evaluation
    first_reading_s: float = 0.0  # once, at the first evaluation: its batches' and sample's first
                                  # call beyond the others (a GPU loads their kernels then)

    def run_seconds(self, config: TrainConfig) -> float:
        """A whole run of ``config`` alone, from Launch: a GPT worker's start, its steps, then at
        each evaluation two splits' ``eval_iters`` batches (at most: a small corpus's split may hold
        fewer windows, ``core.gpt.evaluate.eval_windows``), a checkpoint and a sample, and a sample
        every ``sample_interval`` steps (``core.gpt.loop``), the first evaluation's one-time cost
        once.  The evaluations weigh in a preset that evaluates many batches, the checkpoints in a
        large model on a GPU, and the start and the first evaluation in a short run (why:
        docs/benchmarks.md, "Time-per-step estimate")."""
        evaluations = {*range(config.eval_interval, config.max_steps + 1, config.eval_interval),
                       config.max_steps}
        samples = evaluations | set(range(config.sample_interval, config.max_steps + 1,
                                          config.sample_interval))
        return (self.start_s + self.seconds * config.max_steps + self.first_reading_s
                + len(evaluations) * (2 * config.eval_iters * self.eval_batch_s + self.checkpoint_s)
                + (len(samples) * config.sample_tokens * self.token_s if config.sample_tokens else 0.0))


def estimate_step(config, vocab_size: int, *, timeout: float = 120.0,
                  memory: int | None = DEFAULT_MEMORY) -> StepEstimate:
    """How long one optimizer step of ``config`` (a ``TrainConfig``: its model, batch, device and
    ``threads``, which should be the run's, see ``core.room.limits.threads_per_run``) takes on this
    machine now, with a vocabulary of ``vocab_size``, measured in a child process.  Whatever else
    runs on the machine meanwhile (other runs, other work) is in the figure, as it will be in the
    run's; nothing that starts later is."""
    device = detect_device(config.device)
    memory = None if device.startswith("cuda") else memory
    return _run(_estimate, (replace(config, device=device), int(vocab_size)), timeout, memory,
                config.threads or None, background=True)


def run_step_seconds(metrics: list[dict], tokens_per_step: int) -> float | None:
    """A run's steady-state seconds per step, read back from its metrics: the median over its
    logged blocks of steps (``tokens_per_s`` leaves evaluation out), the first block, which holds
    the settle steps, left out.  The figure :func:`estimate_step` predicts; None before two blocks."""
    blocks = [tokens_per_step / r["tokens_per_s"] for r in metrics[1:] if r.get("tokens_per_s")]
    return statistics.median(blocks) if blocks else None


MAX_PROMPT_CHARS = 10_000


def sample_checkpoint(run_dir, prompt: str, max_new_tokens: int, temperature: float = 0.8,
                      top_k: int | None = None, *, timeout: float = 60.0,
                      memory: int | None = DEFAULT_MEMORY) -> str:
    """Text generated on the CPU from the run's checkpoint (verified, see core.gpt.checkpoint), at
    the server's priority (somebody waits for it).  A prompt over ``MAX_PROMPT_CHARS`` is refused
    (``ValueError``): the model reads only its last ``block_size`` tokens anyway."""
    if len(prompt) > MAX_PROMPT_CHARS:
        raise ValueError(f"The prompt is {len(prompt):,} characters long; at most {MAX_PROMPT_CHARS:,} "
                         "are sent to the model (it reads only its last few hundred tokens).")
    return _run(_sample, (str(Path(run_dir).resolve()), prompt or "\n", int(max_new_tokens),
                          float(temperature), int(top_k or 0) or None), timeout, memory, 1, background=False)


# -- in the child (torch is imported here, never in the server that asks) ------------------------
def process_age() -> float:
    """Seconds since this process started (Linux's ``/proc``; 0 where it does not say)."""
    try:
        with open("/proc/uptime", "rb") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - process_start(os.getpid()) / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, TypeError):  # no /proc: no start either
        return 0.0


def _estimate(config: TrainConfig, vocab_size: int) -> StepEstimate:
    import torch

    from ..gpt.step_timing import time_checkpoint, time_reading, time_steps

    started_s = process_age()  # this child was started as a GPT worker is: what a run's start costs
    timed = time_steps(config, vocab_size, config.device)
    eval_batch_s, token_s, first_s = time_reading(timed.model, config, vocab_size, config.device)
    return StepEstimate(timed.seconds, config.device, torch.get_num_threads(), timed.steps, eval_batch_s,
                        token_s, started_s + timed.ready_s, time_checkpoint(timed, config), first_s)


def _sample(run_dir: str, prompt: str, tokens: int, temperature: float, top_k: int | None) -> str:
    from ..gpt.checkpoint import checkpoint_path, load_checkpoint
    from ..gpt.evaluate import sample_text

    ckpt = load_checkpoint(checkpoint_path(run_dir))
    try:
        return sample_text(ckpt.model, ckpt.tokenizer, "cpu", tokens, prompt=prompt,
                           temperature=temperature, top_k=top_k)
    except UnknownCharacterError as exc:
        raise ValueError(f"The prompt cannot be encoded with this run's tokenizer: {exc}") from None
