"""Reference-aligned step labels: follow a chain against the quantities of a worked reference solution.

Real first errors are mostly setup mistakes (the wrong quantities combined), misread facts and logic
slips, which an arithmetic checker cannot see: `16 * 3 = 48` is true arithmetic and still off track when
the reference takes `16 - 3 - 4 = 9`. The reference solution says which quantities a correct chain needs
(`labels.reference_quantities`); this module reads each step's new numbers and asks whether they belong.

Rules, in order (each verdict's evidence names its rule):
- no readable reference solution: every step `unverifiable` (`no-reference`), never a guess;
- a step whose new numbers all belong to the reference is `correct` (`on-reference`); a number the step
  computes (`0.2 * 15 = 3`) belongs only if the solution works it out too, not merely because the
  question gives the same number, and a value the solution only passes through as a partial (120 in
  `40 + 20 + 80`) belongs only when computed from that expression's numbers (`40 * 3 = 120` does not);
- the value a step's equation forces on its unknown (`3x + x = 160` gives x = 40) is a number the step
  computes, as if written: a setup error written as an equation brings in its wrong quantity there;
- in a chain whose outcome is `incorrect` (and whose last step does not state the reference answer, which
  would contradict the grade), the first step that brings in a number the reference lacks, and either
  claims it as a result (`... = 21`, "which is 21") or goes on to use it (a later step repeats it, or it
  is the final answer), is `incorrect` (`off-reference`); later steps that bring in further such
  numbers are `incorrect` too (`off-reference-downstream`);
- in such a chain, an earlier step that stops a reference remainder halfway (`16 - 3 = 13` where the
  reference takes `16 - 3 - 4`) and that the chain builds on without ever reaching the full value is the
  first error instead (`unfinished-remainder`): the partial was taken for the result;
- an `incorrect` chain with no off-reference number ends on a reference quantity that is not the answer
  (`answers-other-quantity`): the step that first worked that value out is `incorrect` when the chain
  only restates it afterwards ("#### 350000" after `320,000 + 30,000 = 350,000`, which left out the
  twins), else the step that concludes with it;
- in such a chain, the plan that the first flagged step carries out is the first error instead
  (`plan-carried-out`): among the steps right before it that compute nothing (no number, or only restated
  ones), the earliest that names an operation the flagged step performs ("we multiply the monthly bill by
  the electricity cost", then `400 * 800 = 320000`). Not where the flagged step's error is a slip (a
  false claim whose true value is a reference quantity) or a misread operand (one of the solution's
  written operations with one operand swapped: `10 * 2` where it has `9 * 2`): those leave the plan
  right. A plan naming no operation ("let's break it down") or another one stays as it was;
- in any other chain (outcome correct, or not judged) an off-reference number is an alternative route or
  unknown: `unverifiable`. Steps without numbers are `unverifiable`.

A competition-style (MATH) worked solution, one with a `\\boxed{}` answer and neither GSM8K's `<<...>>`
annotations nor its `#### N` line, takes another route through numbers of its own far more often: on
ProcessBench's math split with MATH's worked solutions, the rules above put half of their flags up to the
marked first error on right steps (precision 50.8 %). With such a solution (`math_style` in the evidence):
- a step's number inside an expression with a variable or a function (`2r^2 - 14r`, `\\frac{n(n+1)}{2}`,
  `\\sqrt{5}`), an exponent or an index (`10^8`, `a_3`) is structure, not a quantity: only the numbers of
  variable-free arithmetic and stated values (`50 - 41 = 9`, `x = 5`) are aligned (`correct` as above);
- an off-reference number on the way is never flagged, nor is a plan; in a wrong chain only its answer is
  judged: a boxed single number (else, without a box, its last number) that the reference lacks is
  `incorrect` at the step that first writes it (`final-off-reference`): the error is there or before it.
  An answer that is an expression, or a reference quantity, is not judged.

>>> from schemas.records import Problem
>>> problem = Problem("p", "gsm8k", "math", "Janet's ducks lay 16 eggs. She eats 3 and bakes with 4. "
...     "She sells the rest at $2 each. How much does she make?",
...     reference_answer="18",
...     reference_solution="16 - 3 - 4 = <<16-3-4=9>>9 eggs.\\n9 * 2 = <<9*2=18>>18\\n#### 18")
>>> wrong = ["She has 16 - 3 = 13 eggs.", "13 * 2 = 26", "The answer is 26."]
>>> [v.label for v in reference_step_labels(problem, wrong, "incorrect")]
['incorrect', 'incorrect', 'unverifiable']
>>> right = ["She has 16 - 3 - 4 = 9 eggs.", "9 * 2 = 18"]
>>> [v.label for v in reference_step_labels(problem, right, "correct")]
['correct', 'correct']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from prm_factory.labels.boxed_answer import first_writing, is_expression, last_box
from prm_factory.labels.reference_quantities import (
    ReferenceQuantities,
    format_quantity,
    literal_readings,
    reference_quantities,
    strip_step_marker,
    text_numbers,
    unit_factors,
    with_sign,
    written_operations,
)
from prm_factory.schemas.external_chains import boxed_content
from prm_factory.schemas.records import Problem
from prm_factory.verifiers.math.public import (
    Literal,
    StepState,
    Token,
    check_plain_step,
    lex,
    round_half_up,
    truncate,
    walk_steps,
)
from prm_factory.verifiers.protocol import Verdict

REFERENCE_LABELER: str = "reference-align"
REFERENCE_VERSION: str = "1.7.1"

# How many steps before the one stating a wrong chain's answer its first writing may be flagged. Further
# back, the same value is as often a right intermediate that the answer coincides with (`25\\pi`, the area
# of a whole circle, boxed for a region made of quarter circles) as the error's start: on ProcessBench's
# math dev split 6 first errors against 7 right steps, while within two steps 46 against 4.
ANSWER_REACH = 2

_NEUTRAL = frozenset({Fraction(0), Fraction(1)})  # counts and units ("1 hour", "0 left") carry no decision


@dataclass(frozen=True)
class _StepNumber:
    literal: Literal
    readings: tuple[Fraction, ...]
    stated_result: bool = False  # written right after `=` or "is / equals / gives ...": the step claims it
    computed: bool = False  # the result of an operation written before it (`0.2 * 15 = 3`)
    operands: tuple[tuple[Fraction, ...], ...] = ()  # readings of the numbers it was computed from
    solved: bool = False  # not written: the value the step's equation forces on its unknown

    @property
    def text(self) -> str:
        return format_quantity(self.literal.value) + ("%" if self.literal.percent else "")


_RESULT_WORDS = frozenset({"is", "are", "was", "were", "equals", "gives", "get", "gets", "makes", "be"})


def _step_numbers(step: str, math_style: bool = False) -> list[_StepNumber]:
    """The step's numbers as quantities; with `math_style`, those in symbolic expressions left out."""
    numbers: list[_StepNumber] = []
    previous = None
    operated = False  # an operator since the last word: `0.2 * 15 = 3` computes its 3
    operands: set[Fraction] = set()  # `150 / 1 = 150` restates an operand: not a computed quantity
    run: list[tuple[Fraction, ...]] = []  # readings of the numbers of the computation so far
    tokens = [tok for tok in lex(strip_step_marker(step)) if tok.kind != "skip"]
    symbolic = _symbolic_numbers(tokens) if math_style else set()
    for position, tok in enumerate(tokens):
        if tok.kind == "num" and tok.literal is not None and position in symbolic:
            operated = True  # a structural number still makes what follows `=` a computation
        elif tok.kind == "num" and tok.literal is not None:
            result = previous is not None and (
                previous.kind == "eq" or (previous.kind == "word" and previous.text.lower() in _RESULT_WORDS)
            )
            readings = literal_readings(tok.literal)
            computed = (
                previous is not None
                and previous.kind == "eq"
                and operated
                and not operands.intersection(readings)
                and bool(run)  # `(\text{New}) - (\text{Lost}) = 3000` computes nothing: no number before it
            )
            computed_from = tuple(run) if computed else ()
            numbers.append(_StepNumber(tok.literal, readings, result, computed, computed_from))
            operands.update(readings)
            run.append(readings)
        if tok.kind == "op":
            operated = True
        elif tok.kind == "word" and len(tok.text) > 1 and not tok.text.startswith("\\"):
            # a word ends the computation ("so", "which"); a LaTeX gloss (`\\text{ acres}`) does not
            operated = False
            operands.clear()
            run.clear()
        previous = tok
    return numbers


# LaTeX commands of plain arithmetic; any other command (`\\sqrt`, `\\pi`, `\\log`, `\\binom`, `\\sum`) makes
# its expression symbolic
_ARITHMETIC_COMMANDS = frozenset(
    {"\\frac", "\\dfrac", "\\tfrac", "\\cdot", "\\times", "\\div", "\\left", "\\right", "\\text", "\\,"}
)
_ARTICLES = frozenset({"a", "A", "I"})  # one-letter English words, not variables


def _is_symbol(tok: Token) -> bool:
    if tok.kind == "latex":
        return tok.text not in _ARITHMETIC_COMMANDS
    if tok.kind == "word":
        return (len(tok.text) == 1 and tok.text.isalpha() and tok.text not in _ARTICLES) or "_" in tok.text
    return False


def _symbolic_numbers(tokens: Sequence[Token]) -> set[int]:
    """Positions of the numbers that are structure in a competition-style step: those of an expression
    (tokens between `=`, a delimiter and a word) holding a variable or a function, and powers and
    indices (either side of `^`, after `_`).

    >>> tokens = [t for t in lex("So 2r^2 - 14r = 0, and 50 - 41 = 9, 2^3 = 8.") if t.kind != "skip"]
    >>> sorted(tokens[i].text for i in _symbolic_numbers(tokens))
    ['14', '2', '2', '2', '3']
    """
    found: set[int] = set()
    expression: list[int] = []
    has_symbol = False

    def close() -> None:
        if has_symbol:
            found.update(i for i in expression if tokens[i].kind == "num")
        expression.clear()

    for position, tok in enumerate(tokens):
        is_word = tok.kind == "word" and not _is_symbol(tok)
        if tok.kind in ("eq", "sep") or is_word:
            close()
            has_symbol = False
            continue
        expression.append(position)
        has_symbol = has_symbol or _is_symbol(tok)
        if tok.text == "^" or tok.text == "_":
            found.update(
                i for i in (position - 1, position + 1) if 0 <= i < len(tokens) and tokens[i].kind == "num"
            )
    close()
    return found


def is_math_style(solution: str | None) -> bool:
    """A competition-style worked solution: a `\\boxed{}` answer, no GSM8K annotation or `#### N` line.

    >>> is_math_style("We get $8^6=\\\\boxed{262144}$.")
    True
    >>> is_math_style("9 * 2 = <<9*2=18>>18\\n#### 18")
    False
    """
    if not solution or "\\boxed" not in solution:
        return False
    return "<<" not in solution and _FINAL_LINE.search(solution) is None


_FINAL_LINE = re.compile(r"^\s*####", re.MULTILINE)


def _same(written: _StepNumber, value: Fraction) -> bool:
    """Written number equals `value`, allowing the rounding or truncation a shown decimal implies."""
    for reading in written.readings:
        if reading == value or reading == -value:
            return True
        places = written.literal.decimals
        if places and (
            round_half_up(abs(value), places) == abs(reading) or truncate(abs(value), places) == abs(reading)
        ):
            return True
    return False


def _reference_rule(
    number: _StepNumber,
    ref: ReferenceQuantities,
    written: Sequence[_StepNumber] = (),
    step_units: frozenset[Fraction] = frozenset(),
) -> str | None:
    """Why the number belongs to the reference (`reference`, `unit-conversion`, `neutral`), or None.

    A unit conversion counts only when its factor is written in the same step (`2 * 60 = 120`): a factor
    merely implied by a unit word would let too many wrong products through (`2 * 24`). A bare factor
    (`60`) is neutral only in a step that names its unit ("60 minutes").
    """
    if number.computed and ref.worked:
        # a worked-out result must be one the solution works out: `0.2 * 15 = 3` is no reference
        # quantity because the question happens to give a 3 (hours)
        if any(
            reading in ref.worked and ref.supports(reading, number.operands) for reading in number.readings
        ):
            return "reference"
    elif any(reading in ref.values or -reading in ref.values for reading in number.readings):
        return "reference"
    if any(r in _NEUTRAL or r in (ref.unit_factors & step_units) for r in number.readings):
        return "neutral"
    if number.literal.decimals and any(_same(number, value) for value in ref.values):
        return "reference"
    in_step = {r for other in written if other is not number for r in other.readings}
    for factor in ref.unit_factors & in_step:
        if any(
            _same(number, value * factor) or _same(number, value / factor) for value in ref.values if value
        ):
            return "unit-conversion"
    return None


def _is_known(number: _StepNumber, known: Sequence[_StepNumber]) -> bool:
    return any(_same(number, seen_reading) for seen in known for seen_reading in seen.readings)


def _final_value(step_numbers: Sequence[Sequence[_StepNumber]]) -> _StepNumber | None:
    for numbers in reversed(step_numbers):
        if numbers:
            return numbers[-1]
    return None


def _used_later(
    number: _StepNumber, later: Sequence[Sequence[_StepNumber]], final: _StepNumber | None
) -> bool:
    if final is not None and _same(final, number.literal.value):
        return True
    return any(_same(other, number.literal.value) for numbers in later for other in numbers)


def reference_step_labels(problem: Problem, steps: Sequence[str], outcome: str) -> list[Verdict]:
    """One verdict per step from aligning the chain with `problem.reference_solution` (rules: module doc)."""
    ref = reference_quantities(problem.text, problem.reference_solution, problem.reference_answer)
    if ref is None:
        reason = (
            "no reference solution"
            if not (problem.reference_solution or "").strip()
            else "reference solution has no readable quantity"
        )
        return [Verdict("unverifiable", reason, {"rule": "no-reference"}) for _ in steps]
    math_style = is_math_style(problem.reference_solution)
    question_numbers = _step_numbers(problem.text)
    written = [_step_numbers(step, math_style) for step in steps]
    step_numbers = [
        [*numbers, *solved] for numbers, solved in zip(written, _solved_unknowns(steps, written), strict=True)
    ]
    final = _final_value(step_numbers)
    # A chain graded wrong whose last step states the reference answer is conflicting evidence (the grade
    # may have read a trailing number): flag nothing there.
    last = next((numbers for numbers in reversed(step_numbers) if numbers), [])
    states_answer = ref.answer is not None and any(_same(number, ref.answer) for number in last)
    boxed_at = last_box(steps) if math_style else None
    box = boxed_at[1] if boxed_at is not None else None
    boxed = one_number(box)
    if box is not None:  # the grade read the box, so only a box holding the reference answer conflicts
        states_answer = boxed is not None and ref.answer is not None and boxed == ref.answer
    wrong_chain = outcome == "incorrect" and not states_answer
    judge_steps = wrong_chain and not math_style  # competition solutions: only the final value is judged
    verdicts: list[Verdict] = []
    known: list[_StepNumber] = list(question_numbers)
    first_error: int | None = None
    off_seen: list[_StepNumber] = []
    for index, numbers in enumerate(step_numbers):
        # a result the step computes is new unless the chain itself had it: that the question gives the
        # same number does not make `0.2 * 15 = 3` a known quantity
        worked_out = [k for k in known if k.stated_result]
        new = [n for n in numbers if not _is_known(n, worked_out if n.computed else known)]
        units = frozenset(unit_factors(steps[index]))
        off = [number for number in new if _reference_rule(number, ref, numbers, units) is None]
        rejoined = [number for number in off if _rejoins(number, index, step_numbers, ref, known)]
        off = [number for number in off if number not in rejoined]
        used_off = [
            number
            for number in off
            if number.stated_result
            or _used_later(number, step_numbers[index + 1 :], final)
            or index == len(steps) - 1
        ]
        builds_on_off = [number for number in numbers if number not in new and _is_known(number, off_seen)]
        known.extend(numbers)
        off_seen.extend(off)
        verdict = _step_verdict(
            numbers, new, off, used_off, builds_on_off, units, ref, outcome, judge_steps, first_error
        )
        if rejoined and verdict.label == "correct":
            verdict = Verdict(
                "unverifiable",
                f"another route: {rejoined[0].text} is not in the reference, but the chain reaches a "
                "reference quantity from it",
                {"rule": "rejoins-reference", "quantities": [n.text for n in rejoined]},
            )
        if verdict.evidence.get("rule") == "off-reference":
            first_error = index
        verdicts.append(verdict)
    if judge_steps:
        _flag_unfinished_remainders(verdicts, step_numbers, final, ref)
        if not any(v.label == "incorrect" for v in verdicts) and final is not None:
            _flag_other_quantity(verdicts, steps, step_numbers, final, ref)
        _flag_plan_carried_out(verdicts, steps, step_numbers, ref)
    if math_style:
        if boxed_at is not None:
            answered_at, answer = boxed_at[0], boxed
        else:  # no box: the chain's answer is the last number it writes
            answered_at = next((i for i in reversed(range(len(steps))) if step_numbers[i]), 0)
            answer = final.literal.value if final is not None else None
        if wrong_chain and answer is not None:
            _flag_final_value(verdicts, step_numbers, answer, ref, answered_at - ANSWER_REACH, steps, box)
        elif wrong_chain and box is not None:
            _flag_final_expression(verdicts, steps, box, answered_at - ANSWER_REACH)
        verdicts = [replace(v, evidence={**v.evidence, "math_style": True}) for v in verdicts]
    return verdicts


def boxed_number(text: str) -> Fraction | None:
    r"""The value of the last `\boxed{}` of `text` when it holds one number and nothing else (`\frac{3}{4}`,
    `-12`, `10,\!080`); None for an expression, a tuple, a unit, or no closed box.

    >>> boxed_number(r"So it is $\boxed{\frac{3}{4}}$."), boxed_number(r"$\boxed{2\sqrt{5}}$")
    (Fraction(3, 4), None)
    """
    return one_number(boxed_content(text))


def one_number(answer: str | None) -> Fraction | None:
    r"""The value of `answer` when it is one number and nothing else (`-\frac{1}{2}`, `10,\!080`)."""
    if answer is None or not _ONE_NUMBER.fullmatch(answer.replace(" ", "")):
        return None
    numbers = text_numbers(answer)
    if len(numbers) != 1:
        return None
    return with_sign(answer, numbers[0][0])


# one number: signed, a fraction of two integers, or with thousands separators; nothing else
_ONE_NUMBER = re.compile(
    r"-?(?:\\[dt]?frac\{\d+\}\{\d+\}|\d{1,3}(?:,(?:\\!)?\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
)


def _flag_final_value(
    verdicts: list[Verdict],
    step_numbers: Sequence[Sequence[_StepNumber]],
    value: Fraction,
    ref: ReferenceQuantities,
    earliest: int,
    steps: Sequence[str],
    box: str | None,
) -> None:
    """A wrong chain's boxed answer that the reference lacks is wrong where the chain first writes it, when
    that is no earlier than step `earliest` (`ANSWER_REACH`). Where no step states it as a quantity (a
    number only in words around it or in the box), the first step writing the box's text alone counts.

    In a competition solution another route brings in numbers of its own, so an off-reference number on
    the way proves little; the wrong answer itself does. The step that first produces it holds the error
    or follows it (an error carries into the answer), so the flag is rarely early. A boxed answer that is a
    reference quantity (or its negative) is judged too: the chain took a right intermediate for the answer
    or lost a sign, where it first writes it near the box (on the dev split 11 more exact first errors, 1
    right step flagged). An unboxed "answer" (the last number written) that is a reference quantity is not
    judged: it may be any trailing number (there 4 of 6 such flags fell on right steps).
    """
    if box is None and (value in ref.values or -value in ref.values):
        return
    index = next((i for i, numbers in enumerate(step_numbers) if _states(numbers, value)), None)
    if index is None and box is not None:
        index = first_writing(steps, box)
    if index is None or index < earliest:
        return
    text = format_quantity(value)
    verdicts[index] = Verdict(
        "incorrect",
        f"first writes {text}, the chain's wrong boxed answer, which the reference does not have",
        {"rule": "final-off-reference", "final_quantity": text, "nearest_reference": ref.nearest(value)},
    )


def _flag_final_expression(verdicts: list[Verdict], steps: Sequence[str], box: str, earliest: int) -> None:
    """A wrong chain's boxed expression (`27\\sqrt{3}`, `3a-2`) is wrong where the chain first writes it
    standing alone (`labels.boxed_answer`), when that is no earlier than step `earliest`; as for a boxed
    number, one the worked solution also writes is judged too (a right intermediate taken for the answer).
    Not judged where no step writes it alone."""
    if not is_expression(box):
        return
    index = first_writing(steps, box)
    if index is None or index < earliest:
        return
    verdicts[index] = Verdict(
        "incorrect",
        f"first writes {box}, the chain's wrong boxed answer, which the reference does not have",
        {"rule": "final-off-reference", "final_quantity": box},
    )


def _solved_unknowns(
    steps: Sequence[str], written: Sequence[Sequence[_StepNumber]]
) -> list[list[_StepNumber]]:
    """The value each step's equation fixes for its unknown (`3x + x = 160` gives x = 40), per step.

    A setup error written as an equation (`2(2E) + E = 45`) states no wrong number itself: the value it
    forces is the quantity it brings in, computed from the equation's numbers (`written`, per step). The
    claim checker solves one-unknown linear equations as it walks the chain; a value bound in this step
    is taken here.
    """
    found: list[list[_StepNumber]] = []
    for index, _, _, state in walk_steps(steps):
        operands = tuple(number.readings for number in written[index])
        found.append(
            [
                _StepNumber(Literal(value), (value,), True, True, operands, solved=True)
                for name, value in state.bindings.items()
                if name in state.solved and state.bound_at.get(name) == index
            ]
        )
    return found


def _rejoins(
    number: _StepNumber,
    index: int,
    step_numbers: Sequence[Sequence[_StepNumber]],
    ref: ReferenceQuantities,
    known: Sequence[_StepNumber],
) -> bool:
    """Is `number` an intermediate of another route, which the chain follows back onto the reference?

    A correct chain may take a route the reference does not (total points first, then baskets:
    `9 + 6 = 15`, `15 / 3 = 5`); its intermediates are off-reference, but each is stated as a result
    (`= 15`) of one operation on quantities the chain already has, and a later result computed next to
    it is a derived reference quantity the chain had not stated before. The route may run through
    further such intermediates (net change per day `3000 - 900 = 2100`, then `2100 * 7 = 14700`, then
    `12500 + 14700 = 27200`): a result computed from a route value by one operation joins the route.
    Invented or miscomputed numbers fail the first test, and wrong quantities rarely lead back by
    chance, so a number followed this way is not taken as a first error.
    """
    seen = {r for other in known for r in other.readings}
    own = list(step_numbers[index])
    before = own[: own.index(number)] if number in own else []
    settled = [  # earlier numbers of the step that are known or on the reference, not other new ones
        other for other in before if any(r in seen or r in ref.values for r in other.readings)
    ]
    operands = seen | set(ref.givens) | {r for other in settled for r in other.readings}
    if not number.stated_result or not _one_operation_from(number, operands):
        return False  # a number merely asserted, invented or miscomputed is not a route
    derived = {value for value in ref.values if value not in ref.givens and value not in (0, 1)}
    route = {number.literal.value}
    pool = operands | set(ref.values)
    for j in range(index, len(step_numbers)):
        numbers = list(step_numbers[j])
        if j == index:
            if number not in numbers:
                continue
            numbers = numbers[numbers.index(number) :]
        at = next((k for k, other in enumerate(numbers) if any(_same(other, r) for r in route)), None)
        if at is None:
            pool.update(r for other in numbers for r in other.readings)
            continue
        for later in numbers[at + 1 :]:
            if later.stated_result and any(
                r in derived and r not in seen and r not in route for r in later.readings
            ):
                return True
            if (
                later.stated_result
                and any(route.intersection(operand) for operand in later.operands)
                and not any(r in ref.values for r in later.readings)
                and _one_operation_from(later, pool | route)
            ):
                route.add(later.literal.value)
            pool.update(later.readings)
    return False


def _one_operation_from(number: _StepNumber, values: set[Fraction]) -> bool:
    """Is the number one sum, difference, product or quotient of two quantities the chain already has?"""
    pool = sorted(v for v in values if v > 0)
    for a in pool:
        for b in pool:
            for combined in (a + b, a - b, a * b, a / b):
                if _same(number, combined):
                    return True
    return False


def _step_verdict(
    numbers: Sequence[_StepNumber],
    new: Sequence[_StepNumber],
    off: Sequence[_StepNumber],
    used_off: Sequence[_StepNumber],
    builds_on_off: Sequence[_StepNumber],
    step_units: frozenset[Fraction],
    ref: ReferenceQuantities,
    outcome: str,
    wrong_chain: bool,
    first_error: int | None,
) -> Verdict:
    """The verdict of one step from what it brings in (rules: module doc)."""
    if not numbers:
        return Verdict("unverifiable", "no quantity in this step", {"rule": "no-quantity"})
    if not off and builds_on_off:
        return Verdict(
            "unverifiable",
            "builds on an off-reference quantity of an earlier step",
            {"rule": "builds-on-off-reference", "quantities": [n.text for n in builds_on_off]},
        )
    if not off:
        rules = sorted({_reference_rule(number, ref, numbers, step_units) or "" for number in new})
        return Verdict(
            "correct",
            "every new quantity belongs to the reference" if new else "restates known quantities",
            {"rule": "on-reference", "new_quantities": [n.text for n in new], "matched_by": rules},
        )
    evidence = {
        "off_reference": [number.text for number in off],
        "nearest_reference": ref.nearest(off[0].literal.value),
        "used_later": [number.text for number in used_off],
    }
    if wrong_chain and used_off:
        rule = "off-reference" if first_error is None else "off-reference-downstream"
        return Verdict(
            "incorrect",
            f"brings in {used_off[0].text}, which the reference does not have",
            {"rule": rule, **evidence},
        )
    why = "not used later" if wrong_chain else f"outcome {outcome}: may be another route"
    return Verdict(
        "unverifiable", f"off-reference quantity ({why})", {"rule": "off-reference-unjudged", **evidence}
    )


def _flag_unfinished_remainders(
    verdicts: list[Verdict],
    step_numbers: Sequence[Sequence[_StepNumber]],
    final: _StepNumber | None,
    ref: ReferenceQuantities,
) -> None:
    """A wrong chain stops a reference remainder halfway (`16 - 3 = 13` of `16 - 3 - 4`) and builds on it.

    The partial is a reference quantity only on the way to the full one; a chain that never reaches the
    full value took the partial for the result: that step is where it left the reference.
    """
    first = next((i for i, v in enumerate(verdicts) if v.label == "incorrect"), len(verdicts))
    for index in range(first):
        if verdicts[index].label != "correct":
            continue
        for number in step_numbers[index]:
            targets = next((ref.incomplete[r] for r in number.readings if r in ref.incomplete), None)
            if targets is None or any(r in ref.values and r not in ref.incomplete for r in number.readings):
                continue
            later = step_numbers[index + 1 :]
            completed = any(
                _same(other, target) for numbers in later for other in numbers for target in targets
            )
            if completed or not _used_later(number, later, final):
                continue
            verdicts[index] = Verdict(
                "incorrect",
                f"stops at {number.text}, a partial of a reference computation the chain never completes",
                {
                    "rule": "unfinished-remainder",
                    "off_reference": [number.text],
                    "reference_targets": [format_quantity(t) for t in sorted(targets)],
                    "nearest_reference": ref.nearest(number.literal.value),
                },
            )
            return


def _flag_other_quantity(
    verdicts: list[Verdict],
    steps: Sequence[str],
    step_numbers: Sequence[Sequence[_StepNumber]],
    final: _StepNumber,
    ref: ReferenceQuantities,
) -> None:
    """A wrong chain built only of reference quantities answers the wrong one: flag where it took it.

    That is where the chain concludes when its last statement of the value works it out there
    (`So he makes 50 * 0.5 = $25`); when the chain only restates a value worked out before ("So, 4
    kilometers is the answer."), the step that first stated it as a result is where the wrong quantity
    was taken for the one asked.
    """
    if ref.answer is not None and any(
        _same(n, ref.answer) for numbers in step_numbers for n in numbers if not n.solved
    ):
        return  # the chain states the answer somewhere: it did not simply stop at another quantity
    value = final.literal.value
    stated = [i for i, numbers in enumerate(step_numbers) if _states(numbers, value)]
    if not stated:
        return
    last = stated[-1]
    as_result = [i for i in stated if _states([n for n in step_numbers[i] if n.stated_result], value)]
    works_it_out = last in as_result and any(tok.kind == "op" for tok in lex(steps[last]))
    index = last if works_it_out else next(iter(as_result), last)
    verdicts[index] = Verdict(
        "incorrect",
        f"concludes with {final.text}, a reference quantity that is not the answer",
        {
            "rule": "answers-other-quantity",
            "final_quantity": final.text,
            "reference_origin": ref.values.get(value, "unit conversion"),
            "reference_answer": format_quantity(ref.answer) if ref.answer is not None else None,
            "first_stated_at": stated[0],
            "concluded_at": last,
        },
    )


def _states(numbers: Sequence[_StepNumber], value: Fraction) -> bool:
    return any(_same(number, value) for number in numbers)


# Operations a plan sentence names, and the symbol a step performing them writes.
_PLAN_OPERATIONS: dict[str, re.Pattern[str]] = {
    "*": re.compile(r"\b(?:multiply|multiplied|multiplying|multiplication|times|product)\b", re.IGNORECASE),
    "/": re.compile(r"\b(?:divide|divided|dividing|division|ratio|quotient)\b", re.IGNORECASE),
    "-": re.compile(r"\b(?:subtract|subtracted|subtracting|subtraction|minus|difference|deduct)\b", re.I),
    "+": re.compile(r"\b(?:add|adding|added|plus|sum)\b", re.IGNORECASE),
}
_WRITTEN_OPERATION = re.compile(r"(?<=[\d)%])\s*([*/+\-×x÷])\s*(?=[$(]?\d)")
_SYMBOLS = {"×": "*", "x": "*", "÷": "/"}


_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")


def named_operations(text: str) -> set[str]:
    """Operations a sentence names in words: "we multiply the bill by the cost" -> {'*'}. A LaTeX
    command (`\\times`) is notation, not a word."""
    words = _LATEX_COMMAND.sub(" ", text)
    return {op for op, pattern in _PLAN_OPERATIONS.items() if pattern.search(words)}


_LATEX_PLAIN = (
    (re.compile(r"\\text\{[^{}]*\}"), " "),  # a gloss between the numbers: `12 \\text{ acres} \\times 112`
    (re.compile(r"\\(?:times|cdot)(?![A-Za-z])"), "*"),
    (re.compile(r"\\div(?![A-Za-z])"), "/"),
    (re.compile(r"\\frac\{([^{}]*)\}\{([^{}]*)\}"), r"(\1)/(\2)"),
    (re.compile(r"\\[()\[\]]|\\[A-Za-z]+"), " "),
)


def performed_operations(text: str) -> set[str]:
    """Operations a step writes between numbers (`400 * 800`, `10 x 7`, `10 \\times 7`) or names
    ("multiply 40 by 8")."""
    plain = text
    for pattern, replacement in _LATEX_PLAIN:
        plain = pattern.sub(replacement, plain)
    plain = re.sub(r"\s+", " ", plain)
    written = {_SYMBOLS.get(op, op) for op in _WRITTEN_OPERATION.findall(plain)}
    return written | named_operations(text)


def _flag_plan_carried_out(
    verdicts: list[Verdict],
    steps: Sequence[str],
    step_numbers: Sequence[Sequence[_StepNumber]],
    ref: ReferenceQuantities,
) -> None:
    """A plan naming the operation the first flagged step performs is where the wrong setup was chosen.

    Only the run of steps right before the flagged one that compute nothing (no number, or only restated
    ones) can be its plan; the earliest of them naming one of its operations is taken. A plan that
    names no operation, or another one, is not judged: it may be vague but true. Nor is a plan blamed
    for a slip (`_is_slip`) or a misread operand (`_misreads_an_operand`) in the step that carries it out.
    A step that brings in some other number of its own is taken to follow the plan: on the real-error
    sets such steps followed a wrong plan far more often than they strayed from a right one.
    """
    first = next((i for i, v in enumerate(verdicts) if v.label == "incorrect"), None)
    if not first or _is_slip(steps[first], ref) or _misreads_an_operand(steps[first], ref):
        return
    performed = performed_operations(steps[first])
    plan: tuple[int, set[str]] | None = None
    for index in range(first - 1, -1, -1):
        rule = verdicts[index].evidence.get("rule")
        computes = any(number.computed for number in step_numbers[index])
        if not (rule == "no-quantity" or (rule == "on-reference" and not computes)):
            break
        if shared := named_operations(steps[index]) & performed:
            plan = index, shared
    if plan is not None:
        index, shared = plan
        verdicts[index] = Verdict(
            "incorrect",
            f"plans the operation that step {first} carries out off the reference",
            {"rule": "plan-carried-out", "operations": sorted(shared), "carried_out_at": first},
        )


def _misreads_an_operand(step: str, ref: ReferenceQuantities) -> bool:
    """Does the step do one of the solution's operations with one operand swapped for a number the
    reference lacks (`10 * 2` where the solution has `9 * 2`)? A misread operand: the plan was right."""
    for op, left, right in written_operations(strip_step_marker(step)):
        left_in, right_in = left in ref.values, right in ref.values
        if left_in == right_in:
            continue
        kept, position = (left, 0) if left_in else (right, 1)
        for ref_op, ref_left, ref_right in ref.operations:
            if ref_op != op:
                continue
            if (ref_left, ref_right)[position] == kept or (op in "+*" and kept in (ref_left, ref_right)):
                return True
    return False


def _is_slip(step: str, ref: ReferenceQuantities) -> bool:
    """Is the flagged step's error a slip in a right setup: a false claim whose true value is a reference
    quantity? The plan that named the operation was right then."""
    results, _ = check_plain_step(step, StepState())
    for result in results:
        if result.holds is False and result.expected is not None:
            expected = text_numbers(result.expected)
            if expected and any(value in ref.values for value in expected[0]):
                return True
    return False
