"""ChatML: GPT-4's and GPT-4o's estimate counts as OpenAI's cookbook does (3 tokens a message
besides role and content, 3 to prime the reply), and your own tokenizer gets the markers added."""

from __future__ import annotations

import pytest

from core.bpe import BPETokenizer
from core.chat import CHAT_MODELS, OWN_MODEL, Message, chat_tokenizer, count_chat, own_chat_tokenizer
from core.chat.conversation import SAMPLE_MESSAGES


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_the_estimate_is_the_cookbooks_count_and_says_it_is_an_estimate(name):
    count = count_chat(CHAT_MODELS[name], chat_tokenizer(name), SAMPLE_MESSAGES)
    plain = BPETokenizer.from_pretrained(name)
    cookbook = sum(3 + len(plain.encode(m.role)) + len(plain.encode(m.content)) for m in SAMPLE_MESSAGES) + 3
    assert count.total == cookbook
    assert not count.exact and "(estimate)" in count.label
    assert count.text.startswith("<|im_start|>system<|im_sep|>You are")


def test_your_tokenizer_reads_chatml_with_its_markers_as_special_tokens():
    corpus = "the user asks and the assistant answers. " * 20
    mine = own_chat_tokenizer(BPETokenizer.from_text(corpus, 30, "byte"))
    count = count_chat(OWN_MODEL, mine, [Message("user", "the answer")])
    assert count.text == "<|im_start|>user\nthe answer<|im_end|>\n<|im_start|>assistant\n"
    assert sum(map(mine.is_special, count.ids)) == 3
    assert count.exact


def test_a_char_tokenizer_names_a_character_it_never_saw():
    mine = own_chat_tokenizer(BPETokenizer.from_text("user assistant\n", 5))
    with pytest.raises(ValueError, match="'z'"):
        count_chat(OWN_MODEL, mine, [Message("user", "zzz")])
