"""What every chat format renders to: the conversation's text cut into pieces, each saying whose
it is (which message, or none: a preamble, the generation prompt) and what it is (the message's
own text, the template's text, or one special token the template placed).

Counting then never has to guess: a token belongs to the piece its first character is in, so
content tokens plus template tokens is the total by construction.  Only the template's own text
is searched for special tokens; a message's text stays ordinary text whatever it holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CONTENT, TEMPLATE, SPECIAL = "content", "template", "special"


@dataclass(frozen=True)
class Piece:
    """``part``: CONTENT, TEMPLATE or SPECIAL; ``message``: the message's index, ``None`` for what
    belongs to no message.  ``glued``: encoded in one call with the ordinary pieces before it, as
    a tokenizer sees one string (Jinja's output); harmony encodes each text it writes alone."""

    text: str
    part: str
    message: int | None
    glued: bool = True


def template_pieces(text: str, message: int | None, specials, glued: bool = True) -> list[Piece]:
    """``text`` written by a template, its special tokens (``specials``: their strings) as
    SPECIAL pieces and the rest as TEMPLATE pieces."""
    if not text:
        return []
    if not specials:
        return [Piece(text, TEMPLATE, message, glued)]
    found = re.split("(" + "|".join(map(re.escape, sorted(specials, key=len, reverse=True))) + ")", text)
    pieces = []
    for k, part in enumerate(found):
        if part:
            pieces.append(Piece(part, SPECIAL if k % 2 else TEMPLATE, message, glued))
    return pieces


def rendered_text(pieces) -> str:
    return "".join(p.text for p in pieces)
