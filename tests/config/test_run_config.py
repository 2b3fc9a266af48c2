import re
from pathlib import Path

import pytest

from prm_factory.config.run_config import ConfigError, RunConfig, load_config


def test_defaults_are_the_embedded_demo() -> None:
    cfg = load_config(None)
    assert cfg.model.path is None
    assert str(cfg.problems.resolved_path()).endswith("gsm8k/train.jsonl")
    assert (
        load_config(None, {"problems.source": "code"}).problems.resolved_path().name
        == "humaneval_style.jsonl"
    )
    assert cfg.rollouts.strategy == "exhaustive"


def test_overrides_and_hashes(tmp_path: Path) -> None:
    file = tmp_path / "run.toml"
    file.write_text('[rollouts]\nk = 8\n[dataset]\nroot = "/tmp/x"\n')
    cfg = load_config(file, {"sampling.n": 2})
    assert cfg.rollouts.k == 8 and cfg.sampling.n == 2 and str(cfg.dataset_root()) == "/tmp/x"
    assert cfg.config_hash() != RunConfig().config_hash()
    moved = load_config(file, {"sampling.n": 2, "dataset.root": "/tmp/y"})
    assert moved.label_config_hash() == cfg.label_config_hash()  # where data goes does not change labels
    assert moved.config_hash() != cfg.config_hash()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[rollouts]\nk = 0\n", "field rollouts.k"),
        ("[sampling]\nbogus = 1\n", "field sampling.bogus"),
        ("[rollouts\n", "not valid TOML"),
    ],
)
def test_bad_config_gives_one_clear_line(tmp_path: Path, text: str, message: str) -> None:
    file = tmp_path / "bad.toml"
    file.write_text(text)
    with pytest.raises(ConfigError, match=message) as info:
        load_config(file)
    assert str(file) in str(info.value) and "\n" not in str(info.value)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "none.toml")


def test_shipped_default_config_matches_the_built_in_defaults() -> None:
    shipped = Path(__file__).resolve().parents[2] / "configs" / "default.toml"
    assert load_config(shipped).model_dump() == RunConfig().model_dump()


def test_environment_overrides_sit_between_the_file_and_set(tmp_path: Path, monkeypatch) -> None:
    file = tmp_path / "run.toml"
    file.write_text("[sampling]\nn = 2\ntemperature = 0.5\n")
    monkeypatch.setenv("PRM_FACTORY_SAMPLING__N", "8")
    monkeypatch.setenv("prm_factory_rollouts__k", "3")  # names match in any case
    monkeypatch.setenv("PRM_FACTORY_JUDGE__BASE_URLS", '["http://a:8000", "http://b:8000"]')  # JSON for lists
    monkeypatch.setenv("PRM_FACTORY_DATASET", "/tmp/elsewhere")  # the dataset root default, not a field
    cfg = load_config(file)
    assert (cfg.sampling.n, cfg.sampling.temperature, cfg.rollouts.k) == (8, 0.5, 3)
    assert cfg.judge.base_urls == ["http://a:8000", "http://b:8000"]
    assert str(cfg.dataset_root()) == "/tmp/elsewhere"
    assert load_config(file, {"sampling.n": 16}).sampling.n == 16  # --set wins


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("PRM_FACTORY_SAMPLING__N", "0", "field sampling.n (from PRM_FACTORY_SAMPLING__N): Input should be"),
        (
            "PRM_FACTORY_SAMPLING__BOGUS",
            "1",
            "field sampling.bogus (from PRM_FACTORY_SAMPLING__BOGUS): Extra",
        ),
        (
            "PRM_FACTORY_JUDGE__BASE_URLS",
            "http://a",
            "environment (PRM_FACTORY_JUDGE__BASE_URLS): error parsing",
        ),
    ],
)
def test_a_bad_environment_override_names_its_variable(
    monkeypatch, name: str, value: str, message: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=re.escape(message)) as info:
        load_config(None)
    assert "\n" not in str(info.value)


def test_cli_overrides_fail_with_the_field_named(monkeypatch) -> None:
    from typer.testing import CliRunner

    from prm_factory.cli import app

    runner = CliRunner()
    bad_set = runner.invoke(app, ["run", "--set", "sampling.n=0"])
    assert bad_set.exit_code == 2 and "config: field sampling.n: Input should be" in bad_set.output
    typo = runner.invoke(app, ["run", "--set", "sampling.bogus=1"])
    assert typo.exit_code == 2 and "field sampling.bogus: Extra inputs" in typo.output
    monkeypatch.setenv("PRM_FACTORY_ROLLOUTS__K", "0")
    from_env = runner.invoke(app, ["run"])
    assert from_env.exit_code == 2 and "field rollouts.k (from PRM_FACTORY_ROLLOUTS__K)" in from_env.output


def test_server_urls_given_with_v1_are_read_as_the_server_root() -> None:
    """OpenAI clients are usually handed `.../v1`; the samplers add `/v1` themselves."""
    cfg = load_config(
        None,
        {
            "model.backend": "openai",
            "model.base_urls": ["http://gpu1:8000/v1", "http://gpu2:8000/"],
            "judge.base_urls": ["http://judge:8000/v1/"],
        },
    )
    assert cfg.model.base_urls == ("http://gpu1:8000", "http://gpu2:8000")
    assert cfg.judge.base_urls == ["http://judge:8000"]
    assert load_config(None, {"model.base_urls": ["http://h:1/v10"]}).model.base_urls == ("http://h:1/v10",)


def test_where_the_engine_runs_leaves_the_label_hash_as_it_was() -> None:
    """Inline and separate engines write the same rows (docs/engine.md), so `engine_process` decides no label:
    every value hashes as the default did before `auto` (read at ef3cdcc), and default datasets written then
    keep their step ids."""
    hashes = {
        v: load_config(None, {"model.engine_process": v}).label_config_hash()
        for v in ("auto", "separate", "inline")
    }
    assert set(hashes.values()) == {"8455bd6f048e62ba"}, hashes
    assert load_config(None, {"model.engine_process": "inline"}).config_hash() != RunConfig().config_hash()
