"""Reading a model without training it: its mean loss on fixed windows, and text sampled from it.

Used by the loop at every evaluation, and by ``core.room.probe`` to sample from a checkpoint.
Leaves out the optimizer and the files (``core.gpt.optimizer_step``, ``core.runfolder.layout``).
"""

from __future__ import annotations

import torch

from .config import TrainConfig
from .device import autocast
from .model import GPT


def eval_windows(config: TrainConfig, val_tokens: int) -> int:
    """How many windows an evaluation scores: ``eval_iters`` batches' worth, but never more than
    the validation split holds, so a small split is scored whole and the train estimate costs the
    same as the validation one."""
    return max(1, min(config.eval_iters * config.batch_size, (val_tokens - 1) // config.block_size))


@torch.no_grad()
def estimate_loss(model: GPT, ids: torch.Tensor, config: TrainConfig, device: str,
                  n_windows: int) -> float:
    """Mean loss over ``n_windows`` evenly spaced, non-overlapping windows of ``ids``.

    The same windows every time, so the curve moves only when the model does; each token is scored
    at a context position spread evenly over 0..T-1, as random windows would on average."""
    model.eval()
    T = config.block_size
    available = (len(ids) - 1) // T
    n = min(n_windows, available)
    starts = torch.arange(n, device=ids.device) * available // n * T
    total = 0.0
    for batch in starts.split(config.batch_size):
        windows = ids[batch[:, None] + torch.arange(T + 1, device=ids.device)]
        with autocast(device):
            _, loss = model(windows[:, :-1].to(device), windows[:, 1:].to(device))
        total += loss.float() * len(batch)
    model.train()
    return float(total) / n


def sample_text(model: GPT, tokenizer, device: str, max_new_tokens: int, prompt: str = "\n",
                temperature: float = 0.8, top_k: int | None = None) -> str:
    """Generate from ``prompt`` (may raise UnknownCharacterError); returns prompt + continuation."""
    ids = tokenizer.encode(prompt, unknown="skip") if prompt == "\n" else tokenizer.encode(prompt)
    if not ids:
        ids = [0]
    was_training = model.training
    model.eval()
    with autocast(device):
        out = model.generate(torch.tensor([ids], dtype=torch.long, device=device), max_new_tokens,
                             temperature=temperature, top_k=top_k)
    model.train(was_training)
    return tokenizer.decode(out[0].tolist())
