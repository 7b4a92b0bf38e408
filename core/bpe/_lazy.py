"""Compiled-kernel modules loaded on first use, so that ``import core`` stays light.

Importing numba and loading a module's compiled kernels from numba's cache cost a fresh process
more than a short text's whole encoding (why: docs/benchmarks.md, "Encoding real tokenizers"):
a script that encodes "hello world" must not pay that (it runs in plain Python,
``core.bpe.encoding``), only one that trains or encodes a long text.  :func:`defer` registers a
package's kernel modules with the standard library's ``importlib.util.LazyLoader``: every
``from .kernels import training`` in the package stays a plain import (and an edge of the import
graph), but the module's code, and with it numba, runs on its first attribute access.
"""

from __future__ import annotations

import importlib.util
import sys


def defer(package: str, names: tuple[str, ...]) -> None:
    """Register ``package.name`` for each name as a module executed on first attribute access."""
    parent = sys.modules[package]
    for name in names:
        full = f"{package}.{name}"
        if full in sys.modules:
            continue
        spec = importlib.util.find_spec(full)
        loader = importlib.util.LazyLoader(spec.loader)
        spec.loader = loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[full] = module
        loader.exec_module(module)
        setattr(parent, name, module)

