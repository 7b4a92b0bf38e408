"""A rendered conversation (``core.chat.pieces``) encoded by its model's tokenizer and counted:
per message its content's tokens and the template's, the total, and where a content's tokens
differ from the same text tokenized alone (a boundary the template makes).

A token belongs to the piece its first character is in.  Ordinary text is encoded with special
tokens refused, so a message that types ``<|im_end|>`` pays for it as text; only the pieces the
format marks SPECIAL are special tokens.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, replace

from .pieces import CONTENT, SPECIAL


@dataclass(frozen=True)
class ChatToken:
    """One token of the rendering: its id, the characters ``text[start:end]`` of the rendering it
    came from (the tokens of one character's bytes share them), its part (content, template,
    special) and the index of the message it belongs to (``None``: no message's)."""

    id: int
    start: int
    end: int
    part: str
    message: int | None


@dataclass(frozen=True)
class MessageCount:
    """``alone``: the tokens of the message's text as the template writes it, tokenized alone."""

    role: str
    content_tokens: int
    template_tokens: int
    alone: int

    @property
    def boundary(self) -> int:
        """Tokens the template's neighbours change in this content (0: none)."""
        return self.content_tokens - self.alone


@dataclass(frozen=True)
class ChatCount:
    """One model's reading of a conversation.  ``exact``: False for an estimate (GPT-4, GPT-4o).
    ``tokens`` are all ``total`` of them, unless :meth:`head` kept the first few."""

    name: str
    label: str
    exact: bool
    text: str
    tokens: tuple[ChatToken, ...]
    messages: tuple[MessageCount, ...]
    tools_tokens: int
    repeated_tokens: int  # every message's tokens but the system's, tools apart: what each request adds again
    context_window: int | None
    # the system messages' tokens, tools apart (Qwen's and GPT-OSS's formats write the tools inside
    # the system message): sent again with every request, as the tools are
    system_tokens: int
    total: int

    @property
    def ids(self) -> list[int]:
        return [t.id for t in self.tokens]

    def head(self, keep: int) -> ChatCount:
        """The same count holding its first ``keep`` tokens only, and the text they cover: what a
        page draws of a long conversation, without copying the rest of its tokens from a job worker
        (a million characters' tokens took seconds to unpickle on the page's thread)."""
        tokens = self.tokens[:keep]
        return replace(self, tokens=tokens, text=self.text[:tokens[-1].end] if tokens else "")

    @property
    def content_tokens(self) -> int:
        return sum(m.content_tokens for m in self.messages)

    @property
    def template_tokens(self) -> int:
        """Every token that is not a message's own text: headers, markers, defaults, tools."""
        return self.total - self.content_tokens

    def as_json(self) -> dict:
        """The shape ``python -m core.insights chat --json`` prints for one model."""
        return {"ids": self.ids, "tokens": self.total, "template_tokens": self.template_tokens,
                "messages": [{"role": m.role, "content_tokens": m.content_tokens,
                              "template_tokens": m.template_tokens} for m in self.messages],
                "tools_tokens": self.tools_tokens, "exact": self.exact}


def encode_pieces(tokenizer, pieces) -> tuple[str, list[ChatToken]]:
    """The text the tokenizer reads (Qwen's: in NFC) and its tokens: a SPECIAL piece is its
    special token's id; ordinary pieces glued together are encoded as one text, each token given
    to the piece its first character is in."""
    tokens, group, texts = [], [], []

    def flush():
        texts.append(_encode_group(tokenizer, group, sum(map(len, texts)), tokens))
        group.clear()

    for piece in pieces:
        if piece.part == SPECIAL or not piece.glued:
            flush()
        if piece.part == SPECIAL:
            at = sum(map(len, texts))
            tokens.append(ChatToken(_special_id(tokenizer, piece.text), at, at + len(piece.text),
                                    SPECIAL, piece.message))
            texts.append(piece.text)
        else:
            group.append(piece)
    flush()
    return "".join(texts), tokens


def _special_id(tokenizer, text: str) -> int:
    if text not in tokenizer.special_tokens:
        raise ValueError(f"The tokenizer has no special token {text!r}, which its chat format needs.")
    return tokenizer.special_tokens[text]


def _encode_group(tokenizer, group, at: int, tokens: list) -> str:
    """Encode ``group`` (starting at character ``at`` of the rendering) into ``tokens``; its text."""
    if not group:
        return ""
    form = tokenizer.normalization
    ends, done = [], ""
    for piece in group:  # each piece's end, counted in the text the tokenizer encodes
        done += piece.text
        ends.append(len(unicodedata.normalize(form, done)) if form else len(done))
    text = tokenizer.normalized("".join(p.text for p in group))
    k = 0
    for token in tokenizer.encode_tokens(text, allowed_special="none"):
        while k < len(group) - 1 and token.start >= ends[k]:
            k += 1
        tokens.append(ChatToken(token.id, at + token.start, at + token.end, group[k].part, group[k].message))
    return text


def count_pieces(tokenizer, pieces, messages) -> tuple[str, tuple[ChatToken, ...], tuple[MessageCount, ...]]:
    """The text and tokens of ``pieces`` and, per message, its content and template tokens."""
    text, tokens = encode_pieces(tokenizer, pieces)
    content = [0] * len(messages)
    template = [0] * len(messages)
    for t in tokens:
        if t.message is not None:
            (content if t.part == CONTENT else template)[t.message] += 1
    written = [""] * len(messages)
    for p in pieces:
        if p.part == CONTENT:
            written[p.message] += p.text
    counts = tuple(MessageCount(m.role, content[k], template[k], _alone(tokenizer, written[k]))
                   for k, m in enumerate(messages))
    return text, tuple(tokens), counts


def _alone(tokenizer, text: str) -> int:
    return len(tokenizer.encode(text, allowed_special="none")) if text else 0

