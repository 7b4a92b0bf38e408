"""Shared fixtures: where the repository and ``../shared`` data live, and what a test does when
something it needs is missing.

Data from ``../shared`` is never committed, and optional packages may be absent.  Where what a
test needs is missing it skips with the reason, except under ``CI=true``, where nothing skips
silently: a missing file, browser or package is a failure (:func:`missing`).
"""

import importlib
import os
import time
from pathlib import Path
from typing import NoReturn

import pytest

pytest_plugins = ["tests.chat.chat_fixtures"]  # the chat tests' harmony fixture, wherever they run

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
IN_CI = os.environ.get("CI", "").lower() == "true"
# the engines this run's tests start (one per runs folder, core.room.engine) leave 10 idle seconds
# after their test, not a minute: a suite's worth of them would otherwise pile up
os.environ.setdefault("BPE_EXPLORER_ENGINE_IDLE_S", "10")


def missing(message: str) -> NoReturn:
    """What a test does when something it needs is not here: skip with ``message``, or fail under
    ``CI=true``, where everything the tests need is installed."""
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message, allow_module_level=True)


def shared_path(*parts: str) -> Path:
    """Path of a ``../shared`` file; skips (or fails under CI) when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.is_file():
        missing(f"{path} is missing: these tests need the ../shared data beside the repository")
    return path


def wait_for(check, timeout: float = 90.0, what: str = "", interval: float = 0.1):
    """``check()``'s first true value, asked every ``interval`` seconds; after ``timeout`` seconds,
    a failure naming ``what`` (or ``check``).  The tests wait on what the code reports, never a
    fixed time."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"{what or check} did not happen within {timeout} s")


def need_module(name: str, how: str):
    """The module ``name``, imported; skips (or fails under CI) when it is not installed, saying
    ``how`` to install it (``pytest.importorskip`` would skip under CI too)."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing(f"{name} is not installed ({exc}): {how}")


def pytest_addoption(parser):
    parser.addoption("--update-screenshots", action="store_true",
                     help="save the browser tests' screenshots over the README's images in "
                          "tests/screenshots/ (by default they go to the ignored tests/.screenshots/)")


@pytest.fixture(scope="session")
def shots_dir(request) -> Path:
    """Where the browser tests save screenshots: the README's folder only when asked, so a test
    run never changes a tracked file."""
    name = "screenshots" if request.config.getoption("--update-screenshots") else ".screenshots"
    path = ROOT / "tests" / name
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture(scope="session")
def shakespeare() -> str:
    return shared_path("corpora", "tinyshakespeare.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def verdict() -> str:
    return shared_path("corpora", "the-verdict.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def gpt2_files() -> tuple[Path, Path]:
    return shared_path("gpt2", "vocab.bpe"), shared_path("gpt2", "encoder.json")
