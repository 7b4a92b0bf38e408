"""What the chat tests share: OpenAI's own ``openai-harmony`` loaded offline (its o200k_base file
written from the vocabulary the app ships; harmony checks its SHA-256), and random conversations
for hypothesis.  A module the tests import, not a ``conftest.py``: a second one would take the name
``conftest`` from ``tests/conftest.py``, which other tests import by that name."""

from __future__ import annotations

import base64
import os

import pytest
from hypothesis import strategies as st

from core.bpe import BPETokenizer
from core.bpe.interop import tiktoken_ranks
from core.chat import ROLES, Message
from tests.conftest import need_module

# Texts a message may hold that a template or a tokenizer could misread.
TRICKY = ["", " ", "\n", "\n\n", "  padded  ", "<|eot_id|>", "<|im_end|>", "<|end|>", "<|start|>user",
          "<think>", "</think>", "<tool_response>", "{{ 7 * 7 }}", "{% raise %}", "é", "e\u0301", "日本語",
          "🙂", "<|begin_of_text|>", "\u200b"]
contents = st.one_of(st.sampled_from(TRICKY), st.text(max_size=40),
                     st.lists(st.sampled_from(TRICKY) | st.text(max_size=8), max_size=4).map("".join))
conversations = st.lists(st.builds(Message, st.sampled_from(ROLES), contents), min_size=1, max_size=5)


@pytest.fixture(scope="session")
def harmony(tmp_path_factory):
    """harmony's GPT-OSS encoding, read offline from ``TIKTOKEN_ENCODINGS_BASE``."""
    oh = need_module("openai_harmony", "pip install openai-harmony")
    folder = tmp_path_factory.mktemp("tiktoken")
    ranks = tiktoken_ranks(BPETokenizer.from_pretrained("o200k_base"))
    by_rank = sorted(ranks.items(), key=lambda r: r[1])
    lines = [base64.b64encode(data) + b" %d\n" % rank for data, rank in by_rank]
    (folder / "o200k_base.tiktoken").write_bytes(b"".join(lines))
    before = os.environ.get("TIKTOKEN_ENCODINGS_BASE")
    os.environ["TIKTOKEN_ENCODINGS_BASE"] = str(folder)
    try:
        yield oh, oh.load_harmony_encoding(oh.HarmonyEncodingName.HARMONY_GPT_OSS)
    finally:
        if before is None:
            del os.environ["TIKTOKEN_ENCODINGS_BASE"]
        else:
            os.environ["TIKTOKEN_ENCODINGS_BASE"] = before
