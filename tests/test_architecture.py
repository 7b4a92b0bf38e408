"""The codebase's shape, checked: what a newcomer relies on when finding their way around.

- ``core.bpe`` (the tokenizer library) never imports ``core.gpt``, torch or streamlit; ``core.room``
  (the room's runs and queue) loads no torch, and no module a page reaches imports it but in a
  function that runs in a child process; only ``ui`` and the pages import streamlit; the job
  workers, which import what ``ui.plumbing.heavy_jobs.PRELOAD`` names, load neither torch nor
  streamlit, and a child an app process spawns (a probe's) loads no streamlit.
- A run's status values are spelled in one module, ``core.runfolder.status``.
- The import graph of ``core``, ``ui`` and ``app_pages`` has no circle, counting imports inside
  functions too (a function-level import that dodges a circle is still a circle) and modules named
  in strings (a preload list, a lazy loader's names): between modules, and between packages
  (``core.gpt`` -> ``core.room`` -> ``core.gpt`` is a circle even when no two modules make one).
- A file name appears once in the tree (``git ls-files``), so a name says which file it is:
  ``__init__.py``, ``__main__.py`` and ``conftest.py`` aside, whose names are Python's and
  pytest's.  ``core/train.py`` and ``ui/serve.py`` keep the names of their documented commands.

A module's or a function's length is a judgement, not a test: code is split where a reader would
name the seam, never squeezed to fit a count (a 60-line function limit once made a tokenizer.json
written one key per line too long).  What makes a function hard to follow, its branches, is
checked by ruff's C901 with the style (``tests/test_style.py``).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "ui", "app_pages")
NEUTRAL = {"core.atomic", "core.digest"}  # helpers both libraries use, beside no domain


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


def _named_for_import(tree: ast.AST) -> list[str]:
    """Strings that name modules to import: the items of a list, tuple or set of names (a preload
    list, a lazy loader's names) and ``import_module``'s argument.  A module started as a process
    of its own (``python -m core.room.scheduler``) imports nothing into this one, so a lone name
    is not counted."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            found += [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"):
            found.append(node.args[0].value)
    return found


def _imports(name: str, path: Path) -> set[str]:
    """The project modules ``name`` imports, anywhere in its body, or names to import in strings
    (:func:`_named_for_import`): a module's full name (``"core.bpe.step_data"`` in a preload list),
    or in a package's ``__init__`` one of its own modules (``defer(__name__, ("training", ...))``)."""
    package = name if _is_package(name) else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    targets = set()
    for text in _named_for_import(tree):
        if text in MODULES:
            targets.add(text)
        elif _is_package(name) and f"{name}.{text}" in MODULES:
            targets.add(f"{name}.{text}")
    for node in ast.walk(tree):
        targets.update(_imported(node, package))
    return {t for t in targets if t in MODULES and t != name}


def _imported(node: ast.AST, package: str) -> list[str]:
    """The modules an import statement in ``package`` loads: a submodule by name, else the module
    a name comes from (a relative import resolved); none for any other node."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join(anchor + ([base] if base else []))
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _package(module: str) -> str:
    """The package a module belongs to, at the level of the libraries: ``core.bpe``, ``core.gpt``,
    ``core.room``, ``core.runfolder``, ..., ``ui.plumbing``, ``ui.views``, ``ui.serving``,
    ``app_pages``.  A package inside one (``core.bpe.kernels``) is its library's: how a library is
    layered inside is the module graph's to check.  ``core`` and ``ui`` hold libraries, not one:
    a module right under them (``core.atomic``, ``ui.serve``, the ``core`` facade) stands for
    itself."""
    parts = module.split(".")
    if parts[0] in ("core", "ui"):
        return ".".join(parts[:2])
    return parts[0]


def _package_graph() -> dict[str, set[str]]:
    """Package -> the packages its modules import (itself left out)."""
    graph: dict[str, set[str]] = {}
    for module, targets in GRAPH.items():
        mine = _package(module)
        graph.setdefault(mine, set()).update(p for p in map(_package, targets) if p != mine)
    return graph


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module)):
            return cycle
    return None


def test_the_import_graph_has_no_circle():
    cycle = _find_cycle(GRAPH)
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_no_package_imports_another_in_a_circle():
    """A package imports packages below it only: a module of ``core.gpt`` that imported
    ``core.room`` while ``core.room`` imports ``core.gpt`` would tie the two libraries into one,
    whichever modules the imports name."""
    cycle = _find_cycle(_package_graph())
    assert cycle is None, "package circle: " + " -> ".join(cycle)


def test_a_module_named_in_a_string_counts_as_an_import():
    """What the checks above see: a preload list's names, a lazy loader's, and a package edge."""
    assert "core.bpe.step_data" in GRAPH["ui.plumbing.heavy_jobs"]
    assert "core.bpe.kernels.training" in GRAPH["core.bpe.kernels"]
    assert "core.runfolder" in _package_graph()["core.gpt"]
    assert "core.gpt" not in _package_graph()["core.runfolder"]
    assert "core.room" not in _package_graph()["core.gpt"]


def _preloaded() -> tuple[str, ...]:
    """``ui.plumbing.heavy_jobs.PRELOAD``, read without importing Streamlit."""
    tree = ast.parse(MODULES["ui.plumbing.heavy_jobs"].read_text(encoding="utf-8"))
    [value] = [node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id == "PRELOAD" for t in node.targets)]
    return ast.literal_eval(value)


# As the runs folder's engine runs (``python -m core.room.engine``, its main module named by its
# spec, which multiprocessing has each new job worker run again): a job worker reports what it loaded.
JOB_WORKER_CHECK = """
import sys
import core.room.engine
sys.modules["__main__"] = core.room.engine
from core.room.engine_link import SharedEngine
import job_functions
engine = SharedEngine()
engine.configure(job_workers=1, limit_s=120, max_rss=None, abandon_s=None, preload={preload!r})
job = engine.engine.submit("a session", "loaded", job_functions.loaded, (("streamlit", "torch"),))
print(",".join(job.result(timeout=120)))
engine.close()
"""

# As ``streamlit run`` leaves it: the page's script is ``__main__`` (Streamlit puts its module there),
# which multiprocessing has a spawned child run again, as the probe's one-call workers are.
PROBE_CHILD_CHECK = """
import sys, types
main = types.ModuleType("__main__")
main.__file__ = {app!r}
sys.modules["__main__"] = main
from core.room.worker_process import call
import job_functions
print(",".join(call(job_functions.loaded, (("streamlit",),), timeout=120)))
"""


def _loaded_in_child(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests" / "room")])}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=180, check=True).stdout.strip()


def test_job_workers_import_no_streamlit():
    """A job worker imports the engine's module, as its main, and the modules of the jobs it runs
    (``PRELOAD``), and no more: a page's view there would bring Streamlit and its whole runtime into
    every job worker, and torch would cost each one seconds and hundreds of MB."""
    names = _preloaded()
    assert names and all(name in MODULES and name.startswith("core.") for name in names), names
    out = _loaded_in_child(JOB_WORKER_CHECK.format(preload=names))
    assert out == "", f"a job worker (preloading {names}) loaded {out}"


def test_a_child_an_app_process_spawns_imports_no_streamlit():
    """A probe's worker, spawned by an app process, runs the app's script again under another name:
    the script starts the app only as ``__main__``, so the child does not load Streamlit (seconds
    before a sample or a step's time)."""
    out = _loaded_in_child(PROBE_CHILD_CHECK.format(app=str(ROOT / "streamlit_app.py")))
    assert out == "", f"a child spawned by an app process loaded {out}"


NAMES_OF_THEIR_OWN = {"__init__.py", "__main__.py", "conftest.py"}


def test_a_file_name_appears_once_in_the_tree():
    """Two modules called ``turns.py`` force an alias at every import and leave a reader asking
    which one a traceback means; the same holds for any two files."""
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    seen: dict[str, list[str]] = {}
    for path in listed.stdout.splitlines():
        seen.setdefault(Path(path).name, []).append(path)
    twice = {name: paths for name, paths in seen.items()
             if len(paths) > 1 and name not in NAMES_OF_THEIR_OWN}
    assert twice == {}


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


# Functions that run only in a child process (a probe's call, a job's, a GPT worker's setup): torch
# is imported in them, never in the server that sends them.
CHILD_SIDE = {"core.room.probe": {"_estimate", "_sample"}, "core.insights.embeddings": {"embedding_use"},
              "core.gpt.machine": {"read_machine"},
              "core.room.gpt_workers": {"start_gpt_process", "train_turn"}}


def _server_imports(name: str, path: Path) -> set[str]:
    """Every module ``name`` imports, project or not, at its top and in its functions, those of
    :data:`CHILD_SIDE` aside; modules named in strings only where a package loads them on use (a
    preload list, a scheduler's command, are a child's imports)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = CHILD_SIDE.get(name, set())
    package = name if _is_package(name) else name.rpartition(".")[0]
    lazy = _named_for_import(tree) if _is_package(name) else []
    targets = {f"{name}.{t}" for t in lazy if f"{name}.{t}" in MODULES}
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in skipped:
            continue
        todo.extend(ast.iter_child_nodes(node))
        targets.update(_imported(node, package))
    return targets


def test_no_page_can_load_torch_into_the_server():
    """A web server never loads torch (``core.gpt.machine`` says why): no module a page imports, at
    its top or in a function a page may call, imports it, but in the functions that run in a child
    (:data:`CHILD_SIDE`).  ``tests/app/test_torch_free_server.py`` checks the same on a running app."""
    todo = [m for m in MODULES if m.startswith(("ui", "app_pages"))]
    via, torch_in = dict.fromkeys(todo), []  # module -> the module that imports it first
    while todo:
        module = todo.pop()
        for target in _server_imports(module, MODULES[module]):
            if target == "torch" or target.startswith("torch."):
                torch_in.append(module)
            elif target in MODULES and target not in via:
                via[target] = module
                todo.append(target)

    def chain(module: str | None) -> str:
        return "" if module is None else chain(via[module]) + f" -> {module}"
    assert [chain(m) + " -> torch" for m in torch_in] == []
    assert "core.room.limits" in via and "core.gpt.machine" in via  # the walk reaches the device's facts
