"""Synthetic multi-step arithmetic word problems with the exact value of every intermediate quantity.

Why: the embedded model solves about 2 % of GSM8K chains, so its Monte Carlo labels are nearly all 0; it
solves one- and two-step problems far more often. Problems generated here are contamination-free by
construction (fresh numbers and entities per seed, as in GSM-Symbolic and GSM-Infinite), their difficulty
is set by knobs (steps, number ranges, operations, distractor facts), and each carries the true value after
every step, so a sampled chain's steps can be judged exactly instead of only its final answer.

A problem is one running quantity ("Ana has 12 marbles.") changed by `steps` operations, each with an exact
positive integer result, plus irrelevant facts. The reference solution is GSM8K-style, one line per step
with a calculator annotation and a final `#### N` line, so `schemas.gsm8k` and the altered-GSM8K tools read
it:

    Ana buys 5 more marbles, so she has 12+5 = <<12+5=17>>17 marbles.
    ...
    #### 17

The same spec and index always give the same problem and id. `Problem.source_file` holds the spec (with
the generator version) and `source_line` the 1-based index, so `rebuild(problem)` recovers the step truth
from a stored problem row alone.

>>> spec = SyntheticSpec(seed=3, steps=2)
>>> first = synthetic_problem(spec, 0)
>>> first == synthetic_problem(spec, 0) and rebuild(first.problem) == first
True
>>> first.problem.reference_answer == str(first.intermediate_values[-1])
True
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any
from urllib.parse import parse_qsl, urlencode

from prm_factory.schemas.ids import content_id
from prm_factory.schemas.records import Problem

SOURCE = "synthetic"
GENERATOR_VERSION = "1"
OPERATIONS = "+-*/"
MAX_ATTEMPTS = 200
"""Draws per problem before the knobs are declared unsatisfiable (e.g. only "/" on primes)."""


class SyntheticSpecError(ValueError):
    """Knobs that cannot produce a problem (empty range, unknown operation, no feasible draw)."""


@dataclass(frozen=True)
class SyntheticSpec:
    """The knobs; every problem of a spec is `synthetic_problem(spec, index)`."""

    seed: int = 0
    steps: int = 2  # operations per problem = steps of the reference solution
    min_value: int = 2  # range of the start amount and of the numbers added or taken away
    max_value: int = 20
    max_factor: int = 5  # multipliers and divisors are drawn from 2..max_factor
    max_result: int = 1000  # no intermediate value exceeds this
    operations: str = OPERATIONS  # any of "+-*/"
    distractors: int = 0  # irrelevant facts with numbers of their own

    def __post_init__(self) -> None:
        if self.steps < 1:
            raise SyntheticSpecError(f"steps must be at least 1, got {self.steps}")
        if not 1 <= self.min_value <= self.max_value:
            raise SyntheticSpecError(
                f"need 1 <= min_value <= max_value, got {self.min_value}..{self.max_value}"
            )
        if self.max_factor < 2:
            raise SyntheticSpecError(f"max_factor must be at least 2, got {self.max_factor}")
        if self.max_result < self.max_value:
            raise SyntheticSpecError(f"max_result ({self.max_result}) is below max_value ({self.max_value})")
        unknown = set(self.operations) - set(OPERATIONS)
        if not self.operations or unknown:
            raise SyntheticSpecError(
                f"operations must be a non-empty subset of {OPERATIONS!r}, got {self.operations!r}"
            )
        if self.distractors < 0:
            raise SyntheticSpecError(f"distractors must be >= 0, got {self.distractors}")

    def to_source(self) -> str:
        """The spec as a string for `Problem.source_file`: generator version and every knob."""
        knobs = {f.name: getattr(self, f.name) for f in fields(self)}
        return f"{SOURCE}/v{GENERATOR_VERSION}?{urlencode(knobs)}"

    @classmethod
    def from_source(cls, text: str) -> SyntheticSpec:
        head, _, query = text.partition("?")
        if head != f"{SOURCE}/v{GENERATOR_VERSION}":
            raise SyntheticSpecError(f"not a spec of synthetic generator v{GENERATOR_VERSION}: {text!r}")
        types = {f.name: f.type for f in fields(cls)}
        values: dict[str, int | str] = {}
        for name, raw in parse_qsl(query, keep_blank_values=True):
            if name not in types:
                raise SyntheticSpecError(f"unknown knob {name!r} in {text!r}")
            values[name] = raw if types[name] == "str" else int(raw)
        return cls(**values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class SyntheticStep:
    """One operation of the reference solution: `left op right = value`."""

    operation: str
    left: int
    right: int
    value: int
    line: str  # the GSM8K-style solution line, with its `<<left op right=value>>` annotation

    @property
    def expression(self) -> str:
        return f"{self.left}{self.operation}{self.right}"


@dataclass(frozen=True)
class SyntheticProblem:
    problem: Problem
    spec: SyntheticSpec
    index: int
    start_value: int
    steps: tuple[SyntheticStep, ...]
    distractor_values: tuple[int, ...]

    @property
    def intermediate_values(self) -> tuple[int, ...]:
        """The true value after each step; the last one is the answer."""
        return tuple(step.value for step in self.steps)


# --- the story pieces ---------------------------------------------------------------------------------

NAMES = (
    "Ana",
    "Ben",
    "Carla",
    "Dev",
    "Elena",
    "Farid",
    "Grace",
    "Hugo",
    "Iris",
    "Jonas",
    "Kemi",
    "Liam",
    "Mina",
    "Noah",
    "Olga",
    "Pablo",
    "Quinn",
    "Rosa",
    "Sam",
    "Tara",
    "Umar",
    "Vera",
    "Wen",
    "Yusuf",
)
ITEMS = (
    "marbles",
    "stickers",
    "apples",
    "pencils",
    "stamps",
    "shells",
    "coins",
    "cookies",
    "cards",
    "beads",
    "books",
    "candles",
    "buttons",
    "tickets",
    "plums",
    "crayons",
)
OTHER_ITEMS = ("chairs", "plants", "cups", "hats", "kites", "lamps", "maps", "socks")

# A template gives the problem sentence and the start of the solution line; both see the same fields:
# name, friend, items, right (the new number).
Template = tuple[str, str]
TEMPLATES: dict[str, tuple[Template, ...]] = {
    "+": (
        ("{name} buys {right} more {items}.", "{name} buys {right} more {items}, so {name} has"),
        ("{friend} gives {name} {right} {items}.", "After {friend} gives {right} {items}, {name} has"),
        ("Then {name} finds {right} more {items}.", "After finding {right} more {items}, {name} has"),
    ),
    "-": (
        ("{name} gives {right} {items} to {friend}.", "After giving {right} {items} to {friend}, {name} has"),
        ("{name} sells {right} of the {items}.", "After selling {right} {items}, {name} has"),
        ("Then {name} loses {right} {items}.", "After losing {right} {items}, {name} has"),
    ),
    "*": (
        (
            "Then the number of {items} {name} has becomes {right} times as large.",
            "{right} times as many {items} means {name} has",
        ),
        (
            "{friend} gives {name} enough {items} to have {right} times as many as before.",
            "With {right} times as many {items}, {name} has",
        ),
    ),
    "/": (
        (
            "{name} splits the {items} into {right} equal piles and keeps only one pile.",
            "{name} keeps one of {right} equal piles, so {name} has",
        ),
        (
            "{name} shares the {items} equally among {right} people, {name} included, and keeps one share.",
            "Keeping one of {right} equal shares, {name} has",
        ),
    ),
}
DISTRACTORS = (
    "{friend} has {value} {other}.",
    "{name}'s neighbour owns {value} {other}.",
    "There are {value} {other} in {name}'s room.",
)
QUESTIONS = ("How many {items} does {name} have now?", "How many {items} does {name} have in the end?")


def _apply(operation: str, left: int, right: int) -> int:
    return {"+": left + right, "-": left - right, "*": left * right, "/": left // right}[operation]


def _operands(spec: SyntheticSpec, operation: str, left: int) -> list[int]:
    """Every right operand that keeps the result a positive integer no larger than max_result."""
    lo, hi = spec.min_value, spec.max_value
    if operation == "+":
        return list(range(lo, min(hi, spec.max_result - left) + 1))
    if operation == "-":
        return list(range(lo, min(hi, left - 1) + 1))
    if operation == "*":
        return [f for f in range(2, spec.max_factor + 1) if left * f <= spec.max_result]
    return [d for d in range(2, spec.max_factor + 1) if left % d == 0 and left // d >= 1]


def _draw_operations(
    spec: SyntheticSpec, rng: random.Random, start: int
) -> list[tuple[str, int, int]] | None:
    """(operation, left, right) for each step, or None when a step has no feasible operation."""
    drawn, value = [], start
    for _ in range(spec.steps):
        choices = [(op, right) for op in spec.operations for right in [_operands(spec, op, value)] if right]
        if not choices:
            return None
        operation, rights = rng.choice(choices)
        right = rng.choice(rights)
        drawn.append((operation, value, right))
        value = _apply(operation, value, right)
    return drawn


def synthetic_problem(spec: SyntheticSpec, index: int) -> SyntheticProblem:
    """Problem number `index` of the spec; deterministic in (spec, index) alone."""
    if index < 0:
        raise SyntheticSpecError(f"index must be >= 0, got {index}")
    rng = random.Random(f"{spec.to_source()}#{index}")  # str seeds hash with sha512: stable across runs
    for _ in range(MAX_ATTEMPTS):
        start = rng.randint(spec.min_value, spec.max_value)
        drawn = _draw_operations(spec, rng, start)
        if drawn is not None:
            return _write(spec, index, rng, start, drawn)
    raise SyntheticSpecError(f"no problem satisfies {spec.to_source()} after {MAX_ATTEMPTS} draws")


def _write(
    spec: SyntheticSpec, index: int, rng: random.Random, start: int, drawn: list[tuple[str, int, int]]
) -> SyntheticProblem:
    name, friend = rng.sample(NAMES, 2)
    items = rng.choice(ITEMS)
    sentences = [f"{name} has {start} {items}."]
    steps = []
    for operation, left, right in drawn:
        question_part, solution_part = rng.choice(TEMPLATES[operation])
        fields_ = {"name": name, "friend": friend, "items": items, "right": right}
        value = _apply(operation, left, right)
        expression = f"{left}{operation}{right}"
        line = f"{solution_part.format(**fields_)} {expression} = <<{expression}={value}>>{value} {items}."
        sentences.append(question_part.format(**fields_))
        steps.append(SyntheticStep(operation, left, right, value, line))
    distractor_values = []
    for _ in range(spec.distractors):
        value = rng.randint(spec.min_value, spec.max_value)
        fact = rng.choice(DISTRACTORS).format(
            name=name, friend=friend, value=value, other=rng.choice(OTHER_ITEMS)
        )
        sentences.insert(rng.randint(1, len(sentences)), fact)  # never before the start amount
        distractor_values.append(value)
    text = " ".join([*sentences, rng.choice(QUESTIONS).format(name=name, items=items)])
    answer = str(steps[-1].value)
    solution = "\n".join([*(step.line for step in steps), f"#### {answer}"])
    problem = Problem(
        problem_id=content_id(SOURCE, text, answer),
        source=SOURCE,
        domain="math",
        text=text,
        reference_answer=answer,
        reference_solution=solution,
        source_file=spec.to_source(),
        source_line=index + 1,
    )
    return SyntheticProblem(problem, spec, index, start, tuple(steps), tuple(distractor_values))


def generate(spec: SyntheticSpec, *, offset: int = 0, limit: int = 4) -> list[SyntheticProblem]:
    """Problems `offset .. offset+limit` of the spec."""
    return [synthetic_problem(spec, index) for index in range(offset, offset + limit)]


def rebuild(problem: Problem) -> SyntheticProblem:
    """The step truth of a stored synthetic problem, regenerated from its spec and index.

    Fails (SyntheticSpecError) when the row was not made by this generator version or does not match
    what the spec gives now: wrong step truth is worse than none.
    """
    if problem.source != SOURCE or not problem.source_file or problem.source_line is None:
        raise SyntheticSpecError(f"problem {problem.problem_id} is not a synthetic problem with a spec")
    rebuilt = synthetic_problem(SyntheticSpec.from_source(problem.source_file), problem.source_line - 1)
    if rebuilt.problem.problem_id != problem.problem_id:
        raise SyntheticSpecError(
            f"problem {problem.problem_id} does not match its spec {problem.source_file}"
        )
    return rebuilt


def load_synthetic(knobs: Mapping[str, Any], *, offset: int = 0, limit: int | None = None) -> list[Problem]:
    """Problems `offset .. offset+limit` of the spec the knobs give (`[problems.synthetic]` of a run config),
    within its first `knobs["count"]` problems: the finite pool that `skip_labeled` picks fresh ones from."""
    spec_knobs = dict(knobs)
    count = int(spec_knobs.pop("count"))
    spec = SyntheticSpec(**spec_knobs)
    end = count if limit is None else min(count, offset + limit)
    return [synthetic_problem(spec, index).problem for index in range(offset, end)]
