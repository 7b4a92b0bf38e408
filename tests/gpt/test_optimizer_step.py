"""core.gpt.optimizer_step: the eager step and the CUDA-graph step train identically; optimizer state moves
between devices on resume.  The GPU tests run where CUDA is (the device machine), else skip."""

import pytest
import torch

from core.gpt.data import get_batch
from core.gpt.loop import train
from core.gpt.model import GPT, GPTConfig
from core.gpt.optimizer_step import EagerOptimizerStep, GraphOptimizerStep
from training_data import CHARS, TEXT, tiny_config

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def small_model(device, dropout=0.0):
    torch.manual_seed(0)
    return GPT(GPTConfig(vocab_size=50, block_size=32, n_layer=2, n_head=2, n_embd=64,
                         dropout=dropout)).to(device)


def losses(step_kind, device, steps=12, dropout=0.0):
    model = small_model(device, dropout)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=device == "cuda")
    run = step_kind(model, optimizer, 1.0, device)
    ids = torch.randint(50, (5000,), generator=torch.Generator().manual_seed(1)).to(device)
    gen, out = torch.Generator(device=device), []
    for i in range(steps):
        gen.manual_seed(i)
        x, y = get_batch(ids, 8, 32, gen)
        out.append(run(x, y, 1e-3 * (i + 1) / steps).item())
    return out


@cuda
def test_graph_step_trains_exactly_like_the_eager_step():
    eager, graph = losses(EagerOptimizerStep, "cuda"), losses(GraphOptimizerStep, "cuda")
    assert graph == pytest.approx(eager, rel=2e-3)
    assert graph[-1] < graph[0]  # and it learns: the replays really update the weights


@cuda
def test_graph_step_keeps_dropout_random():
    """With dropout on, replays of one recorded graph must draw new masks: two runs from the same
    weights and batches then differ from each other exactly as two eager runs do."""
    model = small_model("cuda", dropout=0.5)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.0, fused=True)
    run = GraphOptimizerStep(model, optimizer, 0.0, "cuda")  # lr 0: the weights never move
    x = torch.randint(50, (8, 32), device="cuda")
    seen = {round(run(x, x, 0.0).item(), 6) for _ in range(8)}
    assert len(seen) > 4


@cuda
def test_a_run_resumes_across_cpu_and_gpu(tmp_path):
    for device, steps in (("cuda", 20), ("cpu", 30), ("cuda", 40)):
        result = train(tiny_config(device=device, max_steps=steps, resume=steps > 20), TEXT, CHARS,
                       tmp_path)
        assert result.step == steps and result.val_loss < 3.0
