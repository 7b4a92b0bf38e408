"""Shared fixtures: where the repository and ``../shared`` data live.

Data from ``../shared`` is never committed.  Where it is missing a test skips with the reason,
except under ``CI=true``, where a missing file is a failure.
"""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
IN_CI = os.environ.get("CI", "").lower() == "true"


def shared_path(*parts: str) -> Path:
    """Path of a ``../shared`` file; skips (or fails under CI) when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.is_file():
        message = f"{path} is missing: these tests need the ../shared data beside the repository"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
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
