"""GPT-2's published tokenizer, read from its two files into plain fields: byte ids, merge triples,
the split pattern and special tokens (``BPETokenizer.from_gpt2`` builds the tokenizer from them).

OpenAI released GPT-2's byte-level BPE as ``encoder.json`` (token string -> id) and ``vocab.bpe``
(the 50,000 merges in rank order, one ``"left right"`` pair per line after a ``#version`` line).
Both files write bytes as printable characters through :func:`bytes_to_unicode`; this module
undoes that, checks the two files agree, and builds a tokenizer that encodes exactly as GPT-2
does (the tests compare every id with ``tiktoken``).

Owns: the byte-to-character table, reading and validating the files (from paths, or from an
upload's bytes, bounded in size, ids and token length before anything is built).
Leaves out: the tokenizer class and encoding (``core.bpe.tokenizer``), the split regex
(``core.bpe.pretokenize``), exporting our own tokenizers to other libraries (``core.bpe.interop``).
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

from .pretokenize import GPT2_PATTERN

END_OF_TEXT = "<|endoftext|>"
MAX_FILE_BYTES = 16 * 2**20  # GPT-2's encoder.json is 1.0 MB, its vocab.bpe 0.4 MB
EXPECTED_MB = {"encoder.json": 1.0, "vocab.bpe": 0.4}
MAX_TOKEN_CHARS = 1024  # GPT-2's longest token is 128 characters
MAX_ID = 2**20  # GPT-2's largest id is 50,256


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


def bytes_to_token(data: bytes) -> str:
    """The GPT-2-alphabet string of ``data`` (``b" the"`` -> ``"Ġthe"``)."""
    table = bytes_to_unicode()
    return "".join(table[b] for b in data)


def _check_size(size: int, source: str, what: str) -> None:
    if size > MAX_FILE_BYTES:
        raise GPT2FileError(f"{source}: {size / 2**20:.1f} MiB is too big for GPT-2's {what} (the "
                            f"real one is about {EXPECTED_MB[what]} MiB; the limit is "
                            f"{MAX_FILE_BYTES // 2**20} MiB).")


def _read_file(path: Path, what: str) -> bytes:
    """The file's bytes, its size checked on the open file before reading."""
    try:
        with open(path, "rb") as f:
            _check_size(os.fstat(f.fileno()).st_size, str(path), what)
            return f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise GPT2FileError(f"{path}: file not found (GPT-2's {what} is needed).") from None
    except OSError as exc:
        raise GPT2FileError(f"{path}: cannot read it: {exc.strerror or exc}.") from None


def _decode(raw: bytes, source: str, what: str) -> str:
    _check_size(len(raw), source, what)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise GPT2FileError(f"{source}: not UTF-8 text, so it is not GPT-2's {what}.") from None


def parse_encoder(raw: bytes, source: str = "encoder.json") -> dict[str, int]:
    """``encoder.json``'s bytes as a ``{token string: id}`` dict, checked before anything is built.

    Ids must be below ``MAX_ID``, each used once, and a token at most ``MAX_TOKEN_CHARS`` long
    (GPT-2's longest is 128), so nothing sized by an id or a token can grow without bound."""
    text = _decode(raw, source, "encoder.json")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GPT2FileError(f"{source}: not valid JSON (line {exc.lineno}, column {exc.colno}: "
                            f"{exc.msg}).") from None
    except (RecursionError, ValueError) as exc:  # nesting too deep, a number too long
        raise GPT2FileError(f"{source}: not a JSON object of token ids ({type(exc).__name__}).") from None
    if not isinstance(data, dict):
        raise GPT2FileError(f"{source}: expected a JSON object mapping token strings to ids, "
                            f"found {type(data).__name__}.")
    owner: dict[int, str] = {}
    for token, token_id in data.items():
        if type(token_id) is not int or not 0 <= token_id < MAX_ID:
            raise GPT2FileError(f"{source}: token {token[:80]!r} has id {token_id!r}; ids must be "
                                f"integers from 0 to {MAX_ID - 1:,}.")
        if token_id in owner:
            raise GPT2FileError(f"{source}: tokens {owner[token_id][:80]!r} and {token[:80]!r} both "
                                f"have id {token_id}.")
        if len(token) > MAX_TOKEN_CHARS:
            raise GPT2FileError(f"{source}: token {token[:40]!r}... is {len(token):,} characters long; "
                                f"the limit is {MAX_TOKEN_CHARS:,}.")
        owner[token_id] = token
    return data


def parse_merges(raw: bytes, source: str = "vocab.bpe") -> list[tuple[int, str, str]]:
    """``vocab.bpe``'s bytes as ``(line_number, left, right)`` in rank order (the header skipped)."""
    merges = []
    for number, line in enumerate(_decode(raw, source, "vocab.bpe").split("\n"), start=1):
        line = line.rstrip("\r")
        if number == 1 and line.startswith("#version"):
            continue
        if not line:  # the file ends with a newline; blank lines carry nothing
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise GPT2FileError(f"{source}, line {number}: expected two tokens separated by one "
                                f"space, found {line[:80]!r}.")
        merges.append((number, parts[0], parts[1]))
    return merges


def read_encoder(encoder_json_path) -> dict[str, int]:
    """``encoder.json`` as a ``{token string: id}`` dict, checked for shape and unique ids."""
    path = Path(encoder_json_path)
    return parse_encoder(_read_file(path, "encoder.json"), str(path))


def read_merges(vocab_bpe_path) -> list[tuple[int, str, str]]:
    """``vocab.bpe`` as ``(line_number, left, right)`` in rank order (the header line skipped)."""
    path = Path(vocab_bpe_path)
    return parse_merges(_read_file(path, "vocab.bpe"), str(path))


def read_gpt2(vocab_bpe_path, encoder_json_path) -> dict:
    """GPT-2's tokenizer as constructor fields: its byte ids, its 50,000 ranked merges, its regex
    and ``<|endoftext|>``.

    Merge line ``"a b"`` of ``vocab.bpe`` becomes ``(encoder[a], encoder[b], encoder[a + b])``;
    the 256 single-character tokens of ``encoder.json`` give the byte ids.  Every token of
    ``encoder.json`` other than ``<|endoftext|>`` must be a byte or the result of exactly one
    merge, or the files do not belong together and a :class:`GPT2FileError` (a ``ValueError``)
    names the file and line.
    """
    vocab = _Source(Path(vocab_bpe_path))
    encoder = _Source(Path(encoder_json_path))
    return _build(read_merges(vocab.path), read_encoder(encoder.path), vocab, encoder)


def parse_gpt2(vocab_bpe: bytes, encoder_json: bytes, vocab_name: str = "vocab.bpe",
               encoder_name: str = "encoder.json") -> dict:
    """:func:`read_gpt2` from the files' bytes (an upload): nothing is written to disk.

    The names only label error messages; sizes, ids and token lengths are checked before the
    tokenizer is built, so a hostile pair of files costs at most a few times their size."""
    vocab = _Source(Path(vocab_name), vocab_name)
    encoder = _Source(Path(encoder_name), encoder_name)
    lines = parse_merges(vocab_bpe, vocab_name)
    return _build(lines, parse_encoder(encoder_json, encoder_name), vocab, encoder)


class _Source:
    """How error messages name a file: its path, or an upload's name."""

    def __init__(self, path: Path, shown: str | None = None) -> None:
        self.path = path
        self.shown = shown if shown is not None else str(path)
        self.named = self.shown if shown is not None else f"{path.name} ({path})"


def _build(lines, encoder: dict[str, int], vocab: _Source, enc: _Source) -> dict:
    byte_ids = _byte_ids(encoder, enc)
    triples, known = _merge_triples(lines, encoder, set(byte_ids), vocab, enc)
    special = {END_OF_TEXT: encoder[END_OF_TEXT]} if END_OF_TEXT in encoder else {}
    stray = [t for t, i in encoder.items() if i not in known and t not in special]
    if stray:
        raise GPT2FileError(f"{enc.shown}: {len(stray)} token(s) that neither a byte nor a merge "
                            f"of {vocab.path.name} makes, e.g. {stray[0][:80]!r}; the files do not "
                            f"match.")
    to_bytes = unicode_to_bytes()
    for token in encoder:
        if token not in special and any(ch not in to_bytes for ch in token):
            bad = next(ch for ch in token if ch not in to_bytes)
            raise GPT2FileError(f"{enc.shown}: token {token[:80]!r} holds {bad!r}, which is not in "
                                f"GPT-2's byte alphabet.")
    return dict(
        variant="byte",
        byte_ids=byte_ids,
        merges=triples,
        pattern=GPT2_PATTERN,
        special_tokens=special,
    )


def _byte_ids(encoder: dict[str, int], enc: _Source) -> list[int]:
    byte_ids = []
    for byte, char in bytes_to_unicode().items():
        if char not in encoder:
            raise GPT2FileError(f"{enc.shown}: no id for byte {byte} (written {char!r}); "
                                f"a GPT-2 encoder lists all 256 bytes.")
        byte_ids.append(encoder[char])
    return byte_ids


def _merge_triples(lines, encoder: dict[str, int], known: set[int], vocab: _Source, enc: _Source):
    """``(left id, right id, new id)`` per merge line, each checked against the earlier ones;
    also returns every id made (``known``, the byte ids included)."""
    made_by: dict[int, int] = {}  # merged id -> the vocab.bpe line that made it
    triples = []
    for number, left, right in lines:
        where = f"{vocab.shown}, line {number}"
        for part in (left, right):
            if part not in encoder:
                raise GPT2FileError(f"{where}: token {part[:80]!r} is not in {enc.named}; the two "
                                    f"files do not match.")
            if encoder[part] not in known:
                raise GPT2FileError(f"{where}: token {part[:80]!r} is used before any earlier merge "
                                    f"makes it; merges must come in rank order.")
        merged = left + right
        if merged not in encoder:
            raise GPT2FileError(f"{where}: the merged token {merged[:80]!r} is not in {enc.named}; "
                                f"the two files do not match.")
        new = encoder[merged]
        if new in known:
            first = made_by.get(new)
            earlier = f"line {first}" if first is not None else "the 256 byte tokens"
            raise GPT2FileError(f"{where}: the merged token {merged[:80]!r} (id {new}) was already "
                                f"made by {earlier}; each merge must make a new token.")
        known.add(new)
        made_by[new] = number
        triples.append((encoder[left], encoder[right], new))
    return triples, known
