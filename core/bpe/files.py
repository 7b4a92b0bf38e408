"""Tokenizer files: our versioned JSON, and the book's ``{"chars": ..., "merges": ...}`` JSON, read
into and written from plain fields (the tokenizer's constructor arguments, a ``kind`` of "char"
or "bpe"); ``BPETokenizer.load`` / ``save`` / ``from_dict`` / ``to_dict`` build on them, so this
module never imports the tokenizer class.

Every problem with a file becomes a :class:`TokenizerFileError` (a ``ValueError``) whose message
names the file and what is wrong, so a page can show it as is.

A file is a stranger's input: it is validated before anything is built from it, so a small file
cannot make the program build something huge.

- at most ``MAX_FILE_BYTES``; JSON nested deeper than Python can parse is refused, not crashed on;
- ids are whole numbers (not ``true``), below ``MAX_ID`` and below the number of tokens the file
  defines plus ``ID_SLACK``: every token takes at least a few bytes of the file, so a file of
  ``s`` bytes can never justify an id far above ``s``;
- token lengths are added up as integers from the merges before any byte is joined: no token may
  be longer than ``MAX_TOKEN_BYTES`` nor all of them together than ``MAX_VOCAB_BYTES`` (a
  668-byte file whose 40 merges each double a token would spell 2**40 bytes: refused at once);
- the split pattern must compile, special tokens must be short strings with ids of their own.
"""

from __future__ import annotations

import json
from pathlib import Path

from .checks import MAX_ID, MAX_SPECIAL_CHARS, token_lengths
from .pretokenize import resolve_pattern
from .variants import VARIANTS, variant_rules

FORMAT = "bpe-explorer/tokenizer"
VERSION = 1
MAX_FILE_BYTES = 64 * 2**20
MAX_TOKEN_BYTES = 2**16  # GPT-2's longest token is 128 bytes
MAX_VOCAB_BYTES = 2**26  # all of GPT-2's tokens together: 0.4 MB
ID_SLACK = 1024
MAX_SPECIAL_TOKENS = 1024


class TokenizerFileError(ValueError):
    """A tokenizer file that cannot be loaded; the message names the file and the problem."""


def fields_to_dict(fields: dict, kind: str) -> dict:
    """Our versioned JSON object of a tokenizer's fields (``kind``: "char" or "bpe")."""
    data = {
        "format": FORMAT,
        "version": VERSION,
        "kind": kind,
        "variant": fields["variant"],
        "merges": [list(m) for m in fields["merges"]],
        "special_tokens": dict(fields["special_tokens"]),
    }
    if fields["base"] is None:
        data["pattern"] = fields["pattern"]
        if fields["byte_ids"] != list(range(256)):
            data["byte_ids"] = fields["byte_ids"]
    else:
        data["alphabet"] = list(fields["base"])
        if fields["end_of_word"] is not None:
            data["end_of_word"] = fields["end_of_word"]
    return data


def fields_from_dict(data, source: str = "the tokenizer data") -> tuple[str, dict]:
    """``(kind, fields)`` from ``fields_to_dict`` output or from the book's JSON, every field
    checked; the tokenizer built from them may still find them inconsistent."""
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
        raise TokenizerFileError(f"{source} has format version {version!r}; "
                                 f"this program reads version {VERSION}.")
    fields = _checked_fields(data, source)
    _check_sizes(fields, source)
    return ("char" if data.get("kind") == "char" else "bpe"), fields


def _checked_fields(data: dict, source: str) -> dict:
    """The constructor's arguments, each of the right type and within bounds."""
    if "variant" not in data or "merges" not in data:
        missing = "variant" if "variant" not in data else "merges"
        raise TokenizerFileError(f"{source} is missing the field {missing!r}.")
    variant = data["variant"]
    if not isinstance(variant, str) or variant not in VARIANTS:
        raise TokenizerFileError(f"{source} has an unknown variant {variant!r}.")
    rules = variant_rules(variant)
    merges = _list(data["merges"], "merges", source)
    if not all(isinstance(m, list) and len(m) == 3 for m in merges):
        raise TokenizerFileError(f"{source}: every merge must be a list [left id, right id, new id].")
    special = data.get("special_tokens", {})
    if not isinstance(special, dict) or len(special) > MAX_SPECIAL_TOKENS:
        raise TokenizerFileError(f"{source}: special_tokens must be an object of at most "
                                 f"{MAX_SPECIAL_TOKENS} \"token\": id entries.")
    base = _strings(data.get("alphabet"), "alphabet", source) if rules.has_alphabet else None
    byte_ids = None if rules.has_alphabet else data.get("byte_ids")
    ids_defined = (256 if base is None else len(base)) + len(merges) + len(special)
    id_limit = min(MAX_ID, ids_defined + ID_SLACK)
    listed_byte_ids = [] if byte_ids is None else _list(byte_ids, "byte_ids", source)
    _check_ids([i for m in merges for i in m], id_limit, "merges", source)
    _check_ids(special.values(), id_limit, "special_tokens", source)
    _check_ids(listed_byte_ids, id_limit, "byte_ids", source)
    for token in special:
        if not 0 < len(token) <= MAX_SPECIAL_CHARS:
            raise TokenizerFileError(f"{source}: special token {token[:20]!r} must be 1 to "
                                     f"{MAX_SPECIAL_CHARS} characters long.")
    end_of_word = rules.end_of_word(data.get("end_of_word"))
    short = isinstance(end_of_word, str) and 0 < len(end_of_word) <= MAX_SPECIAL_CHARS
    if rules.marker and not short:
        raise TokenizerFileError(f"{source}: the word variant needs a short end_of_word string.")
    return dict(
        variant=variant,
        base=base,
        merges=[tuple(m) for m in merges],
        end_of_word=end_of_word,
        pattern=_pattern(rules.split_pattern(data.get("pattern")), source),
        special_tokens=special,
        byte_ids=byte_ids,
    )


def _list(value, name: str, source: str) -> list:
    if not isinstance(value, list):
        raise TokenizerFileError(f"{source}: {name} must be a list, not {type(value).__name__}.")
    return value


def _strings(value, name: str, source: str) -> list[str]:
    values = _list(value, name, source)
    if not values or not all(isinstance(v, str) and 0 < len(v) <= MAX_SPECIAL_CHARS for v in values):
        raise TokenizerFileError(f"{source}: {name} must be a non-empty list of short non-empty strings.")
    return values


def _check_ids(values, limit: int, name: str, source: str) -> None:
    """Every id a whole number in ``[0, limit)`` (``true`` is not an id, nor is ``1.0``)."""
    for value in values:
        if type(value) is not int or not 0 <= value < limit:
            raise TokenizerFileError(
                f"{source}: {name} holds the id {value!r}; ids must be whole numbers from 0 to "
                f"{limit - 1:,} (the number of tokens this file defines, plus {ID_SLACK:,}).")


def _pattern(pattern, source: str) -> str | None:
    if pattern is None:
        return None
    try:
        return resolve_pattern(pattern)
    except ValueError as exc:
        raise TokenizerFileError(f"{source}: {exc}") from None


def _check_sizes(fields: dict, source: str) -> None:
    """Add up token lengths as integers, so a forged file is refused before any byte is joined."""
    if fields["base"] is None:
        base = {i: 1 for i in (fields["byte_ids"] or range(256))}
    else:
        base = {i: len(c.encode("utf-8", "surrogatepass")) for i, c in enumerate(fields["base"])}
    try:
        lengths = token_lengths(base, fields["merges"])
    except ValueError as exc:
        raise TokenizerFileError(f"{source} is inconsistent: {exc}") from None
    longest = max(lengths, key=lengths.get)
    if lengths[longest] > MAX_TOKEN_BYTES:
        raise TokenizerFileError(f"{source}: token {longest} would be {lengths[longest]:,} bytes long; "
                                 f"a token may be at most {MAX_TOKEN_BYTES:,} bytes.")
    total = sum(lengths.values())
    if total > MAX_VOCAB_BYTES:
        raise TokenizerFileError(f"{source}: its tokens would spell {total:,} bytes in all; a "
                                 f"tokenizer file may hold at most {MAX_VOCAB_BYTES:,}.")


def _from_book(data: dict, source: str) -> tuple[str, dict]:
    """Seed 002's file: ids are positions in ``chars + [a + b for a, b in merges]``.  Every token
    is spelled out in the file, so its size bounds the tokens' lengths."""
    chars = _strings(data["chars"], "chars", source)
    pairs = _list(data.get("merges", []), "merges", source)
    well_formed = all(isinstance(m, list) and len(m) == 2 and all(isinstance(t, str) for t in m)
                      for m in pairs)
    if not well_formed:
        raise TokenizerFileError(f"{source} has malformed merges: each must be a pair of strings.")
    stoi = {c: i for i, c in enumerate(chars)}
    triples = []
    try:
        for k, (a, b) in enumerate(pairs):
            new = len(chars) + k
            triples.append((stoi[a], stoi[b], new))
            stoi[a + b] = new
    except KeyError as exc:
        raise TokenizerFileError(f"{source}: merge uses the token {exc.args[0]!r}, which no earlier "
                                 f"character or merge defines.") from None
    fields = dict(
        variant="char",
        base=chars,
        merges=triples,
        end_of_word=None,
        pattern=None,
        special_tokens={},
        byte_ids=None,
    )
    return ("bpe" if pairs else "char"), fields


def read_file(path) -> bytes:
    """Read at most ``MAX_FILE_BYTES`` + 1 bytes, so a device such as /dev/zero cannot fill memory."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            return f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise TokenizerFileError(f"Cannot read {path}: {exc.strerror or exc}.") from None


def parse_json(raw: bytes | str, source: str = "the uploaded file"):
    """A file's JSON value, or a :class:`TokenizerFileError` that says what is wrong with it."""
    if not isinstance(raw, (bytes, str)):
        raise TokenizerFileError(f"{source}: expected the file's bytes or text, not {type(raw).__name__}.")
    if len(raw) > MAX_FILE_BYTES:
        raise TokenizerFileError(f"{source} is larger than {MAX_FILE_BYTES // 2**20} MiB; tokenizer files "
                                 f"are far smaller (GPT-2's is about 2 MiB).")
    try:
        return json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    except UnicodeDecodeError:
        raise TokenizerFileError(f"{source} is not UTF-8 text, so it is not a tokenizer file.") from None
    except json.JSONDecodeError as exc:
        raise TokenizerFileError(f"{source} is not valid JSON (line {exc.lineno}, column {exc.colno}: "
                                 f"{exc.msg}).") from None
    except RecursionError:
        raise TokenizerFileError(f"{source} nests its JSON too deeply to be a tokenizer file.") from None
    except ValueError as exc:  # e.g. a number with more digits than Python converts
        raise TokenizerFileError(f"{source} is not a usable JSON file: {exc}.") from None
