"""The app's own stylesheet, added once per page by the frame: where Streamlit's theme leaves text
below the 4.5:1 contrast WCAG asks for (axe-core's ``color-contrast`` rule), in either theme.

Streamlit fades a caption to 60% opacity (3.9:1 on white); here it is 85%.  Its primary colour
is both the fill under white text (primary buttons, a multiselect's chosen names) and, in its
dark theme, the text colour of a chosen pill and of a slider's value: no violet is 4.5:1 against
both white and the dark background, so the primary colours (``.streamlit/config.toml``) are dark
enough for white text in both themes, a chosen pill's text takes the page's text colour, its
violet tint and border marking the choice, and so does a slider's value, above its violet thumb.
The colours in ``ui.plumbing.render``'s token boxes need none of this: they carry their own fill
and text colour (``TOKEN_RULES``, here too).

Focus stays in sight: Streamlit scrolls the page inside its main container, under a header laid
over that container's top, so a control the keyboard focuses (Learn BPE's Next) could be scrolled
to the very top and sit under the header; the container keeps a header's height and a focus ring
clear at its top when it scrolls to a control.  A collapsed sidebar is slid out of sight but
Streamlit leaves its controls in the keyboard's path: a dozen Tab presses focused what nobody
could see, so it is hidden as it slides out.  A radio button or a checkbox the keyboard
focuses is outlined: Streamlit marks it with a faint grey, lost on a projector.

A chart's or a table's toolbar (Streamlit's hover menu: fullscreen, download, search) is laid
above the element, over the bottom of whatever comes before it, so it hid a chart title's last
words and a select box's arrow; an element that has one is moved down by the part of the toolbar
the gap between elements leaves over.

A Markdown table (Chat's costs, Tokenizer questions' comparisons) has narrower cells than
Streamlit's own: seven columns of figures stay in sight at 800 px; one wider than the column
scrolls sideways in its own box (``ui.plumbing.render.show_table``).
"""

from __future__ import annotations

import streamlit as st

from ui.plumbing.render import TOKEN_RULES

CSS = "\n".join([
    *(f"{selector}{{{style}}}" for selector, style in TOKEN_RULES.items()),
    '[data-testid="stCaptionContainer"]{opacity:.85;}',
    # as specific as Streamlit's own rule for a chosen pill (a class, [data-selected], :not), and then some
    '[data-testid="stApp"] button[data-selected="true"]:not([data-disabled]){color:inherit;}',
    '[data-testid="stSlider"] [data-testid="stSliderThumbValue"]{color:inherit;}',
    # the header is 3.75rem tall; the rest is room for a focus ring
    '[data-testid="stMain"]{scroll-padding-top:5rem;}',
    # hidden as it slides out (hidden once out of sight, after its .3s slide, it was still in the
    # keyboard's path as a page opened), each element in it too: a help button sets itself visible
    '[data-testid="stSidebar"][data-collapsed="true"],[data-testid="stSidebar"][data-collapsed="true"] *'
    '{visibility:hidden !important;}',
    '[data-testid="stApp"] :is([data-testid="stRadio"],[data-testid="stCheckbox"])'
    ' label:has(input:focus-visible){outline:2px solid currentColor;outline-offset:2px;'
    'border-radius:.25rem;}',
    # the toolbar is 2.75rem tall, the gap between elements 1rem
    '[data-testid="stElementContainer"]:has([data-testid="stElementToolbar"]){margin-top:1.75rem;}',
    # a Markdown table of the page (ui.plumbing.render.markdown_table): narrower cells, so seven columns
    # of figures fit 800 px, and a comparison of six tokenizers is no taller than it must be
    '[data-testid="stMain"] [data-testid="stMarkdownContainer"] :is(th,td)'
    '{padding:.3rem .4rem;font-size:.9rem;}',
    # and one wider than the column scrolls sideways in its box (show_table)
    '.bpe-table{overflow-x:auto;}',
])


def apply() -> None:
    """Add the stylesheet to the page (it takes no room)."""
    st.html(f"<style>{CSS}</style>")
