"""core.gpt.model: shapes, causality, tied embeddings, generation, config checks."""

import pytest
import torch

from core.gpt.model import GPT, GPTConfig


@pytest.fixture(autouse=True)
def one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def tiny(**kw) -> GPTConfig:
    return GPTConfig(**{"vocab_size": 11, "block_size": 8, "n_layer": 1, "n_head": 2, "n_embd": 16, **kw})


def test_forward_shapes_and_loss():
    torch.manual_seed(0)
    model = GPT(tiny())
    idx = torch.randint(11, (3, 8))
    logits, loss = model(idx, idx)
    assert logits.shape == (3, 8, 11)
    assert loss.shape == () and abs(loss.item() - torch.log(torch.tensor(11.0)).item()) < 0.5
    logits, loss = model(idx)
    assert logits.shape == (3, 1, 11) and loss is None


def test_attention_is_causal():
    torch.manual_seed(0)
    model = GPT(tiny()).eval()
    a = torch.randint(11, (1, 8))
    b = a.clone()
    b[0, 5:] = (b[0, 5:] + 1) % 11  # change only the future of position 4
    la, _ = model(a, a)
    lb, _ = model(b, b)
    assert torch.allclose(la[0, :5], lb[0, :5], atol=1e-6)
    assert not torch.allclose(la[0, 5:], lb[0, 5:])


def test_embeddings_are_tied_and_decay_only_matrices():
    model = GPT(tiny())
    assert model.transformer.wte.weight is model.lm_head.weight
    decay, no_decay = model.optimizer_groups(0.1)
    assert all(p.dim() == 2 for p in decay["params"]) and decay["weight_decay"] == 0.1
    assert all(p.dim() == 1 for p in no_decay["params"]) and no_decay["weight_decay"] == 0.0
    assert len(decay["params"]) + len(no_decay["params"]) == len(list(model.parameters()))


def test_generate_length_cropping_and_greedy_determinism():
    torch.manual_seed(0)
    model = GPT(tiny()).eval()
    start = torch.zeros(2, 3, dtype=torch.long)
    out = model.generate(start, 12, temperature=1.0, top_k=3)  # longer than block_size: cropped
    assert out.shape == (2, 15) and out.max() < 11
    assert torch.equal(model.generate(start, 5, temperature=0), model.generate(start, 5, temperature=0))
    with pytest.raises(ValueError, match="temperature"):
        model.generate(start, 1, temperature=-1)


def test_too_long_input_is_refused():
    with pytest.raises(ValueError, match="block_size"):
        GPT(tiny())(torch.zeros(1, 9, dtype=torch.long))


@pytest.mark.parametrize("kw, message", [({"n_embd": 15}, "divisible"), ({"n_layer": 0}, "n_layer"),
                                         ({"dropout": 1.0}, "dropout")])
def test_bad_config(kw, message):
    with pytest.raises(ValueError, match=message):
        tiny(**kw)


def test_no_bias_variant_runs():
    model = GPT(tiny(bias=False))
    assert all("bias" not in name for name, _ in model.named_parameters())
    model(torch.zeros(1, 4, dtype=torch.long))


def test_device_choice_and_cuda_only_speedups():
    from core.gpt.device import autocast, detect_device, should_compile, should_graph, use_bf16

    assert detect_device("cpu") == "cpu" and detect_device("auto") in ("cpu", "cuda", "mps")
    assert not use_bf16("cpu") and not should_compile("cpu") and not should_compile("mps")
    assert not should_compile("cuda", False) and not should_compile("cuda") and should_compile("cuda", True)
    assert should_graph("cuda") and not should_graph("cuda", distributed=True) and not should_graph("cpu")
    with autocast("cpu"):  # a no-op on the CPU: float32 stays float32
        assert GPT(tiny())(torch.zeros(1, 2, dtype=torch.long))[0].dtype == torch.float32
    with pytest.raises(ValueError, match="Unknown device"):
        detect_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA GPU"):
            detect_device("cuda")
