"""Which chat format each tokenizer of the app is read with, and the tokenizer that format needs:

- ``o200k_harmony``: GPT-OSS, harmony (``core.chat.harmony``), on GPT-4o's vocabulary with
  harmony's special tokens (the ids ``quicktok`` ships for ``o200k_harmony``);
- ``llama3`` and ``qwen3``: their published templates (``core.chat.chat_templates``);
- ``cl100k_base`` and ``o200k_base``: GPT-4 and GPT-4o, the ChatML estimate (``exact`` False);
- your own tokenizer: ChatML with its markers added (``core.chat.chatml``).

GPT-2 has no chat format, so it has no entry.  Context windows are the models' published ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from ..bpe import BPETokenizer
from .chat_counts import ChatCount, count_pieces
from .chat_templates import template_render_pieces
from .chatml import ESTIMATE_IDS, OWN_SPECIALS, estimate_pieces, own_pieces
from .conversation import parse_messages, parse_tools
from .harmony import harmony_pieces

OWN = "yours"


@dataclass(frozen=True)
class ChatModel:
    """``source``: where its format comes from, as ``--help`` and the page name it."""

    name: str
    label: str
    exact: bool
    context_window: int | None
    source: str
    render: Callable  # (messages, tools, add_generation_prompt, thinking, specials) -> pieces


def _harmony(messages, tools, generation, thinking, specials):
    return harmony_pieces(messages, tools, generation)


def _llama3(messages, tools, generation, thinking, specials):
    return template_render_pieces("llama3", messages, tools, specials, "<|start_header_id|>",
                                  add_generation_prompt=generation, bos_token="<|begin_of_text|>")


def _qwen3(messages, tools, generation, thinking, specials):
    return template_render_pieces("qwen3", messages, tools, specials, "<|im_start|>",
                                  add_generation_prompt=generation, enable_thinking=thinking)


def _estimate(messages, tools, generation, thinking, specials):
    return estimate_pieces(messages, tools, generation)


def _own(messages, tools, generation, thinking, specials):
    return own_pieces(messages, tools, generation)


CHAT_MODELS = {m.name: m for m in (
    ChatModel("o200k_harmony", "GPT-OSS", True, 131_072,
              "harmony, as OpenAI's openai-harmony renders it (Apache-2.0)", _harmony),
    ChatModel("llama3", "Llama 3.x Instruct", True, 131_072,
              "the template published with meta-llama/Llama-3.3-70B-Instruct (Llama 3.3 Community License)",
              _llama3),
    ChatModel("qwen3", "Qwen 3", True, 32_768,
              "the template published with Qwen/Qwen3-0.6B (Apache-2.0)", _qwen3),
    ChatModel("cl100k_base", "GPT-4 (estimate)", False, 8_192,
              "an estimate: ChatML as tiktokenizer and OpenAI's cookbook count it", _estimate),
    ChatModel("o200k_base", "GPT-4o (estimate)", False, 128_000,
              "an estimate: ChatML as tiktokenizer and OpenAI's cookbook count it", _estimate),
)}
OWN_MODEL = ChatModel(OWN, "your tokenizer", True, None,
                      "ChatML with <|im_start|> and <|im_end|> added", _own)


@lru_cache(maxsize=8)
def chat_tokenizer(name: str) -> BPETokenizer:
    """The tokenizer the chat format ``name`` is read with, special tokens included."""
    if name == "o200k_harmony":
        import quicktok

        harmony = quicktok.get_encoding("o200k_harmony")
        added = {s: harmony.encode_single_token(s) for s in harmony.special_tokens_set}
        return BPETokenizer.from_pretrained("o200k_base").with_special_tokens(added)
    if name not in CHAT_MODELS:
        raise ValueError(f"No chat format for {name!r}: choose one of {', '.join(CHAT_MODELS)}.")
    tokenizer = BPETokenizer.from_pretrained(name)
    return tokenizer.with_special_tokens(ESTIMATE_IDS[name]) if name in ESTIMATE_IDS else tokenizer


def own_chat_tokenizer(tokenizer: BPETokenizer) -> BPETokenizer:
    """A tokenizer of your own with ChatML's two markers added as special tokens."""
    return tokenizer.with_special_tokens(list(OWN_SPECIALS))


def count_chat(model: ChatModel, tokenizer: BPETokenizer, messages, tools=(), *, thinking: bool = False,
               add_generation_prompt: bool = True) -> ChatCount:
    """``model``'s reading of the conversation, tokenized by ``tokenizer`` (``chat_tokenizer``'s,
    or ``own_chat_tokenizer``'s for :data:`OWN_MODEL`).  ``tools_tokens``: what the tools add to
    the total (the conversation counted again without them)."""
    messages, tools = parse_messages(messages), parse_tools(tools)
    specials = tuple(tokenizer.special_tokens)

    def counted(with_tools):
        pieces = model.render(messages, with_tools, add_generation_prompt, thinking, specials)
        return count_pieces(tokenizer, pieces, messages)

    text, tokens, counts = counted(tools)
    _, bare, bare_counts = counted(()) if tools else (text, tokens, counts)
    system, repeated = 0, 0
    for m in bare_counts:
        if m.role == "system":
            system += m.content_tokens + m.template_tokens
        else:
            repeated += m.content_tokens + m.template_tokens
    return ChatCount(model.name, model.label, model.exact, text, tokens, counts, len(tokens) - len(bare),
                     repeated, model.context_window, system, len(tokens))


def count_models(messages, tools=(), thinking: bool = False,
                 keep: int | None = None) -> dict[str, ChatCount | str]:
    """Every chat model's count, or the sentence saying why its template refuses the conversation
    (Llama's wants a user message after tools): what the Chat page shows, and runs as one job for a
    long conversation (a module-level function, so a job worker can import it).  ``keep``: each
    count's first tokens only (:meth:`ChatCount.head`), where a page draws no more."""
    counts = {}
    for name, model in CHAT_MODELS.items():
        try:
            count = count_chat(model, chat_tokenizer(name), messages, tools, thinking=thinking)
            counts[name] = count if keep is None else count.head(keep)
        except ValueError as exc:
            counts[name] = str(exc)
    return counts


def count_conversation(messages, tools=(), names=tuple(CHAT_MODELS), *, thinking: bool = False,
                       own: BPETokenizer | None = None) -> dict[str, ChatCount]:
    """Every model's reading of one conversation, keyed by tokenizer name (``yours`` for
    ``own``)."""
    counts = {name: count_chat(CHAT_MODELS[name] if name in CHAT_MODELS else _unknown(name),
                               chat_tokenizer(name), messages, tools, thinking=thinking) for name in names}
    if own is not None:
        counts[OWN] = count_chat(OWN_MODEL, own_chat_tokenizer(own), messages, tools, thinking=thinking)
    return counts


def _unknown(name: str):
    raise ValueError(f"No chat format for {name!r}: choose one of {', '.join(CHAT_MODELS)}.")
