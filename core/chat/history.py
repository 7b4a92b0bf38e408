"""How fast a conversation fills a context window when the whole history is sent again each turn.

The model: what every request carries once (the preamble, the system prompt, the tools, the
generation prompt) is *fixed*; the other messages are one turn's worth, and turn ``t`` carries
``t`` of them.  So turn ``t`` sends ``fixed + t * per_turn`` tokens, and ``N`` turns send
``N * fixed + per_turn * N (N + 1) / 2`` in all: the cost grows with the square of the turns.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Growth:
    fixed: int
    per_turn: int

    @classmethod
    def of(cls, count) -> Growth:
        """The growth of a ``ChatCount``: its ``turn_tokens`` repeat, the rest is sent once a turn."""
        return cls(count.total - count.turn_tokens, count.turn_tokens)

    def sent(self, turn: int) -> int:
        """Tokens the request of turn ``turn`` (from 1) carries."""
        return self.fixed + turn * self.per_turn

    def sent_in_all(self, turns: int) -> int:
        """Tokens sent over the first ``turns`` turns together."""
        return turns * self.fixed + self.per_turn * turns * (turns + 1) // 2

    def turns_that_fit(self, window: int) -> int:
        """How many turns a window of ``window`` tokens holds before a request no longer fits."""
        if self.fixed + self.per_turn > window:
            return 0
        return (window - self.fixed) // self.per_turn if self.per_turn else window
