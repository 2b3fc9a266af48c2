"""Exact step truth for chains sampled on synthetic problems (`schemas.synthetic`), to measure label sources.

Why: every label source of the factory (MC rollouts, the claim verifier, the reference alignment, their
consensus) is a noisy guess at whether a step is wrong. A synthetic problem carries the true value after
each of its operations, so a sampled chain's steps can be judged against that instead of against another
guess, and each source's noise measured (`bench/bench_label_noise.py`).

The rule, per step:

- A step **states a result** where a number is the value of a side of an `=` run (what
  `verifiers.math.claim_extraction.extract_runs` finds, including `12 + 5 is 17` and `<<12+5=17>>`), or
  follows a result word directly (`is 17`, `are 4`, `has 17`, `equals 17`, `answer: 17`, `\\boxed{17}`,
  `#### 17`), read from `verifiers.math.arithmetic.lex` tokens.
- It is **wrong** when a run's sides have different exact values (false arithmetic), or a stated result
  is neither a true value of the problem (any intermediate value, the answer included) nor a number given
  in the problem text (start amount, operands, distractors).
- A chain whose final answer was graded not correct (`incorrect` or `unparsed`) but has no wrong step
  gets its last step marked wrong: it stopped early or answered with an intermediate value.
- The first error is the first wrong step (ProcessBench's definition), -1 when there is none.

Blind spots (each makes the truth call a step correct that a careful reader might not):

- A step with no stated result (a plan in words, "She buys 5 more marbles.", a misread operand written
  without its result) is correct here: its mistake is judged by what follows, where the wrong value is
  stated. A wrong plan therefore moves the first error one or more steps later.
- A result word must stand right before its number: `has now 49` or `a total of 49` is not read (the
  same value stated with `=` or `is` elsewhere is).
- A wrong value that happens to equal another true value or a given number is accepted (the order of
  the values is not checked, e.g. restating the start amount as the answer in a middle step).
- A valid detour through a value that is not in the reference (`12 * 3 = 36, 4 * 3 = 12, 36 - 12 = 24`
  for `(12 - 4) * 3`) is judged wrong: the problems have one operation per step, so this is rare.
- The final answer's correctness comes from the answer grader (`verifiers.math`), which MC rollouts also
  use; its measured precision / recall is about 100 / 99.5 on the dev sets.

>>> from schemas.synthetic import SyntheticSpec, synthetic_problem
>>> p = synthetic_problem(SyntheticSpec(seed=3, steps=2), 0)
>>> p.problem.text.split(".")[0], p.intermediate_values
('Jonas has 15 plums', (5, 1))
>>> truth = chain_truth(p, ["15 / 3 = 5 plums.", "5 - 4 = 2 plums.", "The answer is 2."], "incorrect")
>>> [s.label for s in truth.steps], truth.first_error
(['correct', 'incorrect', 'incorrect'], 1)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from prm_factory.schemas.records import Problem
from prm_factory.schemas.synthetic import SyntheticProblem, rebuild
from prm_factory.verifiers.math.arithmetic import NotEvaluable, Token, bare_literal, evaluate, lex, parse_side
from prm_factory.verifiers.math.claim_extraction import Run, extract_runs

TruthLabel = Literal["correct", "incorrect"]

RESULT_WORDS = frozenset({"is", "are", "was", "were", "equals", "has", "have", "had", "answer"})
"""A number right after one of these words (an optional `:` between) is a stated result."""

FAILED_OUTCOMES = frozenset({"incorrect", "unparsed"})
"""Chain outcomes that mean the final answer is not the true one (`timeout` / `error` say nothing)."""


@dataclass(frozen=True)
class TrueValues:
    """What a step may state: the problem's true intermediate values and the numbers its text gives."""

    intermediate: frozenset[Fraction]
    given: frozenset[Fraction]

    def allows(self, value: Fraction) -> bool:
        return value in self.intermediate or value in self.given


@dataclass(frozen=True)
class StepTruth:
    label: TruthLabel
    reason: str  # "ok", "no stated result", "false arithmetic: ...", "not a true value: ...", "final answer"
    stated: tuple[Fraction, ...]  # the results the step states, in order


@dataclass(frozen=True)
class ChainTruth:
    steps: tuple[StepTruth, ...]
    first_error: int  # -1: no wrong step

    @property
    def labels(self) -> tuple[TruthLabel, ...]:
        return tuple(step.label for step in self.steps)


def true_values(synthetic: SyntheticProblem) -> TrueValues:
    """The problem's true values, and every number written in its text (start, operands, distractors)."""
    given = frozenset(t.literal.value for t in lex(synthetic.problem.text) if t.kind == "num" and t.literal)
    return TrueValues(frozenset(Fraction(v) for v in synthetic.intermediate_values), given)


def _sides(run: Run) -> list[list[Token]]:
    sides: list[list[Token]] = [[]]
    for token in run.tokens:
        if token.kind == "eq":
            sides.append([])
        else:
            sides[-1].append(token)
    return sides


def _side_value(tokens: list[Token]) -> Fraction | None:
    """Exact value of one side, None when it is empty, symbolic or not evaluable."""
    if not tokens:
        return None
    try:
        value = evaluate(parse_side(tokens), {})
    except (NotEvaluable, ZeroDivisionError, OverflowError):
        return None
    return value.const if value.var is None else None


def _run_results(run: Run) -> tuple[list[Fraction], str | None]:
    """The values a run states and, when its sides disagree, why its arithmetic is false."""
    sides = _sides(run)
    if run.after_word and sides and len(sides[0]) == 1 and sides[0][0].kind == "num":
        sides = sides[1:]  # "Week 2 = 35 + 35": a bare first side after a word is a label
    values = [v for v in (_side_value(side) for side in sides) if v is not None]
    if len(set(values)) > 1:
        return values, f"false arithmetic: {run.text.strip()!r}"
    stated = values[-1:] if len(values) >= 2 or (len(sides) >= 2 and _last_bare(sides)) else []
    return stated, None


def _last_bare(sides: list[list[Token]]) -> bool:
    """A run whose other sides could not be read still states its last side when that is a number."""
    try:
        return bool(sides[-1]) and bare_literal(parse_side(sides[-1])) is not None
    except NotEvaluable:
        return False


def _worded_results(text: str) -> list[Fraction]:
    """Numbers right after a result word (`has 17`, `answer: 17`), `\\boxed{17}` or `#### 17`."""
    tokens = [t for t in lex(text) if not (t.kind == "sep" and t.text.strip() in (":", ""))]
    results: list[Fraction] = []
    for i, token in enumerate(tokens[:-1]):
        nxt = tokens[i + 1]
        if nxt.kind != "num" or nxt.literal is None:
            if token.text == "\\boxed" and nxt.kind == "lp" and i + 2 < len(tokens):
                boxed = tokens[i + 2]
                if boxed.kind == "num" and boxed.literal is not None:
                    results.append(boxed.literal.value)
            continue
        word = token.kind == "word" and token.text.lower() in RESULT_WORDS
        hashes = token.kind == "sep" and token.text == "#" and i > 0 and tokens[i - 1].text == "#"
        if word or hashes:
            results.append(nxt.literal.value)
    return results


def step_truth(text: str, values: TrueValues) -> StepTruth:
    """One step judged on its own (the chain-level final-answer rule is in `chain_truth`)."""
    stated: list[Fraction] = []
    for run in extract_runs(text):
        results, false_arithmetic = _run_results(run)
        if false_arithmetic:
            return StepTruth("incorrect", false_arithmetic, tuple(results))
        stated.extend(results)
    stated.extend(_worded_results(text))
    wrong = [v for v in stated if not values.allows(v)]
    if wrong:
        return StepTruth("incorrect", f"not a true value: {_show(wrong)}", tuple(stated))
    return StepTruth("correct", "ok" if stated else "no stated result", tuple(stated))


def _show(values: Iterable[Fraction]) -> str:
    return ", ".join(str(v) for v in values)


def first_error(labels: Sequence[str]) -> int:
    """ProcessBench's first error: index of the first `incorrect` label, -1 when none.

    >>> first_error(["correct", "incorrect", "correct"]), first_error(["correct"])
    (1, -1)
    """
    return next((i for i, label in enumerate(labels) if label == "incorrect"), -1)


def chain_truth(problem: SyntheticProblem | Problem, steps: Sequence[str], outcome: str) -> ChainTruth:
    """Every step's true label and the first error; `outcome` is the chain's graded final answer label.

    A stored `Problem` is rebuilt from its spec (`schemas.synthetic.rebuild`, which refuses rows that do
    not match their spec).
    """
    synthetic = problem if isinstance(problem, SyntheticProblem) else rebuild(problem)
    values = true_values(synthetic)
    judged = [step_truth(step, values) for step in steps]
    if judged and outcome in FAILED_OUTCOMES and all(s.label == "correct" for s in judged):
        last = judged[-1]
        judged[-1] = StepTruth("incorrect", f"final answer ({outcome}) after no wrong step", last.stated)
    return ChainTruth(tuple(judged), first_error([s.label for s in judged]))
