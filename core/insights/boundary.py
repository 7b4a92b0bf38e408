"""The warning about a trailing space: where a prompt ends inside what would be one token.
``"Hello "`` ends in a lone space token, while in ``"Hello world"`` the space belongs to
``" world"``: a model completing ``"Hello "`` is asked to go on from a cut it rarely saw in
training.  The prompt's last tokens that do not survive in the joined text are the ones "token
healing" backs up over.

    >>> from core.bpe import BPETokenizer
    >>> tok = BPETokenizer(variant="byte", merges=[(32, 119, 256)])   # " w"
    >>> found = prompt_boundary(tok, "a ", "w")
    >>> found.prompt.tokens, found.joined.tokens, found.kept
    (('a', ' '), ('a', ' w'), 1)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bpe import BPETokenizer
from .cuts import Cut, cut


@dataclass(frozen=True)
class Boundary:
    """``prompt`` and ``joined`` (prompt + continuation) cut as ordinary text; ``kept``: how many
    of the prompt's tokens are found unchanged at the start of the joined text's."""

    prompt: Cut
    joined: Cut
    kept: int

    @property
    def lost(self) -> tuple[str, ...]:
        """The prompt's tokens that the joined text cuts otherwise."""
        return self.prompt.tokens[self.kept:]

    def to_dict(self) -> dict:
        return {"prompt": list(self.prompt.tokens), "joined": list(self.joined.tokens), "kept": self.kept}


def prompt_boundary(tok: BPETokenizer, prompt: str, continuation: str) -> Boundary:
    """``prompt`` alone and followed by ``continuation``, as ``tok`` cuts them."""
    alone, joined = cut(tok, prompt), cut(tok, prompt + continuation)
    kept = 0
    for a, b in zip(zip(alone.ids, alone.tokens), zip(joined.ids, joined.tokens)):
        if a != b:
            break
        kept += 1
    return Boundary(alone, joined, kept)


def trailing_space_prompt(text: str, max_chars: int = 60) -> tuple[str, str]:
    """A prompt from ``text`` that ends in a space, and the word after it: the first line of
    ``text`` with a space inside its first ``max_chars`` characters, cut after its last such
    space (``("", "")`` when no line has one)."""
    for line in text.splitlines():
        head = line[:max_chars].rstrip()
        at = head.rfind(" ")
        if at > 0:
            rest = line[at + 1:].split(" ", 1)[0]
            if rest:
                return line[:at + 1], rest
    return "", ""
