"""Each tokenizer of the app read with its chat format, and the tokenizers those formats need."""

from __future__ import annotations

import pytest

from core.bpe import BPETokenizer
from core.chat import CHAT_MODELS, OWN, chat_tokenizer, count_conversation
from core.chat.conversation import SAMPLE_MESSAGES, SAMPLE_TOOLS


def test_every_model_counts_the_sample_and_only_the_estimates_are_not_exact():
    mine = BPETokenizer.from_text("You are a travel assistant. " * 30, 20, "byte")
    counts = count_conversation(SAMPLE_MESSAGES, SAMPLE_TOOLS, own=mine)
    assert list(counts) == [*CHAT_MODELS, OWN]
    assert {name for name, c in counts.items() if not c.exact} == {"cl100k_base", "o200k_base"}
    assert all(c.tools_tokens > 0 and len(c.messages) == 4 for c in counts.values())


def test_gpt_oss_has_gpt4os_vocabulary_and_harmonys_special_tokens():
    harmony, gpt4o = chat_tokenizer("o200k_harmony"), BPETokenizer.from_pretrained("o200k_base")
    assert harmony.encode("Hello, world", allowed_special="none") == gpt4o.encode("Hello, world")
    assert {harmony.special_tokens[s] for s in ("<|start|>", "<|message|>", "<|end|>", "<|channel|>")} \
        == {200006, 200008, 200007, 200005}


def test_a_tokenizer_without_a_chat_format_is_named():
    with pytest.raises(ValueError, match="No chat format for 'gpt2'"):
        count_conversation(SAMPLE_MESSAGES, names=["gpt2"])
