"""A conversation as a user gives it: messages (role and text) and tool definitions (JSON Schema
functions), checked once here so every chat format can trust what it renders.

A message's text is data: the formats put it into their output as it is (a template may trim
it), never read it as template code or as special tokens.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..settings import ServerSettings

ROLES = ("system", "user", "assistant", "tool")
# The corpus size bound (``MAX_CORPUS_BYTES``'s default): a conversation is a corpus too.
MAX_CONVERSATION_BYTES = ServerSettings.max_corpus_bytes


@dataclass(frozen=True)
class Message:
    """One message: ``role`` one of :data:`ROLES`; ``name`` only for a tool's answer (which tool
    answered, as harmony's header names it)."""

    role: str
    content: str
    name: str | None = None


@dataclass(frozen=True)
class Tool:
    """One function a model may call: its name, what it does, and its arguments' JSON Schema."""

    name: str
    description: str
    parameters: dict

    def as_openai(self) -> dict:
        """The ``{"type": "function", "function": ...}`` form chat templates receive as ``tools``."""
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": self.parameters}}


def parse_messages(data, max_bytes: int = MAX_CONVERSATION_BYTES) -> tuple[Message, ...]:
    """Messages from a JSON-like list of ``{"role", "content"}`` objects (``name`` optional on a
    tool's message); anything else raises ``ValueError`` naming the message and what is wrong."""
    if isinstance(data, (str, bytes)) or not isinstance(data, (list, tuple)):
        raise ValueError("A conversation must be a list of messages, each {\"role\": ..., \"content\": ...}.")
    if not data:
        raise ValueError("A conversation needs at least one message.")
    messages = tuple(_message(item, k) for k, item in enumerate(data, start=1))
    size = sum(len(m.content.encode("utf-8", "surrogatepass")) for m in messages)
    if size > max_bytes:
        raise ValueError(f"The conversation is {size:,} bytes; the limit is {max_bytes:,} bytes "
                         f"(the corpus size bound).")
    return messages


def _message(item, k: int) -> Message:
    if isinstance(item, Message):
        item = {"role": item.role, "content": item.content, "name": item.name}
    if not isinstance(item, dict):
        raise ValueError(f"Message {k} must be an object with \"role\" and \"content\", not {_kind(item)}.")
    unknown = set(item) - {"role", "content", "name"}
    if unknown:
        raise ValueError(f"Message {k} has fields a message does not have: {', '.join(sorted(unknown))} "
                         f"(give \"role\", \"content\" and, for a tool's answer, \"name\").")
    role, content, name = item.get("role"), item.get("content"), item.get("name")
    if role not in ROLES:
        raise ValueError(f"Message {k} has role {role!r}: a role is one of {', '.join(ROLES)}.")
    if not isinstance(content, str):
        raise ValueError(f"Message {k}'s content must be text, not {_kind(content)}.")
    if name is not None and (role != "tool" or not isinstance(name, str) or not name.isidentifier()):
        raise ValueError(f"Message {k}: only a tool's message has a name, the called function's "
                         f"(letters, digits and _).")
    _check_text(content, f"Message {k}'s content")
    return Message(role, content, name)


def parse_tools(data) -> tuple[Tool, ...]:
    """Tool definitions from a JSON-like list, each either ``{"name", "description",
    "parameters"}`` or OpenAI's ``{"type": "function", "function": {...}}``; ``parameters`` must be
    a JSON Schema object."""
    if data is None:
        return ()
    if isinstance(data, (str, bytes)) or not isinstance(data, (list, tuple)):
        raise ValueError("Tools must be a list of function definitions.")
    return tuple(_tool(item, k) for k, item in enumerate(data, start=1))


def _tool(item, k: int) -> Tool:
    if isinstance(item, Tool):
        return item
    if isinstance(item, dict) and item.get("type") == "function" and "function" in item:
        item = item["function"]
    if not isinstance(item, dict):
        raise ValueError(f"Tool {k} must be an object with \"name\", \"description\" and \"parameters\".")
    name, description = item.get("name"), item.get("description", "")
    parameters = item.get("parameters", {"type": "object", "properties": {}})
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"Tool {k}'s name must be an identifier (letters, digits and _), not {name!r}.")
    if not isinstance(description, str):
        raise ValueError(f"Tool {k} ({name})'s description must be text.")
    if not isinstance(parameters, dict) or parameters.get("type", "object") != "object":
        raise ValueError(f"Tool {k} ({name})'s parameters must be a JSON Schema object "
                         f"({{\"type\": \"object\", \"properties\": {{...}}}}), not {_kind(parameters)}.")
    _check_text(json.dumps(parameters, ensure_ascii=False) + description, f"Tool {k} ({name})")
    return Tool(name, description, parameters)


def _check_text(text: str, what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what} holds a lone surrogate, which is not text.") from None


def _kind(value) -> str:
    return {dict: "an object", list: "a list", str: "text", type(None): "null"}.get(type(value),
                                                                                   type(value).__name__)


def read_json_file(path, what: str):
    """The JSON in ``path``, or ``ValueError`` saying which file is not JSON and where."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as exc:
        raise ValueError(f"The {what} file {path} cannot be read: {exc.strerror}.") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"The {what} file {path} is not JSON: {exc}.") from None


# The conversation the Chat page opens on: a system prompt, a question, an answer, a follow-up,
# with one tool the model may call.
SAMPLE_MESSAGES = (
    Message("system", "You are a concise travel assistant. Answer in one or two sentences."),
    Message("user", "I land in Lisbon on Friday evening. Do I need a jacket?"),
    Message("assistant", "Lisbon evenings in spring are mild, around 15 °C, so a light jacket is enough."),
    Message("user", "And what will the weather be on Saturday in Porto?"),
)
SAMPLE_TOOLS = (
    Tool("get_weather", "Gets the weather forecast for a city on a given day.",
         {"type": "object",
          "properties": {"city": {"type": "string", "description": "The city, e.g. Porto"},
                         "day": {"type": "string", "description": "The day, e.g. Saturday"},
                         "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"}},
          "required": ["city", "day"]}),
)
