"""Safe HTML for token spans, and safe Markdown for error banners and tables.  Every piece of user
text goes through ``html.escape`` before it reaches ``st.html``; nothing here interprets text as
Markdown.

Token boundaries are alternating pastel backgrounds with a thin outline; hovering a token shows
its id and bytes (``title``).  The pair about to merge is drawn by Learn BPE's step view, in the
browser (``ui/views/assets/step_view.js``), with the styles here (``HIT``, ``HIT_PAIR``): bright
yellow, bold, underlined and inside a thick dark outline (told apart without colour too).
Invisible characters are drawn as grey symbols (``core.bpe.display``: ␣ ↵ ⇥), with a one-line
legend; byte tokens that split a character sit under that character inside one purple outline.
A token's own markup (its text, invisible characters, the end-of-word mark) is
``core.bpe.markup``'s, shared with the step view.

Readable in either theme and in any script: the text box takes the page's own background and text
colour (a token box carries its own light fill and dark text, every colour at least 4.5:1 against
what it sits on); it scrolls from the keyboard (``tabindex``, a label); its direction is
left-to-right and each token and gap is isolated from the bidirectional algorithm, so tokens of a
right-to-left script stay in the order of the encoding, left to right.
"""

from __future__ import annotations

import html

import pandas as pd
import streamlit as st

from core import BPETokenizer, Token
from core.bpe.encoding import PackedTokens
from core.bpe.display import continues_character, hex_bytes, quoted, split_characters
from core.digest import text_digest
from core.bpe.markup import MUTED, esc, gap_html, legend_text, marker_html, visible_html

from ui.serving.bounded_cache import BoundedCache

PALETTE = ("#dbeafe", "#fce7f3", "#dcfce7", "#fef3c7", "#ede9fe", "#ffedd5")
INK = "#111827"  # text on a token's light fill, in either theme
BOX = ("display:inline-block;white-space:pre;border:1px solid rgba(0,0,0,.3);border-radius:3px;"
       f"margin:1px 0;padding:0 1px;line-height:1.5;color:{INK};unicode-bidi:isolate;")
CONTAINER = ("font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:15px;"
             "line-height:1.9;white-space:normal;word-break:break-all;max-height:{h}px;overflow-y:auto;"
             "padding:8px;border:1px solid rgba(128,128,128,.45);border-radius:6px;"
             "direction:ltr;unicode-bidi:isolate;text-align:left;")
HIT = "background:#facc15;border:2px solid #78350f;font-weight:700;text-decoration:underline 2px;"
GROUP = ("display:inline-flex;flex-direction:column;align-items:center;vertical-align:bottom;"
         "border:1.5px solid #7c3aed;border-radius:5px;margin:1px 1px;padding:0 1px;"
         f"background:#f5f3ff;color:{INK};unicode-bidi:isolate;")
HIT_PAIR = "display:inline-block;border-radius:4px;outline:3px solid #78350f;outline-offset:1px;"
GLYPH = "line-height:1.35;padding:0 2px"
IN_GROUP = "font-size:10px;line-height:1.3;color:#6b21a8;"
PARTIAL = "color:#9a3412;font-style:italic;"
UNSEEN = "background:#fecaca;border:2px solid #b91c1c;"  # a character a tokenizer's alphabet lacks
LEGEND_STYLE = "font-size:12px;margin-top:4px;opacity:.8"
# A text box's token spans take their look from these rules in the app's stylesheet
# (``ui.plumbing.theme``), by class: written into each span, the same two hundred characters made a
# panel of random Unicode megabytes of markup, which the server copied, scanned and hashed again at
# every rerun (docs/benchmarks.md, "What one page run costs the server").
TOKEN_RULES = {
    ".bpe-text .tok": BOX,
    ".bpe-text .tok.c0": f"background:{PALETTE[0]};",
    ".bpe-text .tok.c1": f"background:{PALETTE[1]};",
    ".bpe-text .tok.partial": PARTIAL,  # bytes that are not a whole character
    ".bpe-text .bpe-char": GROUP,  # byte tokens that spell one character, under it
    ".bpe-text .bpe-glyph": GLYPH,
    ".bpe-text .tok.in-group": IN_GROUP,
    '.bpe-text[data-view]:not([data-view=""]) .tok': "cursor:pointer;",  # a click picks the token
}
TEXT_LABEL = "The text split into tokens"
# A text box draws at most this many tokens, its counts covering them all: a full test box of random
# Unicode is 70,000 tokens under a real model, megabytes of markup for every rerun to send and a
# browser to lay out, far more than anyone reads in a box of a few lines; English fills a box of
# 20,000 characters with about 5,000.
DRAWN_TOKENS = 5_000
GROUP_LEGEND = ("A purple outline joins byte tokens that spell one character (shown above them); "
                "hover it for the bytes.")


MARKDOWN_ESCAPES = str.maketrans({ch: "\\" + ch for ch in "\\`*_{}[]()#+-.!|~$>"})


def md_safe(s: str) -> str:
    """Text for ``st.markdown`` that shows as typed: HTML escaped, Markdown punctuation escaped."""
    return html.escape(s, quote=False).translate(MARKDOWN_ESCAPES)


def markdown_table(frame: pd.DataFrame, formats: dict[str, str] | None = None) -> str:
    """``frame`` as a Markdown table for ``st.markdown``: every column in sight however narrow the
    page, its cells wrapping, where a data grid keeps each cell on one line and scrolls the columns
    past its width out of sight (a word's other forms, a prompt with its continuation).  Text shows
    as typed (:func:`md_safe`, a line break as ``↵``); numbers are right-aligned, written as people
    write them (131,072), or with ``formats[column]`` (``"{:.2f}×"``); a missing one is "—".  A few
    strings to send: a styled frame cost more of the server's CPU a run (docs/benchmarks.md, "What
    one page run costs the server")."""
    formats = formats or {}
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]

    def cell(column, value, number: bool) -> str:
        if pd.isna(value):
            return "—"
        if number:
            return formats.get(column, "{:,}").format(value)
        return md_safe(str(value).replace("\r\n", "↵").replace("\n", "↵").replace("\r", "↵"))

    columns = [[cell(c, v, n) for v in frame[c].tolist()] for c, n in zip(frame.columns, numeric)]
    rows = ["| " + " | ".join(md_safe(str(c)) for c in frame.columns) + " |",
            "|" + "".join("--:|" if number else ":--|" for number in numeric)]
    rows += ["| " + " | ".join(cells) + " |" for cells in zip(*columns)]
    return "\n".join(rows)


def show_table(frame: pd.DataFrame, label: str, formats: dict[str, str] | None = None, where=st) -> None:
    """``frame`` as a :func:`markdown_table` in ``where``, in a box of its own that scrolls sideways
    when the table is wider than the column (a comparison of six tokenizers beside the open sidebar
    at 800 px): a table in the page's flow ran past the column, and the whole page scrolled sideways,
    its headings sliding under the sidebar.  The box takes the keyboard's focus, so its hidden
    columns are reached with the arrow keys too, and a screen reader names it ``label``.  Its cells
    are :func:`md_safe`, so the HTML allowed for the box is the box's alone."""
    where.markdown(f'<div class="bpe-table" role="region" tabindex="0" aria-label="{html.escape(label)}">'
                   f"\n\n{markdown_table(frame, formats)}\n\n</div>", unsafe_allow_html=True)


def plural(n: int, word: str) -> str:
    """"1 record", "2 records": a count as people write it."""
    return f"{n:,} {word}{'s' * (n != 1)}"


def counts_config(*columns: str) -> dict:
    """A table's ``column_config`` that shows these columns' whole numbers as people write them,
    50,257 rather than 50257: Streamlit's table prints an integer bare."""
    return {c: st.column_config.NumberColumn(c, format="localized") for c in columns}


def show_error(exc: Exception, prefix: str = "") -> None:
    """An error banner for bad input.  Its message often quotes what the visitor supplied (a file
    name, a token, a pattern), so it is shown as typed: never as a link, bold text or HTML."""
    st.error(prefix + md_safe(str(exc)), icon="⚠️")


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


def token_title(tok: BPETokenizer, token_id: int) -> str:
    """What hovering a token shows: its id, its text (whitespace visible) and its bytes."""
    return f"id {token_id}: {quoted(tok.token_str(token_id))}, bytes {hex_bytes(tok.token_bytes(token_id))}"


def token_spans_html(tok: BPETokenizer, text: str, tokens: list[Token], show_ids: bool = False,
                     height: int = 420, view: str | None = None, label: str = TEXT_LABEL,
                     styles: dict[int, str] | None = None, total: int | None = None) -> str:
    """The text as outlined, coloured token spans (:func:`spans_markup`) in a scrolling box.  Text
    between tokens (spaces in the word variant) is shown plain.  ``view`` names the text for clicks
    (``ui.views.token_view``); ``label`` names the box for a screen reader; ``styles``: a style of
    its own for some tokens, by index (the Chat page's template tokens); ``total``: the whole text's
    tokens, where ``tokens`` are only the first of them (``DRAWN_TOKENS`` and the rest of a
    character)."""
    drawn = drawn_count(tok, tokens)
    spans, pos, grouped = spans_markup(tok, text, tokens[:drawn], TokenFaces(tok, text, show_ids), styles)
    return (f'<div class="bpe-text" data-view="{esc(view or "")}" {box_attrs(label)} '
            f'style="{CONTAINER.format(h=height)}">{spans}{rest_html(text, pos, drawn, total or len(tokens))}'
            f'</div>{legend_html(grouped, text)}')


def spans_markup(tok: BPETokenizer, text: str, tokens: list[Token], faces: TokenFaces,
                 styles: dict[int, str] | None = None, classes: dict[int, str] | None = None,
                 id_offset: int = 0) -> tuple[str, int, bool]:
    """Every page's token spans: byte tokens that split a character drawn under that character,
    inside one purple outline; ``styles`` and ``classes``, by index, a token's own style and extra
    classes; ``id_offset`` added to each ``data-id`` (Compare's panels).  Returns the markup, the
    text's position after the last token, and whether any character was split."""
    tokens = list(tokens)  # a PackedTokens makes a Token at each index: once each here
    out, pos, grouped = [], 0, False
    for first, stop in _character_runs(tok, tokens):
        if tokens[first].start > pos:
            out.append(gap_html(text[pos:tokens[first].start]))
        group = stop - first > 1
        if group:
            grouped = True
            out.append(_group_open(tok, text, tokens[first:stop]))
        for n in range(first, stop):
            title, shown, partial, line_end = faces(tokens[n], group)
            own = (styles or {}).get(n)
            styled = f' style="{own}"' if own else ""
            out.append(f'<span class="{token_classes(n, partial, group)}{(classes or {}).get(n, "")}" '
                       f'data-id="{id_offset + tokens[n].id}" title="{title}"{styled}>{shown}</span>')
            if line_end:
                out.append("<br>")
        if group:
            out.append("</span></span>")
        pos = max(pos, tokens[stop - 1].end)
    return "".join(out), pos, grouped


def drawn_count(tok: BPETokenizer, tokens: list[Token]) -> int:
    """How many of ``tokens`` a text box draws: all, up to ``DRAWN_TOKENS``, then up to the end of
    the character the last one drawn is part of (a byte tokenizer's)."""
    drawn = min(len(tokens), DRAWN_TOKENS)
    if not tok.variant_rules.has_alphabet:
        while drawn < len(tokens) and continues_character(tok.token_bytes(tokens[drawn].id)):
            drawn += 1
    return drawn


def rest_html(text: str, pos: int, drawn: int, total: int) -> str:
    """The end of a text box: the text after the last token, or, where tokens were left undrawn,
    how many (the counts beside the box include them)."""
    if drawn < total:
        return (f'<div class="bpe-rest" style="{LEGEND_STYLE};font-family:sans-serif;word-break:normal">'
                f'… and {total - drawn:,} more tokens, not drawn here; the counts include them.</div>')
    return gap_html(text[pos:]) if pos < len(text) else ""


class TokenFaces:
    """What a text box's token span shows, for every page that draws one: its escaped title, its
    inner markup, whether it is bytes short of a character, whether a line ends after it.  Made
    once per token id where the id alone decides it (a byte-level tokenizer's tokens: ids recur,
    256 single bytes among them, and 20,000 characters of random Unicode are 71,000 spans under
    GPT-2), else for every token (a tokenizer with an alphabet: the characters are the text's)."""

    def __init__(self, tok: BPETokenizer, text: str, show_ids: bool = False) -> None:
        self.tok, self.text, self.show_ids = tok, text, show_ids
        self.by_id = not tok.variant_rules.has_alphabet
        self._made: dict[tuple[int, bool], tuple[str, str, bool, bool]] = {}

    def __call__(self, t: Token, in_group: bool = False) -> tuple[str, str, bool, bool]:
        """``t``'s face; ``in_group``: drawn under its character (``_group_open``), as its bytes."""
        face = self._made.get((t.id, in_group))
        if face is None or not self.by_id:
            title = face[0] if face else esc(token_title(self.tok, t.id))
            face = self._made[t.id, in_group] = (title, *self._inner(t, in_group))
        return face

    def _inner(self, t: Token, in_group: bool) -> tuple[str, bool, bool]:
        tok = self.tok
        label, partial = token_label(tok, t, self.text)
        if in_group:  # the character is drawn above: the token shows its bytes, small
            shown = esc(hex_bytes(tok.token_bytes(t.id)))
        else:
            shown = visible_html(label)
        shown += marker_html(tok, t.id)
        if self.show_ids and not in_group:
            shown += (f'<sub style="{MUTED};font-size:10px;margin-left:2px">{t.id}</sub>'
                      f'<sup style="{MUTED};font-size:9px">{esc(hex_bytes(tok.token_bytes(t.id)))}</sup>')
        elif self.show_ids:
            shown += f'<sub style="{MUTED};font-size:9px;margin-left:1px">{t.id}</sub>'
        return shown, partial and not in_group, label.endswith("\n")


def _character_runs(tok: BPETokenizer, tokens: list[Token]) -> list[tuple[int, int]]:
    if tok.variant_rules.has_alphabet:
        return [(n, n + 1) for n in range(len(tokens))]
    return split_characters([tok.token_bytes(t.id) for t in tokens])


def _group_open(tok: BPETokenizer, text: str, group: list[Token]) -> str:
    chars = text[group[0].start:group[-1].end]
    raw = b"".join(tok.token_bytes(t.id) for t in group)
    title = f"{chars}: {len(group)} byte tokens, bytes {hex_bytes(raw)}"
    return (f'<span class="bpe-char" title="{esc(title)}">'
            f'<span class="bpe-glyph">{visible_html(chars)}</span><span style="display:inline-flex;gap:1px">')


def token_classes(n: int, partial: bool, in_group: bool = False) -> str:
    """The classes of a text box's ``n``-th token span (``TOKEN_RULES``): fills alternating."""
    return f"tok c{n % 2}" + " partial" * partial + " in-group" * in_group


def legend_html(grouped: bool, text: str = "") -> str:
    """What a text box's marks mean: the invisible characters ``text`` holds (none for no text), and
    the purple outline where ``grouped``."""
    legend = legend_text(text)
    parts = [legend] if legend else []
    if grouped:
        parts.append(GROUP_LEGEND)
    if not parts:
        return ""
    return f'<div class="bpe-legend" style="{LEGEND_STYLE}">{" ".join(parts)}</div>'


def box_attrs(label: str) -> str:
    """A scrolling text box's attributes: reachable with Tab (its arrow keys scroll it), named."""
    return f'tabindex="0" role="region" aria-label="{esc(label)}"'


class _Html(str):
    """Markup that is drawn as it is: Streamlit dedents a plain ``str`` given to ``st.html``, a
    regular-expression pass over the whole of it, and takes an object's ``_repr_html_`` as it is."""

    def _repr_html_(self) -> str:
        return self


def draw_html(markup: str) -> None:
    """``st.html`` for the app's own markup (no indentation to remove): a page of token spans is
    megabytes of it, and the dedent was a quarter of Compare tokenizers' run on 20,000 characters
    of random Unicode (``tests/app/test_page_thread.py`` measures a run's CPU)."""
    st.html(_Html(markup))


@st.cache_resource(show_spinner=False)
def _token_texts() -> BoundedCache:
    """Texts' tokens and their markup, by tokenizer, text and look: ~300 bytes a token."""
    return BoundedCache(32, 64 * 2**20, cost=lambda entry: len(entry[1][1]) + entry[1][0].rows.nbytes)


def show_tokens(tok: BPETokenizer, text: str, show_ids: bool = False, height: int = 420,
                view: str | None = None, label: str = TEXT_LABEL, **encode) -> PackedTokens:
    """Draw ``tok``'s tokens of ``text`` (``tok.encode_tokens(text, **encode)``, returned) as
    spans, both made once for the room: a test text of 20,000 characters is tens of thousands of
    spans, and a page that drew them at every click held the interpreter for a second each time."""
    key = (text_digest(text), show_ids, height, view, label, tuple(sorted(encode.items())))

    def make() -> tuple[PackedTokens, str]:
        tokens = tok.encode_tokens(text, **encode)
        return PackedTokens(tokens), token_spans_html(tok, text, tokens, show_ids, height, view, label)

    tokens, markup = _token_texts().made_for(tok, key, make)
    draw_html(markup)
    return tokens


def string_tokens_html(pieces: list[str], unseen: set[str], height: int = 300,
                       label: str = TEXT_LABEL) -> str:
    """Token strings without offsets (``tok.tokenize``), unseen characters in red."""
    out = []
    for n, p in enumerate(pieces[:DRAWN_TOKENS]):
        if p in unseen:  # the box's look is the stylesheet's (``TOKEN_RULES``), the red its own
            attrs = f'class="tok" title="not in the alphabet" style="{UNSEEN}"'
        else:
            attrs = f'class="{token_classes(n, False)}" title="{esc(p)}"'
        out.append(f'<span {attrs}>{visible_html(p)}</span>')
    rest = rest_html("", 0, len(out), len(pieces))
    return (f'<div class="bpe-text" {box_attrs(label)} style="{CONTAINER.format(h=height)}">'
            f'{" ".join(out)}{rest}</div>{legend_html(False, "".join(pieces))}')


def tokenizer_scope(tok: BPETokenizer) -> str:
    """A name for one tokenizer's vocabulary: a click made on another is not carried over.  An
    extension is named by its new merges (hashing a real tokenizer's 100k-200k on every rerun
    would cost more), so which real tokenizer it extends must be named beside it."""
    return f"{tok.variant}-{abs(hash(_scope_parts(tok))) % 10**12}"


def tokenizer_digest(tok: BPETokenizer) -> str:
    """:func:`tokenizer_scope` as every process spells it (``hash`` of a str differs between
    processes): a job's key, which app processes share through the machine's job engine."""
    return f"{tok.variant}-{text_digest(repr(_scope_parts(tok)))}"


def _scope_parts(tok: BPETokenizer) -> tuple:
    alphabet = tuple(tok.chars) if tok.variant_rules.has_alphabet else tok.pattern
    merges = tuple(s.pair for s in tok.trace) if tok.extends is not None else tuple(tok.merge_triples)
    return alphabet, merges
