"""ChatML, the ``<|im_start|>role ... <|im_end|>`` form, in two uses.

- The estimate for GPT-4 and GPT-4o, whose chat format OpenAI never published: each message as
  ``<|im_start|>role<|im_sep|>content<|im_end|>`` and ``<|im_start|>assistant<|im_sep|>`` to
  reply, as tiktokenizer renders it (OpenAI's cookbook counts the same: 3 tokens a message
  besides its role and content, 3 to prime the reply), on tiktoken's ids for those markers.  Tools
  are written as harmony writes them, in a system message first: an estimate too.
- Your own tokenizer: ``<|im_start|>role\\ncontent<|im_end|>\\n`` (Qwen's form) with the two
  markers added as special tokens, so a corpus-trained tokenizer can stand beside the models.
"""

from __future__ import annotations

from .harmony_tools import tools_section
from .pieces import CONTENT, Piece, template_pieces

IM_START, IM_END, IM_SEP = "<|im_start|>", "<|im_end|>", "<|im_sep|>"
# tiktoken's ids for the markers (its cl100k_im form; tiktokenizer's for o200k)
ESTIMATE_IDS = {"cl100k_base": {IM_START: 100264, IM_END: 100265, IM_SEP: 100266},
                "o200k_base": {IM_START: 200264, IM_END: 200265, IM_SEP: 200266}}
OWN_SPECIALS = (IM_START, IM_END)


def _chatml(messages, tools, generation: bool, sep: str, after: str) -> list[Piece]:
    specials = (IM_START, IM_END, IM_SEP)
    pieces = []
    if tools:
        block = f"{IM_START}system{sep}{tools_section(tools)}{IM_END}{after}"
        pieces += template_pieces(block, None, specials)
    for k, m in enumerate(messages):
        pieces += template_pieces(f"{IM_START}{m.role}{sep}", k, specials)
        if m.content:
            pieces.append(Piece(m.content, CONTENT, k))
        pieces += template_pieces(f"{IM_END}{after}", k, specials)
    if generation:
        pieces += template_pieces(f"{IM_START}assistant{sep}", None, specials)
    return pieces


def estimate_pieces(messages, tools=(), add_generation_prompt: bool = True) -> list[Piece]:
    """GPT-4's and GPT-4o's conversation as tiktokenizer estimates it."""
    return _chatml(messages, tools, add_generation_prompt, IM_SEP, "")


def own_pieces(messages, tools=(), add_generation_prompt: bool = True) -> list[Piece]:
    """The conversation in ChatML for a tokenizer of your own (with :data:`OWN_SPECIALS` added)."""
    return _chatml(messages, tools, add_generation_prompt, "\n", "\n")
