"""The codebase's shape, checked: what a newcomer relies on when finding their way around.

- ``core.bpe`` (the tokenizer library) never imports ``core.gpt``, torch or streamlit; ``core.room``
  (the room's runs and queue) loads no torch; only ``ui`` and the pages import streamlit.
- A run's status values are spelled in one module, ``core.runfolder.status``.
- The import graph of ``core``, ``ui`` and ``app_pages`` has no circle, counting imports inside
  functions too (a function-level import that dodges a circle is still a circle).

A module's or a function's length is a judgement, not a test: code is split where a reader would
name the seam, never squeezed to fit a count (a 60-line function limit once made a tokenizer.json
written one key per line too long).  What makes a function hard to follow, its branches, is
checked by ruff's C901 with the style (``tests/test_style.py``).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "ui", "app_pages")
NEUTRAL = {"core.atomic"}  # helpers both libraries use, beside no domain


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _imports(name: str, path: Path) -> set[str]:
    """The project modules ``name`` imports, anywhere in its body."""
    package = name if _is_package(name) else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:  # a submodule by name, else a name from the module itself
                sub = f"{base}.{alias.name}"
                targets.add(sub if sub in MODULES else base)
    return {t for t in targets if t in MODULES and t != name}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _find_cycle() -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(GRAPH[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for module in sorted(GRAPH):
        if module not in state and (cycle := visit(module)):
            return cycle
    return None


def test_the_import_graph_has_no_circle():
    cycle = _find_cycle()
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_the_tokenizer_library_never_imports_the_gpt_side():
    offenders = sorted(f"{m} -> {t}" for m, ts in GRAPH.items() if m.startswith("core.bpe")
                       for t in ts if not t.startswith("core.bpe") and t not in NEUTRAL)
    assert offenders == []


def test_the_shared_plumbing_imports_no_page_view():
    """``ui.plumbing`` is what every page shares; a view belongs to one page, so plumbing that
    reached into a view would tie every page to it."""
    offenders = sorted(f"{m} -> {t}" for m, ts in GRAPH.items() if m.startswith("ui.plumbing")
                       for t in ts if t.startswith("ui.views"))
    assert offenders == []


@pytest.mark.parametrize("module, absent", [
    ("core.bpe", ("torch", "streamlit", "core.gpt", "core.room")),
    ("core.room", ("torch", "streamlit")),
    ("core", ("streamlit",)),
])
def test_importing_a_library_loads_only_what_it_needs(module, absent):
    code = (f"import sys, {module}; "
            f"print(','.join(m for m in {absent!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "", f"`import {module}` loaded {out}"



def _imports_streamlit(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
        if any(n == "streamlit" or n.startswith("streamlit.") for n in names):
            return True
    return False


def test_only_the_app_imports_streamlit():
    outside = sorted(path.relative_to(ROOT).as_posix() for path in ROOT.glob("core/**/*.py")
                     if _imports_streamlit(path))
    assert outside == []


RUN_STATUS_VALUES = {"queued", "starting", "running", "finished", "stopped", "failed"}


def _status_literals(path: Path) -> list[str]:
    """The run-status values ``path`` spells as string constants (docstrings left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and id(node) not in docs and node.value in RUN_STATUS_VALUES]


def test_a_run_status_is_spelled_in_one_module():
    spelled = {path.relative_to(ROOT).as_posix(): found for path in MODULES.values()
               if (found := _status_literals(path))}
    assert list(spelled) == ["core/runfolder/status.py"], spelled
