"""A token as escaped HTML, the pieces every drawing of the text shares: Char vs BPE's spans
(``ui.plumbing.render``) and Learn BPE's step view, whose script assembles them in the browser
(``core.bpe.step_data`` sends them).  Here, outside the app, so a job worker can build them without
Streamlit; every piece of user text goes through ``html.escape`` before it is put in markup.

Invisible characters are drawn as faint symbols (``core.bpe.display``: ␣ ↵ ⇥); the word variant's
end-of-word mark is drawn small, in a muted colour.  Leaves out the boxes' colours and layout
(``ui.plumbing.render``'s styles, the step view's classes).
"""

from __future__ import annotations

import html

from .display import LEGEND, is_invisible, visible_parts

FAINT = "color:#4b5563;font-weight:400;"
MUTED = "color:#374151"  # ids, bytes and the end-of-word mark on a token's fill
GAP = "unicode-bidi:isolate;"


def esc(s: str) -> str:
    return html.escape(s, quote=True)


def visible_html(s: str) -> str:
    """A token's text as escaped HTML, invisible characters as faint symbols (``core.bpe.display``)."""
    return "".join(f'<span class="ws" style="{FAINT}">{esc(part)}</span>' if symbol else esc(part)
                   for part, symbol in visible_parts(s))


def marker_html(tok, token_id: int) -> str:
    """The word variant's end-of-word mark, when the token ends with it ("" otherwise)."""
    marker = tok.end_of_word  # the word variant's; None for the others
    if marker and tok.token_str(token_id).endswith(marker):
        return f'<span style="{MUTED};font-size:11px">{esc(marker)}</span>'
    return ""


def token_face(tok, token_id: int) -> tuple[str, bool, bool]:
    """A token drawn wherever it stands, for a renderer in the browser (``ui.views.step_view``): its
    escaped inner HTML, whether it is bytes short of a character, whether a line break follows.
    The same pieces ``ui.plumbing.render.token_spans_html`` draws, read from the vocabulary instead
    of the text."""
    text = tok.token_str(token_id)
    marker = tok.end_of_word
    if marker and text.endswith(marker):
        text = text[:-len(marker)]
    label, partial = text, False
    if not tok.variant_rules.has_alphabet:
        try:
            label = tok.token_bytes(token_id).decode("utf-8")
        except UnicodeDecodeError:
            partial = True
    return visible_html(label) + marker_html(tok, token_id), partial, label.endswith("\n")


def gap_html(s: str) -> str:
    """Text between tokens: escaped, line breaks kept, isolated like a token (right-to-left text
    between tokens would otherwise turn the tokens around it)."""
    if not s:
        return ""
    return f'<span class="gap" style="{GAP}">{esc(s).replace(chr(10), "<br>")}</span>'


def legend_text(text: str) -> str:
    """The legend's line for ``text``'s invisible characters, or ``""`` where it has none."""
    return f"Invisible characters are drawn faintly: {esc(LEGEND)}." if any(map(is_invisible, text)) else ""
