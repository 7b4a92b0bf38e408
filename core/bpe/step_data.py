"""What Learn BPE's step view needs to show any step of a tokenizer's merges over a window of its
corpus, built once per tokenizer and window and sent to the browser, whose script replays the
merges (``ui/views/assets/step_view.js``, with ``core.bpe.explain``'s rule).

Here, in ``core``, because a large corpus's data are built by a job worker (``core.room.jobs``,
handed off by ``ui.views.step_view``), which must not import Streamlit.  What the page adds of its
own (its styles, the charts' specs, the Vega bundle's address) comes in as ``page``, a plain dict.

Its size is bounded by the window and the merges: the window's tokens before the first merge,
every merge (pair, new id, count, corpus length after, ties) with its competing pairs, and how
each token that can appear in the window is drawn (the window's final tokens and their parts, as
escaped HTML: ``core.bpe.markup``); a token named only in the table, the chart or a heading is cut
to ``NAME_CHARS``.
"""

from __future__ import annotations

import json

from ..digest import text_digest
from .display import continues_character, hex_bytes, is_invisible, quoted, visible_char
from .explain import segment
from .encoding import Token
from .markup import gap_html, legend_text, token_face
from .tokenizer import BPETokenizer

NAME_CHARS = 32  # a token named only in the table, the chart or a heading is cut to this


def built_payload(tok: BPETokenizer, window: str, text_length: int, start_tokens: list[Token] | None,
                  scope: str, page: dict) -> bytes:
    """:func:`payload` as the bytes the browser parses: a line naming the payload (so a browser
    parses each payload once), then its JSON (a job a job worker may run)."""
    data = payload(tok, window, text_length, start_tokens, scope, page)
    return (data["key"] + "\n" + json.dumps(data, ensure_ascii=False)).encode("utf-8")


def payload(tok: BPETokenizer, window: str, text_length: int, start_tokens: list[Token] | None,
            scope: str, page: dict) -> dict:
    """Everything the browser needs to show any step of ``tok``'s merges over ``window`` (a window
    of a corpus of ``text_length`` characters; ``start_tokens``: a real tokenizer's cut of it, for an
    extension), named by ``scope`` (the tokenizer's, ``ui.plumbing.render.tokenizer_scope``), with
    the page's own entries ``page``."""
    tokens = segment(tok, window, 0, start_tokens)
    n = len(tok.trace)
    ids = shown_ids(tok, window, [t.id for t in tokens])
    merges = [[s.left, s.right, s.new_id, s.count, s.length_after, s.ties] for s in tok.trace]
    pairs = [[x for pair in s.competitors for x in pair] for s in tok.trace]
    named = ids | {i for m in merges for i in m[:3]} | {i for p in pairs for i in _pair_ids(p)}
    byte_level = not tok.variant_rules.has_alphabet
    faces = {i: token_face(tok, i) for i in ids}
    return {
        # an extension's scope names its new merges only: its vocabulary's size tells the bases apart
        "key": f"{scope}-{tok.vocab_size}-{text_digest(window)}-{text_length}",
        "n": n,
        "base_vocab": tok.vocab_size - n,
        "length0": tok.initial_length,
        "whole": len(window) == text_length,
        "byte_level": byte_level,
        **_window_parts(window, tokens),
        "merges": merges,
        "pairs": pairs,
        "names": {i: _name(tok, i, full=i in ids) for i in named},
        "faces": {i: [html, int(partial), int(br)] for i, (html, partial, br) in faces.items()},
        "hex": {i: hex_bytes(tok.token_bytes(i)) for i in ids},
        "cont": {i: 1 for i in ids if byte_level and continues_character(tok.token_bytes(i))},
        "symbols": {ch: visible_char(ch) for ch in set(window) if is_invisible(ch)},
        "legend": legend_text(window),
        **page,
    }


def _window_parts(window: str, tokens: list[Token]) -> dict:
    """The window's tokens before the first merge and the text between them, escaped, as lines (the
    browser draws the text a line at a time)."""
    gaps, pos = {}, 0
    for i, t in enumerate(tokens):
        if t.start > pos:
            gaps[i] = _gap_lines(window[pos:t.start])
        pos = max(pos, t.end)
    return {"ids": [t.id for t in tokens], "chunks": [t.chunk for t in tokens], "gaps": gaps,
            "tail": _gap_lines(window[pos:])}


def _gap_lines(text: str) -> list[str]:
    return [gap_html(line) for line in text.split("\n")] if text else []


def shown_ids(tok: BPETokenizer, window: str, first: list[int]) -> set[int]:
    """Every token the window can show at some step: the tokens before the first merge
    (``first``) and the parts, made by a merge of the trace, of the window's final tokens."""
    made = {s.new_id for s in tok.trace}  # an extension's old tokens are never split
    found, todo = set(first), [t.id for t in segment(tok, window, len(tok.trace))]
    while todo:
        i = todo.pop()
        if i in found:
            continue
        found.add(i)
        if i in made:
            todo.extend(tok.merge_parts(i))
    return found


def _pair_ids(flat: list[int]) -> list[int]:
    return [x for j, x in enumerate(flat) if j % 3 != 2]


def _name(tok: BPETokenizer, token_id: int, full: bool) -> str:
    """A token quoted as the page names it; cut short where it is not in the window (tokens of
    thousands of merges would make most of the payload, and take most of its time)."""
    text = tok.token_str(token_id)
    if full:
        return quoted(text)
    name = quoted(text[:NAME_CHARS + 1])  # the first NAME_CHARS characters of the whole name
    return name if len(text) <= NAME_CHARS and len(name) <= NAME_CHARS else name[:NAME_CHARS - 2] + "…'"


