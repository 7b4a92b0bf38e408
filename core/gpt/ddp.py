"""Training in several processes: who this process is under ``torchrun``, and the few collective
calls the loop makes.

Started under ``torchrun --nproc_per_node N``, a run uses DDP (nccl on CUDA, gloo on CPU).  Each
step draws one global batch of ``batch_size`` windows from a generator seeded by ``(seed, step)``;
rank r trains on its ``batch_size / N`` slice, so N processes take the same step one process would
(up to float rounding, with dropout 0).  Rank 0 alone writes the run folder.  Leaves out the loop
itself (``core.gpt.loop``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as torch_dist
from torch.nn.parallel import DistributedDataParallel


@dataclass
class Dist:
    """This process's place among the run's processes, and the device it trains on."""

    device: str
    rank: int = 0
    local_rank: int = 0
    world_size: int = 1

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def master(self) -> bool:
        return self.rank == 0

    def wrap(self, model):
        """The model as the loop steps it: under DDP when distributed, else itself."""
        if not self.enabled:
            return model
        return DistributedDataParallel(model, device_ids=[self.local_rank]
                                       if self.device.startswith("cuda") else None)

    def any(self, flag: bool) -> bool:
        """Whether ``flag`` is true on any rank, so that every rank stops at the same step."""
        if not self.enabled:
            return flag
        t = torch.tensor([1.0 if flag else 0.0], device=self.device)
        torch_dist.all_reduce(t, op=torch_dist.ReduceOp.MAX)
        return bool(t.item())

    def close(self) -> None:
        """Leave the group together: rank 0 still writes the last checkpoint after the loop, and a
        rank that tears gloo down while a peer is busy can abort ("terminate called...")."""
        if self.enabled and torch_dist.is_initialized():
            torch_dist.barrier()
            torch_dist.destroy_process_group()


def setup_distributed(device: str) -> Dist:
    """This process's :class:`Dist`, joining the process group when ``torchrun`` started it."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1 or "RANK" not in os.environ:
        return Dist(device)
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if device.startswith("cuda"):
        device = f"cuda:{local_rank}"
        torch.cuda.set_device(device)
    if not torch_dist.is_initialized():
        torch_dist.init_process_group(backend="nccl" if device.startswith("cuda") else "gloo")
    return Dist(device, int(os.environ["RANK"]), local_rank, world)
