"""A conversation as each model reads it: its chat format rendered, tokenized and counted, per
message content against template (``core.chat.chat_models`` maps tokenizers to formats)."""

from .chat_counts import ChatCount, ChatToken, MessageCount
from .chat_models import (CHAT_MODELS, OWN, OWN_MODEL, chat_tokenizer, count_chat, count_conversation,
                          own_chat_tokenizer)
from .conversation import ROLES, Message, Tool, parse_messages, parse_tools

__all__ = ["CHAT_MODELS", "OWN", "OWN_MODEL", "ROLES", "ChatCount", "ChatToken", "Message", "MessageCount",
           "Tool", "chat_tokenizer", "count_chat", "count_conversation", "own_chat_tokenizer",
           "parse_messages", "parse_tools"]
