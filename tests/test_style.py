"""The style, checked rather than counted: ruff over the code with the rules of pyproject.toml's
``[tool.ruff]`` (lines within 110 characters, one statement per line, no unused import, no
function with more branches than a reader can follow), and vulture with ``[tool.vulture]``'s: no
function, class, method or constant that no page, command, bench or test reaches.  A failure shows
the tool's own report; run ``ruff check core ui app_pages tests bench streamlit_app.py`` or
``vulture`` (in the repository) to see it without pytest."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT, need_module

CHECKED = ["core", "ui", "app_pages", "tests", "bench", "streamlit_app.py"]


def test_ruff_finds_nothing_to_fix():
    need_module("ruff", "pip install -r requirements-dev.txt")
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *CHECKED], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        pytest.fail(result.stdout + result.stderr, pytrace=False)


def test_vulture_finds_no_dead_code():
    """A path nothing reaches misleads a newcomer (render.py's highlight path, which no page used,
    was the map's answer to "where is the pair highlighted?" while the step view's script drew it)."""
    need_module("vulture", "pip install -r requirements-dev.txt")
    result = subprocess.run([sys.executable, "-m", "vulture"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    if result.returncode != 0:
        pytest.fail(result.stdout + result.stderr, pytrace=False)
