"""The chat templates open models publish (``data/*.jinja``, sources in ``data/sources.toml``),
rendered as Hugging Face's ``apply_chat_template`` renders them: Jinja's immutable sandbox,
``trim_blocks`` and ``lstrip_blocks``, and its ``raise_exception``, ``tojson`` and ``strftime_now``.

The template is ours; a message's text only ever reaches it as a value, so text that looks like
Jinja stays text.  To say which characters of the output are a message's own, each message is
rendered once more with a marker character in place of its text: where the two outputs differ is
that message's place (a template may trim or quote the text, so searching for it would mislead).
"""

from __future__ import annotations

import json
import tomllib
from datetime import datetime
from functools import lru_cache
from pathlib import Path

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from .pieces import CONTENT, Piece, template_pieces

DATA = Path(__file__).resolve().parent / "data"
MARKERS = ("\ue000", "\ue001", "\ue002")


def template_sources() -> dict[str, dict]:
    """Each template's model, source, mirror and licence, as ``data/sources.toml`` records them."""
    with open(DATA / "sources.toml", "rb") as f:
        return tomllib.load(f)


def _raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def _tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def _strftime_now(format):
    return datetime.now().strftime(format)


@lru_cache(maxsize=None)
def compiled(name: str) -> jinja2.Template:
    """The template ``name`` (a key of ``data/sources.toml``), compiled as Hugging Face does."""
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env.from_string((DATA / template_sources()[name]["file"]).read_text(encoding="utf-8"))


def render_template(name: str, messages, tools=None, *, add_generation_prompt: bool = True,
                    **options) -> str:
    """The text the template ``name`` makes of ``messages`` (``core.chat.conversation.Message``)
    and ``tools`` (``Tool``); ``options`` are the template's own variables (``bos_token``,
    ``enable_thinking``).  A conversation the template refuses raises ``ValueError``."""
    try:
        return compiled(name).render(
            messages=[_as_dict(m) for m in messages],
            tools=[t.as_openai() for t in tools] if tools else None,
            add_generation_prompt=add_generation_prompt, **options)
    except jinja2.exceptions.TemplateError as exc:
        raise ValueError(f"The {name} chat template refuses this conversation: {exc}") from None


def _as_dict(message) -> dict:
    data = {"role": message.role, "content": message.content}
    if message.name is not None:
        data["name"] = message.name
    return data


def template_render_pieces(name: str, messages, tools, specials, start: str, *,
                           add_generation_prompt: bool = True, **options) -> list[Piece]:
    """The rendering cut into pieces: each message's text, and the template's text around it
    given to the message whose header it opens (``start``: the special token a header begins
    with) or to none (a preamble, the generation prompt)."""
    text = render_template(name, messages, tools, add_generation_prompt=add_generation_prompt, **options)
    spans, done = [], 0
    for k in range(len(messages)):
        marker = next(p for p in MARKERS if all(p not in m.content for m in messages))
        marked = [m if i != k else type(m)(m.role, marker, m.name) for i, m in enumerate(messages)]
        other = render_template(name, marked, tools, add_generation_prompt=add_generation_prompt, **options)
        begin, end = _differing_span(text, other)
        begin = max(begin, done)
        done = max(end, begin)
        spans.append((begin, done))
    return _pieces(text, spans, specials, start, add_generation_prompt)


def _differing_span(text: str, other: str) -> tuple[int, int]:
    """``(begin, end)`` of what ``text`` has where ``other`` differs: their common prefix and
    common suffix left out (the suffix never overlapping the prefix)."""
    most = min(len(text), len(other))
    prefix = _longest(most, lambda n: text[:n] == other[:n])
    suffix = _longest(most - prefix, lambda n: text[len(text) - n:] == other[len(other) - n:])
    return prefix, len(text) - suffix


def _longest(most: int, same) -> int:
    """The largest ``n <= most`` with ``same(n)`` (which holds for every smaller ``n`` too): a
    binary search, as slices compare at C speed and a message may be a megabyte."""
    low, high = 0, most
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if same(middle) else (low, middle - 1)
    return low


def _pieces(text: str, spans, specials, start: str, generation: bool) -> list[Piece]:
    pieces, done = [], 0
    for k, (begin, end) in enumerate(spans):
        gap = text[done:begin]
        cut = gap.rfind(start)
        if cut < 0:
            cut = 0
        pieces += template_pieces(gap[:cut], k - 1 if k else None, specials)
        pieces += template_pieces(gap[cut:], k, specials)
        if end > begin:
            pieces.append(Piece(text[begin:end], CONTENT, k))
        done = end
    tail = text[done:]
    cut = tail.rfind(start) if generation else -1
    cut = len(tail) if cut < 0 else cut
    last = len(spans) - 1
    pieces += template_pieces(tail[:cut], last, specials)
    pieces += template_pieces(tail[cut:], None, specials)
    return pieces
