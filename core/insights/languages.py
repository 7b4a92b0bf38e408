"""What a language pays: tokens for the same content in each language of a parallel corpus, and
the premium over a reference language (Petrov et al. 2023): ``tokens(lang) / tokens(reference)``.

    >>> from core.bpe import BPETokenizer
    >>> costs = language_costs({"eng": "the cat", "fra": "le chat"},
    ...                        {"bytes": BPETokenizer.byte_level()}, reference="eng")
    >>> costs["fra"]["bytes"]
    {'tokens': 7, 'premium': 1.0}

A parallel corpus is a folder of UTF-8 files, one per language, named by its code (``eng.txt``);
``sample_corpora/udhr`` ships one (:data:`UDHR_DIR`), with a ``languages.json`` that names each
code's language and script.  Counts are of ordinary text: special-token text is not special here.
A char or word tokenizer counts a character it never saw as one token (``BPETokenizer.tokenize``).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..bpe import BPETokenizer
from ..bpe.checks import ArgumentError
from ..corpus import SAMPLES_DIR

UDHR_DIR = SAMPLES_DIR / "udhr"
INDEX_FILE = "languages.json"


def read_parallel(folder=UDHR_DIR) -> dict[str, str]:
    """``{code: text}`` of every ``*.txt`` file in ``folder``, by code."""
    files = sorted(Path(folder).glob("*.txt"))
    if not files:
        raise ArgumentError(f"{folder} holds no .txt files (one UTF-8 file per language, named by its code).")
    return {path.stem: path.read_text(encoding="utf-8") for path in files}


def language_index(folder=UDHR_DIR) -> dict[str, dict]:
    """``{code: {"language": ..., "script": ...}}`` from the folder's ``languages.json`` ({} if none)."""
    path = Path(folder) / INDEX_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def token_count(tok: BPETokenizer, text: str) -> int:
    """Tokens of ``text`` as ordinary text (unseen characters one token each)."""
    if tok.alphabet is None:
        return len(tok.encode(text, allowed_special="none"))
    return len(tok.encode_tokens(text, unknown="keep", allowed_special="none", offsets=False))


def language_costs(texts: dict[str, str], tokenizers: dict[str, BPETokenizer],
                   reference: str = "eng") -> dict[str, dict[str, dict]]:
    """``{code: {tokenizer name: {"tokens": n, "premium": n / reference's n}}}``."""
    if reference not in texts:
        raise ArgumentError(f"The reference language {reference!r} is not among the texts "
                            f"({', '.join(sorted(texts))}).")
    counts = {code: {name: token_count(tok, text) for name, tok in tokenizers.items()}
              for code, text in texts.items()}
    base = counts[reference]
    return {code: {name: {"tokens": n, "premium": n / max(1, base[name])} for name, n in row.items()}
            for code, row in counts.items()}
