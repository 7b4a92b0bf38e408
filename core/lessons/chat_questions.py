"""The chat station's computation: which of two models' chat formats adds more tokens to the same
short conversation (the Chat templates page's opening one, without its tool), answered by
``core.chat`` as the page counts it, the feedback naming the tokens each format writes.
"""

from __future__ import annotations

from ..chat import CHAT_MODELS, chat_tokenizer, count_chat
from ..chat.conversation import SAMPLE_MESSAGES
from ..bpe.display import visible
from .computations import Answer, StationData, computation, format_number
from .errors import LessonError

SIDES = ("first", "second")


def _user_header(count) -> str:
    """The tokens the format writes around the first user message, ``·`` between them."""
    k = next(k for k, m in enumerate(SAMPLE_MESSAGES) if m.role == "user")
    return " · ".join(visible(count.text[t.start:t.end]) for t in count.tokens
                      if t.message == k and t.part != "content")


@computation("choice", tuple(f"{side}_{what}" for side in SIDES
                             for what in ("label", "template", "outside", "user", "total")),
             {"models": list}, needs=())
def costlier_template(data: StationData) -> Answer:
    """Which of ``args.models`` (two chat models: ``core.chat.CHAT_MODELS``) adds more template
    tokens to the sample conversation, each one's template tokens, those around no message (a
    default system prompt, the generation prompt), and its tokens around a user message."""
    names = [str(n) for n in data.arg("models") or []]
    if len(names) != 2 or not set(names) <= set(CHAT_MODELS):
        raise LessonError(f"args.models must be two of {', '.join(CHAT_MODELS)}.")
    counts = [count_chat(CHAT_MODELS[n], chat_tokenizer(n), SAMPLE_MESSAGES) for n in names]
    facts = {}
    for side, count in zip(SIDES, counts):
        outside = sum(t.message is None for t in count.tokens)
        facts |= {f"{side}_label": count.label, f"{side}_template": format_number(count.template_tokens),
                  f"{side}_outside": format_number(outside), f"{side}_user": _user_header(count),
                  f"{side}_total": format_number(count.total)}
    costlier = max(zip(names, counts), key=lambda nc: nc[1].template_tokens)[0]
    return Answer(costlier, facts)
