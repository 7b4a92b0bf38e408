"""Every dotted path the docs name resolves: ``core.room.jobs.INLINE_BELOW`` in a docstring, a
comment, the README or ``docs/`` is a module that imports and an attribute it has.  A renamed
module left its old name in a dozen places before (``ui.render``, ``ui.serving.serve``,
``ui.plumbing.cache.CACHE_IDLE_S``); a newcomer following one found nothing there.

Pages (``app_pages/``) and benchmarks (``bench/``) are scripts, not imported: a dotted path to one must
name a file.  Python's own imports are Python's to check; this reads only strings and comments.
"""

from __future__ import annotations

import importlib
import io
import re
import subprocess
import tokenize

import pytest

from conftest import ROOT

DOTTED = re.compile(r"(?<![\w./-])((?:core|ui|app_pages|bench|tests)(?:\.[A-Za-z_]\w*)+)")
FILE_ENDINGS = (".py", ".md", ".toml", ".js", ".txt", ".json", ".jinja", ".css")


def _texts(path) -> list[str]:
    """The prose of a file: the whole of Markdown, a Python file's strings and comments."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return [text]
    kinds = (tokenize.STRING, tokenize.COMMENT)
    return [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type in kinds]


def _named_paths() -> dict[str, set[str]]:
    listed = subprocess.run(["git", "ls-files", "*.py", "*.md"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    found: dict[str, set[str]] = {}
    for name in listed:
        if name == "tests/test_dotted_paths.py":  # its docstring quotes dead ones
            continue
        for text in _texts(ROOT / name):
            for match in DOTTED.finditer(text):
                dotted = match.group(1)
                if not dotted.endswith(FILE_ENDINGS):
                    found.setdefault(dotted, set()).add(name)
    return found


def resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    if parts[0] in ("app_pages", "bench"):  # scripts: a file of that name
        return (ROOT / parts[0] / f"{parts[1]}.py").is_file()
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


NAMED = _named_paths()


def test_the_docs_name_dotted_paths_at_all():
    assert "core.room.jobs.INLINE_BELOW" in NAMED and len(NAMED) > 100


@pytest.mark.parametrize("dotted", sorted(NAMED))
def test_a_dotted_path_resolves(dotted):
    assert resolves(dotted), f"{dotted}, named in {', '.join(sorted(NAMED[dotted]))}, does not resolve"
