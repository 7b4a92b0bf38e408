"""Corpora: reading files safely, the statistics every page shows, and the sample corpora.

Reading never loses data silently: bytes that are not UTF-8 raise :class:`NotUTF8Error` naming the
first bad byte's offset (``errors="replace"`` is the caller's explicit choice), or, for what is not
text at all (an image renamed ``.txt``), a :class:`CorpusError` that offers no replacing.  A file
that begins with a UTF-16 or UTF-32 byte-order mark is read in its own encoding: Windows Notepad's
"Unicode" saves UTF-16 with one.

Reading never costs more than the size limit either: a file is opened first, then checked on the
open file descriptor (a regular file, not larger than the limit), and only then read, so a device
(``/dev/zero``), a FIFO or a file swapped for a symlink between the check and the read is refused.

:func:`read_corpus_under` is the one way a visitor's path reaches the disk: only files inside a
folder the person running the server chose, after resolving ``..`` and symlinks.
"""

from __future__ import annotations

import codecs
import os
import stat
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import regex

from .atomic import atomic_write

ROOT = Path(__file__).resolve().parent.parent
SAMPLES_DIR = ROOT / "sample_corpora"
SHARED_DIR = ROOT.parent / "shared"
CACHE_DIR = Path.home() / ".cache" / "bpe-explorer"  # downloads kept between runs (Tiny Shakespeare)
TINY_SHAKESPEARE_URL = ("https://raw.githubusercontent.com/karpathy/char-rnn/master/data/"
                        "tinyshakespeare/input.txt")
MAX_CORPUS_BYTES = 64 * 1024 * 1024  # larger corpora are refused with a message, not a crash
PSEUDO_FILESYSTEMS = (Path("/proc"), Path("/sys"), Path("/dev"))  # "files" whose size lies
# the byte-order marks a text file other than UTF-8 begins with, UTF-32's before UTF-16's, whose
# little-endian mark begins UTF-32's
MARKED_ENCODINGS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                    (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
BINARY_SNIFF_BYTES = 8192  # a NUL byte this early says "not text": UTF-8 text has none


class CorpusError(ValueError):
    """A corpus that cannot be used: not found, not allowed, not a file, too big, not text."""


class NotUTF8Error(CorpusError):
    """Text with bytes that are not UTF-8 (Latin-1, say): loading it with each such byte replaced
    by U+FFFD keeps the rest, so a page may offer to."""


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


def check_corpus_size(size: int, source: str = "the file", max_bytes: int = MAX_CORPUS_BYTES) -> None:
    """Refuse a corpus of ``size`` bytes over ``max_bytes`` before anything reads it."""
    if size > max_bytes:
        raise CorpusError(f"{source} is {_megabytes(size)}; the limit is {_megabytes(max_bytes)}. "
                          f"Use a smaller excerpt.")


def _megabytes(n: int) -> str:
    """A size as people read it, in binary units throughout (a limit of 64 MiB read as "67 MB"
    beside it looked like a bigger number than the one set)."""
    if n < 2**10:
        return f"{n:,} byte{'s' * (n != 1)}"
    if n < 2**20:
        return f"{n / 2**10:.1f} KiB"
    return f"{n / 2**20:.1f} MiB" if n < 10 * 2**20 else f"{n / 2**20:.0f} MiB"


def decode_corpus(raw: bytes, source: str = "the file", errors: str = "strict",
                  max_bytes: int = MAX_CORPUS_BYTES) -> str:
    """A file's bytes to text: UTF-8, or the encoding its byte-order mark names; a clear error
    names the first byte that is not UTF-8, or says the file is not text."""
    check_corpus_size(len(raw), source, max_bytes)
    encoding = next((name for mark, name in MARKED_ENCODINGS if raw.startswith(mark)), None)
    if encoding is not None:
        return _decode_marked(raw, encoding, source, errors, max_bytes)
    try:
        text = raw.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        if b"\0" in raw[:BINARY_SNIFF_BYTES]:
            raise CorpusError(f"{source} is not a text file (an image, an archive or a program, or "
                              f"UTF-16 text without its byte-order mark). Save your text as UTF-8.") from None
        raise NotUTF8Error(
            f"{source} is not UTF-8 text: byte {raw[exc.start]:#04x} at offset {exc.start} cannot be "
            f"decoded. Save it as UTF-8, or load it with invalid bytes replaced by U+FFFD.") from None
    return text.removeprefix("\ufeff")  # a UTF-8 byte-order mark is not part of the text


def _decode_marked(raw: bytes, encoding: str, source: str, errors: str, max_bytes: int) -> str:
    """UTF-16 or UTF-32 text (its mark dropped), held to ``max_bytes`` in UTF-8 as every corpus
    is: UTF-16 Chinese takes half again as many bytes in UTF-8."""
    label = encoding.upper()
    try:
        text = raw.decode(encoding, errors=errors)
    except UnicodeDecodeError as exc:
        raise NotUTF8Error(
            f"{source} begins as {label} text, but bytes at offset {exc.start} are not {label}. "
            f"Save it as UTF-8, or load it with invalid bytes replaced by U+FFFD.") from None
    check_corpus_size(len(text.encode("utf-8", "surrogatepass")), f"{source} in UTF-8", max_bytes)
    return text


def _read_open_file(fd: int, source: str, max_bytes: int) -> bytes:
    """The bytes of the open ``fd``, after checking *it* (not a path that may have changed since)."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise CorpusError(f"{source} is not a regular file (a folder, device or pipe cannot be a corpus).")
    check_corpus_size(info.st_size, source, max_bytes)
    chunks = []
    left = max_bytes + 1  # a file growing while it is read still stops at the limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    raw = b"".join(chunks)
    check_corpus_size(len(raw), source, max_bytes)
    return raw


def _open_flags() -> int:
    """Read-only; never follow a symlink; never block on a FIFO; not inherited by child processes."""
    return os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def read_corpus(path, errors: str = "strict", max_bytes: int = MAX_CORPUS_BYTES) -> str:
    """A corpus file of at most ``max_bytes`` bytes (a symlink is followed to a regular file)."""
    path = Path(path)
    try:
        fd = os.open(path.resolve(), _open_flags())
    except OSError as exc:
        raise CorpusError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    try:
        raw = _read_open_file(fd, str(path), max_bytes)
    finally:
        os.close(fd)
    return decode_corpus(raw, str(path), errors, max_bytes)


def read_corpus_under(root, relative_path: str, max_bytes: int = MAX_CORPUS_BYTES,
                      errors: str = "strict") -> tuple[str, str]:
    """``(name, text)`` of the file ``relative_path`` names inside the folder ``root``.

    The path is resolved first (``..`` and symlinks), and must stay inside ``root``; then each
    folder on the way is opened without following symlinks, so a link swapped in after the check
    is refused rather than followed.  ``name`` is the path relative to ``root``, for display.
    """
    base = Path(root).resolve()
    if any(base == p or p in base.parents for p in PSEUDO_FILESYSTEMS):
        raise CorpusError(f"The corpus folder may not be inside {', '.join(map(str, PSEUDO_FILESYSTEMS))}.")
    wanted = str(relative_path).strip()
    if not wanted:
        raise CorpusError("Give the path of a file inside the corpus folder.")
    target = (base / Path(wanted).expanduser()).resolve()
    if base not in target.parents:
        where = "the corpus folder itself" if target == base else "outside the corpus folder"
        raise CorpusError(f"{wanted} is {where}: only files inside it can be loaded.")
    parts = target.relative_to(base).parts
    fd = _open_path_at(base, parts, wanted)
    try:
        raw = _read_open_file(fd, wanted, max_bytes)
    finally:
        os.close(fd)
    return "/".join(parts), decode_corpus(raw, wanted, errors, max_bytes)


def _open_path_at(base: Path, parts: tuple[str, ...], shown: str) -> int:
    """Open ``base/parts...`` one component at a time, following no symlink on the way."""
    directory = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(base, directory)
    except OSError as exc:
        raise CorpusError(f"Cannot open the corpus folder: {exc.strerror or exc}.") from None
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            try:
                child = os.open(part, _open_flags() if last else directory, dir_fd=fd)
            except OSError as exc:
                raise CorpusError(f"Cannot read {shown}: {exc.strerror or exc}.") from None
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def sample_corpora() -> dict[str, Path]:
    """Built-in samples by display name (file stem with underscores as spaces), sorted."""
    return {p.stem.replace("_", " "): p for p in sorted(SAMPLES_DIR.glob("*.txt"))}


def shared_file(*parts: str) -> Path | None:
    """A file in the ``../shared`` folder beside the repository, if it is there."""
    path = SHARED_DIR.joinpath(*parts)
    return path if path.is_file() else None


def download_tiny_shakespeare(cache_dir, timeout: float = 20.0) -> Path:
    """Tiny Shakespeare from ``cache_dir``, a local ``../shared`` copy, or the web (then cached).

    The cache is written to a temporary file beside it and renamed into place, so two sessions
    downloading at once, or a download cut short, never leave a half-written corpus."""
    cache = Path(cache_dir) / "tinyshakespeare.txt"
    if cache.is_file():
        return cache
    local = shared_file("corpora", "tinyshakespeare.txt")
    if local is not None:
        return local
    try:
        with urllib.request.urlopen(TINY_SHAKESPEARE_URL, timeout=timeout) as response:
            raw = response.read(MAX_CORPUS_BYTES + 1)
    except (urllib.error.URLError, OSError) as exc:
        raise CorpusError(
            "Could not download Tiny Shakespeare (no internet connection?): "
            f"{getattr(exc, 'reason', exc)}. Upload the file instead.") from None
    decode_corpus(raw, "the downloaded file")
    cache.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(cache, "wb") as f:
        f.write(raw)
    return cache


