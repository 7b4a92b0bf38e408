"""Export a byte-level tokenizer to the formats other libraries load.

- Hugging Face ``tokenizers``: :func:`hf_tokenizer_json` writes a ``tokenizer.json`` string, the
  way GPT-2's is written: tokens spelled in GPT-2's byte-to-character alphabet
  (:func:`core.bpe.gpt2.bytes_to_unicode`), a ``BPE`` model with the vocabulary and the merges in
  rank order, our regex as a ``Split`` pre-tokenizer (matches "isolated", so the text between
  matches is kept too, as ``core.bpe.pretokenize.regex_spans`` does) followed by ``ByteLevel`` with no
  regex of its own and no prefix space, a ``ByteLevel`` decoder, and special tokens as
  ``added_tokens``.  Load it with ``tokenizers.Tokenizer.from_str(...)``.
- ``tiktoken``: :func:`tiktoken_ranks` gives ``{token bytes: rank}`` and :func:`tiktoken_encoding`
  an ``Encoding``.  tiktoken is an optional extra, imported only when asked for.

Both formats name a token by its *bytes* (tiktoken) or its string (Hugging Face), so two ids with
the same bytes cannot be written; :class:`ExportError` (a ``ValueError``) says so.  tiktoken also
merges by the rank of the *joined bytes*, not of the pair, and uses the rank as the id, so a
tokenizer whose merges do not make ids in increasing order cannot be written for it either.

Leaves out: loading these formats back (``core.bpe.gpt2`` reads GPT-2's own files).
"""

from __future__ import annotations

import json

from .gpt2 import bytes_to_token
from .tokenizer import BPETokenizer

# What tiktoken uses when the tokenizer has no split pattern: the whole text is one piece.
WHOLE_TEXT_PATTERN = r"[\s\S]+"


class ExportError(ValueError):
    """The tokenizer cannot be written in the asked-for format; the message says why."""


def _check_byte(tok: BPETokenizer, fmt: str) -> None:
    if tok.variant_rules.has_alphabet:
        raise ExportError(f"Only byte-level tokenizers can be exported to {fmt}; this one is "
                          f"{tok.variant!r}-level. Train with variant='byte'.")


def _unique_bytes(tok: BPETokenizer, fmt: str) -> dict[bytes, int]:
    """``{bytes: id}`` over the ordinary (non-special) tokens, refusing shared bytes."""
    seen: dict[bytes, int] = {}
    for token_id in tok.ids:
        if tok.is_special(token_id):
            continue
        data = tok.token_bytes(token_id)
        if data in seen:
            raise ExportError(
                f"Tokens {seen[data]} and {token_id} both stand for the bytes {data!r} (two "
                f"different merges built the same string). {fmt} names every token by its "
                f"{'bytes' if fmt == 'tiktoken' else 'string'}, so it cannot tell them apart: this "
                f"tokenizer cannot be exported to {fmt}.")
        seen[data] = token_id
    return seen


def hf_tokenizer_dict(tok: BPETokenizer) -> dict:
    """The ``tokenizer.json`` contents as a dict (see :func:`hf_tokenizer_json`)."""
    _check_byte(tok, "Hugging Face tokenizers")
    by_bytes = _unique_bytes(tok, "Hugging Face tokenizers")
    vocab = {bytes_to_token(data): token_id for data, token_id in by_bytes.items()}
    # "left right" strings: tokens in this alphabet never hold a space, and every tokenizers
    # release reads this form (the [left, right] list form needs tokenizers >= 0.20).
    merges = [f"{bytes_to_token(tok.token_bytes(a))} {bytes_to_token(tok.token_bytes(b))}"
              for a, b, _ in tok.merge_triples]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                  "use_regex": False}
    if tok.pattern is None:
        pre_tokenizer = byte_level
    else:
        split = {"type": "Split", "pattern": {"Regex": tok.pattern}, "behavior": "Isolated",
                 "invert": False}
        pre_tokenizer = {"type": "Sequence", "pretokenizers": [split, byte_level]}
    added = [{"id": token_id, "content": text, "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True}
             for text, token_id in sorted(tok.special_tokens.items(), key=lambda kv: kv[1])]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                    "use_regex": False},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,  # apply merges even to a piece that is itself a token
            "vocab": vocab,
            "merges": merges,
        },
    }


def hf_tokenizer_json(tok: BPETokenizer, indent: int | None = None) -> str:
    """A Hugging Face ``tokenizer.json`` for a byte-level tokenizer, as a string.

    ``tokenizers.Tokenizer.from_str(hf_tokenizer_json(tok)).encode(text).ids`` equals
    ``tok.encode(text)`` (special tokens allowed); decode with ``skip_special_tokens=False`` to
    keep them.  Raises :class:`ExportError` when two ids share bytes.
    """
    return json.dumps(hf_tokenizer_dict(tok), ensure_ascii=False, indent=indent)


def tiktoken_ranks(tok: BPETokenizer) -> dict[bytes, int]:
    """``{token bytes: rank}`` for ``tiktoken``, where a token's rank is its id.

    tiktoken merges, inside a piece, the adjacent pair whose *joined bytes* have the lowest rank,
    and a token's rank is also its id.  So the ids of merged tokens must grow with merge order
    (true of every trained tokenizer here and of GPT-2); single bytes are never compared by rank.
    Raises :class:`ExportError` when two ids share bytes or the merge ids do not grow.
    """
    _check_byte(tok, "tiktoken")
    ranks = _unique_bytes(tok, "tiktoken")
    previous = max(tok.byte_ids)
    for k, (_, _, new) in enumerate(tok.merge_triples):
        if new <= previous:
            raise ExportError(
                f"Merge {k} makes id {new}, not above the ids of the bytes and earlier merges "
                f"(up to {previous}). tiktoken uses a token's id as its merge priority, so ids "
                f"must grow with merge order: this tokenizer cannot be exported to tiktoken.")
        previous = new
    return ranks


def tiktoken_encoding(tok: BPETokenizer, name: str = "bpe-explorer"):
    """A ``tiktoken.Encoding`` for a byte-level tokenizer (imports tiktoken, an optional extra).

    ``enc.encode(text, allowed_special="all")`` gives ``tok.encode(text)`` and
    ``enc.encode_ordinary(text)`` gives ``tok.encode(text, allowed_special="none")``, with one
    caveat of tiktoken's rule (see :func:`tiktoken_ranks`): it joins two adjacent tokens whenever
    their joined bytes are a token, even if no merge joins that very pair.
    """
    try:
        import tiktoken
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("tiktoken is not installed: pip install tiktoken to export to it.") from None
    ranks = tiktoken_ranks(tok)
    return tiktoken.Encoding(
        name=name,
        pat_str=tok.pattern if tok.pattern is not None else WHOLE_TEXT_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=dict(tok.special_tokens),
        # Only a vocabulary without unused ids can name its size (o200k_base has gaps).
        explicit_n_vocab=tok.vocab_size if max(tok.ids) == tok.vocab_size - 1 else None,
    )
