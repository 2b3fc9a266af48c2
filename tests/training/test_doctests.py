"""The examples in training's docstrings run, so they stay true."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "name",
    ["prm_factory.training.rows", "prm_factory.training.step_metrics", "prm_factory.training.chain_source"],
)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
