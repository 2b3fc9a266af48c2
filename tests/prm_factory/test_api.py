"""The public Python API (prm_factory/__init__.py, prm_factory/api.py): what `__all__` names loads lazily,
each function is typed and documented, works on a committed dataset, fails with the API's own errors, and
the CLI commands go through it."""

from __future__ import annotations

import ast
import doctest
import inspect
import json
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from typer.testing import CliRunner

import prm_factory
from prm_factory import api
from prm_factory.storage.dataset import Dataset
from tests.storage_fixtures import run_factory  # noqa: F401 (a fixture)

FUNCTIONS = [name for name in prm_factory.__all__ if name[0].islower()]


@pytest.fixture
def dataset(tmp_path, run_factory) -> Dataset:  # noqa: F811 (the fixture above)
    data = Dataset(str(tmp_path / "ds"))
    data.commit_run(*run_factory("a", n_problems=1).args())
    data.commit_run(*run_factory("b", n_problems=1, problem_offset=5, source="math").args())
    return data


def _type_names() -> dict[str, object]:
    """The names api.py imports only for type checkers: its `if TYPE_CHECKING:` block, run."""
    tree = ast.parse(Path(api.__file__).read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    names: dict[str, object] = {}
    exec(compile(ast.Module(block.body, []), api.__file__, "exec"), names)
    return names


def test_import_is_light_and_every_public_name_loads() -> None:
    code = (
        "import sys, prm_factory\n"
        "heavy = [m for m in ('torch', 'vllm', 'prefect', 'duckdb', 'transformers') if m in sys.modules]\n"
        "names = [n for n in prm_factory.__all__ if getattr(prm_factory, n) is None]\n"
        "print(heavy, names)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] []"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'runn'"):
        prm_factory.runn  # noqa: B018


@pytest.mark.parametrize("name", FUNCTIONS)
def test_every_function_is_exported_typed_and_documented_with_an_example(name: str) -> None:
    function = getattr(prm_factory, name)
    assert function is getattr(api, name)
    assert name in prm_factory.__all__
    signature = inspect.signature(function)
    assert signature.return_annotation is not inspect.Signature.empty
    assert all(p.annotation is not inspect.Parameter.empty for p in signature.parameters.values())
    assert ">>> " in (function.__doc__ or "")
    typing.get_type_hints(function, vars(api) | _type_names())  # every annotation names a real type


def test_the_runnable_examples_pass() -> None:
    result = doctest.testmod(api)
    assert result.failed == 0 and result.attempted >= 1


def test_load_config_applies_overrides_and_names_a_missing_file(tmp_path: Path) -> None:
    assert prm_factory.load_config(None, {"rollouts.k": 3}).rollouts.k == 3
    with pytest.raises(prm_factory.ConfigError, match="config file not found"):
        prm_factory.load_config(tmp_path / "missing.toml")


def test_label_refuses_a_missing_input_before_anything_starts(tmp_path: Path) -> None:
    config = prm_factory.load_config(None, {"dataset.root": str(tmp_path / "ds")})
    with pytest.raises(prm_factory.ConfigError, match="input not found"):
        prm_factory.label(tmp_path / "none.jsonl", config)
    assert not (tmp_path / "ds").exists()


def test_versions_query_export_and_feed_read_a_committed_dataset(dataset: Dataset, tmp_path: Path) -> None:
    numbers = [v.version for v in prm_factory.versions(dataset.root)]
    assert numbers == sorted(numbers) and numbers[-1] == dataset.latest_version() and len(numbers) >= 2
    counts = prm_factory.query(dataset.root, "SELECT count(*) AS n FROM steps", version=1)
    assert counts.column("n")[0].as_py() > 0
    out = tmp_path / "trl.jsonl"
    table = prm_factory.export(dataset.root, "trl", version=1, label="hard", output=out)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == table.num_rows > 0
    assert sorted(row["labels"] for row in lines) == [[True, False, False], [True, True]]
    rows = sum(len(batch["chain_id"]) for batch in prm_factory.feed(dataset.root, columns=["chain_id"]))
    assert rows == prm_factory.query(dataset.root, "SELECT count(*) AS n FROM steps").column("n")[0].as_py()


def test_a_bad_query_is_a_storage_error(dataset: Dataset) -> None:
    with pytest.raises(prm_factory.StorageError):
        prm_factory.query(dataset.root, "SELECT nope FROM steps")


def test_the_cli_calls_the_api(dataset: Dataset, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`query` and `export` reach prm_factory.api: a stand-in there sees the call."""
    from prm_factory.cli import app

    calls: list[str] = []
    real_query, real_export = api.query, api.export
    monkeypatch.setattr(api, "query", lambda *a, **k: calls.append("query") or real_query(*a, **k))
    monkeypatch.setattr(api, "export", lambda *a, **k: calls.append("export") or real_export(*a, **k))
    runner = CliRunner()
    result = runner.invoke(app, ["query", "SELECT 1 AS one", "--dataset", dataset.root])
    assert result.exit_code == 0, result.output
    out = tmp_path / "x.jsonl"
    result = runner.invoke(app, ["export", "steps", "--output", str(out), "--dataset", dataset.root])
    assert result.exit_code == 0, result.output
    assert calls == ["query", "export"]


def test_train_refuses_a_wrong_call_before_loading_anything(dataset: Dataset, tmp_path: Path) -> None:
    with pytest.raises(prm_factory.ConfigError, match="unknown training settings"):
        prm_factory.train(tmp_path / "out", dataset=dataset.root, base_model="m", epoch=2)
    with pytest.raises(prm_factory.ConfigError, match="export_file is read as it is"):
        prm_factory.train(tmp_path / "out", dataset=dataset.root, export_file="x.jsonl", base_model="m")
    with pytest.raises(prm_factory.ConfigError, match="nothing to train on"):
        empty = tmp_path / "empty.jsonl"
        empty.write_text("")
        prm_factory.train(tmp_path / "out", export_file=empty, base_model="m")
    with pytest.raises(prm_factory.StorageError):
        prm_factory.train(tmp_path / "out", dataset=dataset.root, version=99, base_model="m")
    assert not (tmp_path / "out").exists()


def test_the_train_command_calls_the_api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A stand-in for api.train sees the CLI's options as its arguments (the real training runs through
    the same function in tests/training/test_commands.py and tests/e2e/test_prm_train.py)."""
    from types import SimpleNamespace

    from prm_factory.cli import app

    seen: dict[str, object] = {}

    def stand_in(output_dir: Path, **kwargs: object) -> SimpleNamespace:
        seen.update(kwargs, output_dir=output_dir)
        return SimpleNamespace(main_process=False)

    monkeypatch.setattr(api, "train", stand_in)
    args = ["train", "-o", str(tmp_path / "out"), "--dataset", "ds", "--label", "mc", "--soft"]
    result = CliRunner().invoke(app, [*args, "--max-steps", "3", "--model", "m"])
    assert result.exit_code == 0, result.output
    assert (seen["output_dir"], seen["dataset"], seen["label"], seen["soft"]) == (
        tmp_path / "out",
        Path("ds"),
        "mc",
        True,
    )
    assert (seen["max_steps"], seen["base_model"], seen["export_file"]) == (3, Path("m"), None)


def _as_is(row: object) -> object:
    return row


def test_training_rows_are_a_torch_dataset_of_the_rows_train_reads(dataset: Dataset) -> None:
    from torch.utils.data import DataLoader, IterableDataset

    from prm_factory.training.rows import rows_from_dataset

    rows = prm_factory.training_rows(dataset.root, "verifier")
    assert isinstance(rows, IterableDataset)
    expected = rows_from_dataset(dataset, dataset.latest_version(), "verifier")
    assert expected and sorted(r.chain_id for r in rows) == sorted(r.chain_id for r in expected)
    loaded = list(
        DataLoader(rows, batch_size=None, num_workers=2, collate_fn=_as_is, multiprocessing_context="spawn")
    )
    assert sorted(r.chain_id for r in loaded) == sorted(r.chain_id for r in expected)


def test_a_version_tag_works_wherever_a_version_number_does(dataset: Dataset) -> None:
    from prm_factory.storage.versions import set_tag

    set_tag(dataset, "v60", 1)
    by_tag = api.query(dataset, "SELECT count(*) AS n FROM steps", version="v60")
    by_number = api.query(dataset, "SELECT count(*) AS n FROM steps", version=1)
    assert by_tag.to_pylist() == by_number.to_pylist()
    assert api.query(dataset, "SELECT 1 AS one", version="1").to_pylist() == [{"one": 1}]
    for wrong in ("nosuch", 2.5, True, [1]):
        with pytest.raises(prm_factory.StorageError):
            api.query(dataset, "SELECT 1", version=wrong)


def test_a_missing_dataset_is_a_storage_error_not_none(tmp_path: Path) -> None:
    with pytest.raises(prm_factory.StorageError, match="no dataset"):
        api.open_dataset(tmp_path / "missing")


def test_relabel_names_an_unknown_source_as_a_config_error_before_prefect(dataset: Dataset) -> None:
    config = api.load_config(None, {"dataset.root": dataset.root})
    with pytest.raises(prm_factory.ConfigError, match="no label source 'nosuch'"):
        api.relabel(config, sources=("nosuch",))
    with pytest.raises(prm_factory.ConfigError, match="no label source 'lengthy'"):
        api.relabel(config, sources="lengthy")  # one name, not one source per letter


def test_the_api_applies_the_runtime_defaults_for_the_call_only(monkeypatch, tmp_path: Path) -> None:
    import os

    from prm_factory.config.runtime import RUNTIME_DEFAULTS

    for key in RUNTIME_DEFAULTS:
        monkeypatch.delenv(key, raising=False)
    seen = {}

    def label_external(*args, **kwargs):
        seen.update({key: os.environ.get(key) for key in RUNTIME_DEFAULTS})
        return "labelled"

    monkeypatch.setattr("prm_factory.flows.label_run.label_external", label_external)
    chains = tmp_path / "chains.jsonl"
    chains.write_text("{}\n")
    assert api.label(chains, api.load_config(None, {"dataset.root": str(tmp_path / "ds")})) == "labelled"
    assert seen == RUNTIME_DEFAULTS  # Prefect's telemetry off during the call ("database is locked")
    assert not any(key in os.environ for key in RUNTIME_DEFAULTS)  # and the caller's process as it was


def test_an_export_label_naming_no_module_is_a_storage_error(dataset: Dataset) -> None:
    # found by bench/bench_fuzz.py: `export --label a:b` raised a bare RegistryError
    with pytest.raises(prm_factory.StorageError, match="'a:b' cannot be loaded"):
        api.export(dataset, "trl", label="a:b")
