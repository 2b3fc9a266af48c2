"""`prm-factory model ...` as its own group (prm_factory.commands.model), out of prm_factory/cli.py."""

from __future__ import annotations

from pathlib import Path

from typer.main import get_command
from typer.testing import CliRunner

from prm_factory.commands import model


def test_the_group_holds_prepare_and_warm(command_app) -> None:
    group = get_command(command_app(model.register))
    assert set(group.commands["model"].commands) == {"prepare", "warm"}


def test_warm_refuses_a_server_backend_and_a_broken_config(command_app, tmp_path: Path) -> None:
    app = command_app(model.register)
    served = tmp_path / "served.toml"
    served.write_text('[model]\nbackend = "openai"\nbase_urls = ["http://127.0.0.1:1/v1"]\n')
    result = CliRunner().invoke(app, ["model", "warm", "--config", str(served)])
    assert result.exit_code == 2, result.output
    assert "model.backend is not vllm" in " ".join(result.output.split())
    broken = tmp_path / "broken.toml"
    broken.write_text("[model\n")
    result = CliRunner().invoke(app, ["model", "warm", "-c", str(broken)])
    assert result.exit_code == 2 and "error:" in result.output and "model.backend" not in result.output


def test_the_warm_stamp_lies_in_the_compile_cache_and_names_the_environment() -> None:
    """Another clone's .venv compiles the model again (the cache checks source paths), so its stamp differs;
    the stamp lies in the compile cache's folder, so a cleared cache takes it along."""
    args = ({"dtype": "float32", "threads": "all"}, {"torch": "2.13.0"})
    stamp = model.warm_stamp(Path("/cache"), "settings", *args, "/a/.venv")
    assert stamp.parent == Path("/cache/prm-factory-warm")
    assert stamp == model.warm_stamp(Path("/cache"), "settings", *args, "/a/.venv")
    assert stamp != model.warm_stamp(Path("/cache"), "settings", *args, "/b/.venv")
    assert stamp != model.warm_stamp(Path("/cache"), "other settings", *args, "/a/.venv")


def test_warm_starts_no_engine_where_the_engine_runs_eagerly(
    command_app, tmp_path: Path, monkeypatch
) -> None:
    """An eager engine compiles nothing, so `setup.sh`'s warm-up has nothing to do there."""
    from prm_factory.sampling import vllm_sampler

    def no_engine(*args: object, **kwargs: object) -> None:
        raise AssertionError("an engine was started")

    monkeypatch.setattr(vllm_sampler, "VLLMSampler", no_engine)
    eager = tmp_path / "eager.toml"
    eager.write_text("[model]\nenforce_eager = true\n")
    result = CliRunner().invoke(command_app(model.register), ["model", "warm", "--config", str(eager)])
    assert result.exit_code == 0, result.output
    assert "nothing to compile" in " ".join(result.output.split())
