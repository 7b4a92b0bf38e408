"""The markup behind accessibility, without a browser: a token text box is reachable with Tab and
named, left-to-right with every token and gap isolated, in the page's own colours; the pair about
to merge differs from other tokens by more than colour; the pairs chart writes which bar won and
which tied; a merge tree's scrolling box is reachable and named.  (``test_browser_a11y.py`` checks
what a person meets in Chromium.)"""

import re

from core import BPETokenizer
from ui.plumbing import render
from ui.plumbing.charts import STATUS, STATUS_MARKS, pairs_spec
from ui.views.token_view import merge_graph_svg

RTL = "שלום עולם  שלום"


def test_a_token_box_is_focusable_named_and_keeps_right_to_left_tokens_in_order():
    tok = BPETokenizer.from_text(RTL, 3, variant="word")
    html = render.token_spans_html(tok, RTL, tok.encode_tokens(RTL), label="Hebrew tokens")
    box = re.match(r"<div [^>]*>", html).group(0)
    assert 'tabindex="0"' in box and 'role="region"' in box and 'aria-label="Hebrew tokens"' in box
    assert "direction:ltr" in box and "background" not in box  # the page's own background
    spans = [(classes(tag), styled(tag)) for tag in re.findall(r'<span class="(?:tok|gap)[^"]*"[^>]*>', html)]
    assert {"tok", "gap"} <= {cls[0] for cls, _ in spans}  # the word variant leaves spaces between tokens
    assert all("unicode-bidi:isolate" in style for _, style in spans)
    tokens = [style for cls, style in spans if cls[0] == "tok"]
    assert all(f"color:{render.INK}" in style for style in tokens)
    assert all(f"background:{render.PALETTE[n % 2]}" in style for n, style in enumerate(tokens))  # alternate


def test_byte_tokens_of_one_character_sit_under_it_in_one_purple_outline():
    """The group's look comes from the stylesheet (``render.TOKEN_RULES``), once for the page, not
    written into each of a panel's thousands of groups."""
    tok = BPETokenizer.from_text("abc", 0, variant="byte")
    html = render.token_spans_html(tok, "a👋b", tok.encode_tokens("a👋b"))
    [group] = re.findall(r'<span class="bpe-char"[^>]*>', html)
    assert "#7c3aed" in styled(group) and "style=" not in group
    small = [tag for tag in re.findall(r'<span class="tok[^"]*"[^>]*>', html) if "in-group" in classes(tag)]
    assert len(small) == 4 and all("font-size:10px" in styled(tag) for tag in small)  # 👋's 4 bytes


def test_pieces_of_a_text_a_tokenizer_cannot_encode_look_like_tokens_and_the_unseen_ones_are_red():
    html = render.string_tokens_html(["ab", "c", "☃", "d"], {"☃"})
    spans = [styled(tag) for tag in re.findall(r'<span class="tok[^"]*"[^>]*>', html)]
    assert len(spans) == 4 and all(f"color:{render.INK}" in style for style in spans)  # a token's box
    assert [("#b91c1c" in style) for style in spans] == [False, False, True, False]
    assert f"background:{render.PALETTE[0]}" in spans[0] and f"background:{render.PALETTE[1]}" in spans[1]


def classes(tag: str) -> list[str]:
    return re.search(r'class="([^"]*)"', tag).group(1).split()


def styled(tag: str) -> str:
    """A span's style as drawn: the stylesheet's rules for its classes (``render.TOKEN_RULES``, all
    inside a text box), then its own."""
    own = re.search(r'style="([^"]*)"', tag)
    rules = [style for selector, style in render.TOKEN_RULES.items()
             if set(selector.split()[-1].split(".")[1:]) <= set(classes(tag))]
    return "".join(rules) + (own.group(1) if own else "")


def test_the_pair_differs_from_other_tokens_without_colour():
    for rule in ("font-weight:700", "text-decoration:underline", "border:2px solid"):
        assert rule in render.HIT and rule not in render.BOX
    assert "outline:3px solid" in render.HIT_PAIR


def test_the_pairs_chart_writes_which_bar_won_and_which_tied():
    layers = pairs_spec()["layer"]
    words = next(layer for layer in layers if layer["mark"]["type"] == "text")
    expression = words["transform"][0]["calculate"]
    for status, mark in zip(STATUS, STATUS_MARKS):
        if mark:
            assert f"datum.status == '{status}' ? '{mark}'" in expression
    bars = next(layer for layer in layers if layer["mark"]["type"] == "bar")
    assert bars["encoding"]["strokeDash"]["field"] == "status"


def test_a_merge_tree_scrolls_from_the_keyboard_and_says_it_scrolls():
    tok = BPETokenizer.from_text("abcabcabcabc abcabc", 5, variant="char")
    svg = merge_graph_svg(tok, tok.vocab_size - 1)
    box = re.search(r'<div class="bpe-tree-box"[^>]*>', svg).group(0)
    assert 'tabindex="0"' in box and 'role="region"' in box and 'aria-label="How token' in box
    assert "scroll ← →" in svg
