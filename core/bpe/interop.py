"""Export a byte-level tokenizer to the formats other libraries load.

- Hugging Face ``tokenizers``: :func:`hf_tokenizer_json` writes a ``tokenizer.json`` string, the
  way GPT-2's is written: tokens spelled in GPT-2's byte-to-character alphabet
  (:func:`core.bpe.gpt2.bytes_to_unicode`), a ``BPE`` model with the vocabulary and the merges in
  rank order, our regex as a ``Split`` pre-tokenizer (matches "isolated", so the text between
  matches is kept too, as ``core.bpe.pretokenize.regex_spans`` does) followed by ``ByteLevel`` with no
  regex of its own and no prefix space, a ``ByteLevel`` decoder, and special tokens as
  ``added_tokens`` (and in the vocabulary, which keeps their ids).  Load it with
  ``tokenizers.Tokenizer.from_str(...)``.  The regex is rewritten for Oniguruma, which reads a few
  constructs differently (:func:`onig_pattern`).  A ranked tokenizer (the pretrained ones and their
  extensions, which encode by tiktoken's rule) sets ``ignore_merges`` and lists every pair that
  spells a token (:func:`_merge_pairs`); one with a normalization (Qwen's NFC) gets it as the
  ``normalizer``.
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
import re

import numpy as np

from .gpt2 import bytes_to_token
from .tokenizer import BPETokenizer

# What tiktoken uses when the tokenizer has no split pattern: the whole text is one piece.
WHOLE_TEXT_PATTERN = r"[\s\S]+"


_INTERVAL = re.compile(r"\{\d+(?:,\d*)?\}")


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


def onig_pattern(pattern: str) -> str:
    """``pattern`` rewritten so that Oniguruma (the engine of Hugging Face ``tokenizers``, Ruby
    syntax) cuts text where ``regex`` and tiktoken's fancy-regex do.

    Onig reads a possessive interval ``X{1,3}+`` as ``(?:X{1,3})+``, so cl100k_base's
    ``\\p{N}{1,3}+`` kept "3132" whole instead of "313" + "2": it becomes the atomic group
    ``(?>X{1,3})``.  Its ``$`` matches before *any* newline; ``regex``'s only at the end or before a
    final newline, so it becomes ``(?=\\n?\\z)``, and ``\\Z`` (the end only) becomes ``\\z``.
    """
    out: list[str] = []
    groups: list[int] = []  # where each open group starts in ``out``
    atom = 0  # where the last atom starts in ``out``, for a quantifier after it
    i = 0
    while i < len(pattern):
        c, end = pattern[i], i + 1
        interval = _INTERVAL.match(pattern, i) if c == "{" else None
        if c == "\\":
            end = _escape_end(pattern, i)
            atom, token = len(out), pattern[i:end]
            out.append("\\z" if token == "\\Z" else token)
        elif c == "[":
            end = _class_end(pattern, i)
            atom = len(out)
            out.append(pattern[i:end])
        elif interval and pattern.startswith("+", interval.end()):
            end = interval.end() + 1
            out[atom:] = ["(?>", *out[atom:], interval.group(), ")"]
        elif c == "(":
            groups.append(len(out))
            out.append(c)
        elif c == ")" and groups:
            atom = groups.pop()
            out.append(c)
        else:
            if c not in "*+?{" or interval is None and c == "{":
                atom = len(out)
            out.append("(?=\\n?\\z)" if c == "$" else c)
        i = end
    return "".join(out)


def _escape_end(pattern: str, i: int) -> int:
    """End of the escape at ``i``: ``\\p{L}``, ``\\x{263a}`` and the like run to their brace."""
    if pattern[i + 1:i + 2] in ("p", "P", "x", "u", "N") and pattern[i + 2:i + 3] == "{":
        close = pattern.find("}", i)
        return len(pattern) if close < 0 else close + 1
    return min(i + 2, len(pattern))


def _class_end(pattern: str, i: int) -> int:
    """End of the character class at ``i``: a ``]`` first in it is literal, and a ``[`` in it
    opens a nested class, as Onig reads them."""
    k = i + 1 + pattern.startswith("^", i + 1)
    k += pattern.startswith("]", k)
    while k < len(pattern):
        if pattern[k] == "\\":
            k = _escape_end(pattern, k)
        elif pattern[k] == "[":
            k = _class_end(pattern, k)
        elif pattern[k] == "]":
            return k + 1
        else:
            k += 1
    return len(pattern)


def _merge_pairs(tok: BPETokenizer) -> list[tuple[int, int]]:
    """The pairs Hugging Face's BPE may join, lowest rank first.

    It joins only listed pairs, the first listed first; tiktoken's rule (``RankEncoder``) joins any
    two neighbours that spell a token, the lowest token first.  So a ranked vocabulary lists every
    way to cut every token into two (its pair table), by the token's id, its own merge first:
    with only the recovered merges, Llama 3 never joined " Česko" + "é", a pair tiktoken joins.
    """
    if tok.pair_table is None:
        return [(a, b) for a, b, _ in tok.merge_triples]
    keys, merged = tok.pair_table
    own = np.array([(a << 32) | b for a, b, _ in tok.merge_triples], dtype=np.int64)
    order = np.lexsort((keys, ~np.isin(keys, own), merged))
    return list(zip((keys[order] >> 32).tolist(), (keys[order] & 0xFFFFFFFF).tolist()))


def hf_tokenizer_dict(tok: BPETokenizer) -> dict:
    """The ``tokenizer.json`` contents as a dict (see :func:`hf_tokenizer_json`)."""
    _check_byte(tok, "Hugging Face tokenizers")
    by_bytes = _unique_bytes(tok, "Hugging Face tokenizers")
    vocab = {bytes_to_token(data): token_id for data, token_id in by_bytes.items()}
    # An added token not in the model's vocabulary gets the next free id, not the one written
    # (cl100k_base's <|endoftext|> became 100256, its unused id): so they are in it too.
    for text, token_id in tok.special_tokens.items():
        if vocab.setdefault(text, token_id) != token_id:
            raise ExportError(f"The special token {text!r} is also how Hugging Face spells the "
                              f"ordinary token {vocab[text]}: this tokenizer cannot be exported to it.")
    # "left right" strings: tokens in this alphabet never hold a space, and every tokenizers
    # release reads this form (the [left, right] list form needs tokenizers >= 0.20).
    names = {token_id: name for name, token_id in vocab.items()}
    merges = [f"{names[a]} {names[b]}" for a, b in _merge_pairs(tok)]
    byte_level = {
        "type": "ByteLevel",
        "add_prefix_space": False,
        "trim_offsets": False,
        "use_regex": False,
    }
    if tok.pattern is None:
        pre_tokenizer = byte_level
    else:
        split = {
            "type": "Split",
            "pattern": {"Regex": onig_pattern(tok.pattern)},
            "behavior": "Isolated",
            "invert": False,
        }
        pre_tokenizer = {"type": "Sequence", "pretokenizers": [split, byte_level]}
    # tiktoken's rule (a piece that is a token is that token): the pretrained vocabularies and
    # their extensions encode so, as Meta's Llama 3 tokenizer.json says with "ignore_merges".
    ranked = tok.pair_table is not None
    added = [
        {
            "id": token_id,
            "content": text,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for text, token_id in sorted(tok.special_tokens.items(), key=lambda kv: kv[1])
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None if tok.normalization is None else {"type": tok.normalization},
        "pre_tokenizer": pre_tokenizer,
        "post_processor": None,
        "decoder": dict(byte_level),  # the same settings undo the byte-to-character table
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": ranked,
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
