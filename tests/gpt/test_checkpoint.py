"""core.gpt.checkpoint: round trip to identical logits, clear errors for wrong tokenizers and bad files."""

import pytest
import torch

from core import BPETokenizer, CharTokenizer
from core.gpt.checkpoint import CheckpointError, load_checkpoint, read_checkpoint, save_checkpoint
from core.gpt.model import GPT, GPTConfig

TEXT = "hello world, hello checkpoints. " * 20


@pytest.fixture
def saved(tmp_path):
    tok = CharTokenizer.from_text(TEXT)
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=8, n_layer=1, n_head=2, n_embd=16))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randint(tok.vocab_size, (2, 8))
    model(x, x)[1].backward()
    optimizer.step()
    path = save_checkpoint(tmp_path / "ckpt.pt", model, tok, 7, {"lr": 1e-3}, optimizer)
    return path, model, tok, x


def test_save_load_gives_identical_logits(saved):
    path, model, tok, x = saved
    ckpt = load_checkpoint(path, tokenizer=tok)
    model.eval()
    assert torch.equal(model(x, x)[0], ckpt.model(x, x)[0])
    assert ckpt.step == 7 and ckpt.train_config == {"lr": 1e-3} and ckpt.tokenizer == tok
    assert ckpt.model_config == model.config and ckpt.optimizer_state["state"]
    assert not list(path.parent.glob("*.tmp"))  # the atomic write left no temp file


def test_file_loads_with_weights_only(saved):
    state = torch.load(saved[0], weights_only=True)
    assert state["format"] == "bpe-explorer/gpt-checkpoint" and state["step"] == 7


def test_tokenizer_mismatch_is_a_clear_error(saved):
    path = saved[0]
    with pytest.raises(CheckpointError, match="different tokenizer"):
        load_checkpoint(path, tokenizer=BPETokenizer.from_text(TEXT, 5))
    with pytest.raises(CheckpointError, match=str(path.name)):
        load_checkpoint(path, tokenizer=CharTokenizer.from_text("abc"))


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_corrupt_checkpoint_is_a_clear_value_error(saved, damage):
    path = saved[0]
    raw = path.read_bytes()
    path.write_bytes({"truncate": raw[: len(raw) // 2], "garbage": b"not a checkpoint" * 10,
                      "empty": b""}[damage])
    with pytest.raises(ValueError, match="not a readable checkpoint") as info:
        load_checkpoint(path)
    assert str(path) in str(info.value)


def test_missing_and_foreign_files(tmp_path):
    with pytest.raises(CheckpointError, match="No checkpoint"):
        read_checkpoint(tmp_path / "none.pt")
    torch.save({"hello": torch.zeros(2)}, tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="not a BPE Explorer GPT checkpoint"):
        read_checkpoint(tmp_path / "other.pt")


def test_a_flipped_bit_in_the_weights_is_refused(saved):
    """PyTorch's zip format does not check its data: the stored checksum must catch this."""
    path, model, tok, x = saved
    raw = bytearray(path.read_bytes())
    weights = model.lm_head.weight.detach().numpy().tobytes()
    at = raw.find(weights[:64])
    assert at > 0, "the weights are stored uncompressed in the file"
    raw[at + 5] ^= 0x10
    path.write_bytes(bytes(raw))
    assert torch.load(path, weights_only=True)["step"] == 7  # PyTorch itself sees nothing wrong
    with pytest.raises(CheckpointError, match="corrupt: its tensors do not match the checksum"):
        load_checkpoint(path)


def test_a_flipped_bit_in_the_optimizer_state_is_refused(saved):
    path = saved[0]
    state = torch.load(path, weights_only=True)
    first = next(iter(state["optimizer_state"]["state"].values()))
    first["exp_avg"].view(-1)[0] += 1.0
    torch.save(state, path)
    with pytest.raises(CheckpointError, match="checksum"):
        read_checkpoint(path)


def test_a_checkpoint_from_before_checksums_still_loads(saved):
    path, model, tok, x = saved
    state = torch.load(path, weights_only=True)
    del state["checksum"]
    state["version"] = 1
    torch.save(state, path)
    assert load_checkpoint(path, tokenizer=tok).step == 7
    state["version"] = 2  # a current file that lost its checksum is refused
    torch.save(state, path)
    with pytest.raises(CheckpointError, match="missing checksum"):
        load_checkpoint(path)
