"""One optimizer step (forward, backward, gradient clipping, AdamW), run two ways.  In ``core.gpt``
and the room, a *step* is this (the metrics' ``step``, ``max_steps``); in ``core.bpe`` and the
step view it is one merge (``MergeStep``).

:class:`EagerOptimizerStep` is plain PyTorch and runs everywhere; read it first.
:class:`GraphOptimizerStep` does the very same work on CUDA, recorded once as a CUDA graph and
then replayed.  A small model on a fast GPU waits on Python launching a few hundred tiny kernels
per step; a replay launches them all at once, and unlike ``torch.compile`` recording is nearly free
(why: docs/benchmarks.md, "One optimizer step by mode").
``tests/gpt/test_optimizer_step.py`` checks on a GPU that both give the same losses.

Also here: the learning-rate schedule a step runs at, and the optimizer and step runner a run
builds.  Leaves out the data, the evaluation, the files (``core.gpt.data``, ``core.gpt.evaluate``,
``core.runfolder.layout``) and how long a step takes here (``core.room.probe``, which times this step).
"""

from __future__ import annotations

import math

import torch

from .config import TrainConfig
from .device import autocast, should_graph
from .model import GPT


class EagerOptimizerStep:
    """``step(x, y, lr)`` trains on one batch and returns the loss (a tensor: reading it waits for
    the device, so callers do that only when they log)."""

    # untimed: steps before the speed is steady (the first allocates and loads kernels); not the
    # learning rate's warm-up, ``TrainConfig.warmup_steps``
    settle_steps = 1
    cache_casts = True  # autocast's cache of bf16 weight copies, reused within a forward

    def __init__(self, model, optimizer, grad_clip: float, device: str) -> None:
        self.model = model
        self.optimizer = optimizer
        self.grad_clip = grad_clip
        self.device = device

    def set_lr(self, lr: float) -> None:
        for group in self.optimizer.param_groups:
            group["lr"] = lr

    def __call__(self, x: torch.Tensor, y: torch.Tensor, lr: float) -> torch.Tensor:
        self.set_lr(lr)
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.forward_backward(x, y)
        self.optimizer.step()
        return loss.detach()  # holding the autograd graph would keep its buffers alive

    def forward_backward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        with autocast(self.device, cache_enabled=self.cache_casts):
            _, loss = self.model(x, y)
        loss.backward()
        if self.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)
        return loss


class GraphOptimizerStep(EagerOptimizerStep):
    """The eager step, recorded as a CUDA graph after ``eager_steps`` real eager steps and replayed.

    What a replay needs to stay correct: the batch is copied into fixed input buffers; the learning
    rate lives in a device tensor the recorded AdamW reads (a Python float would be frozen into the
    graph); the optimizer is ``capturable``; autocast keeps no cast cache (PyTorch's rule for
    graphs); gradients are never set to None between replays (the graph owns their memory).
    Dropout stays random on every replay: PyTorch advances the recorded generator's offset.
    The eager steps run exactly as recorded (no cast cache either), so a ``torch.compile``d model
    is compiled once, before recording, and not again inside it.
    """

    cache_casts = False

    def __init__(self, model, optimizer, grad_clip: float, device: str, eager_steps: int = 3) -> None:
        super().__init__(model, optimizer, grad_clip, device)
        self.lr = torch.zeros((), device=device)
        for group in optimizer.param_groups:  # after any resume: load_state_dict resets groups
            group["lr"], group["capturable"] = self.lr, True
        self.eager_left = eager_steps
        self.graph = None
        self.settle_steps = eager_steps + 1  # the eager ones and the recording
        self.x = None   # the fixed input buffers every replay reads
        self.y = None
        self.loss = None

    def set_lr(self, lr: float) -> None:
        self.lr.fill_(lr)

    def __call__(self, x: torch.Tensor, y: torch.Tensor, lr: float) -> torch.Tensor:
        self.set_lr(lr)
        if self.x is None:  # the fixed buffers every step reads, eager steps too
            self.x = x.contiguous().clone()
            self.y = y.contiguous().clone()
        self.x.copy_(x)
        self.y.copy_(y)
        if self.graph is None and self.eager_left > 0:
            self.eager_left -= 1
            return self._side_stream(lambda: EagerOptimizerStep.__call__(self, self.x, self.y, lr))
        if self.graph is None:
            self._record()
        self.graph.replay()
        return self.loss

    def _side_stream(self, fn):
        """PyTorch asks for the eager steps on a side stream before recording (see "CUDA Graphs" in
        its notes), so that lazily created handles and buffers are not part of the graph."""
        stream = torch.cuda.Stream(device=self.device)
        stream.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(stream):
            result = fn()
        torch.cuda.current_stream(self.device).wait_stream(stream)
        return result

    def _record(self) -> None:
        self.optimizer.zero_grad(set_to_none=True)  # backward allocates the grads inside the graph
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.loss = self.forward_backward(self.x, self.y)
            self.optimizer.step()


def get_lr(step: int, config: TrainConfig) -> float:
    """Linear warmup, then cosine decay from ``lr`` to ``min_lr`` at ``max_steps``."""
    warmup = min(config.warmup_steps, config.max_steps // 5)
    if step < warmup:
        return config.lr * (step + 1) / (warmup + 1)
    if step >= config.max_steps:
        return config.min_lr
    ratio = (step - warmup) / max(1, config.max_steps - warmup)
    return config.min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (config.lr - config.min_lr)


def make_optimizer(model: GPT, config: TrainConfig, device: str) -> torch.optim.AdamW:
    return torch.optim.AdamW(model.optimizer_groups(config.weight_decay), lr=config.lr,
                             betas=(config.beta1, config.beta2), fused=device.startswith("cuda"))


def make_optimizer_step(model, optimizer, config: TrainConfig, device: str, distributed: bool = False):
    """The step runner a run uses here: replayed from a CUDA graph, or eager."""
    kind = GraphOptimizerStep if should_graph(device, config.cuda_graph, distributed) else EagerOptimizerStep
    return kind(model, optimizer, config.grad_clip, device)
