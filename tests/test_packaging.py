"""Everything installs under `prm_factory`: pyproject.toml maps each top-level stage folder into the
namespace and lists every package, and the list matches the folders (a new subpackage not listed would be
left out of the wheel)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def packages_on_disk() -> set[str]:
    found = set()
    for namespace, folder in SETUPTOOLS["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((namespace, *parts)))
    return found


def test_every_package_folder_is_listed_and_every_listed_package_exists() -> None:
    assert set(SETUPTOOLS["packages"]) == packages_on_disk()


def test_nothing_installs_outside_the_namespace() -> None:
    assert all(name == "prm_factory" or name.startswith("prm_factory.") for name in SETUPTOOLS["packages"])
    assert all(
        folder == name.removeprefix("prm_factory.") or name == "prm_factory"
        for name, folder in SETUPTOOLS["package-dir"].items()
    )


def test_a_stage_folder_is_its_namespace_package() -> None:
    """`prm_factory.verifiers` is the repository's verifiers/ folder, as the install maps it."""
    import importlib.util

    spec = importlib.util.find_spec("prm_factory.verifiers")
    assert spec is not None and spec.origin is not None
    assert Path(spec.origin).parent == ROOT / "verifiers"


def test_no_installed_package_shadows_the_tests_folder() -> None:
    """`tests/` is a namespace package: a regular top-level `tests` package in site-packages wins over it in
    every process the suite spawns (multiprocessing's spawn imports a test's module by name), and the
    spawned workers die unpickling their tasks while the pool waits for ever. verl 0.4.1 and hydra-core
    0.11.3 ship one (docs/rewards.md); a dependency that does is caught here, by name."""
    import site

    found = [
        str(Path(folder) / name)
        for folder in {*site.getsitepackages(), site.getusersitepackages()}
        for name in ("tests", "tests.py")
        if (Path(folder) / name).exists()
    ]
    assert not found, f"an installed package provides a top-level `tests`, shadowing this suite's: {found}"
