"""Corpora: reading files safely, the statistics every page shows, and the sample corpora.

Reading never loses data silently: bytes that are not UTF-8 raise :class:`CorpusError` naming the
first bad byte's offset (``errors="replace"`` is the caller's explicit choice).
"""

from __future__ import annotations

import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import regex

ROOT = Path(__file__).resolve().parent.parent
SAMPLES_DIR = ROOT / "sample_corpora"
SHARED_DIR = ROOT.parent / "shared"
TINY_SHAKESPEARE_URL = ("https://raw.githubusercontent.com/karpathy/char-rnn/master/data/"
                        "tinyshakespeare/input.txt")
MAX_CORPUS_BYTES = 64 * 1024 * 1024  # larger corpora are refused with a message, not a crash


class CorpusError(ValueError):
    pass


@dataclass(frozen=True)
class CorpusStats:
    characters: int
    bytes: int
    words: int
    unique_characters: int
    lines: int


def corpus_stats(text: str) -> CorpusStats:
    return CorpusStats(
        characters=len(text),
        bytes=len(text.encode("utf-8")),
        words=sum(1 for _ in regex.finditer(r"\S+", text)),
        unique_characters=len(set(text)),
        lines=text.count("\n") + (1 if text and not text.endswith("\n") else 0),
    )


def decode_corpus(raw: bytes, source: str = "the file", errors: str = "strict") -> str:
    """UTF-8 bytes to text; a clear error names the first byte that is not UTF-8."""
    if len(raw) > MAX_CORPUS_BYTES:
        raise CorpusError(f"{source} is {len(raw) / 2**20:.0f} MB; the limit is "
                          f"{MAX_CORPUS_BYTES / 2**20:.0f} MB. Use a smaller excerpt.")
    try:
        text = raw.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        raise CorpusError(
            f"{source} is not UTF-8 text: byte {raw[exc.start]:#04x} at offset {exc.start} cannot be "
            f"decoded. Save it as UTF-8, or load it with invalid bytes replaced by U+FFFD.") from None
    return text.removeprefix("\ufeff")  # a UTF-8 byte-order mark is not part of the text


def read_corpus(path, errors: str = "strict") -> str:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CorpusError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    return decode_corpus(raw, str(path), errors)


def sample_corpora() -> dict[str, Path]:
    """Built-in samples by display name (file stem with underscores as spaces), sorted."""
    return {p.stem.replace("_", " "): p for p in sorted(SAMPLES_DIR.glob("*.txt"))}


def shared_file(*parts: str) -> Path | None:
    """A file in the ``../shared`` folder beside the repository, if it is there."""
    path = SHARED_DIR.joinpath(*parts)
    return path if path.is_file() else None


def download_tiny_shakespeare(cache_dir, timeout: float = 20.0) -> Path:
    """Tiny Shakespeare from ``cache_dir``, a local ``../shared`` copy, or the web (then cached)."""
    cache = Path(cache_dir) / "tinyshakespeare.txt"
    if cache.is_file():
        return cache
    local = shared_file("corpora", "tinyshakespeare.txt")
    if local is not None:
        return local
    try:
        with urllib.request.urlopen(TINY_SHAKESPEARE_URL, timeout=timeout) as response:
            raw = response.read()
    except (urllib.error.URLError, OSError) as exc:
        raise CorpusError(
            "Could not download Tiny Shakespeare (no internet connection?): "
            f"{getattr(exc, 'reason', exc)}. Upload the file or give its local path instead.") from None
    decode_corpus(raw, "the downloaded file")
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_bytes(raw)
    return cache
