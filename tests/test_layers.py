"""The package layers point one way and no module imports itself round a cycle.

Layers (pyproject.toml, [tool.importlinter]): schemas -> config -> sampling, verifiers, rollouts, storage ->
labels -> flows, evaluation -> prm_factory (the CLI). A new upward import fails this test, and so does a
cycle between two modules of one package, which the layers contract cannot see.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import grimp
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[1]
PACKAGES: tuple[str, ...] = tuple(
    tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["root_packages"]
)
"""The product packages: the import-linter contract's own list, so a new package is named in one place."""


def test_layers_point_down_only(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0


def test_no_import_cycles_between_modules():
    graph = grimp.build_graph(*PACKAGES, exclude_type_checking_imports=True, cache_dir=None)
    packages = {name for name in graph.modules if graph.find_children(name)}
    cycles = set()
    for module in sorted(graph.modules - packages):
        for imported in graph.find_modules_directly_imported_by(module) - packages - {module}:
            back = graph.find_shortest_chain(importer=imported, imported=module)
            # a chain through a package's __init__ is its re-exports, not a cycle of code
            if back and not packages.intersection(back):
                cycles.add(" -> ".join((module, *back)))
    assert not cycles, "import cycles:\n" + "\n".join(sorted(cycles))
