"""Every ``>>>`` example in a ``core`` docstring runs and shows what it says: a newcomer reads them
before the tests, and copies them into a script."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import core

MODULES = sorted(m.name for m in pkgutil.walk_packages(core.__path__, "core.")
                 if not m.name.endswith("__main__"))


def test_the_docstrings_hold_examples_at_all():
    assert sum(doctest.testmod(importlib.import_module(name)).attempted > 0 for name in
               ("core.bpe", "core.bpe.trainer", "core.bpe.alphabet", "core.insights.spelling")) == 4


@pytest.mark.parametrize("name", MODULES)
def test_a_modules_docstring_examples_hold(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} fail (above)"
