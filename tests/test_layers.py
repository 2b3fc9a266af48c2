"""The package layers point one way and no module imports itself round a cycle.

Layers (pyproject.toml, [tool.importlinter]): schemas -> config -> sampling, verifiers, rollouts, storage ->
labels -> flows, evaluation -> training -> the CLI (prm_factory's own modules). A new upward import fails
this test, and so does a cycle between two modules of one package, which the layers contract cannot see.

import-linter (grimp) finds a package's modules by walking the one folder its spec names, while the
repository maps each stage folder into `prm_factory` (pyproject.toml's package-dir). The checks therefore
run in a fresh interpreter over a tree of links shaped like the installed package.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("unnamed_modules", ROOT / "scripts" / "unnamed_modules.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def installed_shape(tmp_path: Path) -> Path:
    """A folder holding `prm_factory/` as installed: links to the repository's folders, one per package."""
    tree = tmp_path / "installed"
    for namespace, folder in sorted(script().package_dirs(ROOT).items()):
        place = tree.joinpath(*namespace.split("."))
        if namespace == "prm_factory":  # the CLI's own folder, into which the stages are mapped
            place.mkdir(parents=True)
            for entry in (ROOT / folder).iterdir():
                (place / entry.name).symlink_to(entry)
        else:
            place.symlink_to(ROOT / folder)
    return tree


def run_in(tree: Path, code: str) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter that finds `prm_factory` in `tree` first."""
    prelude = f"import sys; sys.path.insert(0, {str(tree)!r})\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + code], cwd=tree, capture_output=True, text=True, timeout=300
    )


def test_the_installed_shape_holds_every_module(tmp_path: Path) -> None:
    tree = installed_shape(tmp_path)
    found = run_in(
        tree,
        "import grimp\nprint('\\n'.join(sorted(grimp.build_graph('prm_factory', cache_dir=None).modules)))",
    )
    assert found.returncode == 0, found.stderr
    assert set(script().product_modules(ROOT)) <= set(found.stdout.split())


def test_layers_point_down_only(tmp_path: Path) -> None:
    tree = installed_shape(tmp_path)
    code = (
        "from importlinter.cli import lint_imports\n"
        f"sys.exit(lint_imports(config_filename={str(ROOT / 'pyproject.toml')!r}, no_cache=True))"
    )
    result = run_in(tree, code)
    assert result.returncode == 0, result.stdout + result.stderr


CYCLES = """
import grimp
graph = grimp.build_graph("prm_factory", exclude_type_checking_imports=True, cache_dir=None)
packages = {name for name in graph.modules if graph.find_children(name)}
cycles = set()
for module in sorted(graph.modules - packages):
    for imported in graph.find_modules_directly_imported_by(module) - packages - {module}:
        back = graph.find_shortest_chain(importer=imported, imported=module)
        # a chain through a package's __init__ is its re-exports, not a cycle of code
        if back and not packages.intersection(back):
            cycles.add(" -> ".join((module, *back)))
print("\\n".join(sorted(cycles)))
"""


def test_no_import_cycles_between_modules(tmp_path: Path) -> None:
    result = run_in(installed_shape(tmp_path), CYCLES)
    assert result.returncode == 0, result.stderr
    assert not result.stdout.strip(), "import cycles:\n" + result.stdout
