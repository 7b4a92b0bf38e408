"""Checkpoint files: model weights, both configs, the tokenizer, the step and the optimizer state.

A checkpoint holds only plain dicts, lists, numbers, strings and tensors, so loading uses
``torch.load(weights_only=True)``: opening a file never runs code from it.  Writing is atomic
(``core.atomic.atomic_write``), so a crash mid-write leaves the previous checkpoint.
Every problem becomes a :class:`CheckpointError` (a ``ValueError``) naming the file.

Version 2 files carry a SHA-256 of every tensor they hold (weights and optimizer state, walked in
sorted-key order, each tensor's name, dtype, shape and bytes), and loading recomputes it: PyTorch's
zip format does not check its own data, so a flipped bit on disk would otherwise load as silently
changed weights.  Version 1 files (written before checksums) still load, unverified: they were
written by this program on this server, and refusing them would strand every earlier run.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import torch

from ..bpe import TokenizerFileError, tokenizer_from_dict
from ..atomic import atomic_write
from .model import GPT, GPTConfig
from ..runfolder.layout import CHECKPOINT_FILE

FORMAT = "bpe-explorer/gpt-checkpoint"
VERSION = 2
READABLE_VERSIONS = (1, 2)  # 1: no checksum


class CheckpointError(ValueError):
    pass


@dataclass
class Checkpoint:
    """A loaded checkpoint: ``model`` is ready to use (in eval mode, on the device asked for)."""

    path: Path
    model: GPT
    model_config: GPTConfig
    train_config: dict
    tokenizer: object
    step: int
    optimizer_state: dict | None
    extra: dict


def checkpoint_path(run_dir) -> Path:
    return Path(run_dir) / CHECKPOINT_FILE


def save_checkpoint(path, model: GPT, tokenizer, step: int, train_config: dict | None = None,
                    optimizer=None, extra: dict | None = None) -> Path:
    """Write ``path`` atomically.  ``model`` must be the plain module (not DDP/compiled)."""
    path = Path(path)
    state = {
        "format": FORMAT,
        "version": VERSION,
        "model_state": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "model_config": model.config.to_dict(),
        "train_config": dict(train_config or {}),
        "tokenizer": tokenizer.to_dict(),
        "step": int(step),
        "optimizer_state": optimizer.state_dict() if optimizer is not None else None,
        "extra": dict(extra or {}),
    }
    state["checksum"] = tensor_checksum(state)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, "wb") as f:
        torch.save(state, f)
    return path


def read_checkpoint(path) -> dict:
    """The raw dict stored in ``path``; any unreadable, corrupt or foreign file -> CheckpointError."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"No checkpoint at {path}.")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # zip/pickle errors from a truncated or foreign file
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CheckpointError(f"{path} is not a readable checkpoint (corrupt, truncated or not a "
                              f"PyTorch file): {first_line[:200]}") from None
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise CheckpointError(f"{path} is a PyTorch file but not a BPE Explorer GPT checkpoint.")
    if state.get("version") not in READABLE_VERSIONS:
        raise CheckpointError(f"{path} has checkpoint version {state.get('version')!r}; this "
                              f"program reads versions {', '.join(map(str, READABLE_VERSIONS))}.")
    missing = [k for k in ("model_state", "model_config", "tokenizer", "step") if k not in state]
    if state["version"] >= 2 and "checksum" not in state:
        missing.append("checksum")
    if missing:
        raise CheckpointError(f"{path} is missing {', '.join(missing)}.")
    if state["version"] >= 2 and state["checksum"] != tensor_checksum(state):
        raise CheckpointError(f"{path} is corrupt: its tensors do not match the checksum stored "
                              f"with them (a damaged disk or copy?). It was not loaded; resume "
                              f"from another copy, or start a new run.")
    return state


def tensor_checksum(state: dict) -> str:
    """SHA-256 over the tensors in ``state["model_state"]`` and ``state["optimizer_state"]``,
    in sorted-key order, each with its path, dtype and shape."""
    digest = hashlib.sha256()
    _hash_tree(digest, "model_state", state.get("model_state"))
    _hash_tree(digest, "optimizer_state", state.get("optimizer_state"))
    return digest.hexdigest()


def _hash_tree(digest, name: str, value) -> None:
    if isinstance(value, torch.Tensor):
        t = value.detach().cpu().contiguous().reshape(-1)
        digest.update(f"{name}|{t.dtype}|{tuple(value.shape)}|".encode())
        digest.update(t.view(torch.uint8).numpy().tobytes())
    elif isinstance(value, dict):
        for key in sorted(value, key=repr):
            _hash_tree(digest, f"{name}/{key!r}", value[key])
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _hash_tree(digest, f"{name}/{i}", item)


def load_checkpoint(path, tokenizer=None, device: str = "cpu") -> Checkpoint:
    """Load ``path``; if ``tokenizer`` is given, it must equal the checkpoint's tokenizer."""
    path = Path(path)
    state = read_checkpoint(path)
    try:
        stored_tok = tokenizer_from_dict(state["tokenizer"], source=f"the tokenizer in {path}")
    except TokenizerFileError as exc:
        raise CheckpointError(str(exc)) from None
    if tokenizer is not None and stored_tok != tokenizer:
        raise CheckpointError(
            f"{path} was trained with a different tokenizer ({stored_tok!r}) than the one given "
            f"({tokenizer!r}); the token ids would mean different things. Use the checkpoint's own "
            f"tokenizer, or start a new run.")
    try:
        config = GPTConfig(**state["model_config"])
        model = GPT(config)
        model.load_state_dict(state["model_state"])
    except (TypeError, ValueError, RuntimeError) as exc:
        raise CheckpointError(f"{path} holds weights that do not fit its model config: "
                              f"{str(exc).splitlines()[0][:200]}") from None
    if stored_tok.vocab_size != config.vocab_size:
        raise CheckpointError(f"{path}: the tokenizer has {stored_tok.vocab_size} tokens but the "
                              f"model expects {config.vocab_size}.")
    model.to(device).eval()
    return Checkpoint(path=path, model=model, model_config=config,
                      train_config=dict(state.get("train_config") or {}), tokenizer=stored_tok,
                      step=int(state["step"]), optimizer_state=state.get("optimizer_state"),
                      extra=dict(state.get("extra") or {}))


def load_optimizer_state(optimizer: torch.optim.Optimizer, state: dict) -> None:
    """``optimizer.load_state_dict(state)``, portable across devices and step runners.

    A state dict carries its run's execution flags (``fused``, ``capturable``, a tensor ``lr`` from
    a CUDA-graph run) and keeps Adam's step counters where that run kept them.  Resuming a GPU run
    on the CPU, or a CPU run on a GPU, needs this optimizer's own flags and counters beside the
    parameters they count for."""
    own = [{k: group[k] for k in ("lr", "fused", "capturable") if k in group}
           for group in optimizer.param_groups]
    try:
        optimizer.load_state_dict(state)
    except (ValueError, KeyError, TypeError, RuntimeError) as exc:
        raise CheckpointError(f"The optimizer state does not fit this model: {exc}") from None
    for group, flags in zip(optimizer.param_groups, own):
        group.update(flags)
        on_device = group.get("fused") or group.get("capturable")
        for p in group["params"]:
            step = optimizer.state.get(p, {}).get("step")
            if isinstance(step, torch.Tensor):
                optimizer.state[p]["step"] = step.to(p.device if on_device else "cpu")
