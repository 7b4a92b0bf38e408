"""Llama 3 and Qwen 3: the rendered text is the published template's, rendered by plain jinja2 as
Hugging Face's ``apply_chat_template`` sets it up, and the ids are the real tokenizer's encoding of
that text with special tokens allowed.  A message's text never runs as template code."""

from __future__ import annotations

import json
from datetime import datetime

import jinja2
import pytest
from hypothesis import given, settings

from core.bpe import BPETokenizer
from core.chat import CHAT_MODELS, Message, chat_tokenizer, count_chat
from core.chat.chat_templates import DATA, render_template, template_sources
from core.chat.conversation import SAMPLE_MESSAGES, SAMPLE_TOOLS
from tests.chat.chat_fixtures import conversations

OPTIONS = {"llama3": {"bos_token": "<|begin_of_text|>"}, "qwen3": {}}


def reference_text(name, messages, tools=(), generation=True, **options) -> str:
    """The published template rendered by a plain jinja2 environment, as transformers sets it up."""
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = lambda x, ensure_ascii=False, indent=None, separators=None, sort_keys=False: \
        json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
    env.globals["strftime_now"] = lambda f: datetime.now().strftime(f)
    template = env.from_string((DATA / f"{name}.jinja").read_text(encoding="utf-8"))
    return template.render(messages=[{"role": m.role, "content": m.content} for m in messages],
                           tools=[t.as_openai() for t in tools] or None, add_generation_prompt=generation,
                           **OPTIONS[name], **options)


def ours(name, messages, tools=(), thinking=False):
    return count_chat(CHAT_MODELS[name], chat_tokenizer(name), messages, tools, thinking=thinking)


def text_of(count) -> str:
    return count.text


CASES = [("llama3", {}, False), ("qwen3", {"enable_thinking": False}, False),
         ("qwen3", {"enable_thinking": True}, True)]


@pytest.mark.parametrize("name, options, thinking", CASES)
@pytest.mark.parametrize("tools", [(), SAMPLE_TOOLS], ids=["no tools", "a tool"])
def test_the_sample_is_the_published_template_and_the_real_tokenizers_ids(name, options, thinking, tools):
    count = ours(name, SAMPLE_MESSAGES, tools, thinking)
    text = reference_text(name, SAMPLE_MESSAGES, tools, **options)
    assert text_of(count) == text
    assert count.ids == BPETokenizer.from_pretrained(name).encode(text, allowed_special="all")


def test_qwen_without_thinking_adds_an_empty_think_block_to_the_prompt():
    off, on = ours("qwen3", SAMPLE_MESSAGES), ours("qwen3", SAMPLE_MESSAGES, thinking=True)
    assert text_of(off) == text_of(on) + "<think>\n\n</think>\n\n"


@pytest.mark.parametrize("name", ["llama3", "qwen3"])
@settings(max_examples=40, deadline=None)
@given(messages=conversations)
def test_random_conversations_render_exactly(name, messages):
    count = ours(name, messages)
    text = reference_text(name, messages, enable_thinking=False)
    tokenizer = BPETokenizer.from_pretrained(name)
    assert text_of(count) == tokenizer.normalized(text)  # Qwen reads text in NFC
    typed = any(s in m.content for m in messages for s in tokenizer.special_tokens)
    if not typed:
        assert count.ids == tokenizer.encode(text, allowed_special="all")
    else:  # the typed special-token text stays text: only the template's markers are special
        assert tokenizer.decode(count.ids) == tokenizer.normalized(text)
        assert sum(map(tokenizer.is_special, count.ids)) == sum(t.part == "special" for t in count.tokens)


@pytest.mark.parametrize("name", ["llama3", "qwen3"])
def test_message_text_never_runs_as_template_code(name):
    code = "{{ 7 * 7 }}{% for x in range(3) %}{{ x }}{% endfor %}{{ raise_exception('no') }}"
    count = ours(name, [Message("user", code)])
    assert code in text_of(count) and "49" not in text_of(count)


def test_a_conversation_the_template_refuses_raises_a_clear_error():
    with pytest.raises(ValueError, match="llama3 chat template refuses.*no first user message"):
        render_template("llama3", [Message("system", "Be brief.")], SAMPLE_TOOLS)


def test_every_template_names_its_source_and_licence():
    for name, source in template_sources().items():
        assert (DATA / source["file"]).is_file()
        assert source["source"].startswith("https://huggingface.co/") and source["licence"]
