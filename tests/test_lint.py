"""Lint is part of the suite, so a clean clone's test command also keeps the code style honest."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_ruff_check_is_clean() -> None:
    ruff = Path(sys.executable).with_name("ruff")
    result = subprocess.run([str(ruff), "check", "."], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_lint_does_not_depend_on_run_output_folders(tmp_path: Path) -> None:
    """README command 1 then command 2 in one clone: a dataset in the default place (or one a user named
    `datasets`) must not make ruff take `datasets` for a first-party package and fail an import block."""
    from prm_factory.config.run_config import default_dataset_root

    (tmp_path / "pyproject.toml").write_text((REPO / "pyproject.toml").read_text())
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "bench_search.py").write_text((REPO / "bench" / "bench_search.py").read_text())
    for leftover in ("datasets/default/steps", "prm-datasets/default/steps"):
        (tmp_path / leftover).mkdir(parents=True)
        (tmp_path / leftover / "part-0.parquet").write_bytes(b"")
    ruff = Path(sys.executable).with_name("ruff")
    result = subprocess.run(
        [str(ruff), "check", "--no-cache", "bench"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # and the default root itself can never be imported as a package
    assert not default_dataset_root().parent.name.isidentifier()
