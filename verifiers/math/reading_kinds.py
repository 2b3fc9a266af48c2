"""Which reading of a step made the math checker's verdict, and how far each reading can be trusted.

Every `correct` or `incorrect` step verdict of the math checker names its reading kind (`Verdict.kind`):
the one way of reading the text its judged claims went through. The kinds are the checker's whole
whitelist (docs/label-quality.md, "What the checker judges"); nothing outside them is ever `incorrect`.

- `closed_arithmetic`: a relation between written numbers only (`\\frac{1}{2} \\times 6 \\times 8 = 24`);
- `notation_rule`: written numbers read through one notation with a single meaning (trigonometry with a
  degree mark or of a multiple of `\\pi`, a log with a base in digits, floor / ceiling, `\\binom`, a
  factorial, `\\mod`, `\\pm` read branch by branch, `i` where the step says it is the imaginary unit);
- `substituted_arithmetic`: numbers and names set exactly once in the chain, the values put in;
- `identity`: an expansion the step announces, or a chain `A = B = C` in the same free names;
- `equation_step`: a relation the text derives from the one before ("we get", `\\Rightarrow`), both the
  same kind of relation in the same unknowns, compared by solution sets;
- `system_result`: a result said to come from solving the equations just before it;
- `congruence`, `divisibility`: `\\equiv ... \\pmod m` and "is (not) divisible by" between written numbers;
- `labelled_line`: a labelled line (`Total: 45`) carrying on the value its label had;
- `word_problem_arithmetic`: the word-problem checker's readings in a chain that is not competition math
  (GSM8K style: names bound by `x = 12`, units, running totals, percent forms).

`KIND_PRECISION` holds each kind's measured precision of `incorrect` on the project's olympiad-level dev
sets (`evaluation.olympiad_dev`), with its counts; `FINAL_KINDS` are the kinds whose precision there is at
least `FINAL_PRECISION` on at least `FINAL_MIN_FLAGS` flags. A consensus may take a verifier `incorrect` as
final only for those kinds, and let the others vote like any other negative source.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from prm_factory.verifiers.math.claim_result import ClaimResult

CLOSED_ARITHMETIC = "closed_arithmetic"
NOTATION_RULE = "notation_rule"
SUBSTITUTED_ARITHMETIC = "substituted_arithmetic"
IDENTITY = "identity"
EQUATION_STEP = "equation_step"
SYSTEM_RESULT = "system_result"
CONGRUENCE = "congruence"
DIVISIBILITY = "divisibility"
LABELLED_LINE = "labelled_line"
WORD_PROBLEM_ARITHMETIC = "word_problem_arithmetic"
SEVERAL = "several"  # a `correct` step whose claims held under more than one kind

# The order in which a step's failed claims name its verdict: the kind read with the most certainty first,
# so a step false under a final kind is reported under it.
READING_KINDS: tuple[str, ...] = (
    CLOSED_ARITHMETIC,
    CONGRUENCE,
    DIVISIBILITY,
    NOTATION_RULE,
    WORD_PROBLEM_ARITHMETIC,
    LABELLED_LINE,
    SUBSTITUTED_ARITHMETIC,
    SYSTEM_RESULT,
    EQUATION_STEP,
    IDENTITY,
)

_NOTATION = re.compile(
    r"\\(?:sin|cos|tan|cot|sec|csc|log|ln|[lr]floor|[lr]ceil|[dt]?binom|b?mod|pm|mp)(?![A-Za-z])"
    r"|\\circ|°|!|(?<![A-Za-z\\])i(?![A-Za-z])"
)


def reading_kind(result: ClaimResult, *, competition: bool) -> str:
    """The reading kind of one judged claim (its `rule` and `reason` say which reader judged it).

    >>> reading_kind(ClaimResult("48/2 = 25", False, "24", "arithmetic does not hold"), competition=True)
    'closed_arithmetic'
    >>> reading_kind(ClaimResult("\\\\sin 30^\\\\circ = 1", False, "1/2", "symbolic"), competition=True)
    'notation_rule'
    >>> reading_kind(ClaimResult("48/2 = 25", False, "24", "arithmetic does not hold"), competition=False)
    'word_problem_arithmetic'
    """
    rule, reason = result.rule, result.reason
    if rule.startswith("labelled line") or reason.startswith("the line does not carry on"):
        return LABELLED_LINE
    if rule == "congruence":
        return CONGRUENCE
    if rule == "divisibility":
        return DIVISIBILITY
    if rule == "system result" or reason.startswith("the result of solving a system"):
        return SYSTEM_RESULT
    if rule == "equation step" or reason.startswith("equation step"):
        return EQUATION_STEP
    if rule in ("identity", "identity chain") or reason.startswith("false as an identity"):
        return IDENTITY
    if not competition:
        return WORD_PROBLEM_ARITHMETIC
    if rule == "names bound once":
        return SUBSTITUTED_ARITHMETIC
    if rule == "imaginary unit" or reason == "both branches of \\pm" or _NOTATION.search(result.claim):
        return NOTATION_RULE
    return CLOSED_ARITHMETIC


def _rank(kind: str) -> int:
    return READING_KINDS.index(kind) if kind in READING_KINDS else len(READING_KINDS)


def first_failed(failed: Sequence[ClaimResult], *, competition: bool) -> tuple[ClaimResult, str]:
    """The failed claim that names a step's `incorrect` verdict, with its kind: the most certain kind first,
    then the claim written first."""
    kinds = [reading_kind(r, competition=competition) for r in failed]
    best = min(range(len(failed)), key=lambda i: (_rank(kinds[i]), i))
    return failed[best], kinds[best]


def held_kind(held: Sequence[ClaimResult], *, competition: bool) -> str | None:
    """The kind a `correct` step was read under: one kind, `several`, or None without claims."""
    kinds = {reading_kind(r, competition=competition) for r in held}
    if not kinds:
        return None
    return kinds.pop() if len(kinds) == 1 else SEVERAL


@dataclass(frozen=True)
class KindPrecision:
    """One kind's `incorrect` flags on a set of labelled chains: right (at the marked first error) and
    wrong (before it, or in a chain whose steps are all right)."""

    right: int
    wrong: int

    @property
    def flags(self) -> int:
        return self.right + self.wrong

    @property
    def precision(self) -> float | None:
        return self.right / self.flags if self.flags else None


# Measured with verifier 2.6.0 (2.7.0 gives the same counts) on the olympiad-level dev split
# (`evaluation.olympiad_dev`, split `dev`:
# NuminaMath olympiad / AoPS-forum and AIME 2024 AoPS solutions as written and with one result altered,
# source errors read by hand and labelled where they are), by `prm-factory eval olympiad_dev.json` (its
# table "verifier `incorrect` by reading kind"). A kind absent here had no flag there.
# Of the 33 right flags, 16 are the altered results and 17 errors of the sources themselves (12 solutions;
# 5 counted twice, on a solution and on its altered copy). Few flags: the table says which kinds have been
# seen precise, not that the others are imprecise.
KIND_PRECISION: dict[str, KindPrecision] = {
    CLOSED_ARITHMETIC: KindPrecision(21, 0),
    CONGRUENCE: KindPrecision(1, 0),
    NOTATION_RULE: KindPrecision(1, 0),
    WORD_PROBLEM_ARITHMETIC: KindPrecision(1, 0),
    EQUATION_STEP: KindPrecision(5, 0),
    IDENTITY: KindPrecision(4, 0),
}

FINAL_PRECISION = 0.99
FINAL_MIN_FLAGS = 10


def final_kinds(table: dict[str, KindPrecision]) -> frozenset[str]:
    """The kinds whose measured precision is at least `FINAL_PRECISION` on at least `FINAL_MIN_FLAGS` flags.

    >>> sorted(final_kinds({"a": KindPrecision(20, 0), "b": KindPrecision(3, 0), "c": KindPrecision(9, 9)}))
    ['a']
    """
    return frozenset(
        kind
        for kind, counts in table.items()
        if counts.flags >= FINAL_MIN_FLAGS and (counts.precision or 0.0) >= FINAL_PRECISION
    )


FINAL_KINDS: frozenset[str] = final_kinds(KIND_PRECISION)
