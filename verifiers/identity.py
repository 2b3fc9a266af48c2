"""Who made a label: a labeler's name, version and a digest of its source code.

Labels follow the labeler. The identity goes into the label config hash (so a changed verifier writes new
step rows, keyed apart from the old ones) and into every stage's cache key (so a rerun after a verifier fix
recomputes instead of reading stale results). The digest catches a fix whose author forgot to bump the
version; the version says which release it was.

>>> a = code_digest(("prm_factory.verifiers.protocol",))
>>> len(a) == 16 and a == code_digest(("prm_factory.verifiers.protocol",))
True
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any


def module_files(name: str) -> list[Path]:
    """The source files of a module, or of every module of a package."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"cannot hash the source of {name}: module not found", name=name)
    origin = Path(spec.origin)
    if spec.submodule_search_locations:  # a package: every module in it
        return sorted(origin.parent.rglob("*.py"))
    return [origin]


@cache
def code_digest(modules: tuple[str, ...]) -> str:
    """Hash of the source files of `modules` (packages: all their .py files)."""
    digest = hashlib.sha256()
    for name in modules:
        for file in module_files(name):
            digest.update(file.name.encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def labeler_package(obj: Any) -> str:
    """The package a labeler's class lives in (`verifiers.math` for `MathVerifier`)."""
    module = type(obj).__module__
    return module.rsplit(".", 1)[0] if "." in module else module


def labeler_identity(labeler: Any, extra_modules: Sequence[str] = ()) -> dict[str, str]:
    """`{"name", "version", "code"}` of a verifier (or any object with `name` and `version`): the code digest
    covers its whole package, the shared protocol and `extra_modules`."""
    modules = (labeler_package(labeler), "prm_factory.verifiers.protocol", *extra_modules)
    return {"name": str(labeler.name), "version": str(labeler.version), "code": code_digest(tuple(modules))}


def identity_tag(identity: dict[str, str]) -> str:
    """One string for a label column: `math-sympy@1.1.0+3fa2c9d01b2e4f5a`."""
    return f"{identity['name']}@{identity['version']}+{identity['code']}"
