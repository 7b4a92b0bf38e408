"""What a run trains and is scored on: the corpus split into training and validation token ids,
batches of random windows, and bits per character.

Comparing tokenizers fairly: loss per token is not comparable between a character tokenizer and
a BPE one (a BPE token carries more text), so every evaluation also reports validation **bits per
character** and **bits per byte**: ``val_loss * val_tokens / val_chars / ln 2`` (and ``/ val_bytes``).
The text is split 90/10 *by characters* (``core.gpt.split``) before tokenizing, so every tokenizer
is scored on the very same validation text.  Leaves out the model and the loop (``core.gpt.evaluate``,
``core.gpt.loop``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .split import check_window, split_text


@dataclass
class Data:
    train: torch.Tensor  # token ids, int64, on the CPU
    val: torch.Tensor
    val_chars: int
    val_bytes: int

    @property
    def chars_per_token(self) -> float:
        return self.val_chars / max(1, len(self.val))

    def bits_per_char(self, val_loss: float) -> float:
        return val_loss * len(self.val) / self.val_chars / math.log(2)

    def bits_per_byte(self, val_loss: float) -> float:
        return val_loss * len(self.val) / self.val_bytes / math.log(2)

    def stats(self, block_size: int) -> dict:
        return {"train_tokens": len(self.train), "val_tokens": len(self.val),
                "val_chars": self.val_chars, "val_bytes": self.val_bytes,
                "chars_per_token": self.chars_per_token,
                "context_chars": self.chars_per_token * block_size}


def prepare_data(text: str, tokenizer, block_size: int, val_fraction: float = 0.1) -> Data:
    """Split the text 90/10 by characters, then tokenize each part."""
    train_text, val_text = split_text(text, val_fraction)
    train_ids = torch.tensor(tokenizer.encode(train_text), dtype=torch.long)
    val_ids = torch.tensor(tokenizer.encode(val_text), dtype=torch.long)
    for name, ids in (("training", train_ids), ("validation", val_ids)):
        check_window(name, len(ids), block_size)
    return Data(train_ids, val_ids, len(val_text), len(val_text.encode("utf-8")))


def get_batch(ids: torch.Tensor, batch_size: int, block_size: int, generator: torch.Generator,
              rank: int = 0, world_size: int = 1):
    """``batch_size`` random windows (x, y = x shifted by one); rank r gets its slice of them.

    The start positions are drawn on ``ids``' own device (``generator`` must live there too) and the
    windows gathered there in one indexing operation, so a GPU step never waits for the host."""
    ix = torch.randint(len(ids) - block_size, (batch_size,), generator=generator, device=ids.device)
    per_rank = batch_size // world_size
    ix = ix[rank * per_rank:(rank + 1) * per_rank]
    windows = ids[ix[:, None] + torch.arange(block_size + 1, device=ids.device)]  # (b, T + 1)
    return windows[:, :-1], windows[:, 1:]
