"""The tokenizers real models use, offline: where each vocabulary comes from, its split pattern and
special tokens, and a cache of what is slow to derive from it.

- ``cl100k_base`` (GPT-4, GPT-3.5), ``o200k_base`` (GPT-4o, o1, o3), ``llama3`` (Llama 3) and
  ``qwen3`` (Qwen 2.5 and 3): the vocabularies the ``quicktok-v1`` package ships (a runtime
  dependency, so they work after a plain install with no network).  They are *ranked*
  vocabularies (tiktoken's form), read through quicktok's public API, one token's bytes at a time.
- ``gpt2``: GPT-2's ``vocab.bpe`` and ``encoder.json`` — given by the caller, from ``../shared/gpt2``,
  or from tiktoken's download cache — read by ``core.bpe.gpt2`` (GPT-2 ships its merges).

Recovering merges and listing every joinable pair (``core.bpe.ranks``) takes seconds per vocabulary
(docs/benchmarks.md, "Encoding real tokenizers"), so the result is kept in ``$BPE_EXPLORER_CACHE``
(default ``~/.cache/bpe-explorer``) as one ``.npz`` per vocabulary, named and checked by the SHA-256
of the vocabulary's files, written to a temporary file and renamed into place; a file that does not
load or does not match is rebuilt.

Leaves out: the tokenizer class (``BPETokenizer.from_pretrained`` builds it from
:func:`ranked_fields`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..atomic import atomic_write
from .gpt2 import GPT2FileError
from .pretokenize import CL100K_PATTERN, LLAMA3_PATTERN, O200K_PATTERN, QWEN3_PATTERN
from .ranks import pair_table, recover_merges

CACHE_VERSION = 1



@dataclass(frozen=True)
class Pretrained:
    """One ranked vocabulary: its quicktok name and data file stem, its split pattern, its
    normalization (Qwen applies NFC first), and the models that use it."""

    name: str
    stem: str
    pattern: str
    normalization: str | None
    models: str


PRETRAINED = {p.name: p for p in (
    Pretrained("cl100k_base", "cl100k", CL100K_PATTERN, None, "GPT-4, GPT-3.5"),
    Pretrained("o200k_base", "o200k", O200K_PATTERN, None, "GPT-4o, o1, o3"),
    Pretrained("llama3", "llama3", LLAMA3_PATTERN, None, "Llama 3"),
    Pretrained("qwen3", "qwen3", QWEN3_PATTERN, "NFC", "Qwen 2.5, Qwen 3"),
)}
NAMES = ("gpt2", *PRETRAINED)
# ``../shared/gpt2`` beside the repository (the folder ``core.corpus.shared_file`` reads; the
# tokenizer library imports nothing outside ``core.bpe``).
SHARED_GPT2 = Path(__file__).resolve().parents[3] / "shared" / "gpt2"
GPT2_URLS = ("https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe",
             "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json")


def spec(name: str) -> Pretrained:
    if name not in PRETRAINED:
        raise ValueError(f"Unknown pretrained tokenizer {name!r}: choose one of {', '.join(NAMES)}.")
    return PRETRAINED[name]


def cache_dir() -> Path:
    return Path(os.environ.get("BPE_EXPLORER_CACHE") or Path.home() / ".cache" / "bpe-explorer")


def ranked_fields(name: str, directory=None) -> dict:
    """``BPETokenizer``'s constructor fields for ``name``: byte ids, merges, pattern, special
    tokens, normalization and its ``pair_table`` (it encodes by tiktoken's rule), from
    the cache when it holds this very vocabulary, else derived and cached."""
    vocab = spec(name)
    files = _quicktok_files(vocab.stem)
    digest = hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()
    path = Path(directory or cache_dir()) / f"{name}-{digest[:16]}-v{CACHE_VERSION}.npz"
    arrays = _read_cache(path, digest)
    if arrays is None:
        arrays = _derive(vocab.name)
        _write_cache(path, dict(arrays, digest=np.array(digest)))
    return _fields(arrays, vocab)


def _quicktok_files(stem: str) -> list[Path]:
    found = importlib.util.find_spec("quicktok")
    if found is None or not found.submodule_search_locations:
        raise ImportError("The pretrained vocabularies come with the quicktok-v1 package: "
                          "pip install quicktok-v1 (or pip install -e . in this project).")
    data = Path(next(iter(found.submodule_search_locations))) / "data"
    return [data / f"{stem}.vocab", data / f"{stem}.special"]


def _derive(name: str) -> dict[str, np.ndarray]:
    """Read the vocabulary through quicktok, recover its merges and list its joinable pairs."""
    import quicktok

    enc = quicktok.get_encoding(name)
    specials = {s: enc.encode_single_token(s) for s in sorted(enc.special_tokens_set)}
    special_ids = set(specials.values())
    token_bytes = {}
    for i in range(enc.n_vocab):
        if i not in special_ids:
            try:
                token_bytes[i] = enc.decode_single_token_bytes(i)
            except (KeyError, ValueError, RuntimeError):  # an unused id between the ranges
                continue
    byte_ids = [0] * 256
    for i, data in token_bytes.items():
        if len(data) == 1:
            byte_ids[data[0]] = i
    pairs = pair_table(token_bytes)
    merges = recover_merges(token_bytes, byte_ids, pairs)
    return dict(
        byte_ids=np.array(byte_ids, dtype=np.int64),
        merges=np.array(merges, dtype=np.int64).reshape(-1, 3),
        pair_keys=pairs[0],
        pair_merged=pairs[1],
        specials=np.array(json.dumps(specials)),
    )


def _fields(arrays: dict, vocab: Pretrained) -> dict:
    return dict(
        variant="byte",
        byte_ids=arrays["byte_ids"].tolist(),
        merges=arrays["merges"],
        pattern=vocab.pattern,
        special_tokens=json.loads(str(arrays["specials"])),
        pair_table=(arrays["pair_keys"], arrays["pair_merged"]),
        normalization=vocab.normalization,
    )


def _read_cache(path: Path, digest: str) -> dict | None:
    """The cached arrays, or ``None`` when the file is missing, unreadable or for other data."""
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
        if str(arrays["digest"]) != digest or arrays["pair_keys"].shape != arrays["pair_merged"].shape:
            return None
        json.loads(str(arrays["specials"]))
        return arrays
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None


def _write_cache(path: Path, arrays: dict) -> None:
    """Write atomically; a read-only or full disk only costs the next load its time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(path, "wb") as f:
            np.savez(f, **arrays)
    except OSError:
        return


def gpt2_files(vocab_bpe=None, encoder_json=None) -> tuple[Path, Path]:
    """GPT-2's two files: the ones given, else ``../shared/gpt2``, else tiktoken's download cache."""
    if (vocab_bpe is None) != (encoder_json is None):
        raise ValueError("Give both of GPT-2's files, vocab.bpe and encoder.json, or neither.")
    if vocab_bpe is not None:
        return Path(vocab_bpe), Path(encoder_json)
    shared = SHARED_GPT2 / "vocab.bpe", SHARED_GPT2 / "encoder.json"
    if shared[0].is_file() and shared[1].is_file():
        return shared
    tiktoken_dir = Path(os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
                        or Path(tempfile.gettempdir()) / "data-gym-cache")
    cached = [tiktoken_dir / hashlib.sha1(url.encode()).hexdigest() for url in GPT2_URLS]
    if all(p.is_file() for p in cached):
        return cached[0], cached[1]
    raise GPT2FileError(
        "GPT-2's vocab.bpe and encoder.json were not found: pass them "
        "(BPETokenizer.from_pretrained('gpt2', vocab_bpe=..., encoder_json=...)), put them in "
        f"../shared/gpt2, or let tiktoken download them once (tiktoken.get_encoding('gpt2'), "
        f"cached in {tiktoken_dir}).")
