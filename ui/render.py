"""Safe HTML for token spans, and safe Markdown for error banners.  Every piece of user text goes
through ``html.escape`` before it reaches ``st.html``; nothing here interprets text as Markdown.

Token boundaries are alternating pastel backgrounds with a thin outline; the pair being merged is
bright yellow with a dark outline; hovering a token shows its id (``title``).
"""

from __future__ import annotations

import html

import streamlit as st

from core import BPETokenizer, Token

PALETTE = ("#dbeafe", "#fce7f3", "#dcfce7", "#fef3c7", "#ede9fe", "#ffedd5")
BOX = ("display:inline-block;white-space:pre;border:1px solid rgba(0,0,0,.18);border-radius:3px;"
       "margin:1px 0;padding:0 1px;line-height:1.5;")
CONTAINER = ("font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:15px;"
             "line-height:1.9;white-space:normal;word-break:break-all;max-height:{h}px;overflow-y:auto;"
             "padding:8px;border:1px solid #e5e7eb;border-radius:6px;background:#fff;")
HIT = "background:#facc15;border:2px solid #92400e;font-weight:600;"


def esc(s: str) -> str:
    return html.escape(s, quote=True)


def md_safe(s: str) -> str:
    """Text for ``st.markdown`` that shows as typed: HTML escaped, Markdown punctuation escaped."""
    s = html.escape(s, quote=False)
    return "".join("\\" + ch if ch in "\\`*_{}[]()#+-.!|~$>" else ch for ch in s)


def show_error(exc: Exception, prefix: str = "") -> None:
    """An error banner for bad input.  Its message often quotes what the visitor supplied (a file
    name, a token, a pattern), so it is shown as typed: never as a link, bold text or HTML."""
    st.error(prefix + md_safe(str(exc)), icon="⚠️")


def visible(s: str) -> str:
    """Whitespace made visible inside a token: newline as ↵, tab as →."""
    return s.replace("\n", "↵").replace("\t", "→").replace("\r", "␍")


def token_label(tok: BPETokenizer, token: Token, text: str) -> tuple[str, bool]:
    """What a token shows: its characters, or ``\\xNN`` for bytes that are not a whole character
    (never a silent U+FFFD).  Returns (label, is_partial_bytes)."""
    raw = tok.token_bytes(token.id)
    if not tok.variant_rules.has_alphabet:  # byte tokens: a token may hold part of a character
        try:
            return raw.decode("utf-8"), False
        except UnicodeDecodeError:
            return tok.token_str(token.id), True
    return text[token.start:token.end], False


def token_spans_html(tok: BPETokenizer, text: str, tokens: list[Token], hits=(),
                     show_ids: bool = False, height: int = 420) -> str:
    """The text as outlined, coloured token spans.  ``hits`` are indices ``i`` where tokens
    ``i, i + 1`` are a pair about to merge (``core.bpe.explain.occurrence_indices``): both are drawn
    bright yellow inside one dark outline.  Text between tokens (spaces in the word variant) is
    shown plain."""
    hits = set(hits)
    marker = tok.end_of_word  # the word variant's; None for the others
    out, pos = [], 0
    for n, t in enumerate(tokens):
        if t.start > pos:
            out.append(gap_html(text[pos:t.start]))
        if n in hits:
            out.append('<span class="bpe-hit" style="display:inline-block;border-radius:4px;'
                       'outline:2px solid #92400e;">')
        in_hit = n in hits or (n - 1) in hits
        label, partial = token_label(tok, t, text)
        style = BOX + (HIT if in_hit else f"background:{PALETTE[n % 2]};")
        if partial:
            style += "color:#9a3412;font-style:italic;"
        shown = esc(visible(label))
        if marker and tok.token_str(t.id).endswith(marker):
            shown += f'<span style="color:#9ca3af;font-size:11px">{esc(marker)}</span>'
        title = f"id {t.id}: {tok.token_str(t.id)!r}"
        extra = ""
        if show_ids:
            hexes = " ".join(f"{b:02x}" for b in tok.token_bytes(t.id))
            extra = (f'<sub style="color:#6b7280;font-size:10px;margin-left:2px">{t.id}</sub>'
                     f'<sup style="color:#9ca3af;font-size:9px">{esc(hexes)}</sup>')
        out.append(f'<span class="tok" title="{esc(title)}" style="{style}">{shown}{extra}</span>')
        if (n - 1) in hits:
            out.append("</span>")
        if label.endswith("\n"):
            out.append("<br>")
        pos = max(pos, t.end)
    if pos < len(text):
        out.append(gap_html(text[pos:]))
    return f'<div class="bpe-text" style="{CONTAINER.format(h=height)}">{"".join(out)}</div>'


def gap_html(s: str) -> str:
    """Text between tokens: escaped, line breaks kept."""
    return esc(s).replace("\n", "<br>")


def show_tokens(tok: BPETokenizer, text: str, tokens: list[Token], hits=(), show_ids: bool = False,
                height: int = 420) -> None:
    st.html(token_spans_html(tok, text, tokens, hits, show_ids, height))


def string_tokens_html(pieces: list[str], unseen: set[str], height: int = 300) -> str:
    """Token strings without offsets (``tok.tokenize``), unseen characters in red."""
    out = []
    for n, p in enumerate(pieces):
        bad = p in unseen
        style = BOX + ("background:#fecaca;border:2px solid #b91c1c;" if bad else f"background:{PALETTE[n % 2]};")
        title = "not in the alphabet" if bad else p
        out.append(f'<span class="tok" title="{esc(title)}" style="{style}">{esc(visible(p))}</span>')
    return f'<div class="bpe-text" style="{CONTAINER.format(h=height)}">{" ".join(out)}</div>'
