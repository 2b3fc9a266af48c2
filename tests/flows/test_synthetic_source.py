"""`problems.source = "synthetic"`: the run config's knobs reach the generator through the math domain."""

from __future__ import annotations

import pytest

from prm_factory.config.run_config import ConfigError, load_config
from prm_factory.flows.domains import domain_for
from prm_factory.flows.preflight import config_problems
from prm_factory.schemas.synthetic import SyntheticSpec, generate, rebuild

KNOBS = {
    "problems.source": "synthetic",
    "problems.offset": 3,
    "problems.limit": 5,
    "problems.synthetic.seed": 9,
    "problems.synthetic.steps": 3,
    "problems.synthetic.operations": "+-",
    "problems.synthetic.distractors": 1,
}


def test_run_config_loads_the_spec_slice() -> None:
    config = load_config(None, KNOBS)
    domain = domain_for(config)
    assert domain.name == "math"
    problems, rejected = domain.load(config, config.problems.limit)
    spec = SyntheticSpec(seed=9, steps=3, operations="+-", distractors=1)
    assert rejected == []
    assert problems == [p.problem for p in generate(spec, offset=3, limit=5)]
    assert all(len(rebuild(p).intermediate_values) == 3 for p in problems)
    assert config_problems(config) == []  # no problem file to find


def test_the_pool_is_finite_for_skip_labeled() -> None:
    config = load_config(None, {**KNOBS, "problems.synthetic.count": 12})
    problems, _ = domain_for(config).load(config, None)  # skip_labeled reads every candidate
    assert [p.source_line for p in problems] == list(range(4, 13))


@pytest.mark.parametrize(
    "override",
    [
        {"problems.synthetic.operations": "+x"},
        {"problems.synthetic.min_value": 30, "problems.synthetic.max_value": 10},
        {"problems.synthetic.steps": 0},
        {"problems.synthetic.colour": "red"},
    ],
)
def test_bad_knobs_are_config_errors(override: dict) -> None:
    with pytest.raises(ConfigError, match="synthetic"):
        load_config(None, {**KNOBS, **override})
