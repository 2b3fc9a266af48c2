"""Step-claim checking: is every piece of arithmetic a step writes down true?

`check_steps` walks the steps in order, carrying the variable values they set (`x = 12`, or `x` solved
from `3x = 36`) into later steps. Each claim is judged on its own arithmetic, never against the
reference answer, so a step that computes correctly from an earlier wrong number is still `correct`
and the first error stays where the arithmetic first broke:

>>> [v.label for v in check_steps(["48/2 = 25", "25 + 48 = 73", "The end."])]
['incorrect', 'correct', 'unverifiable']

Plain arithmetic is checked here, exactly and in microseconds (see `arithmetic`). Runs with LaTeX the
fast path cannot evaluate are sent, in one batch per chain, to the bounded worker (`latex_claims`),
where a time-out makes that step's hard claims unverifiable instead of hanging the caller.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from verifiers.math.arithmetic import (
    Linear,
    NotEvaluable,
    TooLarge,
    bare_literal,
    evaluate,
    has_percent,
    leading_literal,
    parse_side,
)
from verifiers.math.claim_extraction import Run, extract_runs
from verifiers.math.numbers import RELATIVE_TOLERANCE, format_value, matches_written
from verifiers.protocol import Verdict

_APPROXIMATE = re.compile(
    r"≈|~|\\approx|\b(?:about|approximately|approx|around|roughly|nearly|round(?:ed|ing)?"
    r"|remain(?:s|ing|der)?|left over)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ClaimResult:
    """One claim's outcome: holds True/False, or None when it could not be judged."""

    claim: str
    holds: bool | None
    expected: str | None = None
    reason: str = ""


@dataclass
class StepState:
    """Variable values known so far in a chain; `solved` ones came from an equation, not from `x = 5`."""

    bindings: dict[str, Fraction] = field(default_factory=dict)
    solved: set[str] = field(default_factory=set)  # bound by solving an equation, not by `x = 5`
    step_index: int = 0
    step_text: str = ""
    bound_at: dict[str, int] = field(default_factory=dict)

    def bind(self, name: str, value: Fraction, *, solved: bool) -> None:
        self.bindings[name] = value
        self.bound_at[name] = self.step_index
        if solved:
            self.solved.add(name)
        else:
            self.solved.discard(name)


HardChecker = Callable[[Sequence[tuple[int, str, Mapping[str, str]]]], dict[int, list[ClaimResult]]]


def check_steps(steps: Sequence[str], *, hard_checker: HardChecker | None = None) -> list[Verdict]:
    """One verdict per step: `correct` (claims found, all hold), `incorrect` (one fails: evidence names
    it and the expected value) or `unverifiable` (no claim could be judged).

    `hard_checker` judges LaTeX runs the fast path cannot; by default the bounded worker pool.
    """
    state = StepState()
    per_step: list[list[ClaimResult]] = []
    hard: list[tuple[int, str, Mapping[str, str]]] = []
    for index, step in enumerate(steps):
        state.step_index = index
        state.step_text = step
        results, hard_runs = check_plain_step(step, state)
        per_step.append(results)
        snapshot = {name: str(value) for name, value in state.bindings.items()}
        hard.extend((index, run.text, snapshot) for run in hard_runs)
    if hard:
        checker = hard_checker or _default_hard_checker
        for index, results in checker(hard).items():
            per_step[index].extend(results)
    return [step_verdict(results) for results in per_step]


def _default_hard_checker(
    items: Sequence[tuple[int, str, Mapping[str, str]]],
) -> dict[int, list[ClaimResult]]:
    from verifiers.math.latex_claims import check_hard_runs_bounded

    return check_hard_runs_bounded(items)


def step_verdict(results: Sequence[ClaimResult]) -> Verdict:
    failed = [r for r in results if r.holds is False]
    held = [r for r in results if r.holds is True]
    claims = [
        {"claim": r.claim, "holds": r.holds, "expected": r.expected, "reason": r.reason} for r in results
    ]
    if failed:
        first = failed[0]
        return Verdict(
            "incorrect",
            f"claim {first.claim!r} is false (expected {first.expected})",
            {"failed_claim": first.claim, "expected": first.expected, "claims": claims},
        )
    if held:
        return Verdict("correct", f"{len(held)} claim(s) hold", {"claims": claims})
    reason = "no checkable claim" if not results else "claims could not be judged"
    return Verdict("unverifiable", reason, {"claims": claims})


def check_plain_step(step: str, state: StepState) -> tuple[list[ClaimResult], list[Run]]:
    """Judge the plain runs of one step (updating `state`); return the hard runs left for the worker."""
    approximate = bool(_APPROXIMATE.search(step))
    results: list[ClaimResult] = []
    hard_runs: list[Run] = []
    for run in extract_runs(step):
        if run.hard:
            hard_runs.append(run)
            continue
        results.extend(_check_run(run, state, approximate))
    return results, hard_runs


def _split_sides(run: Run) -> list[tuple]:
    sides: list[list] = [[]]
    for tok in run.tokens:
        if tok.kind == "eq":
            sides.append([])
        else:
            sides[-1].append(tok)
    asts: list = []
    for index, side in enumerate(sides):
        if not side and index == 0:
            continue  # "Total = 5 + 3 = 8": the name was a word
        cut = (
            bool(side)
            and side[0].kind == "op"
            and (
                side[0].text in "+*/^"
                or (side[0].text == "-" and len(side) > 1 and side[1].start > side[0].start + 1)
            )
        )
        if index == 0 and cut:
            asts.append(None)  # "... + $5 on bananas = ...": the left side was cut off by words
            continue
        try:
            asts.append(parse_side(side))
        except NotEvaluable:
            asts.append(None)
    return asts


def _check_run(run: Run, state: StepState, approximate: bool) -> list[ClaimResult]:
    asts = _split_sides(run)
    results: list[ClaimResult] = []
    start = 0
    if len(asts) >= 2 and asts[0] is not None and asts[0][0] == "var" and asts[0][1] not in state.bindings:
        value = _number(asts[1], state.bindings)
        if value is not None:
            state.bind(asts[0][1], value, solved=False)
        start = 1
    for k in range(start, len(asts) - 1):
        left, right = asts[k], asts[k + 1]
        if left is None or right is None:
            continue
        if bare_literal(left) is not None and (
            bare_literal(right) is not None or (k == 0 and run.after_word)
        ):
            continue  # "2 hours = 120 minutes", "3 = 3": a conversion or a restatement, not arithmetic
        claim = _side_text(run, k, len(asts), start)
        try:
            results.append(_judge(left, right, claim, state, approximate))
        except TooLarge as exc:
            results.append(ClaimResult(claim, None, reason=f"too large to evaluate: {exc}"))
        except NotEvaluable as exc:
            results.append(ClaimResult(claim, None, reason=str(exc)))
    return results


def _side_text(run: Run, k: int, n_sides: int, start: int) -> str:
    parts = [p.strip() for p in run.text.split("=")]
    if len(parts) != n_sides + (1 if run.text.lstrip().startswith("=") else 0):
        return run.text.strip()
    offset = len(parts) - n_sides
    return f"{parts[offset + k]} = {parts[offset + k + 1]}"


def _number(node: tuple | None, bindings: Mapping[str, Fraction]) -> Fraction | None:
    if node is None:
        return None
    try:
        value = evaluate(node, bindings)
    except NotEvaluable:
        return None
    return value.const if value.is_number else None


def _readings(node: tuple, bindings: Mapping[str, Fraction]) -> list[Linear]:
    values = [evaluate(node, bindings)]
    if has_percent(node):
        values.append(evaluate(node, bindings, percent_as_fraction=False))
    return values


def _judge(left: tuple, right: tuple, claim: str, state: StepState, approximate: bool) -> ClaimResult:
    result = _judge_with(left, right, claim, state.bindings, state, approximate)
    if result.holds is not False:
        return result
    # A letter solved in an earlier step that no longer fits may be a new unknown under an old name
    # (worked solutions reuse `x` for the next sub-question). It stays an error only for the next step of
    # a rewrite chain ("3x + 4 = 40" then "3x = 38"), and not when this step defines the letter again.
    stale = {
        name
        for name in _variables(left) | _variables(right)
        if name in state.solved and state.bound_at.get(name, -1) < state.step_index
    }
    if not stale:
        return result
    rewrite_chain = all(state.bound_at[name] == state.step_index - 1 for name in stale)
    is_assignment = left[0] == "var" and bare_literal(right) is not None
    definitions = sum(
        len(re.findall(rf"(?<![A-Za-z]){re.escape(name)}\s*=", state.step_text)) for name in stale
    )
    redefined = definitions > (1 if is_assignment else 0)
    if not redefined and (is_assignment or rewrite_chain):
        return result  # "x = 13" after solving x = 12, or "3x = 38" right after "3x + 4 = 40"
    fresh = {k: v for k, v in state.bindings.items() if k not in stale}
    return _judge_with(left, right, claim, fresh, state, approximate)


def _variables(node: tuple) -> set[str]:
    if node[0] == "var":
        return {node[1]}
    if node[0] == "num":
        return set()
    return set().union(*(_variables(child) for child in node[1:]))


def _judge_with(
    left: tuple,
    right: tuple,
    claim: str,
    bindings: Mapping[str, Fraction],
    state: StepState,
    approximate: bool,
) -> ClaimResult:
    lefts, rights = _readings(left, bindings), _readings(right, bindings)
    if not (lefts[0].is_number and rights[0].is_number):
        return _solve(lefts[0], rights[0], claim, state)
    expected = format_value(lefts[0].const)
    right_literal, left_literal = bare_literal(right), bare_literal(left)
    if right_literal is not None:
        if any(matches_written(v.const, right_literal, approximate=approximate) for v in lefts):
            return ClaimResult(claim, True, expected)
    elif left_literal is not None:
        expected = format_value(rights[0].const)
        if any(matches_written(v.const, left_literal, approximate=approximate) for v in rights):
            return ClaimResult(claim, True, expected)
    elif any(_close(a.const, b.const) for a in lefts for b in rights):
        return ClaimResult(claim, True, expected)
    lead = leading_literal(right)
    if lead is not None and any(matches_written(v.const, lead, approximate=approximate) for v in lefts):
        return ClaimResult(claim, True, expected, "running total")  # "5 + 3 = 8 * 2 = 16"
    return ClaimResult(claim, False, expected, "arithmetic does not hold")


def _close(a: Fraction, b: Fraction) -> bool:
    return a == b or abs(a - b) <= RELATIVE_TOLERANCE * max(abs(a), abs(b))


def _solve(left: Linear, right: Linear, claim: str, state: StepState) -> ClaimResult:
    """One unknown, linear: solve it and remember the value (`3x = 36` gives x = 12); not itself a check."""
    if left.coef and right.coef and left.var == right.var and left.const == 0 == right.const:
        # Every term carries the letter: a unit ("200g + 100g = 300g", "2 * 2L = 4L"), compare the numbers.
        holds = _close(left.coef, right.coef)
        return ClaimResult(claim, holds, format_value(left.coef), "unit letter")
    if left.coef and right.coef:
        # A rewrite ("71 + P - 3 = 68 + P"): it must hold for every P when the P terms agree.
        if left.coef == right.coef and left.var == right.var:
            holds = left.const == right.const
            return ClaimResult(claim, holds, format_value(left.const), "rewrite in one unknown")
        return ClaimResult(claim, None, reason="unknown on both sides: a rewrite, not checked")
    coef = left.coef - right.coef
    var = left.var if left.coef else right.var
    if var is None or coef == 0:
        return ClaimResult(claim, None, reason="unknown cancels out")
    value = (right.const - left.const) / coef
    state.bind(var, value, solved=True)
    return ClaimResult(claim, None, reason=f"solved {var} = {format_value(value)}")
