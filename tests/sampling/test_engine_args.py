"""Engine arguments from the config: checked at load against vLLM's own fields, passed to the engine."""

from __future__ import annotations

import json

import pytest

from prm_factory.config.engine_args import vllm_engine_arg_names
from prm_factory.config.run_config import ConfigError, load_config
from prm_factory.flows.engines import engine_settings
from prm_factory.sampling.vllm_sampler import EngineSettings, engine_kwargs, engine_record
from prm_factory.sampling.vllm_server import VLLMServer


def test_the_installed_vllm_names_its_engine_arguments() -> None:
    names = vllm_engine_arg_names()
    assert names is not None and {"max_num_seqs", "tensor_parallel_size", "kv_cache_dtype"} <= names


def test_a_misspelt_engine_argument_fails_at_load_with_its_name() -> None:
    with pytest.raises(ConfigError, match=r"engine_args\.max_num_seq: not an engine argument"):
        load_config(None, {"model.engine_args": {"max_num_seq": 8}})


def test_an_argument_with_a_model_field_must_be_set_there() -> None:
    with pytest.raises(ConfigError, match="set model.tensor_parallel_size instead"):
        load_config(None, {"model.engine_args": {"tensor_parallel_size": 2}})


def test_parallelism_batching_and_pass_through_reach_the_engine_kwargs(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr("prm_factory.flows.engines.resolve_model", lambda path: (tmp_path, "m"))
    config = load_config(
        None,
        {
            "model.backend": "openai",  # data parallelism needs servers (see the next test)
            "model.base_urls": ["http://gpu1:8000"],
            "model.tensor_parallel_size": 4,
            "model.data_parallel_size": 2,
            "model.max_num_seqs": 64,
            "model.quantization": "awq",
            "model.engine_args": {"kv_cache_dtype": "fp8", "enable_chunked_prefill": False},
        },
    )
    kwargs = engine_kwargs(engine_settings(config))
    assert kwargs == {
        "tensor_parallel_size": 4,
        "data_parallel_size": 2,
        "quantization": "awq",
        "max_num_seqs": 64,
        "kv_cache_dtype": "fp8",
        "enable_chunked_prefill": False,
    }


def test_data_parallelism_in_the_in_process_engine_fails_at_load_naming_what_works() -> None:
    with pytest.raises(ConfigError, match=r"data_parallel_size = 2 needs a server.*--shards N.*vllm serve"):
        load_config(None, {"model.data_parallel_size": 2})
    servers = {"model.backend": "openai", "model.base_urls": ["http://gpu1:8000"]}
    assert load_config(None, {"model.data_parallel_size": 2, **servers}).model.data_parallel_size == 2


def test_defaults_pass_nothing_so_vllm_defaults_hold() -> None:
    assert engine_kwargs(EngineSettings(checkpoint="c", model_id="m")) == {}


def test_the_run_record_names_seeding_and_engine_args() -> None:
    settings = EngineSettings(checkpoint="c", model_id="m", max_num_seqs=8, engine_args=(("swap", "1"),))
    record = engine_record(settings)
    assert record["seed_mode"] == "request"  # the CPU build too, with chunked prefill off (test_seeding.py)
    assert record["engine_args"] == {"max_num_seqs": 8, "swap": 1, "enable_chunked_prefill": False}
    assert record["dtype"] in ("float32", "bfloat16")
    assert "largest logits" in record["cpu_top_p"]  # the plugin's top-p (tests/sampling/test_cpu_top_p.py)
    json.dumps(record)  # the runs table stores it as JSON


def test_a_server_we_start_gets_the_same_arguments_and_host_dtype() -> None:
    server = VLLMServer("ckpt", served_model_name="s", engine_args={"max_num_seqs": 16})
    command = server.command()
    assert command[command.index("--max-num-seqs") + 1] == "16"
    assert command[command.index("--dtype") + 1] == server.host_choice.dtype != "auto"


def test_engine_process_from_the_config_reaches_the_engine_settings(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr("prm_factory.flows.engines.resolve_model", lambda path: (tmp_path, "m"))
    assert engine_settings(load_config(None, {})).engine_process == "auto"
    inline = engine_settings(load_config(None, {"model.engine_process": "inline"}))
    assert inline.engine_process == "inline"
    assert engine_record(inline)["engine_process"] == "inline"


def test_request_seeds_are_for_the_server_backend_and_recorded(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr("prm_factory.flows.engines.resolve_model", lambda path: (tmp_path, "m"))
    with pytest.raises(ConfigError, match="request_seeds is for backend = openai"):
        load_config(None, {"model.request_seeds": True})
    fleet = {"model.backend": "openai", "model.base_urls": ["http://gpu1:8000"]}
    seeded = engine_settings(load_config(None, {**fleet, "model.request_seeds": True}))
    assert seeded.request_seeds and engine_record(seeded)["seed_mode"] == "request"
    assert engine_record(engine_settings(load_config(None, fleet)))["seed_mode"] == "engine"
