"""How fast a conversation fills a context window when the whole history is sent again with each
request.

The model: what every request carries once (the preamble, the system prompt, the tools, the
generation prompt) is *fixed*; the other messages are one exchange's worth, and request ``r``
carries ``r`` of them.  So request ``r`` sends ``fixed + r * per_request`` tokens, and ``N``
requests send ``N * fixed + per_request * N (N + 1) / 2`` in all: the cost grows with the square of
the requests.  (Not the room's *turns*, ``core.room.turns``: those are GPT runs' seconds on a GPT
worker.)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Growth:
    fixed: int
    per_request: int

    @classmethod
    def of(cls, count) -> Growth:
        """The growth of a ``ChatCount``: its ``repeated_tokens`` repeat, the rest is sent once a
        request."""
        return cls(count.total - count.repeated_tokens, count.repeated_tokens)

    def sent(self, request: int) -> int:
        """Tokens request number ``request`` (from 1) carries."""
        return self.fixed + request * self.per_request

    def sent_in_all(self, requests: int) -> int:
        """Tokens sent by the first ``requests`` requests together."""
        return requests * self.fixed + self.per_request * requests * (requests + 1) // 2

    def requests_that_fit(self, window: int) -> int:
        """How many requests a window of ``window`` tokens holds before one no longer fits."""
        if self.fixed + self.per_request > window:
            return 0
        return (window - self.fixed) // self.per_request if self.per_request else window
