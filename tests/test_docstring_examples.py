"""The examples in the docstrings of the label rules run, so they stay true."""

import doctest
import importlib

import pytest

MODULES = [
    "evaluation.processbench",
    "labels.consensus",
    "labels.judge",
    "labels.reference",
    "prm_factory.summary",
    "sampling.cpu_host",
    "sampling.vllm_sampler",
    "sampling.vllm_server",
    "config.engine_args",
    "schemas.external_chains",
    "schemas.rejected",
    "verifiers.identity",
    "verifiers.protocol",
    "verifiers.math.claims",
    "verifiers.math.numbers",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
