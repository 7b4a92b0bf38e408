"""A template's own text cut at the special tokens it holds, and only there."""

from core.chat.pieces import SPECIAL, TEMPLATE, Piece, rendered_text, template_pieces


def test_template_text_is_cut_at_its_special_tokens_longest_first():
    pieces = template_pieces("<|im_start|>user\n<|im_end|>", 2, ["<|im_end|>", "<|im_start|>", "<|im"])
    assert pieces == [Piece("<|im_start|>", SPECIAL, 2), Piece("user\n", TEMPLATE, 2),
                      Piece("<|im_end|>", SPECIAL, 2)]
    assert rendered_text(pieces) == "<|im_start|>user\n<|im_end|>"
    assert template_pieces("", 0, ["<|x|>"]) == []
    assert template_pieces("a", None, []) == [Piece("a", TEMPLATE, None)]
