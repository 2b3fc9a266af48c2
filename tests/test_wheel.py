"""The wheel installs like any package, beside a package named `verifiers` (the RL environments library's
import name): `python -m build` makes the sdist and, from it, the wheel; the wheel holds every file of the
package folders under `prm_factory/` and nothing else; installed into a fresh virtual environment beside a
stand-in `verifiers` wheel, both import and the console script answers.

Nothing is downloaded: the build runs without isolation (setuptools and build are in the project's
environment), and the fresh environment reuses the project's installed dependencies through a `.pth` file
naming the project's site-packages as a plain path, so the project's own `.pth` files (its editable install
of prm_factory) are not processed there; only the two wheels are installed, `--no-deps --no-index`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
STAND_IN = "the RL library's verifiers (a stand-in)"

# two builds, a venv, an install and the CLI: about 50 s on a busy 2-core machine, built once for both tests
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("wheel")]


def files_in_wheel_layout() -> set[str]:
    """Every file of the package folders (bytecode caches aside) at its path inside the wheel."""
    expected = set()
    for namespace, folder in SETUPTOOLS["package-dir"].items():
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                expected.add("/".join((*namespace.split("."), *path.relative_to(ROOT / folder).parts)))
    return expected


def build(source: Path, out: Path, *, sdist: bool) -> None:
    """`python -m build` without isolation: the sdist and the wheel made from it, or only the wheel."""
    command = [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(source)]
    subprocess.run(command + ([] if sdist else ["--wheel"]), check=True, capture_output=True, text=True)


def copy_of_the_project(to: Path) -> Path:
    """What the build reads (pyproject.toml, the readme, the package folders), away from the checkout so the
    build's egg-info and build/ folders land in the copy."""
    to.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, to / name)
    for folder in set(SETUPTOOLS["package-dir"].values()):
        shutil.copytree(ROOT / folder, to / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return to


def stand_in_verifiers(to: Path) -> Path:
    """A tiny project named `verifiers` that imports as `verifiers`, as the RL library does; at a version of
    its own, since pip skips a wheel whose name and version the reused environment has (the real 0.4.0)."""
    (to / "verifiers").mkdir(parents=True)
    (to / "verifiers" / "__init__.py").write_text(f"STAND_IN = {STAND_IN!r}\n")
    (to / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "verifiers"\nversion = "0.0.0+stand.in"\n'
        '[tool.setuptools]\npackages = ["verifiers"]\n'
    )
    return to


def venv_reusing_this_one(at: Path) -> Path:
    """A fresh venv whose site-packages ends with this environment's, read as a plain directory."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(at)], check=True)
    python = at / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(purelib) / "project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return env | {"HF_HUB_OFFLINE": "1"}


PROBE = """
import importlib.metadata, importlib.resources, json
import prm_factory, prm_factory.flows, prm_factory.verifiers, verifiers
plugins = importlib.metadata.entry_points(group="vllm.general_plugins")
print(json.dumps({
    "prm_factory": prm_factory.__file__,
    "ours": prm_factory.verifiers.__file__,
    "theirs": verifiers.__file__,
    "stand_in": getattr(verifiers, "STAND_IN", None),
    "version": importlib.metadata.version("prm-factory"),
    "metadata": str(importlib.metadata.distribution("prm-factory").locate_file("")),
    "plugin": [p.value for p in plugins if p.name == "prm_factory"],
    "template": (importlib.resources.files("prm_factory.reports") / "templates" / "report.html.j2").is_file(),
}))
"""


@dataclass(frozen=True)
class Built:
    wheel: Path
    sdist: Path
    stand_in: Path  # the stand-in `verifiers` wheel


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The project's sdist and wheel (`python -m build`: the wheel is made from the sdist), and the
    stand-in's wheel."""
    tmp = tmp_path_factory.mktemp("wheel")
    build(copy_of_the_project(tmp / "project"), tmp / "dist", sdist=True)
    build(stand_in_verifiers(tmp / "stand-in"), tmp / "stand-in-dist", sdist=False)
    (wheel,) = (tmp / "dist").glob("prm_factory-*.whl")
    (sdist,) = (tmp / "dist").glob("prm_factory-*.tar.gz")
    (stand_in,) = (tmp / "stand-in-dist").glob("verifiers-*.whl")
    return Built(wheel, sdist, stand_in)


def test_the_wheel_holds_the_package_folders_and_nothing_else(built: Built) -> None:
    """Every file of the package folders at its `prm_factory/...` path (the sandbox image's sources, the
    report template and the evaluation sets included), and no other top-level name than `prm_factory`."""
    with zipfile.ZipFile(built.wheel) as archive:
        names = set(archive.namelist())
        top_level = archive.read(next(n for n in names if n.endswith(".dist-info/top_level.txt"))).decode()
    packaged = {n for n in names if not n.split("/")[0].endswith(".dist-info")}
    expected = files_in_wheel_layout()
    assert {
        "prm_factory/verifiers/code/sandbox_image/Dockerfile",
        "prm_factory/reports/templates/report.html.j2",
        "prm_factory/evaluation/data/answer_pairs.jsonl",
    } <= expected
    assert packaged == expected, (
        f"left out: {sorted(expected - packaged)}; extra: {sorted(packaged - expected)}"
    )
    assert {n.split("/")[0] for n in packaged} == {"prm_factory"} and top_level.split() == ["prm_factory"]


def test_the_wheel_installs_beside_a_package_named_verifiers(built: Built, tmp_path: Path) -> None:
    python = venv_reusing_this_one(tmp_path / "venv")
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    installed = [str(built.wheel), str(built.stand_in)]
    subprocess.run(
        [*pip, "install", "-q", "--no-deps", "--no-index", *installed],
        check=True,
        env=clean_env(),
        capture_output=True,
    )
    work = tmp_path / "elsewhere"  # not the checkout, whose folders would import as top-level packages
    work.mkdir()
    probe = subprocess.run(
        [str(python), "-I", "-c", PROBE], cwd=work, env=clean_env(), capture_output=True, text=True
    )
    assert probe.returncode == 0, probe.stderr
    seen = json.loads(probe.stdout.strip().splitlines()[-1])
    venv = str(tmp_path / "venv")
    assert seen["stand_in"] == STAND_IN and seen["theirs"].startswith(venv)
    assert seen["prm_factory"].startswith(venv) and seen["ours"].startswith(venv)
    assert seen["ours"].endswith("prm_factory/verifiers/__init__.py")
    assert seen["version"] == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert seen["metadata"].startswith(venv)  # the wheel's, found before the project's editable install
    assert seen["plugin"] == ["prm_factory.sampling.vllm_plugins:register"]
    assert seen["template"] is True

    cli = subprocess.run(
        [str(tmp_path / "venv" / "bin" / "prm-factory"), "--help"],
        cwd=work,
        env=clean_env(),
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 0, cli.stderr
    assert "Usage" in cli.stdout and " run " in cli.stdout
