"""The examples in the rollout docstrings run, so they stay true."""

import doctest
import importlib

import pytest

MODULES = [
    "prm_factory.rollouts.first_error",
    "prm_factory.rollouts.strategies.base",
    "prm_factory.rollouts.strategies",
    "prm_factory.rollouts.strategies.exhaustive",
    "prm_factory.rollouts.strategies.binary_search",
    "prm_factory.rollouts.strategies.adaptive",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
