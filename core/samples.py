"""Sample corpora: the small files in ``sample_corpora/`` plus an English corpus built at run time
from the documentation every Python install ships (``pydoc_data.topics``), so no large text is
committed."""

from __future__ import annotations

import functools
from pathlib import Path

from core.corpus import read_corpus, sample_corpora

DEFAULT_SAMPLE = "sennrich"
PYTHON_DOCS = "English: Python docs (built in)"
SAMPLE_LABELS = {
    "sennrich": "Sennrich: low lower newer wider",
    "low lower lowest": "low lower lowest",
    "low lower newest widest": "low lower newest widest",
    "the cat sat": "the cat sat on the mat",
    "multilingual and emoji": "Multilingual + emoji",
    "python source": "Python source",
}


def python_docs_corpus(max_chars: int = 200_000) -> str:
    """Plain English prose from Python's own help topics, joined in a fixed order."""
    from pydoc_data.topics import topics

    parts, total = [], 0
    for name in sorted(topics):
        body = topics[name].strip()
        parts.append(body)
        total += len(body) + 2
        if total >= max_chars:
            break
    return "\n\n".join(parts)[:max_chars]


@functools.lru_cache(maxsize=1)
def _names() -> tuple[str, ...]:
    files = sample_corpora()
    names = [n for n in files if n != DEFAULT_SAMPLE]
    first = [DEFAULT_SAMPLE] if DEFAULT_SAMPLE in files else []
    return tuple(first + names + [PYTHON_DOCS])


def sample_names() -> list[str]:
    """Display names, the default first: the samples ship with the app, so their folder is read
    once per process (the sidebar asks at every page run; in a room of 300 its reading was a
    percent of the server's time)."""
    return list(_names())


def label(name: str) -> str:
    return SAMPLE_LABELS.get(name, name)


@functools.lru_cache(maxsize=None)  # bounded: callers pass only the names ``sample_names`` lists
def load_sample(name: str) -> str:
    """A sample's text, read once per process, so every session holding it shares one string: a
    room on the Python docs held a copy per session, and each reload (which restores the corpus
    from the URL) built the text again (why: docs/benchmarks.md, "What one page run costs the
    server")."""
    if name == PYTHON_DOCS:
        return python_docs_corpus()
    path: Path = sample_corpora()[name]
    return read_corpus(path)
