"""The examples in the docstrings of the label rules run, so they stay true."""

import doctest
import importlib

import pytest

MODULES = [
    "prm_factory.audit.allocation",
    "prm_factory.audit.context",
    "prm_factory.audit.estimate",
    "prm_factory.audit.human",
    "prm_factory.audit.server",
    "prm_factory.audit.sources",
    "prm_factory.audit.store",
    "prm_factory.evaluation.processbench",
    "prm_factory.labels.consensus",
    "prm_factory.labels.judge",
    "prm_factory.labels.reference",
    "prm_factory.summary",
    "prm_factory.sampling.cpu_host",
    "prm_factory.sampling.vllm_sampler",
    "prm_factory.sampling.vllm_server",
    "prm_factory.config.engine_args",
    "prm_factory.schemas.external_chains",
    "prm_factory.schemas.rejected",
    "prm_factory.verifiers.identity",
    "prm_factory.verifiers.protocol",
    "prm_factory.verifiers.math.assertion",
    "prm_factory.verifiers.math.certainty",
    "prm_factory.verifiers.math.claim_grammar",
    "prm_factory.verifiers.math.claims",
    "prm_factory.verifiers.math.competition",
    "prm_factory.verifiers.math.equation_steps",
    "prm_factory.verifiers.math.numbers",
    "prm_factory.verifiers.math.other_readings",
    "prm_factory.verifiers.math.solution_sets",
    "prm_factory.verifiers.math.symbolic",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
