"""What a run promises about drawing the same tokens again (sampling/reproducibility.py), per backend and
device, and how the promise reaches the runs row. The engine's own behaviour is tests/e2e/test_shards.py."""

from __future__ import annotations

import doctest

import pytest

from prm_factory.sampling import reproducibility
from prm_factory.sampling.reproducibility import BATCH_INVARIANT_ENV, batch_invariant_choice, decide
from prm_factory.sampling.vllm_sampler import EngineSettings, engine_choice, engine_record, numerics_record


def test_the_docstring_examples_hold() -> None:
    assert doctest.testmod(reproducibility).failed == 0


@pytest.mark.parametrize(
    ("backend", "seed_mode", "invariant", "mode"),
    [
        ("openai", "request", False, "none"),  # servers batch every client's requests by arrival
        ("openai", "request", True, "none"),
        ("vllm", "engine", False, "none"),  # seeded once at start: every draw depends on the calls before
        ("vllm", "request", False, "fixed-batch"),
        ("vllm", "request", True, "batch-invariant"),
    ],
)
def test_the_promise_per_backend_seeding_and_kernels(backend, seed_mode, invariant, mode) -> None:
    promise = decide(backend=backend, seed_mode=seed_mode, batch_invariant=invariant, numerics={"dtype": "x"})
    assert promise.mode == mode and promise.reason
    assert promise.as_record()["mode"] == mode


@pytest.mark.parametrize(
    ("requested", "capability", "environ", "on"),
    [
        ("auto", None, {}, False),  # the CPU build has no batch-invariant kernels
        ("auto", (7, 5), {}, False),  # Turing: none in vLLM 0.32
        ("auto", (8, 0), {}, True),
        ("auto", (9, 0), {}, True),
        ("off", (9, 0), {}, False),
        ("on", (8, 6), {}, True),
        ("auto", (9, 0), {BATCH_INVARIANT_ENV: "0"}, False),  # the user's variable wins
        ("off", (9, 0), {BATCH_INVARIANT_ENV: "1"}, True),
        ("auto", None, {BATCH_INVARIANT_ENV: "1"}, False),  # asked for, but nothing here to turn on
    ],
)
def test_batch_invariant_kernels_are_turned_on_where_vllm_has_them(
    requested, capability, environ, on
) -> None:
    chosen, reason = batch_invariant_choice(requested, capability=capability, environ=environ)
    assert chosen is on and reason


@pytest.mark.parametrize("capability", [None, (7, 0)])
def test_asking_for_batch_invariance_where_there_is_none_fails_in_one_line(capability) -> None:
    with pytest.raises(ValueError, match="compute capability 8.0") as error:
        batch_invariant_choice("on", capability=capability, environ={})
    assert "\n" not in str(error.value)


def test_a_cpu_engine_records_fixed_batch_with_the_numerics_it_needs(monkeypatch) -> None:
    monkeypatch.delenv(BATCH_INVARIANT_ENV, raising=False)
    settings = EngineSettings("ckpt", "model", dtype="float32")
    record = engine_record(settings)["reproducibility"]
    assert record["mode"] == "fixed-batch"
    numerics = record["numerics"]
    assert numerics["device"] == "cpu" and numerics["dtype"] == "float32"
    assert {"cpu_flags", "threads_bind", "usable_cpus", "vllm", "torch", "enforce_eager"} <= set(numerics)
    # the same settings on the same host give the same numerics: what two runs compare
    assert numerics == numerics_record(settings, engine_choice(settings), cpu=True)


def test_chunked_prefill_on_a_cpu_engine_promises_nothing(monkeypatch) -> None:
    monkeypatch.delenv(BATCH_INVARIANT_ENV, raising=False)
    settings = EngineSettings("ckpt", "model", engine_args=(("enable_chunked_prefill", "true"),))
    assert engine_record(settings)["reproducibility"]["mode"] == "none"


def test_a_run_on_servers_records_none() -> None:
    settings = EngineSettings("ckpt", "model", backend="openai", base_urls=("http://x",), request_seeds=True)
    assert engine_record(settings)["reproducibility"]["mode"] == "none"
