"""GPT-2's published tokenizer, read from its two files into a :class:`BPETokenizer`.

OpenAI released GPT-2's byte-level BPE as ``encoder.json`` (token string -> id) and ``vocab.bpe``
(the 50,000 merges in rank order, one ``"left right"`` pair per line after a ``#version`` line).
Both files write bytes as printable characters through :func:`bytes_to_unicode`; this module
undoes that, checks the two files agree, and builds a tokenizer that encodes exactly as GPT-2
does (the tests compare every id with ``tiktoken``).

Owns: the byte-to-character table, reading and validating the files, a display helper.
Leaves out: encoding itself (``core.tokenizer``), the split regex (``core.pretokenize``), exporting
our own tokenizers to other libraries (``core.interop``).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from .pretokenize import GPT2_PATTERN
from .tokenizer import BPETokenizer

END_OF_TEXT = "<|endoftext|>"


class GPT2FileError(ValueError):
    """``vocab.bpe`` or ``encoder.json`` is missing, corrupt, or does not match the other file."""


@lru_cache(maxsize=1)
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's map from each byte value 0-255 to one printable Unicode character.

    BPE files are text, and a merge line is two tokens separated by a space, so GPT-2 needed a
    way to write *any* byte sequence as visible, non-space characters.  The rule:

    - the 188 bytes that are already printable single characters in Latin-1 stand for
      themselves: ``!``..``~`` (33-126), ``¡``..``¬`` (161-172) and ``®``..``ÿ`` (174-255);
    - the other 68 bytes (control characters 0-32, which include the space, DEL and 127-160,
      and the soft hyphen 173) get the code points 256, 257, ... in byte order.

    So the space (byte 32, the 33rd such byte) becomes ``chr(256 + 32) == "Ġ"``, a newline
    (byte 10) becomes ``"Ċ"``, and the token " the" is written ``"Ġthe"`` in both files.
    Every character of the table is a single code point, so a token string maps back to its bytes
    one character at a time.

    >>> table = bytes_to_unicode()
    >>> table[ord("a")], table[ord(" ")], table[ord("\\n")], table[0xE2]
    ('a', 'Ġ', 'Ċ', 'â')
    """
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return dict(sorted(table.items()))


@lru_cache(maxsize=1)
def unicode_to_bytes() -> dict[str, int]:
    """The inverse of :func:`bytes_to_unicode`: character -> byte value."""
    return {ch: b for b, ch in bytes_to_unicode().items()}


def token_to_bytes(token: str) -> bytes:
    """The bytes a GPT-2-alphabet token string stands for (``"Ġthe"`` -> ``b" the"``).

    Raises ``KeyError`` for a character outside the 256-character alphabet.
    """
    table = unicode_to_bytes()
    return bytes(table[ch] for ch in token)


def bytes_to_token(data: bytes) -> str:
    """The GPT-2-alphabet string of ``data`` (``b" the"`` -> ``"Ġthe"``)."""
    table = bytes_to_unicode()
    return "".join(table[b] for b in data)


def _read_text(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GPT2FileError(f"{path}: file not found (GPT-2's {what} is needed).") from None
    except UnicodeDecodeError:
        raise GPT2FileError(f"{path}: not UTF-8 text, so it is not GPT-2's {what}.") from None
    except OSError as exc:
        raise GPT2FileError(f"{path}: cannot read it: {exc.strerror or exc}.") from None


def read_encoder(encoder_json_path) -> dict[str, int]:
    """``encoder.json`` as a ``{token string: id}`` dict, checked for shape and unique ids."""
    path = Path(encoder_json_path)
    raw = _read_text(path, "encoder.json")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise GPT2FileError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: "
                            f"{exc.msg}).") from None
    if not isinstance(data, dict):
        raise GPT2FileError(f"{path}: expected a JSON object mapping token strings to ids, "
                            f"found {type(data).__name__}.")
    owner: dict[int, str] = {}
    for token, token_id in data.items():
        if type(token_id) is not int or token_id < 0:
            raise GPT2FileError(f"{path}: token {token!r} has id {token_id!r}; ids must be "
                                f"non-negative integers.")
        if token_id in owner:
            raise GPT2FileError(f"{path}: tokens {owner[token_id]!r} and {token!r} both have id "
                                f"{token_id}.")
        owner[token_id] = token
    return data


def read_merges(vocab_bpe_path) -> list[tuple[int, str, str]]:
    """``vocab.bpe`` as ``(line_number, left, right)`` in rank order (the header line skipped)."""
    path = Path(vocab_bpe_path)
    raw = _read_text(path, "vocab.bpe")
    merges = []
    for number, line in enumerate(raw.split("\n"), start=1):
        line = line.rstrip("\r")
        if number == 1 and line.startswith("#version"):
            continue
        if not line:  # the file ends with a newline; blank lines carry nothing
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise GPT2FileError(f"{path}, line {number}: expected two tokens separated by one "
                                f"space, found {line[:80]!r}.")
        merges.append((number, parts[0], parts[1]))
    return merges


def load_gpt2(vocab_bpe_path, encoder_json_path) -> BPETokenizer:
    """GPT-2's tokenizer: its byte ids, its 50,000 ranked merges, its regex and ``<|endoftext|>``.

    Merge line ``"a b"`` of ``vocab.bpe`` becomes ``(encoder[a], encoder[b], encoder[a + b])``;
    the 256 single-character tokens of ``encoder.json`` give the byte ids.  Every token of
    ``encoder.json`` other than ``<|endoftext|>`` must be a byte or the result of exactly one
    merge, or the files do not belong together and a :class:`GPT2FileError` (a ``ValueError``)
    names the file and line.
    """
    vocab_path, encoder_path = Path(vocab_bpe_path), Path(encoder_json_path)
    encoder = read_encoder(encoder_path)
    lines = read_merges(vocab_path)
    to_bytes = unicode_to_bytes()

    byte_ids = []
    for byte, char in bytes_to_unicode().items():
        if char not in encoder:
            raise GPT2FileError(f"{encoder_path}: no id for byte {byte} (written {char!r}); "
                                f"a GPT-2 encoder lists all 256 bytes.")
        byte_ids.append(encoder[char])

    known = set(byte_ids)  # ids that exist before the current merge
    made_by: dict[int, int] = {}  # merged id -> the vocab.bpe line that made it
    triples = []
    for number, left, right in lines:
        where = f"{vocab_path}, line {number}"
        for part in (left, right):
            if part not in encoder:
                raise GPT2FileError(f"{where}: token {part!r} is not in {encoder_path.name} "
                                    f"({encoder_path}); the two files do not match.")
            if encoder[part] not in known:
                raise GPT2FileError(f"{where}: token {part!r} is used before any earlier merge "
                                    f"makes it; merges must come in rank order.")
        merged = left + right
        if merged not in encoder:
            raise GPT2FileError(f"{where}: the merged token {merged!r} is not in "
                                f"{encoder_path.name} ({encoder_path}); the two files do not match.")
        new = encoder[merged]
        if new in known:
            first = made_by.get(new)
            earlier = f"line {first}" if first is not None else "the 256 byte tokens"
            raise GPT2FileError(f"{where}: the merged token {merged!r} (id {new}) was already made "
                                f"by {earlier}; each merge must make a new token.")
        known.add(new)
        made_by[new] = number
        triples.append((encoder[left], encoder[right], new))

    special = {END_OF_TEXT: encoder[END_OF_TEXT]} if END_OF_TEXT in encoder else {}
    stray = [t for t, i in encoder.items() if i not in known and t not in special]
    if stray:
        raise GPT2FileError(f"{encoder_path}: {len(stray)} token(s) that neither a byte nor a merge "
                            f"of {vocab_path.name} makes, e.g. {stray[0]!r}; the files do not match.")
    for token in encoder:
        if token not in special and any(ch not in to_bytes for ch in token):
            bad = next(ch for ch in token if ch not in to_bytes)
            raise GPT2FileError(f"{encoder_path}: token {token!r} holds {bad!r}, which is not in "
                                f"GPT-2's byte alphabet.")
    try:
        return BPETokenizer(variant="byte", byte_ids=byte_ids, merges=triples, pattern=GPT2_PATTERN,
                            special_tokens=special)
    except ValueError as exc:
        raise GPT2FileError(f"{vocab_path} and {encoder_path} do not make a tokenizer: {exc}") from None


def gpt2_token_str(tok: BPETokenizer, token_id: int, space: str = "Ġ") -> str:
    """A token as GPT-2's files write it, e.g. ``"Ġthe"`` for ``b" the"``.

    Special tokens show as themselves.  Pass ``space="␣"`` (or ``" "``) to show spaces another way;
    other bytes keep their GPT-2 characters, so partial UTF-8 sequences stay visible.
    """
    if tok.is_special(token_id):
        return tok.token_str(token_id)
    text = bytes_to_token(tok.token_bytes(token_id))
    return text if space == "Ġ" else text.replace("Ġ", space)
