"""A small learnable text and a tiny model config, for the GPT and the room tests alike."""

from core import CharTokenizer
from core.gpt.config import make_config

LINES = [
    "the cat sat on the mat and the dog sat on the log.",
    "a bird in the hand is worth two in the bush.",
    "to be or not to be, that is the question.",
    "all that glitters is not gold; all who wander are not lost.",
]
TEXT = "\n".join(LINES[(i * 7) % 4] for i in range(120)) + "\n"  # ~6k characters, learnable
CHARS = CharTokenizer.from_text(TEXT)


def tiny_config(**kw):
    """A config small enough for a test: one layer, 32 wide, 16 tokens of context, one thread."""
    settings = dict(n_layer=1, n_head=2, n_embd=32, block_size=16, batch_size=16, max_steps=40,
                    lr=3e-3, min_lr=3e-4, warmup_steps=2, eval_interval=20, eval_iters=4,
                    log_interval=5, sample_interval=20, sample_tokens=16, device="cpu", threads=1)
    settings.update(kw)
    return make_config("tiny", **settings)
