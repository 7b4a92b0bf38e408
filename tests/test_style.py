"""The style, checked rather than counted: ruff over the code with the rules of pyproject.toml's
``[tool.ruff]`` (lines within 110 characters, one statement per line, no unused import, no
function with more branches than a reader can follow), and vulture with ``[tool.vulture]``'s: no
function, class, method or constant that no page, command, bench or test reaches.  A failure shows
the tool's own report; run ``ruff check core ui app_pages tests bench streamlit_app.py`` or
``vulture`` (in the repository) to see it without pytest.

And figures stay in ``docs/benchmarks.md``, a reference under ``BENCHMARKS_MOST_LINES`` lines: a
docstring or comment in the app's code says why a constant is what it is and points to the section
with the measurement (``why: docs/benchmarks.md, "Texts that tie"``), never quotes the figure, which
goes stale with the next change.  Every section such a pointer names exists."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest
from conftest import ROOT, need_module

CHECKED = ["core", "ui", "app_pages", "tests", "bench", "streamlit_app.py"]


def test_ruff_finds_nothing_to_fix():
    need_module("ruff", "pip install -r requirements-dev.txt")
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *CHECKED], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        pytest.fail(result.stdout + result.stderr, pytrace=False)


BENCHMARKS = ROOT / "docs" / "benchmarks.md"
BENCHMARKS_MOST_LINES = 480  # about 20 lines for each of the 24 benchmarks: a reference, not a diary
NO_FIGURES_IN = ["core", "ui", "app_pages"]
_NUMBER = r"\d[\d,]*(?:\.\d+)?"
_UNIT = r"(?:ms|µs|s|seconds|min|KB|KiB|MB|MiB|GB|GiB)"
# The shapes a measurement takes in prose; a constant's own unit ("PERIOD_S = 5.0  # seconds") and
# a limit's ("64 MB at most") match none of them.
MEASURED_FIGURE = re.compile("|".join(f"(?:{shape})" for shape in [
    rf"{_NUMBER}\s?(?:ms|µs)\b",                                          # 48 ms, 8.6 ms
    rf"{_NUMBER}\s?{_UNIT}?\s?(?:-|–|to)\s?{_NUMBER}\s?(?:{_UNIT}|%)(?!\w)",  # 0.1-0.2 s, 3.5 MB to 1.9 MB
    rf"{_NUMBER}\s?(?:{_UNIT}|%)?\s?(?:->|→)\s?{_NUMBER}",                 # 0.92 -> 0.46 s
    r"\bp(?:50|90|95|99)\s+(?:of\s+)?~?\d",                               # p95 86
    rf"{_NUMBER}\s?x (?:faster|slower|less|more)\b",                       # 5x slower
    rf"\bmeasured\b[^.;]{{0,60}}?{_NUMBER}\s?(?:{_UNIT}|%)(?!\w)",          # measured 61 MB
    rf"(?:~|\babout |\baround ){_NUMBER}\s?{_UNIT}(?!\w)",                  # ~0.2 s, about 2 s
    r"\b\d+\.\d+\s?s\b",                                                  # 0.23 s
]))
_QUOTED = re.compile(r'"[^"]*"')  # an example of page text, or a section's title


def _prose(path: Path):
    """(line, text) of every comment and docstring line of a Python file."""
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                and ast.get_docstring(node, clean=False) is not None:
            first = node.body[0]
            for offset, line in enumerate(first.value.value.splitlines()):
                yield first.lineno + offset, line


def quoted_figures(paths) -> list[str]:
    """``path:line: figure`` for each measured figure quoted in a comment or docstring."""
    found = []
    for path in paths:
        for line, text in _prose(path):
            for match in MEASURED_FIGURE.finditer(_QUOTED.sub('""', text)):
                found.append(f"{path.relative_to(ROOT)}:{line}: {match.group(0)!r} in {text.strip()!r}")
    return found


def test_docstrings_and_comments_point_to_the_benchmarks_rather_than_quote_figures():
    paths = sorted(p for folder in NO_FIGURES_IN for p in (ROOT / folder).rglob("*.py"))
    assert paths
    found = quoted_figures(paths)
    assert not found, ("measured figures go stale in code; move them to docs/benchmarks.md and point "
                       "to its section (why: docs/benchmarks.md, \"Section\"):\n" + "\n".join(found))


def test_the_figures_it_looks_for_are_found():
    for text in ["p95 went from 152-911 ms to 104-146 ms", "counted in 0.06 s (measured on a 2-core",
                 "0.6 MB and 22 ms", "from 3.5 MB to 1.9 MB", "costs ~2 s to start", "5x slower",
                 "measured 61 MB for GPT-4's", "0.92 -> 0.46 s", "p95 86-100 ms"]:
        assert MEASURED_FIGURE.search(text), text
    for text in ["PERIOD_S = 5.0  # seconds", "64 MB at most", "every PERIOD_S seconds", "within 30 s",
                 "widen 4x", "the first 90% of its characters", "a 64 MB corpus of characters"]:
        assert not MEASURED_FIGURE.search(text), text


def test_the_benchmarks_are_a_reference_and_every_pointer_names_a_section():
    lines = BENCHMARKS.read_text(encoding="utf-8").splitlines()
    assert len(lines) < BENCHMARKS_MOST_LINES, f"docs/benchmarks.md has {len(lines)} lines"
    sections = [line.lstrip("#").strip() for line in lines if line.startswith("#")]
    tracked = subprocess.run(["git", "ls-files", "*.py", "*.md", "*.toml"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
    missing = []
    for name in tracked:
        path = ROOT / name
        if path == BENCHMARKS or not path.is_file():
            continue
        flat = re.sub(r"\n\s*(?:#\s*)?", " ", path.read_text(encoding="utf-8"))  # pointers span lines
        for match in re.finditer(r'benchmarks\.md`*\)?,\s*"([^"]+)"(?:\s+and\s+"([^"]+)")?', flat):
            missing += [f"{name}: {title!r}" for title in match.groups()
                        if title and not any(section.startswith(title) for section in sections)]
    assert not missing, "pointers to no section of docs/benchmarks.md:\n" + "\n".join(missing)


def test_vulture_finds_no_dead_code():
    """A path nothing reaches misleads a newcomer (render.py's highlight path, which no page used,
    was the map's answer to "where is the pair highlighted?" while the step view's script drew it)."""
    need_module("vulture", "pip install -r requirements-dev.txt")
    result = subprocess.run([sys.executable, "-m", "vulture"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    if result.returncode != 0:
        pytest.fail(result.stdout + result.stderr, pytrace=False)
