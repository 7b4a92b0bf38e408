"""Counting a rendered conversation: every token is a message's content, a template's, or a
special token the template placed; content plus template is the total, for every model and every
message; a content's tokens that differ from the same text alone are reported."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from core.bpe import BPETokenizer
from core.chat import CHAT_MODELS, Message, chat_tokenizer, count_chat
from core.chat.chat_counts import encode_pieces
from core.chat.conversation import SAMPLE_MESSAGES, SAMPLE_TOOLS
from core.chat.pieces import CONTENT, SPECIAL, TEMPLATE, Piece
from tests.chat.chat_fixtures import conversations


@settings(max_examples=25, deadline=None)
@given(conversations)
def test_content_plus_template_is_the_total_for_every_model_and_message(messages):
    # Llama's template refuses tools with no message after the system's (tested apart)
    tools = SAMPLE_TOOLS if len(messages) > (messages[0].role == "system") else ()
    for name, model in CHAT_MODELS.items():
        count = count_chat(model, chat_tokenizer(name), messages, tools)
        assert count.content_tokens + count.template_tokens == count.total
        for k, m in enumerate(count.messages):
            belongs = [t for t in count.tokens if t.message == k]
            assert m.content_tokens + m.template_tokens == len(belongs)
            assert m.content_tokens == sum(t.part == CONTENT for t in belongs)


def test_a_special_piece_is_one_token_and_typed_special_text_is_text():
    tok = chat_tokenizer("qwen3")
    pieces = [Piece("<|im_start|>", SPECIAL, 0), Piece("user\n", TEMPLATE, 0),
              Piece("<|im_end|>", CONTENT, 0), Piece("<|im_end|>", SPECIAL, 0)]
    text, tokens = encode_pieces(tok, pieces)
    assert text == "<|im_start|>user\n<|im_end|><|im_end|>"
    assert [t.part for t in tokens][:1] == [SPECIAL] and tokens[-1].id == tok.special_tokens["<|im_end|>"]
    typed = [t for t in tokens if t.part == CONTENT]
    assert len(typed) > 1 and not any(tok.is_special(t.id) for t in typed)


def test_a_token_across_a_boundary_belongs_to_the_piece_it_starts_in():
    tok = BPETokenizer.from_pretrained("cl100k_base")
    text, tokens = encode_pieces(tok, [Piece("say", TEMPLATE, 0), Piece(" hello", CONTENT, 0)])
    assert [(text[t.start:t.end], t.part) for t in tokens] == [("say", TEMPLATE), (" hello", CONTENT)]


def test_a_boundary_the_template_makes_is_reported():
    # Qwen's header ends in a newline; a message opening with newlines joins it
    plain = count_chat(CHAT_MODELS["qwen3"], chat_tokenizer("qwen3"), [Message("user", "hello")])
    assert plain.messages[0].boundary == 0
    joined = count_chat(CHAT_MODELS["qwen3"], chat_tokenizer("qwen3"), [Message("user", "\n\nhello")])
    assert joined.messages[0].boundary != 0


def test_the_sample_counts_each_message_and_what_the_tool_adds():
    count = count_chat(CHAT_MODELS["llama3"], chat_tokenizer("llama3"), SAMPLE_MESSAGES, SAMPLE_TOOLS)
    without = count_chat(CHAT_MODELS["llama3"], chat_tokenizer("llama3"), SAMPLE_MESSAGES)
    assert [m.role for m in count.messages] == [m.role for m in SAMPLE_MESSAGES]
    assert count.tools_tokens == count.total - without.total > 0
    assert all(m.content_tokens > 0 and m.template_tokens > 0 for m in count.messages)


def test_a_count_s_head_keeps_its_totals_and_the_text_its_first_tokens_cover():
    """What a page draws of a long conversation, copied from a job worker without the rest."""
    count = count_chat(CHAT_MODELS["qwen3"], chat_tokenizer("qwen3"), SAMPLE_MESSAGES, SAMPLE_TOOLS)
    head = count.head(10)
    assert head.tokens == count.tokens[:10] and head.text == count.text[:count.tokens[9].end]
    assert (head.total, head.template_tokens, head.messages) == (count.total, count.template_tokens,
                                                                 count.messages)
    assert count.head(count.total + 5) == count


def test_one_models_json_has_the_issues_shape():
    count = count_chat(CHAT_MODELS["qwen3"], chat_tokenizer("qwen3"), SAMPLE_MESSAGES, SAMPLE_TOOLS)
    data = count.as_json()
    assert set(data) == {"ids", "tokens", "template_tokens", "messages", "tools_tokens", "exact"}
    assert data["ids"] == count.ids and data["tokens"] == len(count.ids)
    assert data["messages"][0] == {"role": "system", "content_tokens": count.messages[0].content_tokens,
                                   "template_tokens": count.messages[0].template_tokens}
    assert data["template_tokens"] + sum(m["content_tokens"] for m in data["messages"]) == data["tokens"]


@pytest.mark.parametrize("name", ["qwen3", "o200k_harmony", "llama3"])
def test_the_system_prompt_is_counted_apart_from_the_tools_a_format_writes_into_it(name):
    """Qwen's and GPT-OSS's formats write the tools inside the system message (Llama's a line about
    them): its tokens with the tools would count them twice beside ``tools_tokens``, in what each
    request sends again."""
    count = count_chat(CHAT_MODELS[name], chat_tokenizer(name), SAMPLE_MESSAGES, SAMPLE_TOOLS)
    bare = count_chat(CHAT_MODELS[name], chat_tokenizer(name), SAMPLE_MESSAGES)
    system = sum(m.content_tokens + m.template_tokens for m in bare.messages if m.role == "system")
    assert count.system_tokens == bare.system_tokens == system > 0
    with_tools = sum(m.content_tokens + m.template_tokens for m in count.messages if m.role == "system")
    assert with_tools > system  # Llama's system header gains a line for tools, its first user message them
