"""List the product modules that no test names (tests mirror the tree: every module has a test that says so).

A test names a module when it imports it (`import a.b`, `from a.b import x`, `from a import b`) or spells its
dotted name (`"a.b"`, as doctest lists and import checks do). An `__init__.py` holding no code of its own
(a docstring, imports, `__all__`) is skipped. Exit status 1 when any module is unnamed;
tests/test_tests_mirror.py runs the same check.

    python scripts/unnamed_modules.py
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def package_dirs(root: Path = ROOT) -> dict[str, str]:
    """Namespace -> folder of the installed packages (pyproject.toml's `[tool.setuptools.package-dir]`):
    the repository keeps one top-level folder per stage, installed as `prm_factory.<stage>`."""
    project = tomllib.loads((root / "pyproject.toml").read_text())
    return dict(project["tool"]["setuptools"]["package-dir"])


def product_modules(root: Path = ROOT) -> list[str]:
    """Dotted names of every product module holding code (a package by its `__init__.py`)."""
    names = []
    for namespace, folder in package_dirs(root).items():
        for path in sorted((root / folder).rglob("*.py")):
            if path.name == "__init__.py" and not has_own_code(path.read_text(encoding="utf-8")):
                continue
            parts = path.relative_to(root / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            names.append(".".join((namespace, *parts)))
    return names


def has_own_code(source: str) -> bool:
    """Anything beyond a docstring, imports and `__all__` (a package's `__init__.py` with code is tested)."""
    for node in ast.parse(source).body:
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__all__"]:
            continue
        return True
    return False


def named_in(source: str) -> set[str]:
    """The dotted names one test file names: its imports (and the modules imported from a package), and
    every dotted word in its text."""
    names = set(re.findall(r"\b[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+\b", source))
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return names
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def unnamed_modules(root: Path = ROOT, tests: Iterable[Path] | None = None) -> list[str]:
    """Product modules that no file under tests/ names."""
    named: set[str] = set()
    for path in tests if tests is not None else sorted((root / "tests").rglob("*.py")):
        named |= named_in(path.read_text(encoding="utf-8"))
    return [module for module in product_modules(root) if module not in named]


def main() -> int:
    missing = unnamed_modules()
    for module in missing:
        print(module)
    print(f"{len(missing)} of {len(product_modules())} product modules named by no test", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
