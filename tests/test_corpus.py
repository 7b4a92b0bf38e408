"""core.corpus: a visitor's path reads only regular files inside the folder the server allows,
checked on the opened file and bounded in size before a byte is read."""

import os
import threading

import pytest

from core.corpus import (CorpusError, NotUTF8Error, check_corpus_size, decode_corpus,
                         download_tiny_shakespeare, read_corpus, read_corpus_under)


@pytest.fixture()
def root(tmp_path):
    folder = tmp_path / "corpora"
    (folder / "books").mkdir(parents=True)
    (folder / "books" / "tale.txt").write_text("once upon a time", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("the server's secret", encoding="utf-8")
    return folder


def test_a_file_inside_the_folder_is_read(root):
    assert read_corpus_under(root, "books/tale.txt") == ("books/tale.txt", "once upon a time")
    assert read_corpus_under(root, "  books/../books/tale.txt ") == ("books/tale.txt", "once upon a time")


def test_a_symlink_that_stays_inside_is_followed(root):
    (root / "link.txt").symlink_to(root / "books" / "tale.txt")
    assert read_corpus_under(root, "link.txt")[1] == "once upon a time"


@pytest.mark.parametrize("path", ["../secret.txt", "books/../../secret.txt", "{tmp}/secret.txt",
                                  "/etc/passwd", "/proc/self/environ", "~/.bashrc"])
def test_paths_outside_the_folder_are_refused(root, path):
    with pytest.raises(CorpusError, match="outside the corpus folder"):
        read_corpus_under(root, path.format(tmp=root.parent))


@pytest.mark.parametrize("target", ["{tmp}/secret.txt", "/dev/zero", "/proc/self/environ"])
def test_a_symlink_out_of_the_folder_is_refused(root, target):
    (root / "out.txt").symlink_to(target.format(tmp=root.parent))
    with pytest.raises(CorpusError, match="outside the corpus folder"):
        read_corpus_under(root, "out.txt")


def test_the_folder_itself_and_an_empty_path_are_refused(root):
    for path in (".", "books/.."):
        with pytest.raises(CorpusError, match="the corpus folder itself"):
            read_corpus_under(root, path)
    with pytest.raises(CorpusError, match="Give the path"):
        read_corpus_under(root, "  ")


def test_a_fifo_is_refused_without_blocking(root):
    os.mkfifo(root / "pipe.txt")
    result = {}

    def read():  # opening a FIFO for reading blocks until a writer comes, unless told not to
        try:
            read_corpus_under(root, "pipe.txt")
        except CorpusError as exc:
            result["error"] = str(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=30)
    assert not reader.is_alive(), "reading a FIFO blocked"
    assert "not a regular file" in result["error"]


def test_a_subfolder_is_not_a_corpus(root):
    with pytest.raises(CorpusError, match="not a regular file"):
        read_corpus_under(root, "books")


def test_devices_are_refused_before_reading():
    with pytest.raises(CorpusError, match="not a regular file"):
        read_corpus("/dev/zero")
    with pytest.raises(CorpusError, match="may not be inside"):
        read_corpus_under("/dev", "zero")
    with pytest.raises(CorpusError, match="may not be inside"):
        read_corpus_under("/proc/self", "environ")


def test_a_missing_file_is_named(root):
    with pytest.raises(CorpusError, match="Cannot read books/nope.txt"):
        read_corpus_under(root, "books/nope.txt")


def test_size_is_checked_before_reading(root):
    big = root / "big.txt"
    with open(big, "wb") as f:  # sparse: 5 GB on paper, nothing on disk; reading it would take long
        f.truncate(5 * 2**30)
    with pytest.raises(CorpusError, match=r"big.txt is 5120 MiB; the limit is 64 MiB"):
        read_corpus_under(root, "big.txt")
    with pytest.raises(CorpusError, match="the limit is 10 bytes"):
        read_corpus_under(root, "books/tale.txt", max_bytes=10)
    with pytest.raises(CorpusError, match="the limit"):
        read_corpus(big)


def test_sizes_and_bytes_over_the_limit_are_refused():
    check_corpus_size(100, max_bytes=100)
    with pytest.raises(CorpusError, match="upload.txt is 101 bytes; the limit is 100 bytes"):
        check_corpus_size(101, "upload.txt", max_bytes=100)
    with pytest.raises(CorpusError, match="the limit"):
        decode_corpus(b"x" * 101, max_bytes=100)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-32-be"])
def test_a_file_with_a_byte_order_mark_reads_in_its_encoding(encoding):
    """Windows Notepad's "Unicode" is UTF-16 with a mark: its text loads as typed, the mark dropped."""
    text = "Grüße, 你好 😀\r\n"
    raw = text.encode(encoding)
    if not encoding.endswith("-be"):  # Python writes the native order's mark itself; the others, by hand
        assert raw[:2] in (b"\xff\xfe", b"\xfe\xff")
    else:
        raw = "\ufeff".encode(encoding) + raw
    assert decode_corpus(raw, "notepad.txt") == text


def test_a_marked_file_is_held_to_the_limit_in_utf_8():
    raw = ("你" * 40).encode("utf-16")  # 82 bytes as UTF-16, 120 as UTF-8
    with pytest.raises(CorpusError, match="notepad.txt in UTF-8 is 120 bytes"):
        decode_corpus(raw, "notepad.txt", max_bytes=100)


def test_bytes_that_are_not_text_are_refused_without_replacing():
    """A picture renamed .txt is no text with a few bad bytes: replacing them would load noise."""
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00"
    with pytest.raises(CorpusError, match="photo.txt is not a text file") as refused:
        decode_corpus(png, "photo.txt")
    assert not isinstance(refused.value, NotUTF8Error)
    with pytest.raises(NotUTF8Error, match="offset 3"):  # Latin-1 text: replacing keeps the rest
        decode_corpus("café au lait".encode("latin-1"), "menu.txt")


def test_the_tiny_shakespeare_cache_is_written_whole(tmp_path, monkeypatch):
    import core.corpus

    class Response:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self, limit):
            return b"First Citizen:\n"[:limit]

    monkeypatch.setattr(core.corpus, "SHARED_DIR", tmp_path / "no-shared")
    monkeypatch.setattr(core.corpus.urllib.request, "urlopen", lambda url, timeout: Response())
    path = download_tiny_shakespeare(tmp_path / "cache")
    assert path.read_text(encoding="utf-8") == "First Citizen:\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["tinyshakespeare.txt"]  # no temp left
