"""Tokenizer files: our versioned JSON, and the book's ``{"chars": ..., "merges": ...}`` JSON.

Every problem with a file becomes a :class:`TokenizerFileError` (a ``ValueError``) whose message
names the file and what is wrong, so a page can show it as is.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .tokenizer import BPETokenizer, CharTokenizer

FORMAT = "bpe-explorer/tokenizer"
VERSION = 1


class TokenizerFileError(ValueError):
    pass


def tokenizer_to_dict(tok: BPETokenizer) -> dict:
    data = {
        "format": FORMAT,
        "version": VERSION,
        "kind": "char" if isinstance(tok, CharTokenizer) else "bpe",
        "variant": tok.variant,
        "merges": [list(m) for m in tok.merge_triples],
        "special_tokens": dict(tok.special_tokens),
    }
    if tok.variant == "byte":
        data["pattern"] = tok.pattern
        if tok.byte_ids != list(range(256)):
            data["byte_ids"] = tok.byte_ids
    else:
        data["alphabet"] = tok.chars
        if tok.variant == "word":
            data["end_of_word"] = tok.end_of_word
    return data


def tokenizer_from_dict(data, source: str = "the tokenizer data") -> BPETokenizer:
    """Rebuild a tokenizer from ``tokenizer_to_dict`` output or from the book's JSON."""
    if not isinstance(data, dict):
        raise TokenizerFileError(f"{source} is not a tokenizer: expected a JSON object.")
    if "format" not in data and "chars" in data:
        return _from_book(data, source)
    if data.get("format") != FORMAT:
        raise TokenizerFileError(
            f"{source} is not a BPE Explorer tokenizer (no \"format\": \"{FORMAT}\" field). "
            f"Hugging Face tokenizer.json files are for the tokenizers library, not for loading here.")
    version = data.get("version")
    if version != VERSION:
        raise TokenizerFileError(f"{source} has format version {version!r}; this program reads version {VERSION}.")
    try:
        cls = CharTokenizer if data.get("kind") == "char" else BPETokenizer
        return cls(variant=data["variant"], base=data.get("alphabet"),
                   merges=[tuple(m) for m in data["merges"]], end_of_word=data.get("end_of_word"),
                   pattern=data.get("pattern"), special_tokens=dict(data.get("special_tokens", {})),
                   byte_ids=data.get("byte_ids"))
    except (KeyError, TypeError) as exc:
        raise TokenizerFileError(f"{source} is missing or has a malformed field: {exc}.") from None
    except ValueError as exc:
        raise TokenizerFileError(f"{source} is inconsistent: {exc}") from None


def _from_book(data: dict, source: str) -> BPETokenizer:
    """Seed 002's file: ids are positions in ``chars + [a + b for a, b in merges]``."""
    try:
        chars = list(data["chars"])
        pairs = [tuple(m) for m in data.get("merges", [])]
        stoi = {c: i for i, c in enumerate(chars)}
        triples = []
        for k, (a, b) in enumerate(pairs):
            new = len(chars) + k
            triples.append((stoi[a], stoi[b], new))
            stoi[a + b] = new
    except KeyError as exc:
        raise TokenizerFileError(f"{source}: merge uses the token {exc.args[0]!r}, which no earlier "
                                 f"character or merge defines.") from None
    except (TypeError, ValueError) as exc:
        raise TokenizerFileError(f"{source} has malformed chars/merges: {exc}") from None
    if not pairs:
        return CharTokenizer(chars)
    return BPETokenizer(variant="char", base=chars, merges=triples)


def save_tokenizer(tok: BPETokenizer, path) -> None:
    """Write atomically: a crash mid-write leaves the old file, never half a file."""
    path = Path(path)
    text = json.dumps(tokenizer_to_dict(tok), ensure_ascii=False)
    fd, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_tokenizer(path) -> BPETokenizer:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise TokenizerFileError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    return loads_tokenizer(raw, source=str(path))


def loads_tokenizer(raw: bytes | str, source: str = "the uploaded file") -> BPETokenizer:
    try:
        data = json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    except UnicodeDecodeError:
        raise TokenizerFileError(f"{source} is not UTF-8 text, so it is not a tokenizer file.") from None
    except json.JSONDecodeError as exc:
        raise TokenizerFileError(f"{source} is not valid JSON (line {exc.lineno}, column {exc.colno}: "
                                 f"{exc.msg}).") from None
    return tokenizer_from_dict(data, source)
