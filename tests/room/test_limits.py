"""core.room.limits: a refusal's advice works: lowering what it names, to what it says, fits."""

import re

import pytest

from core.gpt.config import make_config
from core.room.limits import CONTROLS, LimitError, check_config

SETTING = {control: name for name, control in CONTROLS.items()}
TOO_BIG = [  # the sizes a newcomer tried: a block of 256 with a batch of 64; wide and deep; long
    dict(n_layer=6, n_head=8, n_embd=256, block_size=256, batch_size=64),
    dict(n_layer=6, n_head=8, n_embd=256, block_size=64, batch_size=64),
    dict(n_layer=12, n_head=8, n_embd=512, block_size=512, batch_size=128, max_steps=90_000),
]


def followed(message: str, sizes: dict) -> dict:
    """``sizes`` with what the refusal says to lower lowered to what it says (its first choice each)."""
    advice = message.split(". Lower ", 1)[1]
    for item in re.split(r", (?![^(]*\))", advice.rstrip(".")):
        control, value = re.match(r"(\w+) to ([\d,]+)", item).groups()
        sizes = {**sizes, SETTING.get(control, control): int(value.replace(",", ""))}
    return sizes


@pytest.mark.parametrize("sizes", TOO_BIG)
def test_following_a_refusal_s_advice_fits(sizes):
    with pytest.raises(LimitError) as refused:
        check_config(make_config("tiny", **sizes), "cpu", vocab_size=5_000)
    assert "fewer steps" not in str(refused.value)  # steps never change tokens a step
    check_config(make_config("tiny", **followed(str(refused.value), sizes)), "cpu", vocab_size=5_000)


def test_too_many_tokens_a_step_names_batch_size_and_block_size_with_values_that_fit():
    with pytest.raises(LimitError, match=r"Lower batch_size to 16 \(or block_size to 64\)"):
        check_config(make_config("tiny", n_layer=2, n_head=4, n_embd=64, block_size=256, batch_size=64),
                     "cpu")


def test_a_vocabulary_that_is_most_of_the_model_is_named_with_a_tokenizer_that_fits():
    """A character tokenizer of random Unicode has a token per distinct character: the refusal says
    the vocabulary is the size and names BPE on bytes, with which the same model fits; a model too
    big by its own sizes is not blamed on its vocabulary."""
    with pytest.raises(LimitError) as refused:
        check_config(make_config("quick"), "cpu", vocab_size=190_000)
    assert refused.value.by_vocabulary
    assert "of them for the 190,000 tokens of its tokenizer" in str(refused.value)
    assert "BPE on bytes" in str(refused.value)
    check_config(make_config("quick"), "cpu", vocab_size=256 + 300)
    with pytest.raises(LimitError) as refused:
        check_config(make_config("tiny", **TOO_BIG[0]), "cpu", vocab_size=5_000)
    assert not refused.value.by_vocabulary and "tokens of its tokenizer" not in str(refused.value)
