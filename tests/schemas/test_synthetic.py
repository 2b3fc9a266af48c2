"""Synthetic problems: deterministic by seed, exact step truth, knobs honoured, GSM8K-readable solutions."""

from __future__ import annotations

import dataclasses
import re
from fractions import Fraction

import pytest

from prm_factory.schemas.gsm8k import gsm8k_reference, gsm8k_solution_steps
from prm_factory.schemas.synthetic import (
    SyntheticSpec,
    SyntheticSpecError,
    generate,
    rebuild,
    synthetic_problem,
)

_ANNOTATION = re.compile(r"<<(\d+)([-+*/])(\d+)=(\d+)>>(\d+)")
_NUMBER = re.compile(r"\d+")


def _evaluate(left: int, operation: str, right: int) -> Fraction:
    a, b = Fraction(left), Fraction(right)
    return {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[operation]


def test_same_seed_and_knobs_give_the_same_problems_and_ids() -> None:
    spec = SyntheticSpec(seed=11, steps=3, distractors=2)
    assert generate(spec, limit=5) == generate(SyntheticSpec(seed=11, steps=3, distractors=2), limit=5)
    assert generate(spec, offset=2, limit=3) == generate(spec, limit=5)[2:]
    other_seed = generate(dataclasses.replace(spec, seed=12), limit=5)
    assert {p.problem.problem_id for p in other_seed}.isdisjoint(
        p.problem.problem_id for p in generate(spec, limit=5)
    )
    ids = [p.problem.problem_id for p in generate(spec, limit=50)]
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize("steps", [1, 2, 4, 7])
def test_every_step_is_exact_and_chains_from_the_previous_value(steps: int) -> None:
    for synthetic in generate(SyntheticSpec(seed=steps, steps=steps), limit=40):
        problem = synthetic.problem
        assert problem.source == "synthetic" and problem.domain == "math"
        assert len(synthetic.steps) == len(synthetic.intermediate_values) == steps
        value = synthetic.start_value
        assert f" {value} " in problem.text.split(".")[0] + " "  # the first sentence states the start amount
        for step in synthetic.steps:
            assert step.left == value
            exact = _evaluate(step.left, step.operation, step.right)
            assert exact.denominator == 1 and exact == step.value and step.value >= 1
            value = step.value
        assert problem.reference_answer == str(synthetic.intermediate_values[-1])


def test_reference_solution_is_gsm8k_style_with_true_annotations() -> None:
    for synthetic in generate(SyntheticSpec(seed=5, steps=3, distractors=1), limit=30):
        solution = synthetic.problem.reference_solution or ""
        assert gsm8k_reference(solution) == synthetic.problem.reference_answer
        lines = solution.splitlines()
        assert len(lines) == 4 and lines[-1] == f"#### {synthetic.problem.reference_answer}"
        for line, step, truth in zip(lines, synthetic.steps, synthetic.intermediate_values, strict=False):
            (left, operation, right, annotated, shown), *rest = _ANNOTATION.findall(line)
            assert not rest
            assert _evaluate(int(left), operation, int(right)) == int(annotated) == int(shown) == truth
            assert step.expression == f"{left}{operation}{right}"
        assert len(gsm8k_solution_steps(solution)) == 3


def test_knobs_bound_operations_numbers_and_distractors() -> None:
    spec = SyntheticSpec(
        seed=2, steps=3, min_value=5, max_value=9, operations="+-", distractors=2, max_result=60
    )
    for synthetic in generate(spec, limit=40):
        assert {step.operation for step in synthetic.steps} <= {"+", "-"}
        assert 5 <= synthetic.start_value <= 9
        assert all(5 <= step.right <= 9 for step in synthetic.steps)
        assert all(1 <= value <= 60 for value in synthetic.intermediate_values)
        assert len(synthetic.distractor_values) == 2
        text_numbers = [int(n) for n in _NUMBER.findall(synthetic.problem.text)]
        # start, one operand per step, one number per distractor fact: nothing else is numeric
        assert len(text_numbers) == 1 + 3 + 2
        assert sorted(text_numbers) == sorted(
            [synthetic.start_value, *(s.right for s in synthetic.steps), *synthetic.distractor_values]
        )
    factors = SyntheticSpec(seed=4, steps=2, operations="*/", max_factor=3, max_result=500)
    for synthetic in generate(factors, limit=40):
        assert all(step.operation in "*/" and 2 <= step.right <= 3 for step in synthetic.steps)
    plain = generate(SyntheticSpec(seed=2, steps=2, distractors=0), limit=10)
    assert all(len(_NUMBER.findall(p.problem.text)) == 3 for p in plain)


def test_rebuild_recovers_the_step_truth_from_a_stored_row() -> None:
    synthetic = synthetic_problem(SyntheticSpec(seed=8, steps=4, operations="+-*", distractors=1), 17)
    assert synthetic.problem.source_line == 18
    assert rebuild(synthetic.problem) == synthetic
    tampered = dataclasses.replace(synthetic.problem, problem_id="0" * 32)
    with pytest.raises(SyntheticSpecError, match="does not match"):
        rebuild(tampered)
    with pytest.raises(SyntheticSpecError, match="generator v1"):
        rebuild(dataclasses.replace(synthetic.problem, source_file="synthetic/v0?seed=8"))


@pytest.mark.parametrize(
    "knobs, message",
    [
        ({"steps": 0}, "steps"),
        ({"min_value": 9, "max_value": 3}, "min_value"),
        ({"operations": "+%"}, "operations"),
        ({"operations": ""}, "operations"),
        ({"max_factor": 1}, "max_factor"),
        ({"max_value": 50, "max_result": 10}, "max_result"),
    ],
)
def test_bad_knobs_fail_loudly(knobs: dict, message: str) -> None:
    with pytest.raises(SyntheticSpecError, match=message):
        SyntheticSpec(**knobs)


def test_unsatisfiable_knobs_fail_instead_of_bending_the_rules() -> None:
    # only subtraction, operands at least 10, from a start of at most 10: no step can stay positive
    with pytest.raises(SyntheticSpecError, match="no problem satisfies"):
        synthetic_problem(SyntheticSpec(steps=1, min_value=10, max_value=10, operations="-"), 0)


def test_module_docstring_example_holds() -> None:
    import doctest

    from prm_factory.schemas import synthetic

    result = doctest.testmod(synthetic)
    assert result.attempted > 0 and result.failed == 0
