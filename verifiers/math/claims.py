"""Step-claim checking: is every piece of arithmetic a step writes down true?

`check_steps` walks the steps in order, carrying the variable values they set (`x = 12`, or `x` solved
from `3x = 36`) into later steps. Each claim is judged on its own arithmetic, never against the
reference answer, so a step that computes correctly from an earlier wrong number is still `correct`
and the first error stays where the arithmetic first broke:

>>> [v.label for v in check_steps(["48/2 = 25", "25 + 48 = 73", "The end."])]
['incorrect', 'correct', 'unverifiable']

Verdicts fail closed: a step is `correct` only when every claim found in it was judged and held. A claim
that could not be judged (too large, not evaluable, timed out in the worker) makes the step `unverifiable`,
never `correct`, and the evidence counts judged / held / unjudged claims. Lenient readings are taken only
where the text has their form, and the claim's `rule` names the one used: a running total needs the chain
to go on (`5 + 3 = 8 + 1 = 9`, or `5 + 3 = 8, + 1 = 9`), a percent is read as a plain number only in the
percent form (`15/60 * 100 = 25%`), and an integer may round a fraction only when the claim itself says it
is approximate (`≈`, "about", "rounded").

Plain arithmetic is checked here, exactly and in microseconds (see `arithmetic`). Runs with LaTeX the
fast path cannot evaluate are sent, in one batch per chain, to the bounded worker (`latex_claims`),
where a time-out makes that step's hard claims unverifiable instead of hanging the caller.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from prm_factory.verifiers.math.arithmetic import (
    Linear,
    NotEvaluable,
    Token,
    TooLarge,
    bare_literal,
    evaluate,
    leading_literal,
    literals,
    parse_side,
)
from prm_factory.verifiers.math.assertion import FRAME_MARKER, SCOPE_HEADING
from prm_factory.verifiers.math.certainty import spaced, uncertain_reason
from prm_factory.verifiers.math.claim_extraction import EXPLICIT_EQUALS, Run, extract_runs
from prm_factory.verifiers.math.claim_result import ClaimResult
from prm_factory.verifiers.math.competition import (
    certain_context,
    connector_pieces,
    gate_failed,
    hypothetical,
    relation_pieces,
    safe_binding,
    trimmed_run,
)
from prm_factory.verifiers.math.congruences import congruence_claims
from prm_factory.verifiers.math.display_lines import (
    continued_across,
    continued_lines,
    joined_plus_minus_lines,
)
from prm_factory.verifiers.math.divisibility import divisibility_claims
from prm_factory.verifiers.math.equation_steps import check_equation_pairs_bounded
from prm_factory.verifiers.math.factorials import factorials_written_out
from prm_factory.verifiers.math.labelled_lines import labelled_line_claims
from prm_factory.verifiers.math.latex_claims import check_hard_runs_bounded
from prm_factory.verifiers.math.numbers import RELATIVE_TOLERANCE, Literal, format_value, match_rule
from prm_factory.verifiers.math.reading_kinds import first_failed, held_kind, reading_kind
from prm_factory.verifiers.math.thousands import thousands_joined
from prm_factory.verifiers.protocol import Verdict

_APPROXIMATE = re.compile(
    r"≈|~|\\approx|\b(?:about|approximately|approx|around|roughly|nearly"
    r"|round(?:ed|ing)?(?: (?:up|down))?)\b",
    re.IGNORECASE,
)
# How far around a claim an approximation word may stand ("about 10/3 = 3", "10/3 = 3 (rounded)"); it never
# reaches past a sentence or line end, so "remaining" or a rounding elsewhere in the step excuses nothing.
_APPROX_BEFORE, _APPROX_AFTER = 24, 16
_SENTENCE_END = re.compile(r"[.!?;:]\s|\n")
# A whole-number quotient written with its remainder, or counted in whole units: "13 / 6 = 2 full cycles
# with a remainder of 1", "50 / 12 = 4 boxes, with 2 left over". Only right after a division claim.
_WHOLE_QUOTIENT = re.compile(
    r"\b(?:remainder|remaining|left ?over|full|whole|complete|quotient)\b|(?<![A-Za-z])R(?=[\s\\,]*\d)",
    re.IGNORECASE,
)
# a quotient written with its rest in a smaller unit, right after it: "12659 \\div 100 = 126 \\text{ dollars
# and } 59 \\text{ cents}", "150 / 60 = 2 hours and 30 minutes" (a unit word, "and", a number, a unit word)
_REST_IN_UNITS = re.compile(
    r"^\s*(?:\\\)|\$)?\s*(?:\\text\s*\{\s*)?([A-Za-z]{2,})\s+(?:and\s+)?\}?\s*(\d+)\s*(?:\\text\s*\{\s*)?([A-Za-z]{2,})\b"
)
# "the remainder of 2004 divided by 12 is 0": the claim after it states a remainder
_REMAINDER_OF = re.compile(r"\b(?:remainder|residue)\s+(?:of|when)\b|\bmod(?:ulo)?\b", re.IGNORECASE)


@dataclass
class StepState:
    """Variable values known so far in a chain; `solved` ones came from an equation, not from `x = 5`."""

    bindings: dict[str, Fraction] = field(default_factory=dict)
    solved: set[str] = field(default_factory=set)  # bound by solving an equation, not by `x = 5`
    step_index: int = 0
    step_text: str = ""
    bound_at: dict[str, int] = field(default_factory=dict)
    bound_offset: dict[str, int] = field(default_factory=dict)  # where in its step each name was bound
    run_start: int = 0  # where in this step the run being read starts
    texts: list[str] = field(default_factory=list)  # the chain's steps so far, this one included
    math_steps: set[int] = field(default_factory=set)  # earlier steps that wrote any math run
    held_at: dict[str, int] = field(default_factory=dict)  # last step whose equation in a solved letter held
    chain: Sequence[str] = ()  # the whole chain (competition math asks whether a name is bound only once)
    solved_by: dict[str, str] = field(default_factory=dict)  # the equation each solved name came from

    def rewrites(self, name: str) -> bool:
        """Does this step rewrite the equation that solved `name`, or its last rewrite that still held? Only
        connecting prose may stand between them ("Combining like terms, we get:", "Now, solve for x:"): no
        math, and no mention of the letter but as what to solve for."""
        start = max(self.bound_at.get(name, -1), self.held_at.get(name, -1))
        letter = re.compile(rf"(?<![A-Za-z]){re.escape(name)}(?![A-Za-z])")
        target = re.compile(
            rf"\b(?:solve|solving|isolate|isolating|find|finding)\s+(?:for\s+)?{re.escape(name)}\b"
        )
        between = range(start + 1, self.step_index)
        quiet = (
            j not in self.math_steps and not letter.search(target.sub(" ", self.texts[j])) for j in between
        )
        return start >= 0 and all(quiet)

    def crossed_frame(self, name: str) -> bool:
        """Was `name` bound in an earlier step, with a marker of a test or a refutation (`assertion`'s
        lexicon: "suppose", "check", "not possible", "I made an error", ...) written between that binding
        and the run read now? Then the value may belong to a premise the chain has left (a trial, a
        supposition, a refuted or corrected computation): no explicit link carries it to this claim. So
        does a heading that opens another part of the work ("For the final exam:"): the value was given
        under the part before."""
        start = self.bound_at.get(name, -1)
        if not 0 <= start < self.step_index:
            return False
        between = [
            self.texts[start][self.bound_offset.get(name, 0) :],
            *self.texts[start + 1 : self.step_index],
            self.step_text[: self.run_start],
        ]
        return any(FRAME_MARKER.search(text) or SCOPE_HEADING.search(text) for text in between)

    def bind(self, name: str, value: Fraction, *, solved: bool) -> None:
        self.bindings[name] = value
        self.bound_at[name] = self.step_index
        self.bound_offset[name] = self.run_start
        if solved:
            self.solved.add(name)
        else:
            self.solved.discard(name)


HardChecker = Callable[[Sequence[tuple[int, str, Mapping[str, str]]]], dict[int, list[ClaimResult]]]
EquationChecker = Callable[[Sequence[str]], dict[int, list[ClaimResult]]]


def check_steps(
    steps: Sequence[str],
    *,
    hard_checker: HardChecker | None = None,
    competition: bool = False,
    equation_checker: EquationChecker | None = None,
    problem_text: str | None = None,
) -> list[Verdict]:
    """One verdict per step: `correct` (claims found, all hold), `incorrect` (one fails: evidence names
    it and the expected value) or `unverifiable` (no claim could be judged).

    `hard_checker` judges LaTeX runs the fast path cannot; by default the bounded worker pool.
    `competition`: the chain solves a competition-style problem, where a failed claim is an error only
    when its reading is certain (see `competition`); its LaTeX runs get no values substituted, and each
    relation it derives from the one before is checked as an equation step (`equation_steps`, judged by
    `equation_checker`, by default in the bounded worker). In every chain, competition or word problem,
    every failed claim passes the last gate, `certainty.uncertain_reason` (given `problem_text`, an
    identity in the problem's unknowns is no error).
    Each verdict names the reading kind of its claims (`reading_kinds`).
    """
    if competition:
        # `100{,}001` is one number, `5!` in math is 120 (`factorials`); quadratic-formula lines restating
        # one name are one chain; a displayed line opening on `=` continues the line above
        steps = [
            continued_lines(joined_plus_minus_lines(factorials_written_out(thousands_joined(step))))
            for step in steps
        ]
        # a display opening on `=` after a few words, or at the head of the next step, goes on too
        steps = continued_across(steps)
    per_step: list[list[ClaimResult]] = []
    hard: list[tuple[int, str, Mapping[str, str]]] = []
    state = StepState()  # the walk's state after the last step (an empty chain keeps this one)
    for index, results, hard_runs, state in walk_steps(steps, competition=competition):
        per_step.append(results)
        snapshot = {} if competition else {name: str(value) for name, value in state.bindings.items()}
        for run in hard_runs:
            blanked = run.text != steps[index][run.start : run.end]
            text = run.text
            if competition and not blanked and not certain_context(steps[index], run.start, run.end):
                trimmed = trimmed_run(steps[index], run.start, run.end)
                text = steps[index][trimmed[0] : trimmed[1]] if trimmed else ""
            if competition and (blanked or not text):
                per_step[index].append(
                    ClaimResult(run.text, None, reason="competition math: the run is cut out of notation")
                )
                continue
            hard.append((index, text, snapshot))
            if (
                competition
            ):  # a statement in pure numbers joined by `\\Rightarrow` or `\\quad`: read alone too
                hard.extend((index, piece, snapshot) for piece in connector_pieces(text) if piece != text)
                # the statements joined by `\\ge`, `\\neq`, ... read alone (the whole run stays, unjudged)
                hard.extend((index, piece, snapshot) for piece in relation_pieces(text) if piece != text)
    for index, result in labelled_line_claims(steps, state.math_steps).items():
        per_step[index].append(gate_failed(result, steps[index]) if competition else result)
    if hard:
        checker = hard_checker or _default_hard_checker
        for index, results in checker(hard).items():
            if competition:
                results = [gate_failed(r, steps[index]) for r in results]
            per_step[index].extend(results)
    if competition:
        for index, step in enumerate(steps):
            per_step[index].extend(congruence_claims(step))
            per_step[index].extend(divisibility_claims(step))
        checker_eq = equation_checker or check_equation_pairs_bounded
        for index, results in checker_eq(steps).items():
            per_step[index].extend(r for r in results if r.holds is not None)
    # one gate for every route: a word problem's failed claims pass it too, read as its own kind
    per_step = [
        [_certain_or_unjudged(r, index, steps, problem_text, competition=competition) for r in results]
        for index, results in enumerate(per_step)
    ]
    return [step_verdict(results, competition=competition) for results in per_step]


def _certain_or_unjudged(
    result: ClaimResult,
    index: int,
    steps: Sequence[str],
    problem_text: str | None,
    *,
    competition: bool = True,
) -> ClaimResult:
    """A failed claim stays failed only where `certainty` finds its reading certain (every route)."""
    if result.holds is not False:
        return result
    kind = reading_kind(result, competition=competition)
    why = uncertain_reason(kind, result.claim, index, steps, problem_text, result.expected, result.reason)
    if why is None:
        return result
    return ClaimResult(result.claim, None, result.expected, f"not certain: {why}", result.kind)


def walk_steps(
    steps: Sequence[str], *, competition: bool = False
) -> Iterator[tuple[int, list[ClaimResult], list[Run], StepState]]:
    """Judge each step's plain runs in order, carrying one `StepState` through the chain; yields the step's
    index, results, hard runs and the state right after it (the same object, updated in place)."""
    state = StepState(chain=steps)
    for index, step in enumerate(steps):
        state.step_index = index
        state.texts.append(step)
        results, hard_runs = check_plain_step(step, state, competition=competition)
        if results or hard_runs:
            state.math_steps.add(index)
        yield index, results, hard_runs, state


def _default_hard_checker(
    items: Sequence[tuple[int, str, Mapping[str, str]]],
) -> dict[int, list[ClaimResult]]:
    return check_hard_runs_bounded(items)


def step_verdict(results: Sequence[ClaimResult], *, competition: bool = False) -> Verdict:
    """`incorrect` if any judged claim fails; `correct` only if claims were found and every one of them was
    judged and held; otherwise `unverifiable`. Evidence carries the counts and each claim's rule and reading
    kind; an `incorrect` is named by its most certain failed claim, and its `kind` (and a `correct`'s) is
    that claim's reading kind (`reading_kinds`).

    >>> step_verdict([ClaimResult("3 * 4 = 12", True, "12"), ClaimResult("2^(10^10) = x", None)]).label
    'unverifiable'
    """
    claims_only = [r for r in results if r.kind == "claim"]
    failed = [r for r in claims_only if r.holds is False]
    held = [r for r in claims_only if r.holds is True]
    unjudged = [r for r in claims_only if r.holds is None]
    claims = [
        {
            "claim": r.claim,
            "holds": r.holds,
            "expected": r.expected,
            "reason": r.reason,
            "kind": r.kind,
            "rule": r.rule,
            "reading": reading_kind(r, competition=competition) if r.holds is not None else None,
        }
        for r in results
    ]
    counts = {"judged": len(failed) + len(held), "held": len(held), "unjudged": len(unjudged)}
    evidence = {"claims": claims, **counts, "rules": sorted({r.rule for r in held if r.rule})}
    if failed:
        first, kind = first_failed(failed, competition=competition)
        return Verdict(
            "incorrect",
            f"claim {first.claim!r} is false (expected {first.expected})",
            {"failed_claim": first.claim, "expected": first.expected, **evidence},
            kind=kind,
        )
    if held and not unjudged:
        kind = held_kind(held, competition=competition)
        return Verdict("correct", f"{len(held)} claim(s) hold", evidence, kind=kind)
    if held:
        reason = f"{len(held)} claim(s) hold but {len(unjudged)} could not be judged"
    elif unjudged:
        reason = "claims could not be judged"
    else:
        reason = "no checkable claim"
    return Verdict("unverifiable", reason, evidence)


def check_plain_step(
    step: str, state: StepState, *, competition: bool = False
) -> tuple[list[ClaimResult], list[Run]]:
    """Judge the plain runs of one step (updating `state`); return the hard runs left for the worker."""
    state.step_text = step  # the readings that look around a run (clock times, glosses) need its step
    results: list[ClaimResult] = []
    hard_runs: list[Run] = []
    carry: tuple[Fraction, int] | None = None  # last run's final value and where that run ended
    for run in extract_runs(step):
        start, end = run.start, run.end
        if run.hard:
            hard_runs.append(run)
            carry = None
            continue
        state.run_start = start
        approximate = _says_approximate(step, start, end)
        whole = bool(_WHOLE_QUOTIENT.search(_sentence_after(step, end)))
        continued = carry[0] if carry is not None and step[carry[1] : start].strip() == "," else None
        run_results, final = _check_run(run, state, approximate, continued, whole_quotient=whole)
        if competition:
            if _algebra_beyond_linear(run, run_results):
                hard_runs.append(run)  # `(x+1)^2 = x^2 + 2x + 1`: SymPy reads it as algebra
                carry = None
                continue
            cut = any(t.kind == "sep" and t.text == "…" for t in run.tokens)  # its end was cut off
            blanked = run.text != step[start:end]  # a bracketed label `(r')` was taken out as prose
            context_ok = not (cut or blanked) and certain_context(step, start, end)
            if not (cut or blanked or context_ok) and trimmed_run(step, start, end):
                hard_runs.append(run)  # `f(x) = A = B`: the worker judges it without its cut side
                carry = None
                continue
            safe = _safe_names(run, state)
            run_results = [
                gate_failed(r, step, context_ok=context_ok, safe_names=safe, approximate=approximate)
                for r in run_results
            ]
        results.extend(run_results)
        carry = (final, end) if final is not None else None
    _forget_alternatives(step, state)
    return results, hard_runs


def _forget_alternatives(step: str, state: StepState) -> None:
    """A name this step bound and also gives another written value (`- a = 1, b = 3`, `- a = 2, b = 2`; "three
    solutions: y = 0, y = 2, y = -2"): one case per value, a list of alternatives; none of them is the
    name's value for later steps."""
    for name in [n for n, at in state.bound_at.items() if at == state.step_index and n in state.bindings]:
        given = re.compile(
            rf"(?<![A-Za-z0-9\\_.]){re.escape(name)}\s*=\s*(-?\d+(?:\.\d+)?)(?![\d.]*\s*[-+*/^(])"
        )
        if len({Fraction(value) for value in given.findall(step)}) >= 2:
            del state.bindings[name]
            state.solved.discard(name)


_BEYOND_LINEAR = (
    "power of an unknown",
    "non-linear product",
    "more than one unknown",
    "division by an unknown",
    "a side could not be read",
)
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")


def _algebra_beyond_linear(run: Run, results: Sequence[ClaimResult]) -> bool:
    """A run in letters that the linear fast path cannot evaluate and that holds no words (which SymPy
    would read as products of letters): the symbolic worker judges it, as algebra."""
    return (
        any(r.holds is None and r.reason in _BEYOND_LINEAR for r in results)
        and any(t.kind == "var" for t in run.tokens)
        and not _WORD.search(run.text)
    )


def _safe_names(run: Run, state: StepState) -> list[str]:
    """The run's names whose value was set once, unambiguously, by `x = value` before this run (never
    solved from an equation): a failed claim in them is judged in competition math."""
    names = {t.text for t in run.tokens if t.kind == "var"}
    return [
        name
        for name in sorted(names)
        if name in state.bindings
        and name not in state.solved
        and state.bound_at.get(name, state.step_index) < state.step_index
        and safe_binding(name, state.chain)
    ]


def _says_approximate(step: str, start: int, end: int) -> bool:
    """Is there an approximation word in the claim or right around it, within its sentence?"""
    before = step[max(0, start - _APPROX_BEFORE) : start]
    cuts = list(_SENTENCE_END.finditer(before))
    if cuts:
        before = before[cuts[-1].end() :]
    after = _sentence_after(step, end)[:_APPROX_AFTER]
    return bool(_APPROXIMATE.search(before + step[start:end] + after))


def _sentence_after(step: str, end: int, limit: int = 48) -> str:
    """The text right after a claim, up to the end of its sentence (at most `limit` characters)."""
    after = step[end : end + limit]
    cut = _SENTENCE_END.search(after)
    return after[: cut.start()] if cut else after


_CUT = "cut"  # a side whose start was cut off by words: not a claim side at all
_UNPARSED = "unparsed"  # a side that is there but cannot be read: its claims are unjudged
_PART = "part"  # a side read only up to an operator its words cut off: no value, its claims unjudged


def _split_sides(run: Run) -> tuple[list[tuple | str], list[list]]:
    """Each `=`-separated side's AST, or `_CUT` / `_UNPARSED`; also each side's tokens."""
    sides: list[list] = [[]]
    for tok in run.tokens:
        if tok.kind == "eq":
            sides.append([])
        else:
            sides[-1].append(tok)
    asts: list[tuple | str] = []
    kept: list[list] = []
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
        kept.append(side)
        if index == 0 and cut:
            asts.append(_CUT)  # "... + $5 on bananas = ...": the left side was cut off by words
            continue
        if not side or (len(side) == 1 and side[0].kind == "sep" and side[0].text == "…"):
            asts.append(_CUT)  # "A = 1/3 * Class C", "x =": the right side was cut off by words
            continue
        try:
            asts.append(parse_side(side))
        except NotEvaluable:
            asts.append(_UNPARSED)
    if len(asts) >= 2 and asts[-1] == _CUT and kept[-1] and kept[-1][0].kind == "sep":
        # "A = (1/2) + (1/4) * A" (a prose letter), "A = \frac{1}{2} \times \text{base}": the last side ran
        # on past an operator into words; what was read of it is a part, neither a value nor a judged side
        asts[-2] = _PART
    return asts, kept


def _check_run(
    run: Run,
    state: StepState,
    approximate: bool,
    continued: Fraction | None = None,
    *,
    whole_quotient: bool = False,
) -> tuple[list[ClaimResult], Fraction | None]:
    """Judge each pair of adjacent sides of one run; return the results and the run's final value.

    `continued` is the value the previous run of the step ended on when only a comma separates them
    (`5 + 3 = 8, + 1 = 9`): a run whose first side starts with an operator then continues that total.
    """
    asts, sides = _split_sides(run)
    explicit = any(t.kind == "eq" and t.text == EXPLICIT_EQUALS for t in run.tokens)
    results: list[ClaimResult] = []
    continuation = [False] * len(asts)
    if asts and asts[0] == _CUT and continued is not None:
        try:
            asts[0] = ("num_value", continued, parse_side_tail(sides[0]))
            continuation[0] = True
        except NotEvaluable:
            pass
    asts = [_resolve_continuation(node) for node in asts]
    start = 0
    first = asts[0] if asts else None
    if len(asts) >= 2 and isinstance(first, tuple) and first[0] == "var" and asts[1] in (_CUT, _PART):
        # "A = \frac{1}{2} \times \text{base} \times \text{height}": the name is defined anew by a formula
        # in words; the value it had before is not the one its next equation must meet
        state.bindings.pop(first[1], None)
        state.solved.discard(first[1])
    complete = len(asts) < 3 or asts[2] != _CUT  # "T = 1/3 * A": the value side runs on into words
    if (
        len(asts) == 2
        and isinstance(first, tuple)
        and first[0] == "var"
        and isinstance(asts[1], tuple)
        and bare_literal(asts[1]) is not None
        and hypothetical(state.step_text, run.start)
    ):
        # "If G = 26, then ...", "b = 0 or b = 5", "For x = 1: ...": a value tried or one branch, neither a
        # claim nor a binding
        return [ClaimResult(run.text, None, reason="a value tried or one branch (if, or, for, ...)")], None
    if (
        len(asts) >= 2
        and complete
        and isinstance(first, tuple)
        and first[0] == "var"
        and first[1] not in state.bindings
    ):
        value = _number(asts[1], state.bindings)
        if value is not None:
            state.bind(first[1], value, solved=False)
        start = 1
    for k in range(start, len(asts) - 1):
        left, right = asts[k], asts[k + 1]
        if left == _CUT or right == _CUT:
            continue
        claim = _side_text(run, k, len(asts), start)
        if left == _UNPARSED or right == _UNPARSED:
            results.append(ClaimResult(claim, None, reason="a side could not be read"))
            continue
        if left == _PART or right == _PART:
            results.append(ClaimResult(claim, None, reason="a side runs on into words: read only in part"))
            continue
        assert isinstance(left, tuple) and isinstance(right, tuple)
        bare = bare_literal(left) is not None
        if (
            (bare and bare_literal(right) is not None and (k == 0 or _has_words(run, sides[k], sides[k + 1])))
            or (bare and k == 0 and run.after_word)
            or (k == 0 and _share(left, right))
        ):
            continue  # "2 hours = 120 minutes", "Week 2 = 35 + 35": a conversion or a label, not arithmetic
        # a running total needs the chain to go on, and never reads an equality said in words
        followed = k + 2 < len(asts) and isinstance(asts[k + 2], tuple) and not explicit
        try:
            result = _judge(left, right, claim, state, approximate, running_total_ok=followed)
            if result.holds is False and whole_quotient and k == len(asts) - 2:
                result = _whole_quotient(left, right, claim, state.bindings) or result
            if result.holds is False and k == len(asts) - 2:
                rest = _REST_IN_UNITS.match(_sentence_after(state.step_text, run.end, 64))
                if rest and rest.group(1).lower() != rest.group(3).lower():
                    result = (
                        _quotient_and_rest(left, right, claim, state.bindings, int(rest.group(2))) or result
                    )
            if result.holds is False and k == 0 and _REMAINDER_OF.search(state.step_text[: run.start][-40:]):
                result = ClaimResult(claim, None, reason="the remainder of a division, not its quotient")
        except TooLarge as exc:
            result = ClaimResult(claim, None, reason=f"too large to evaluate: {exc}")
        except NotEvaluable as exc:
            result = ClaimResult(claim, None, reason=str(exc))
        if continuation[k] and result.holds is True:
            result = ClaimResult(result.claim, True, result.expected, result.reason, rule="running total")
        if result.holds is False and followed and _restarted(left, right, asts[k + 2], state.bindings):
            why = "the left's first terms, then the rest added on (a running total restarted): ambiguous"
            result = ClaimResult(claim, None, result.expected, why)
        if k == 0 and result.holds is False:
            result = _prose_operator_reading(run, sides[0], right, claim, state, approximate, result)
        if result.holds is False:
            ambiguity = _other_reading(run, k, claim, state, approximate)
            if ambiguity:
                result = ClaimResult(claim, None, reason=f"ambiguous: {ambiguity}")
        results.append(result)
    final = _number(asts[-1], state.bindings) if asts and isinstance(asts[-1], tuple) else None
    return results, final


def _prose_operator_reading(
    run: Run,
    first_side: list[Token],
    right: tuple,
    claim: str,
    state: StepState,
    approximate: bool,
    result: ClaimResult,
) -> ClaimResult:
    """A false claim whose spelled operator may join prose, not operands: unjudged if the rest holds.

    "her own 10 plus 5 + 12 + 9 = 26" reads `10 + 5 + 12 + 9 = 26` (false) or "10, plus the sisters'
    `5 + 12 + 9 = 26`" (true). When the symbolic part after the word holds on its own, the claim is
    ambiguous and not judged. (A claim that holds as a whole keeps its verdict: that is the arithmetic
    reading, and the tail alone rarely fits by chance.)
    """
    spelled = [
        i
        for i, tok in enumerate(first_side)
        if tok.kind == "op" and run.text[tok.start - run.start : tok.start - run.start + 1].isalpha()
    ]
    if not spelled:
        return result
    tail = first_side[spelled[-1] + 1 :]
    if not any(tok.kind == "op" and not run.text[tok.start - run.start].isalpha() for tok in tail):
        return result
    try:
        other = _judge(parse_side(tail), right, claim, state, approximate)
    except (NotEvaluable, TooLarge):
        return result
    if other.holds is not True:
        return result
    return ClaimResult(
        claim, None, reason="ambiguous: a spelled operator may join prose to the symbolic math after it"
    )


def _other_reading(run: Run, k: int, claim: str, state: StepState, approximate: bool) -> str | None:
    """Why a false claim may be no claim the text makes: another reading of its notation, or None."""
    if _holds_as_rate(claim, state, approximate):
        return "a rate written as N units/M units"
    if _CLOCK_TIME.search(state.step_text[run.start : run.end + 6]):
        return "clock times (10 pm - 10 am = 12 hours)"
    if k == 0 and _gloss_in_prose_sum(run, state.step_text):
        return "a bracketed term of a sum written partly in words"
    return None


# A clock time: its arithmetic wraps at 12 (`10 pm - 10 am = 12`), so a false reading of it is not judged.
_CLOCK_TIME = re.compile(r"(?i)(?<![\d.])(?:1[0-2]|0?[1-9])(?::[0-5]\d)?\s?[ap]\.?m\b")
# "30 minutes/5 articles": a rate of two quantities with units, which a reader groups as (30 / 5)
# (written tight; `60 miles / 30 miles/hour` is a plain division and stays judged)
_UNIT_RATE = re.compile(r"(\d+(?:\.\d+)?)\s*[A-Za-z]{2,}/(\d+(?:\.\d+)?)\s*[A-Za-z]{2,}")


def _holds_as_rate(claim: str, state: StepState, approximate: bool) -> bool:
    """Does a false claim hold once each tight `N units/M units` is read as one rate, `(N / M)`?

    "(4 hours * 60 minutes/hour) / 30 minutes/5 articles = 40" is false as written (240 / 30 / 5) and
    true as the writer meant it (240 / (30 / 5)): ambiguous, not judged. A claim false both ways stays
    false.
    """
    grouped = _UNIT_RATE.sub(r"(\1/\2)", claim)
    if grouped == claim:
        return False
    trial = copy.deepcopy(state)
    results = [r for run in extract_runs(grouped) for r in _check_run(run, trial, approximate)[0]]
    return bool(results) and all(r.holds is True for r in results)


_PROSE_SUM_TAIL = re.compile(r"[+*/×−-][^=+*/×−\-\n.;:!?]*[A-Za-z][^=+*/×−\-\n.;:!?]*$")


def _gloss_in_prose_sum(run: Run, step: str) -> bool:
    """Is the run's first side a bracketed gloss on a term of a sum the sentence writes partly in words?

    "Anthony's 12 + Leonel's (4 + 11) = 12 + 15 = 27": the run starts at `(4 + 11)`, but its `=` closes
    the whole sum `12 + (4 + 11)`, begun before the words. The claim `(4 + 11) = 12 + 15` is then no
    claim the text makes.
    """
    if not run.tokens or run.tokens[0].kind != "lp":
        return False
    return bool(_PROSE_SUM_TAIL.search(step[: run.start]))


def _has_words(run: Run, left: list[Token], right: list[Token]) -> bool:
    """Do words stand between two bare numbers (`2 hours = 120 minutes`, a conversion)? Without them, in a
    chain (`20 * 15 = 300 = 200`), the two numbers are claimed equal and are judged; a run that starts with
    a bare number (`13,15,17&19 = 4 lessons`) is a label or a count and is not."""
    if not left or not right:
        return True
    offset = run.start
    span = run.text[left[0].start - offset : right[-1].start - offset + len(right[-1].text)]
    return bool(re.search(r"[A-Za-z]", span))


def _share(left: tuple, right: tuple) -> bool:
    """`3/8 = $375`, `1/4 = 15 students`: a lone proper fraction put equal to a whole amount names a share
    of something, not a division; it is not judged (`3/8 = 0.375` is). So is one put equal to a product
    that takes that fraction of something (`1/3 weight of rice = (1/3) * 30 kg`)."""
    if left[0] != "num" or not left[1].fraction or not 0 < left[1].value < 1:
        return False
    written = bare_literal(right)
    if written is not None:
        return 1 < written.value
    return right[0] == "*" and any(
        factor[0] == "num" and factor[1].value == left[1].value for factor in _factors(right)
    )


def _factors(node: tuple) -> list[tuple]:
    return [f for child in node[1:] for f in _factors(child)] if node[0] == "*" else [node]


def parse_side_tail(tokens: list) -> tuple:
    """The AST of a side that starts with an operator (`+ 1`): the operator and its operand chain."""
    placeholder = Token("num", "0", -1, None)
    return parse_side([placeholder, *tokens])


def _resolve_continuation(node: tuple | str) -> tuple | str:
    """Put the carried value in place of the placeholder of `parse_side_tail`."""
    if not (isinstance(node, tuple) and node[0] == "num_value"):
        return node
    _, value, tail = node
    return _substitute_placeholder(tail, value)


def _substitute_placeholder(node: tuple, value: Fraction) -> tuple:
    if node[0] == "num" and node[1] is None:
        return ("num", Literal(value))
    if node[0] in ("num", "var"):
        return node
    return (node[0], *(_substitute_placeholder(child, value) for child in node[1:]))


def _side_text(run: Run, k: int, n_sides: int, start: int) -> str:
    text = " ".join(run.text.replace(EXPLICIT_EQUALS, "=").split())
    parts = [p.strip() for p in text.split("=")]
    if len(parts) != n_sides + (1 if text.startswith("=") else 0):
        return text
    offset = len(parts) - n_sides
    return f"{parts[offset + k]} = {parts[offset + k + 1]}"


def _number(node: tuple | str | None, bindings: Mapping[str, Fraction]) -> Fraction | None:
    if not isinstance(node, tuple):
        return None
    try:
        value = evaluate(node, bindings)
    except NotEvaluable:
        return None
    return value.const if value.is_number else None


def _value(node: tuple, bindings: Mapping[str, Fraction]) -> Linear:
    """A side's value; a percent in it is p/100 (`20% of 50`), never p."""
    return evaluate(node, bindings)


def _percent_form(node: tuple) -> bool:
    """May `= 25%` on the other side read as 25? Only where this side computes a percentage: `... * 100`
    at its top (`15/60 * 100 = 25%`), or percentage points in whole numbers (`100 - 53 = 47%`).
    Never when this side holds a percent itself (`20% * 50 = 1000%` is false) or a decimal (`0.2 * 50 = 10%`).
    """
    if node[0] == "*" and any(
        child[0] == "num" and child[1].value == 100 and not child[1].percent for child in node[1:]
    ):
        return True
    written = literals(node)
    return (
        bool(written)
        and all(
            lit.value.denominator == 1 and not lit.decimals and not lit.percent and not lit.fraction
            for lit in written
        )
        and node[0] in ("+", "-")
    )


def _judge(
    left: tuple,
    right: tuple,
    claim: str,
    state: StepState,
    approximate: bool,
    *,
    running_total_ok: bool = False,
) -> ClaimResult:
    result = _judge_with(left, right, claim, state.bindings, state, approximate, running_total_ok)
    if result.holds is True:
        # "100 - x + 10 = 60" right after the equation that solved x, and still fitting it: the rewrite
        # chain goes on from here (a letter met again after other math may name something new)
        for name in (_variables(left) | _variables(right)) & state.solved:
            if state.bound_at.get(name, -1) < state.step_index and state.rewrites(name):
                state.held_at[name] = state.step_index
    if result.holds is not False:
        return result
    # A name solved in this step is no premise of a relation beside the one it was solved from: one
    # expression put equal to two values (`2x - 9 = 3`, then `2x - 9 = -3`: "two cases", "or") are
    # alternatives, and two items of one list ("we get $x - 3 = 0$ and $x + 2 = 0$") one equation per factor
    for name in _variables(left) | _variables(right):
        solving = state.solved_by.get(name)
        if state.bound_at.get(name) != state.step_index or solving is None:
            continue
        if _shares_a_side(claim, solving):
            why = f"the same expression as the equation that solved {name}, with another value: alternatives"
            return ClaimResult(claim, None, result.expected, why)
        if _listed_with(solving, claim, state.step_text):
            why = f"listed beside the equation that solved {name} (`A and B`): an item of a list, not derived"
            return ClaimResult(claim, None, result.expected, why)
    # A value carried from an earlier step across a trial, a check or a refutation ("If we increase z by 1
    # ... This would require x + y + 295 = 297"; "I made an error ... B = 50 + 60 - 70"): the claim is read
    # with those names as unknowns, since nothing links it to the premise they were bound under
    crossed = {
        name
        for name in _variables(left) | _variables(right)
        if name in state.bindings and state.crossed_frame(name)
    }
    if crossed:
        fresh = {k: v for k, v in state.bindings.items() if k not in crossed}
        # (solved on a scratch copy: a value solved from a claim under a premise the chain left binds nothing
        # later claims would be held to)
        scratch = copy.copy(state)
        scratch.bindings, scratch.solved = dict(state.bindings), set(state.solved)
        scratch.bound_at, scratch.bound_offset = dict(state.bound_at), dict(state.bound_offset)
        scratch.solved_by = dict(state.solved_by)
        again = _judge_with(left, right, claim, fresh, scratch, approximate, running_total_ok)
        if again.holds is not False:  # it holds, or solves, only with those names free: not judged either way
            why = "read with the carried names as unknowns, not judged"
            return ClaimResult(claim, None, again.expected, why)
        return again
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
    rewrite_chain = all(state.rewrites(name) for name in stale)
    is_assignment = left[0] == "var" and bare_literal(right) is not None
    definitions = sum(_definitions(name, state.step_text) for name in stale)
    redefined = definitions > (1 if is_assignment else 0)
    if not redefined and (is_assignment or rewrite_chain):
        return result  # "x = 13" after solving x = 12, or "3x = 38" right after "3x + 4 = 40"
    fresh = {k: v for k, v in state.bindings.items() if k not in stale}
    return _judge_with(left, right, claim, fresh, state, approximate, running_total_ok)


def _shares_a_side(claim: str, other: str) -> bool:
    """Do two relations write the same expression in a name on one side (spacing and math delimiters aside)
    and differ on the other (`2x - 9 = 3`, `2x - 9 = -3`; not `2x + 1 = 5` and `x = 5`)?"""
    sides = [re.sub(r"[\s$]+", "", side) for side in claim.split("=")]
    others = [re.sub(r"[\s$]+", "", side) for side in other.split("=")]
    shared = {side for side in set(sides) & set(others) if re.search(r"[A-Za-z]", side)}
    return len(sides) == len(others) == 2 and sides != others and bool(shared)


# list punctuation, "and", "or", math delimiters, and the labels of listed options (`B.`, `(2)`, `b)`; a
# number with a point may number the lines of one derivation, so it is none)
_LIST_JOINT = re.compile(
    r"(?:[\s,;$]|\\[()\[\]]|\band\b|\bor\b|(?:^|(?<=\n))\s*[A-Z][.)](?=\s)"
    r"|\(\s*[A-Za-z0-9]{1,2}\s*\)|(?<![^\s])[a-z]\)(?=\s))*",
    re.IGNORECASE,
)


# another item of the list: inline math holding a relation (not the `$, so $` between two items' delimiters)
_INLINE_MATH = re.compile(r"\\\([^\n]*?=[^\n]*?\\\)|\$[^$\n]*=[^$\n]*\$")


def _listed_with(first: str, second: str, step: str) -> bool:
    """Is `second` written after `first` in the step with only list punctuation, "and" or "or", option
    labels and other items of the list (inline math) between (`$x - 3 = 0$ and $x + 2 = 0$`; `A. \\( 12 - t =
    4 \\)` ... `C. \\( 4 \\times t = 12 \\)`)?"""
    second_written = re.compile(spaced(second.replace("$", "")))
    for found in re.finditer(spaced(first.replace("$", "")), step):
        after = second_written.search(step, found.end())
        if after is None:
            return False  # not written after this place, so after no later one either
        if _LIST_JOINT.fullmatch(_INLINE_MATH.sub(" ", step[found.end() : after.start()])):
            return True
    return False


def _definitions(name: str, text: str) -> int:
    """How often `text` sets the letter (`x = 12`, `so x = 3`); `66 + x = 84` and `3x = 12` do not."""
    count = 0
    for match in re.finditer(rf"(?<![A-Za-z]){re.escape(name)}\s*=", text):
        before = text[: match.start()].rstrip()
        if not before or not (before[-1] in "+-*/×÷^(" or before[-1].isdigit()):
            count += 1
    return count


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
    running_total_ok: bool = False,
) -> ClaimResult:
    left_value, right_value = _value(left, bindings), _value(right, bindings)
    if not (left_value.is_number and right_value.is_number):
        return _solve(left_value, right_value, claim, state)
    expected = format_value(left_value.const)
    right_literal, left_literal = bare_literal(right), bare_literal(left)
    if right_literal is not None:
        rule = match_rule(
            left_value.const, right_literal, approximate=approximate, percent_as_number=_percent_form(left)
        )
        if rule:
            return ClaimResult(claim, True, expected, rule=rule)
    elif left_literal is not None:
        expected = format_value(right_value.const)
        rule = match_rule(
            right_value.const, left_literal, approximate=approximate, percent_as_number=_percent_form(right)
        )
        if rule:
            return ClaimResult(claim, True, expected, rule=rule)
    elif _close(left_value.const, right_value.const):
        return ClaimResult(claim, True, expected, rule="exact")
    lead = leading_literal(right)
    if running_total_ok and lead is not None:
        # "5 + 3 = 8 + 1 = 9" reads as a running total (8, then + 1 = 9) or as the false "5 + 3 = 8 + 1".
        # Written without the comma of `5 + 3 = 8, + 1 = 9` it is not judged either way. Without a next
        # side, "5 + 3 = 8 + 1" is just false.
        if match_rule(left_value.const, lead, approximate=approximate):
            return ClaimResult(claim, None, expected, "a running total or a false equation: ambiguous")
    if _has_cents(left) or _has_cents(right):
        # "900 cents / 100 = 9 dollars": cents read as a count of cents, not as dollars, on both sides
        as_count = _cents_as_count(left), _cents_as_count(right)
        plain = _judge_with(*as_count, claim, bindings, state, approximate)
        if plain.holds is True:
            return ClaimResult(claim, True, plain.expected, rule="cents as a count")
    return ClaimResult(claim, False, expected, "arithmetic does not hold")


def _restarted(left: tuple, right: tuple, following: tuple, bindings: Mapping[str, Fraction]) -> bool:
    """`a + b + c = a + b = s + c`: is `right` the first terms of `left`, and the side after it that sum's
    value with the rest added on (it leads with `right`'s value and comes to `left`'s)? Then the chain works
    `left` out term by term; read pairwise, the middle link would be a false equation. A side after it
    that drops the rest (`8 - 6 + 7 = 8 - 6 = 2`) leaves the link false."""
    if not _first_terms(left, right):
        return False
    try:
        values = [_value(node, bindings) for node in (left, right, following)]
    except (NotEvaluable, TooLarge):
        return False
    lead = leading_literal(following)
    if lead is None or not all(v.is_number for v in values):
        return False
    whole, first, after = (v.const for v in values)
    return _close(lead.value, first) and _close(after, whole)


def _first_terms(left: tuple, right: tuple) -> bool:
    """Is `right` the first terms of the sum or difference `left` (`a + b + c` and `a + b`), as a running
    total restarted in a continued chain writes it?

    >>> from prm_factory.verifiers.math.arithmetic import lex, parse_side
    >>> _first_terms(parse_side(lex("9 + 4 + 5")), parse_side(lex("9 + 4"))), _first_terms(
    ...     parse_side(lex("9 + 4 + 5")), parse_side(lex("4 + 5")))
    (True, False)
    """
    node = left
    while node[0] in ("+", "-"):
        node = node[1]
        if node == right:
            return True
    return False


def _has_cents(node: tuple) -> bool:
    """A literal written in cents (`26 cents`), which the extractor reads as a percent of a dollar."""
    if node[0] == "num":
        return bool(node[1].percent and node[1].currency)
    return node[0] != "var" and any(isinstance(c, tuple) and _has_cents(c) for c in node[1:])


def _cents_as_count(node: tuple) -> tuple:
    if node[0] == "num":
        lit = node[1]
        if lit.percent and lit.currency:
            return ("num", Literal(lit.value, lit.decimals, False, False, lit.fraction))
        return node
    if node[0] == "var":
        return node
    return (node[0], *(_cents_as_count(c) if isinstance(c, tuple) else c for c in node[1:]))


def _whole_quotient(
    left: tuple, right: tuple, claim: str, bindings: Mapping[str, Fraction]
) -> ClaimResult | None:
    """`13 / 6 = 2` said with its remainder or in whole units: the floor of a positive division holds."""
    written = bare_literal(right)
    if left[0] != "/" or written is None or written.value.denominator != 1 or written.percent:
        return None
    value = _value(left, bindings)
    if not value.is_number or value.const <= 0 or math.floor(value.const) != written.value:
        return None
    return ClaimResult(claim, True, format_value(value.const), rule="quotient with remainder")


def _quotient_and_rest(
    left: tuple, right: tuple, claim: str, bindings: Mapping[str, Fraction], rest: int
) -> ClaimResult | None:
    """`12659 \\div 100 = 126` followed by "dollars and 59 cents": the whole part of a positive division,
    with what is left written in a smaller unit. It holds where the whole part is the floor and the rest is
    the remainder (`12659 = 126 \\cdot 100 + 59`); a rest that is not the remainder may be the fraction in
    another unit (`150 / 60 = 2 hours and 30 minutes`), whose factor the claim does not state: unjudged. A
    whole part that is not the floor stays false (None here)."""
    written = bare_literal(right)
    if left[0] != "/" or written is None or written.value.denominator != 1 or written.percent:
        return None
    dividend, divisor, value = _value(left[1], bindings), _value(left[2], bindings), _value(left, bindings)
    if not (dividend.is_number and divisor.is_number and value.is_number) or value.const <= 0:
        return None
    if math.floor(value.const) != written.value:
        return None
    if dividend.const - written.value * divisor.const == rest:
        return ClaimResult(claim, True, format_value(value.const), rule="quotient with its rest in units")
    return ClaimResult(
        claim, None, format_value(value.const), "the rest is in another unit, factor not stated"
    )


def _close(a: Fraction, b: Fraction) -> bool:
    return a == b or abs(a - b) <= RELATIVE_TOLERANCE * max(abs(a), abs(b))


def _named_unknown(letter: str, chain: Sequence[str]) -> bool:
    """Does the chain use `letter` as a name: set it (`x = 0`, `x=-2`), or solve for it or find it?"""
    name = re.escape(letter)
    pattern = re.compile(
        rf"(?<![A-Za-z0-9\\_]){name}\s*=(?!=)|\b(?:for|of|find|solve)\s+\$?\\?\(?\s*{name}(?![A-Za-z0-9])"
    )
    return any(pattern.search(text) for text in chain)


def _solve(left: Linear, right: Linear, claim: str, state: StepState) -> ClaimResult:
    """One unknown, linear: solve it and remember the value (`3x = 36` gives x = 12); not itself a check."""
    if left.coef and right.coef and left.var == right.var and left.const == 0 == right.const:
        # Every term carries the letter: a unit ("200g + 100g = 300g", "2 * 2L = 4L"), compare the numbers.
        holds = _close(left.coef, right.coef)
        if not holds and _named_unknown(left.var, state.chain):
            # ... unless the chain names the letter as an unknown (`y = -8x`, `x = 0`, "solve for x"): then
            # `-6x + 8(-8x) = 15(-8x)` is an equation in it (true for x = 0), not a sum of lengths
            why = f"every term carries {left.var}, an unknown the chain names: an equation in it, not a unit"
            return ClaimResult(claim, None, format_value(left.coef), why)
        return ClaimResult(claim, holds, format_value(left.coef), "unit letter", rule="unit letter")
    if left.coef and right.coef:
        # A rewrite ("71 + P - 3 = 68 + P"): it must hold for every P when the P terms agree.
        if left.coef == right.coef and left.var == right.var:
            holds = left.const == right.const
            return ClaimResult(
                claim,
                holds,
                format_value(left.const),
                "rewrite in one unknown",
                rule="rewrite in one unknown",
            )
        return ClaimResult(claim, None, reason="unknown on both sides: a rewrite, not checked")
    coef = left.coef - right.coef
    var = left.var if left.coef else right.var
    if var is None or coef == 0:
        return ClaimResult(claim, None, reason="unknown cancels out")
    value = (right.const - left.const) / coef
    state.bind(var, value, solved=True)
    state.solved_by[var] = claim
    return ClaimResult(claim, None, reason=f"solved {var} = {format_value(value)}", kind="definition")
