"""GPT-OSS's conversation format, harmony, written as OpenAI's ``openai-harmony`` renders it, with
the mapping GPT-OSS's published chat template uses: harmony's default system message (no date), a
system message's text as the developer message's instructions, the tools as the developer
message's function tools, earlier assistant messages on the ``final`` channel, and ``<|start|>assistant``
as the generation prompt.

harmony encodes each text it writes on its own (a header's role, the channel's name, a message's
text), never across them, and reads no special token in any of it; the pieces say so
(``glued=False`` where a new text starts).  A later system message becomes a developer message of
its own (the published template drops it); a tool's answer is headed by ``functions.NAME`` (its
``name``, else the first tool's).
"""

from __future__ import annotations

from .harmony_tools import tools_section
from .pieces import CONTENT, SPECIAL, TEMPLATE, Piece

START, MESSAGE, END, CHANNEL = "<|start|>", "<|message|>", "<|end|>", "<|channel|>"
SYSTEM_TEXT = ("You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06\n\n"
               "Reasoning: medium\n\n# Valid channels: analysis, commentary, final. Channel must be included "
               "for every message.")
TOOLS_CHANNEL = "\nCalls to these tools must go to the commentary channel: 'functions'."


def _text(text: str, part: str, message: int | None) -> list[Piece]:
    return [Piece(text, part, message, glued=False)] if text else []


def _header(role_texts, message: int | None, channel: str | None = None) -> list[Piece]:
    pieces = [Piece(START, SPECIAL, message)]
    for text in role_texts:
        pieces += _text(text, TEMPLATE, message)
    if channel:
        pieces += [Piece(CHANNEL, SPECIAL, message), *_text(channel, TEMPLATE, message)]
    return pieces + [Piece(MESSAGE, SPECIAL, message)]


def _developer(instructions: str | None, tools, message: int | None) -> list[Piece]:
    """harmony's developer message: ``# Instructions``, the text, then ``# Tools``, joined by blank
    lines into one text."""
    body = []
    if instructions is not None:
        body = [Piece("# Instructions\n\n", TEMPLATE, message, glued=False)]
        if instructions:
            body.append(Piece(instructions, CONTENT, message))
    if tools:
        text = ("\n\n" if body else "") + tools_section(tools)
        body.append(Piece(text, TEMPLATE, message, glued=bool(body)))
    return [*_header(["developer"], message), *body, Piece(END, SPECIAL, message)]


def harmony_pieces(messages, tools=(), add_generation_prompt: bool = True) -> list[Piece]:
    """The conversation as GPT-OSS reads it, cut into pieces (``core.chat.pieces``)."""
    system = SYSTEM_TEXT + (TOOLS_CHANNEL if tools else "")
    pieces = [*_header(["system"], None), *_text(system, TEMPLATE, None), Piece(END, SPECIAL, None)]
    first_system = bool(messages) and messages[0].role == "system"
    if tools and not first_system:
        pieces += _developer(None, tools, None)
    for k, m in enumerate(messages):
        if m.role == "system":
            if k == 0 and not m.content and not tools:
                continue  # the published template writes no developer message then
            pieces += _developer(m.content, tools if k == 0 else (), k)
            continue
        if m.role == "tool":
            name = m.name or (tools[0].name if tools else "tool")
            head = _header([f"functions.{name}", " to=assistant"], k, "commentary")
        else:
            head = _header([m.role], k, "final" if m.role == "assistant" else None)
        pieces += [*head, *_text(m.content, CONTENT, k), Piece(END, SPECIAL, k)]
    if add_generation_prompt:
        pieces += [Piece(START, SPECIAL, None), *_text("assistant", TEMPLATE, None)]
    return pieces
