"""What label sources may use of the math verifier: read the quantities of a text, check a step.

`labels/` imports this module and nothing else under `verifiers.math` (an import-linter contract in
pyproject.toml forbids the rest), so the checker's internals can be reshaped without breaking a label source
as long as these names keep their meaning:

- reading quantities: `lex` (a text's tokens: numbers as exact `Literal`s, operators, names), `parse_side`
  and `evaluate` (one side of a claim to an exact value, `NotEvaluable` when it is not one), `Literal` with
  the written-precision helpers `round_half_up` and `truncate`;
- checking a step: `check_plain_step` (one step's claims against the values bound so far) and `walk_steps`
  (a chain's steps in order, carrying `StepState`);
- final answers: `boxed_answer` (the content of a chain's last `\\boxed{}`);
- how far a verdict can be trusted: `FINAL_KINDS`, the reading kinds (`Verdict.kind`) whose `incorrect`
  measured precise enough to be final (`reading_kinds`); the verifier label source weighs its votes by it.
"""

from __future__ import annotations

from prm_factory.verifiers.math.arithmetic import NotEvaluable, Token, evaluate, lex, parse_side
from prm_factory.verifiers.math.claims import StepState, check_plain_step, walk_steps
from prm_factory.verifiers.math.final_answer import boxed_answer
from prm_factory.verifiers.math.numbers import Literal, round_half_up, truncate
from prm_factory.verifiers.math.reading_kinds import FINAL_KINDS

__all__ = [
    "FINAL_KINDS",
    "Literal",
    "NotEvaluable",
    "StepState",
    "Token",
    "boxed_answer",
    "check_plain_step",
    "evaluate",
    "lex",
    "parse_side",
    "round_half_up",
    "truncate",
    "walk_steps",
]
