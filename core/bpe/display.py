"""How a token is *shown* (never how it is stored): invisible characters made visible, and byte
tokens grouped back into the characters they spell.  Pure functions; no Streamlit here.

One convention everywhere a token is drawn (spans, headings, merge tables, trees, chart labels):

    >>> visible("a b\\n\\tc")
    'a␣b↵⇥c'
    >>> visible("\\x00\\x07")
    '\\\\x00\\\\x07'
    >>> quoted("  ")
    "'␣␣'"

Downloads and copies keep the real characters: only what is drawn goes through ``visible``.

A control character with no symbol of its own (a byte 0-31 other than tab, new line and carriage
return, and 127) is written as its escape, ``\\x00``, as ``BPETokenizer.token_str`` writes a byte
that is not a whole character: the Unicode control pictures (␀ … ␟) are drawn so small, or are
missing from so many fonts, that a table of byte tokens showed nothing there.

Leaves out: HTML (``core.bpe.markup``, ``ui.plumbing.render``) and the text of a byte token
(``BPETokenizer.token_str``, which writes bytes that are not a whole character as ``\\xNN``).
"""

from __future__ import annotations

import unicodedata

SYMBOLS = {
    " ": "␣",
    "\n": "↵",
    "\t": "⇥",
    "\r": "␍",
    "\u00a0": "⍽",
}
DOTTED_CIRCLE = "\u25cc"  # where a combining mark is drawn alone
LEGEND = ("␣ space · ↵ new line · ⇥ tab · ␍ carriage return · ⍽ no-break space · "
          "\\x00 … \\x1f, \\x7f control characters · ⟨U+…⟩ other invisible characters")


def visible_char(ch: str) -> str:
    """One character as drawn: a symbol for whitespace, ``\\xNN`` for other control characters,
    ``⟨U+XXXX⟩`` for other invisible ones (format characters such as the zero-width joiner, odd
    spaces)."""
    if ch in SYMBOLS:
        return SYMBOLS[ch]
    code = ord(ch)
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}"
    category = unicodedata.category(ch)
    if category in ("Cc", "Cf", "Zl", "Zp") or (category == "Zs" and ch != " "):
        return f"⟨U+{code:04X}⟩"
    return ch


def visible(s: str) -> str:
    """A token's text as drawn.  A zero-width joiner *between* two visible characters is kept as
    is, so an emoji sequence such as 👩‍💻 still draws as one picture."""
    return "".join(part for part, _ in visible_parts(s))


def visible_parts(s: str) -> list[tuple[str, bool]]:
    """``visible(s)`` cut into pieces, each flagged ``True`` where it stands for an invisible
    character (spans draw those faintly): ``visible_parts("a b") == [("a", False), ("␣", True),
    ("b", False)]``."""
    out: list[tuple[str, bool]] = []
    for i, ch in enumerate(s):
        between = 0 < i < len(s) - 1 and not s[i - 1].isspace() and not s[i + 1].isspace()
        joiner = ch == "\u200d" and between
        shown = ch if joiner else visible_char(ch)
        out.append((shown, shown != ch))
    return out


def is_invisible(ch: str) -> bool:
    """True for characters that ``visible`` replaces (drawn faintly in token spans)."""
    return visible_char(ch) != ch


def quoted(s: str) -> str:
    """A token in quotes, as headings, tables and charts show it: ``'␣t'``.  A token that starts
    with a combining mark (a Thai vowel or tone mark, an accent cut from its letter) gets the
    dotted circle a mark is shown on alone, ``'◌ั'``: after the quote, a browser found no font
    for the mark and drew a box."""
    shown = visible(s)
    if shown and unicodedata.category(shown[0]).startswith("M"):
        shown = DOTTED_CIRCLE + shown
    return "'" + shown + "'"


def split_characters(pieces: list[bytes]) -> list[tuple[int, int]]:
    """Runs of byte tokens that spell whole characters: ``(first, stop)`` index ranges covering
    ``pieces`` in order.  A run holds more than one token only where a token boundary falls inside
    a character's UTF-8 bytes (the next token starts with a continuation byte ``10xxxxxx``).

        >>> split_characters([b"a", "μ".encode()[:1], "μ".encode()[1:], b"b"])
        [(0, 1), (1, 3), (3, 4)]
    """
    runs: list[tuple[int, int]] = []
    first = 0
    for i in range(1, len(pieces) + 1):
        if i == len(pieces) or not continues_character(pieces[i]):
            runs.append((first, i))
            first = i
    return runs


def continues_character(raw: bytes) -> bool:
    """Whether ``raw`` starts inside a character: its first byte is a UTF-8 continuation byte
    (``10xxxxxx``), so a token of it goes on the character the token before began."""
    return bool(raw) and raw[0] & 0xC0 == 0x80


def hex_bytes(raw: bytes) -> str:
    """Bytes as ``ce 9c``: what hovering a byte token shows."""
    return " ".join(f"{b:02x}" for b in raw)
