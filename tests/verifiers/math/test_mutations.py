"""Mutation tests by class (issue 46): generated right and wrong claims, put in every frame a chain writes
relations in. Only a wrong claim the text asserts is `incorrect`; in any other frame (tested, refuted,
supposed, a case heading, a listed system, notation the readers do not read) nothing is `incorrect`.

The claims are generated (Hypothesis), never copied from a set: two whole numbers, an operation, and the
right result or one off by a non-zero amount, in the notations the checker reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

import pytest
import sympy
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from prm_factory.schemas.records import Problem
from prm_factory.verifiers.math.certainty import uncertain_reason
from prm_factory.verifiers.math.reading_kinds import EQUATION_STEP
from prm_factory.verifiers.math.verifier import MathVerifier

COMPETITION = Problem("m1", "olympiad", "math", r"Let $n$ be a positive integer. Find $n$.")
# a problem that names none of the generated names
NEUTRAL = Problem("m3", "olympiad", "math", "What is the greatest possible value of the sum?")
WORD = Problem("m2", "gsm8k", "math", "Tom buys some apples and pens. How many does he have?")
SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@dataclass(frozen=True)
class Claim:
    """`a op b = value`, written in LaTeX and in plain text; `right` says whether it holds."""

    latex: str
    plain: str
    right: bool


_OPS = {
    "+": (lambda a, b: a + b, "+", "+"),
    "-": (lambda a, b: a - b, "-", "-"),
    "*": (lambda a, b: a * b, r"\times", "*"),
}


@st.composite
def claims(draw, right: bool | None = None) -> Claim:
    a = draw(st.integers(2, 99))
    b = draw(st.integers(2, 99))
    op = draw(st.sampled_from(sorted(_OPS)))
    value_of, latex_op, plain_op = _OPS[op]
    is_right = draw(st.booleans()) if right is None else right
    value = value_of(a, b)
    if not is_right:
        value += draw(st.sampled_from([-10, -3, -1, 1, 2, 7, 11]))
    return Claim(f"{a} {latex_op} {b} = {value}", f"{a} {plain_op} {b} = {value}", is_right)


@pytest.fixture(scope="module")
def checker():
    v = MathVerifier()
    yield v
    v.close()


def _labels(checker: MathVerifier, steps: list[str], problem: Problem = COMPETITION) -> list[str]:
    return [v.label for v in checker.check_steps(problem, steps)]


# --- asserted: the one frame where a wrong claim is an error ----------------------------------------


@SETTINGS
@given(claim=claims())
def test_an_asserted_claim_is_incorrect_exactly_when_wrong(checker, claim: Claim) -> None:
    for step in (rf"So \( {claim.latex} \).", rf"Computing, we get $${claim.latex}$$"):
        [label] = _labels(checker, [step])
        assert label == ("correct" if claim.right else "incorrect"), step


@SETTINGS
@given(claim=claims())
def test_an_asserted_word_problem_claim_is_incorrect_exactly_when_wrong(checker, claim: Claim) -> None:
    [label] = _labels(checker, [f"Tom has {claim.plain} apples in all."], WORD)
    assert label == ("correct" if claim.right else "incorrect")


# --- tested, refuted, supposed, a case heading: never incorrect --------------------------------------

_COMPETITION_FRAMES = [
    (r"Let's check whether \( {c} \).", None),  # a check
    (r"We verify if $${c}$$ holds.", None),
    (r"Is \( {c} \)?", None),  # a question
    (r"Suppose \( {c} \).", None),  # a supposition
    (r"Then \( {c} \), which is false.", None),  # refuted in its sentence
    (r"We get \( {c} \).", "This is not correct, so we look again."),  # refuted in the next sentence
    (r"Then \( {c} \).", "But that leads to a contradiction."),
    (r"Then \( {c} \) does not hold.", None),
    ("Case 1: \\( {c} \\).\nThe rest follows.", None),  # a case heading
]


@SETTINGS
@given(claim=claims(), frame=st.sampled_from(_COMPETITION_FRAMES))
def test_a_claim_tested_refuted_supposed_or_heading_a_case_is_never_incorrect(
    checker, claim: Claim, frame: tuple[str, str | None]
) -> None:
    text, next_step = frame
    steps = [text.replace("{c}", claim.latex)] + ([next_step] if next_step else [])
    assert "incorrect" not in _labels(checker, steps)


_WORD_FRAMES = [
    ("Let's check if {c}.", None),
    ("Is {c}?", None),
    ("He thinks {c}, but that is wrong.", None),
    ("So {c} apples.", "Wait, this is incorrect."),
]


@SETTINGS
@given(claim=claims(), frame=st.sampled_from(_WORD_FRAMES))
def test_a_word_problem_claim_tested_or_refuted_is_never_incorrect(
    checker, claim: Claim, frame: tuple[str, str | None]
) -> None:
    text, next_step = frame
    steps = [text.replace("{c}", claim.plain)] + ([next_step] if next_step else [])
    assert "incorrect" not in _labels(checker, steps, WORD)


# --- listed in a system, two branches of a case: no rewrite of each other -----------------------------


@SETTINGS
@given(
    a=st.integers(1, 9),
    b=st.integers(1, 9),
    s=st.integers(-20, 20),
    t=st.integers(-20, 20),
    c=st.integers(2, 9),
)
def test_two_equations_of_a_listed_system_are_never_paired_as_a_rewrite(
    checker, a: int, b: int, s: int, t: int, c: int
) -> None:
    steps = [
        rf"The system is \( {a}x + y = {s} \), \( x - {b}y = {t} \).",
        rf"Written again: \[ {a}x + y = {s} \] \[ {c}x - {b}y = {t + 1} \]",
    ]
    assert "incorrect" not in _labels(checker, steps)


@SETTINGS
@given(v=st.integers(1, 40), w=st.integers(1, 40))
def test_two_branches_of_a_case_split_are_never_paired(checker, v: int, w: int) -> None:
    steps = [
        f"Case 1: \\( x = {v} \\).\nCase 2: \\( x = -{w} \\).",
        f"So \\( x = {v} \\) or \\( x = -{w} \\).",
    ]
    assert "incorrect" not in _labels(checker, steps)


@SETTINGS
@given(a=st.integers(1, 9), s=st.integers(-20, 20), t=st.integers(-20, 20), c=st.integers(2, 9))
def test_a_relation_after_a_list_is_never_read_as_a_rewrite_of_its_last_item(
    checker, a: int, s: int, t: int, c: int
) -> None:
    """Words that link a list to what follows ("simplifying") link the lists, not one item to another."""
    steps = [
        rf"We have \( {a}x + y = {s} \) and \( x - y = {t} \).",
        rf"Simplifying, \( {c}x + y = {s + t + 1} \).",
    ]
    assert "incorrect" not in _labels(checker, steps)


# --- notation the readers do not read: left unjudged, right or wrong ---------------------------------


@SETTINGS
@given(n=st.integers(2, 30), value=st.integers(0, 999), name=st.sampled_from("abkm"))
def test_notation_outside_the_grammar_is_never_incorrect(checker, n: int, value: int, name: str) -> None:
    for step in (
        f"So √{n * n} = {value}.",  # a root written as a sign
        rf"So \( !{n} = {value} \).",  # a subfactorial
        rf"Hence \( {name}\sqrt{{{n}}} = {value} \).",  # a name before the root
        rf"Hence \( 0.\overline{{{n}}} = {value} \).",  # a repeating decimal
        rf"Hence \( {n}' = {value} \).",  # a prime
    ):
        assert "incorrect" not in _labels(checker, [step]), step


# --- a repeating decimal written rounded: `=` for `≈`, unless the claim fails with the exact fraction too --


@st.composite
def repeating(draw) -> tuple[int, int, str]:
    """A fraction p/q whose decimals repeat, and its decimal rounded to 3 to 5 places."""
    q = draw(st.sampled_from([3, 6, 7, 9, 11, 12, 13]))
    p = draw(st.integers(1, 4 * q).filter(lambda p: Fraction(p, q).denominator % 2 and p % q))
    places = draw(st.integers(3, 5))
    return p, q, f"{float(round(Fraction(p, q), places)):.{places}f}"


@SETTINGS
@given(fraction=repeating(), k=st.integers(1, 9), off=st.sampled_from([-3, -1, 1, 2, 10]))
def test_a_repeating_decimal_written_rounded_is_read_as_its_fraction(
    checker, fraction: tuple[int, int, str], k: int, off: int
) -> None:
    p, q, decimal = fraction
    m = k * q  # `m * p/q` is a whole number
    exact = m * p // q
    right = (
        rf"So \( {m} \times \frac{{{p}}}{{{q}}} = {m} \times {decimal} = {exact} \).",
        f"Distance = {decimal} meters/second * {m} seconds = {exact} meters.",
    )
    for step in right:
        assert "incorrect" not in _labels(checker, [step]), step
    # the exact fraction does not save a wrong result
    [label] = _labels(checker, [rf"So \( {m} \times {decimal} = {exact + off} \)."])
    assert label == "incorrect"


# --- a name given a new value: each candidate of an enumeration, each bound of a range ----------------


@SETTINGS
@given(
    name=st.sampled_from("mnkx"),
    first=st.integers(2, 300),
    second=st.integers(2, 300),
    delim=st.sampled_from([(r"\(", r"\)"), (r"\[", r"\]"), ("$", "$")]),
)
def test_a_name_given_a_new_value_in_math_is_never_incorrect(
    checker, name: str, first: int, second: int, delim: tuple[str, str]
) -> None:
    if first == second:
        return
    o, c = delim
    steps = [
        f"1. The first candidate works. So {o}{name} = {first}{c}, as said.",
        f"2. So {o}{name} = {second}{c} too.",
    ]
    assert "incorrect" not in _labels(checker, steps, NEUTRAL), steps
    [label] = _labels(
        checker, [f"The side runs from {o}{name} = {first}{c} to {o}{name} = {second}{c}."], NEUTRAL
    )
    assert label != "incorrect"


@SETTINGS
@given(
    name=st.sampled_from("mnk"), a=st.integers(2, 40), b=st.integers(2, 9), off=st.sampled_from([-2, 1, 5])
)
def test_a_value_worked_out_from_an_expression_in_math_stays_judged(
    checker, name: str, a: int, b: int, off: int
) -> None:
    steps = [rf"So \({name} = {a} \cdot {b}\) here.", rf"Thus \({name} = {a * b + off}\)."]
    assert _labels(checker, steps, NEUTRAL)[1] == "incorrect", steps


# a letter of any script but Latin (a constant or a name: `π`, `θ`, `λ`), which no grammar rule reads
_OTHER_LETTERS = st.characters(min_codepoint=0x370, max_codepoint=0x52F, categories=("Ll", "Lu"))


@SETTINGS
@given(claim=claims(right=False), letter=_OTHER_LETTERS, k=st.integers(2, 9))
def test_a_claim_glued_to_a_letter_of_another_script_is_never_incorrect(
    checker, claim: Claim, letter: str, k: int
) -> None:
    # `(4/3)π(6)^3 = (1/2)π(6)^2(16)`: the letter is a factor of both sides, not a break between claims
    a, rest = claim.plain.split(" ", 1)
    left, right = rest.rsplit(" ", 1)
    for step in (
        f"Substituting, we get: {k}{letter}({a}) {left} ({right}){letter}({k}).",
        f"Substituting, we get: $({k}){letter}({a}) {left} ({right}){letter}^2$.",
    ):
        assert "incorrect" not in _labels(checker, [step]), step


@SETTINGS
@given(claim=claims())
def test_pi_written_on_both_ends_of_a_claim_cancels(checker, claim: Claim) -> None:
    # `π(a + b) = cπ` says `a + b = c`: π, a number the grammar reads, is no cut of the claim
    left, right = claim.plain.split(" = ")
    [label] = _labels(checker, [f"So the area is π({left}) = {right}π square units."])
    assert label == ("correct" if claim.right else "incorrect")


@SETTINGS
@given(claim=claims(right=False), letter=_OTHER_LETTERS)
def test_a_wrong_claim_beside_a_letter_it_is_not_glued_to_stays_incorrect(
    checker, claim: Claim, letter: str
) -> None:
    [label] = _labels(checker, [f"Then {claim.plain}, and {letter} is another matter."])
    assert label == "incorrect"


@SETTINGS
@given(claim=claims(right=False))
def test_a_wrong_claim_in_a_notation_the_grammar_reads_stays_incorrect(checker, claim: Claim) -> None:
    a, rest = claim.latex.split(" ", 1)
    [label] = _labels(checker, [rf"So \( \left({a}\right) {rest} \)."])
    assert label == "incorrect"


# --- a name defined by a formula that runs on into words: neither a value nor a claim -----------------

# words a formula names its quantities by, and the ways a chain writes them
_QUANTITY_WORDS = st.sampled_from(["base", "height", "rate", "width", "count", "total"])
_IN_WORDS = st.sampled_from([r"\text{{{w}}}", "{w}", r"\mathrm{{{w}}}"])


@SETTINGS
@given(
    name=st.sampled_from("ANTS"),
    a=st.integers(2, 40),
    b=st.integers(2, 9),
    c=st.integers(2, 9),
    op=st.sampled_from([(r"\times", lambda x, y: x * y), ("+", lambda x, y: x + y)]),
    words=st.tuples(_QUANTITY_WORDS, _QUANTITY_WORDS),
    form=_IN_WORDS,
)
def test_a_name_defined_by_a_formula_in_words_is_never_bound_to_what_was_read_of_it(
    checker, name: str, a: int, b: int, c: int, op, words: tuple[str, str], form: str
) -> None:
    # `A = \frac12 \times \text{base} \times \text{height}`, then `A = \frac12 \times 2 \times 4 = 4`: the
    # formula's reading stops at its first word; `A` is not the number read before it
    latex_op, value_of = op
    w1, w2 = (form.format(w=w) for w in words)
    formula = f"{name} = {a} {latex_op} {w1} {latex_op} {w2}"
    worked = f"{name} = {a} {latex_op} {b} {latex_op} {c} = {value_of(value_of(a, b), c)}"
    step = f"The formula is:\n\\[\n{formula}\n\\]\nSubstituting the values:\n\\[\n{worked}\n\\]"
    # the formula is read only in part: unjudged, never a value the worked line is held to
    assert "incorrect" not in _labels(checker, [step], WORD), step
    # a name that had a value before is defined anew by the formula: the part read is not held to it
    first = f"So the first one is {name} = {a + b + c + 1}."
    assert "incorrect" not in _labels(checker, [first, step], WORD), step
    # and a second quantity by the same formula, in a later step, is that quantity's own value
    again = f"{name} = {a} {latex_op} {c} {latex_op} {c} = {value_of(value_of(a, c), c)}"
    second = f"The same formula:\n\\[\n{formula}\n\\]\nSubstituting the values:\n\\[\n{again}\n\\]"
    assert "incorrect" not in _labels(checker, [step, second], WORD), second


@SETTINGS
@given(a=st.integers(2, 40), b=st.integers(2, 9), c=st.integers(2, 9), off=st.sampled_from([-3, -1, 1, 4]))
def test_a_wrong_value_worked_out_after_a_formula_in_words_stays_incorrect(
    checker, a: int, b: int, c: int, off: int
) -> None:
    step = (
        f"The formula is:\n\\[\nA = {a} \\times \\text{{base}} \\times \\text{{height}}\n\\]\n"
        f"Substituting:\n\\[\nA = {a} \\times {b} \\times {c} = {a * b * c + off}\n\\]"
    )
    assert _labels(checker, [step], WORD) == ["incorrect"], step


@SETTINGS
@given(p=st.integers(2, 9), q=st.integers(2, 9), name=st.sampled_from(["A", "P", "x"]))
def test_an_equation_with_the_name_on_both_sides_is_never_read_as_its_value(
    checker, p: int, q: int, name: str
) -> None:
    # `A = (1/2) + (1/4) * A` (a prose letter the reader stops before): the sum read so far is not `A`;
    # `(3/4)A = (1/2)` after it is an equation in `A`, not a claim against that sum
    half, rest = Fraction(1, p), Fraction(1, q * p)
    coef = 1 - rest
    steps = [
        f"* Let '{name}' be the probability of winning.\n"
        f"* Therefore: {name} = (1/{p}) + (1/{q * p}) * {name}\n"
        f"* Subtracting (1/{q * p}){name} from both sides: ({coef}){name} = (1/{p})\n"
        f"* Solving: {name} = {half / coef}"
    ]
    assert "incorrect" not in _labels(checker, steps, WORD), steps


# --- items of one list: labelled options, displays a noun of several relations names ------------------


@st.composite
def linear_equations(draw, n: int) -> list[tuple[int, int]]:
    """`n` equations `x + p = q` in one unknown, each with its own solution."""
    solutions = draw(st.lists(st.integers(1, 60), min_size=n, max_size=n, unique=True))
    shifts = draw(st.lists(st.integers(2, 90), min_size=n, max_size=n))
    return [(p, p + x) for p, x in zip(shifts, solutions, strict=True)]


@SETTINGS
@given(
    equations=linear_equations(4),
    label=st.sampled_from(["({})", "{})"]),
    names=st.sampled_from(["ABCD", "1234", "abcd"]),
    pick=st.integers(0, 3),
)
def test_a_relation_after_a_list_of_labelled_options_is_never_read_as_a_rewrite_of_an_option(
    checker, equations: list[tuple[int, int]], label: str, names: str, pick: int
) -> None:
    # the options are items of a list; the one that matches is named after it, derived from none of them
    p, q = equations[pick]
    options = "\n".join(
        f"{label.format(n)} \\(x+{a}={b}\\)" for n, (a, b) in zip(names, equations, strict=True)
    )
    steps = [
        f"Solving, we get:\n\\[\nx+{p} = {q}\n\\]",
        f"Now, we compare this result to the options provided:\n{options}",
        f"The equation that matches our result is \\(x+{p}={q}\\).",
    ]
    assert "incorrect" not in _labels(checker, steps), steps


_LIST_NOUNS = st.sampled_from(
    ["the system of equations", "the equations", "the following equations", "two equations", "the system"]
)


@SETTINGS
@given(equations=linear_equations(2), noun=_LIST_NOUNS, lead=st.sampled_from(["we need to solve", "we have"]))
def test_displays_a_noun_of_several_relations_names_are_never_paired_as_a_rewrite(
    checker, equations: list[tuple[int, int]], noun: str, lead: str
) -> None:
    (a, b), (c, d) = equations
    step = f"Thus, {lead} {noun}:\n\n\\[ x + {a} = {b} \\]\n\\[ x + {c} = {d}. \\]"
    assert "incorrect" not in _labels(checker, [step]), step


@SETTINGS
@given(
    a=st.integers(2, 90),
    b=st.integers(100, 200),
    off=st.sampled_from([-5, -1, 2, 9]),
    verb=st.sampled_from(["Simplifying", "Rearranging", "Subtracting", "Adding"]),
)
def test_a_wrong_line_derived_from_the_equations_a_verb_works_on_stays_incorrect(
    checker, a: int, b: int, off: int, verb: str
) -> None:
    # "Subtracting the equations:": the displays after the noun are derived, each from the line above
    step = f"{verb} the equations:\n\\[ 2x + {a} = {b} \\]\n\\[ 2x = {b - a + off} \\]"
    assert _labels(checker, [step]) == ["incorrect"], step


# --- a value carried across a trial, a check or a refutation: the names are unknowns again --------------

# sentences that put something to the test or refute it, built from `assertion`'s lexicon (a marker word in
# a generated frame), written between a name's binding and its next use
_FRAME_WORDS = st.sampled_from(
    ["check", "verify", "suppose", "assume", "try", "incorrect", "wrong", "not possible", "a contradiction"]
)
_FRAMES = st.sampled_from(
    [
        "Let us {w} this once more.",
        "We {w} whether a larger value works.",
        "Wait, this is {w}.",
        "Hmm, that gives {w}, so we redo it.",
    ]
)


# a name given a value in one step, a frame, a new computation of it
_CARRIED = {
    "name": st.sampled_from("BNTx"),
    "a": st.integers(20, 90),
    "b": st.integers(20, 90),
    "c": st.integers(2, 19),
    "frame": _FRAMES,
    "word": _FRAME_WORDS,
}


@SETTINGS
@given(**_CARRIED, shift=st.integers(1, 9))
def test_a_value_carried_across_a_frame_is_never_held_against_a_new_computation(
    checker, name: str, a: int, b: int, c: int, shift: int, frame: str, word: str
) -> None:
    # `B = (50 + 60) / 2 = 55, which is not possible`, later `I made an error ... B = 50 + 60 - 70 = 40`
    first = f"So {name} = {a} + {b} = {a + b}."
    worked = f"Substituting the values, we get: {name} = {a} + {b} - {c} = {a + b - c}."
    between = frame.format(w=word)
    assert "incorrect" not in _labels(checker, [first, between, worked], WORD), between
    # a relation in two carried names, under a premise the chain changed: `x + y + 295 = 297`
    pair = [f"So x = {c} and y = {c + shift}.", between, f"This would require x + y + {a} = {a + shift}."]
    assert "incorrect" not in _labels(checker, pair, WORD), between
    # a value solved from a claim under the new premise binds nothing a later claim is held to
    solved = f"Then {name} + {c} = {a + b + c + shift}."
    again = f"So {name} + {c} = {a + b + c}."
    assert "incorrect" not in _labels(checker, [first, between, solved, again], WORD), solved


@SETTINGS
@given(**_CARRIED, off=st.sampled_from([-3, -1, 1, 4]))
def test_wrong_arithmetic_after_a_frame_and_a_carried_value_without_one_stay_incorrect(
    checker, name: str, a: int, b: int, c: int, off: int, frame: str, word: str
) -> None:
    first = f"So {name} = {a} + {b} = {a + b}."
    between = frame.format(w=word)
    # the new computation's own arithmetic is still the chain's
    wrong = f"Substituting the values, we get: {name} = {a} + {b} - {c} = {a + b - c + off}."
    assert _labels(checker, [first, between, wrong], WORD)[-1] == "incorrect", between
    # with no frame between, a carried value a later claim contradicts is still read against it
    used = f"Then {name} + {c} = {a + b + c + off}."
    assert _labels(checker, [first, "Next we add the rest.", used], WORD)[-1] == "incorrect", used


# --- a quotient written with its rest in a smaller unit: `a \div b = q` dollars and `r` cents ---------------

_UNIT_PAIRS = st.sampled_from(
    [("dollars", "cents"), ("hours", "minutes"), ("feet", "inches"), ("boxes", "pens")]
)
_REST_FORMS = st.sampled_from(
    [
        "\\[\n{a} \\div {b} = {q} \\text{{ {u} and }} {r} \\text{{ {v}}}\n\\]",
        "So {a} / {b} = {q} {u} and {r} {v}.",
        "So \\( {a} \\div {b} = {q} \\) {u} and {r} {v}.",
    ]
)


@SETTINGS
@given(
    b=st.integers(2, 120),
    q=st.integers(1, 400),
    r=st.integers(1, 119),
    units=_UNIT_PAIRS,
    form=_REST_FORMS,
    off=st.sampled_from([-2, -1, 1, 3]),
    problem=st.sampled_from([COMPETITION, WORD]),
)
def test_a_quotient_with_its_rest_in_units_is_judged_as_a_division_with_remainder(
    checker, b: int, q: int, r: int, units: tuple[str, str], form: str, off: int, problem: Problem
) -> None:
    r = r % b or 1
    a = q * b + r
    u, v = units
    right = form.format(a=a, b=b, q=q, r=r, u=u, v=v)
    assert _labels(checker, [right], problem) == ["correct"], right
    # a whole part that is not the floor is wrong whatever unit the rest is in
    wrong = form.format(a=a, b=b, q=q + off if q + off > 0 else q + 1, r=r, u=u, v=v)
    assert _labels(checker, [wrong], problem) == ["incorrect"], wrong
    # a rest that is not the remainder may be the fraction in a unit whose factor is not stated: unjudged
    other = form.format(a=a, b=b, q=q, r=r + b * 7 + 1, u=u, v=v)
    assert "incorrect" not in _labels(checker, [other], problem), other
    # without a rest after it, a quotient that is no whole number stays false
    bare = form.format(a=a, b=b, q=q, r=r, u=u, v=v).split(f" {u}")[0].split(" \\text")[0]
    bare = bare + ("\n\\]" if bare.startswith("\\[") else " \\)." if "\\(" in bare else ".")
    assert _labels(checker, [bare], problem) == ["incorrect"], bare


# --- a relation tested with a value and refuted lines later by its negation (`1 \neq 7`) -----------------


@SETTINGS
@given(
    v=st.integers(1, 9),
    k=st.integers(2, 9),
    m=st.integers(1, 30),
    off=st.sampled_from([-2, -1, 1, 5]),
    problem=st.sampled_from([COMPETITION, NEUTRAL]),
)
def test_a_relation_the_chain_refutes_with_its_negation_lines_later_is_never_incorrect(
    checker, v: int, k: int, m: int, off: int, problem: Problem
) -> None:
    value = k * v + m  # the right side's value, never v (k >= 2, m >= 1)

    def trial(ne: int) -> str:
        return (
            f"- For \\( x = {v} \\):\n  \\[\n  {v} = {k}({v}) + {m}\n  \\]\n  Multiplying out:\n"
            f"  \\[\n  {v} = {k * v} + {m}\n  \\]\n  Adding the terms:\n  \\[\n  {v} = {value}\n  \\]\n"
            f"  \\[\n  {v} \\neq {ne}\n  \\]\n  So we keep the other root."
        )

    step = trial(value)
    assert "incorrect" not in _labels(checker, [step], problem), step
    # a negation of another value: the relation's own value was not what the chain refuted; still judged
    other = trial(value + off)
    assert _labels(checker, [other], problem) == ["incorrect"], other


@pytest.mark.parametrize("outcome", ["timed out", "worker failed"])
def test_a_refutation_whose_comparison_could_not_run_leaves_the_relation_unjudged(
    checker, monkeypatch: pytest.MonkeyPatch, outcome: str
) -> None:
    """Fail closed: when the bounded worker cannot compare the refuted value with the relation's (it timed
    out or died), the chain may have refuted the relation, so it is never `incorrect`."""
    from prm_factory.verifiers.math import bounded

    real = bounded.run_items
    lost = {"timed out": bounded.TIMED_OUT, "worker failed": bounded.WORKER_FAILED}[outcome]
    compared: list[object] = []

    def comparison_lost(target: str, items: list, *args: object, **kwargs: object) -> list:
        if target.endswith(":equal_values"):
            compared.extend(items)
            return [lost] * len(items)
        return real(target, items, *args, **kwargs)

    monkeypatch.setattr(bounded, "run_items", comparison_lost)
    step = (
        "- For \\( x = 3 \\):\n  \\[\n  3 = 2(3) + 4\n  \\]\n  Adding the terms:\n  \\[\n  3 = 10\n  \\]\n"
        "  \\[\n  3 \\neq 10\n  \\]\n  So we keep the other root."
    )
    assert "incorrect" not in _labels(checker, [step], NEUTRAL), step
    assert compared, "the negation's comparison was not asked: the test would pass without the rule"


# --- an equation with a relation the chain states put in: an equation still, never a false identity ---------


@SETTINGS
@given(
    names=st.sampled_from([("x", "y"), ("a", "b"), ("u", "v"), ("m", "n")]),
    k=st.integers(2, 9),
    p=st.integers(2, 4),
    q=st.integers(2, 4),
    off=st.sampled_from([1, 2, 5]),
)
def test_a_stated_relation_put_into_the_chains_equation_is_never_a_false_identity(
    checker, names: tuple[str, str], k: int, p: int, q: int, off: int
) -> None:
    # (the word "simplifying" in the step makes the reader judge a relation in names as an identity)
    old, new = names

    def step(coefficient: int) -> str:
        return (
            f"Substitute \\({old} = {k}{new}\\) into \\({new}^{p} = {old}^{q}\\):\n"
            f"\\[\n{new}^{p} = ({coefficient}{new})^{q}\n\\]\nSimplifying the right side comes next."
        )

    assert "incorrect" not in _labels(checker, [step(k)], NEUTRAL), step(k)
    # another coefficient than the relation states is no substitution of it: a false identity stays one
    assert _labels(checker, [step(k + off)], NEUTRAL) == ["incorrect"], step(k + off)


# --- one case per value: a name given several values in one step is a list of alternatives ------------------


@SETTINGS
@given(
    total=st.integers(3, 9),
    firsts=st.lists(st.integers(0, 9), min_size=2, max_size=4, unique=True),
    new_total=st.integers(0, 9),
    names=st.sampled_from([("a", "b"), ("p", "q"), ("m", "n")]),
)
def test_values_listed_as_alternatives_bind_nothing(
    checker, total: int, firsts: list[int], new_total: int, names: tuple[str, str]
) -> None:
    first, second = names
    pairs = [(a, total - a) for a in firsts if a <= total]
    if len(pairs) < 2 or new_total == total:
        return
    listed = f"We need \\({first} + {second} = {total}\\). Possible pairs are:\n" + "\n".join(
        f"- \\({first} = {a}, {second} = {b}\\) gives {10 * a + b}" for a, b in pairs
    )
    case = f"Next, consider another case:\n- \\({first} + {second} = {new_total}\\)"
    assert "incorrect" not in _labels(checker, [listed, case], WORD), listed
    # one pair stated as the values: the names keep them, and a later sum they contradict is still wrong
    (a, b) = pairs[0]
    stated = f"So \\({first} = {a}\\) and \\({second} = {b}\\)."
    later = f"Then \\({first} + {second} = {a + b + 1}\\)."
    assert _labels(checker, [stated, later], WORD)[-1] == "incorrect", later


@SETTINGS
@given(roots=st.lists(st.integers(-6, 6), min_size=2, max_size=3, unique=True), k=st.integers(1, 9))
def test_a_list_of_solutions_is_never_read_as_a_system(checker, roots: list[int], k: int) -> None:
    # the equation in y the values solve, written expanded (`y^{3} - 4 y = 0`)
    polynomial = sympy.latex(sympy.expand(sympy.prod([sympy.Symbol("y") - r for r in roots])))
    factored = f"Rearranging terms, we get:\n\\[{polynomial} = 0.\\]"
    solutions = "This gives us the solutions:\n" + "\n".join(f"\\[y = {r},\\]" for r in roots)
    back = f"Recall that \\(y = x - {k}\\), so we substitute back:\n" + "\n".join(
        f"\\[x - {k} = {r} \\implies x = {r + k},\\]" for r in roots
    )
    assert "incorrect" not in _labels(checker, [factored, solutions, back], NEUTRAL), back


# --- a constant's symbol the text names as a quantity: a name, not the constant ----------------------------

_QUANTITY_NOUNS = st.sampled_from(["parallax angle", "phase", "ratio", "angle", "profit share"])
_NAMINGS = st.sampled_from(
    [
        "Find its {noun}, $\\pi$, in arcseconds.",
        "Find the {noun}, \\(\\pi\\), of the system.",
        "The {noun} is denoted by $\\pi$. Find it.",
        "Let $\\pi$ be the {noun}. Find it.",
    ]
)


@SETTINGS
@given(noun=_QUANTITY_NOUNS, naming=_NAMINGS, d=st.integers(2, 999), claim=claims(right=False))
def test_a_constants_symbol_named_as_a_quantity_is_never_read_as_the_constant(
    checker, noun: str, naming: str, d: int, claim: Claim
) -> None:
    named = Problem("m4", "olympiad", "math", naming.format(noun=noun))
    step = f"Substituting the distance, we get:\n\\[\n\\pi = \\frac{{1}}{{{d}}}\n\\]"
    assert "incorrect" not in _labels(checker, [step], named), named.text
    # where the text does not name it, `\pi` is the constant, and the claim is false
    assert _labels(checker, [step], NEUTRAL) == ["incorrect"], step
    # the named symbol excuses no arithmetic in written numbers
    assert _labels(checker, [rf"So \( {claim.latex} \)."], named) == ["incorrect"], claim.latex


# --- a side said in words cut out of a longer phrase: `31_8 is equal to ...`, `half of 6 times 4, which is`


@SETTINGS
@given(a=st.integers(2, 60), b=st.integers(2, 60), base=st.integers(2, 9), off=st.sampled_from([-3, 1, 5]))
def test_a_side_said_in_words_is_never_judged_as_a_piece_of_a_longer_phrase(
    checker, a: int, b: int, base: int, off: int
) -> None:
    digits = "".join(str(d) for d in (1, base - 1, 0, 1))
    value = int(digits, base)
    expansion = f"1*{base}^3+{base - 1}*{base}^2+0*{base}^1+1*{base}^0"
    phrases = [
        # the number before "is equal to" is the base of a numeral, glued or named
        f"So we know that {digits}_{base} is equal to {expansion}.",
        f"That is, {digits} in base {base} is equal to {expansion} in base 10.",
        # "half of" before the product the words call equal to its half
        f"So the area is half of {a} times {2 * b}, which is {a * b}.",
        f"The share is a third of {3 * a} plus {3 * b}, which is {a + b}.",
    ]
    for problem in (WORD, NEUTRAL):
        for step in phrases:
            assert "incorrect" not in _labels(checker, [step], problem), step
    # a side that stands whole is still judged
    wrong = f"So the area is {a} times {2 * b}, which is {2 * a * b + off}."
    assert _labels(checker, [wrong], WORD) == ["incorrect"], wrong
    assert value == int(digits, base)  # (the numeral's value, as the expansion gives it)


# --- a running total restarted inside a continued chain: `a + b + c = a + b = s + c = t` --------------------


@SETTINGS
@given(
    a=st.integers(100, 99999),
    b=st.integers(100, 9999),
    c=st.integers(2, 999),
    off=st.sampled_from([-10, -1, 1, 100]),
)
def test_a_sum_worked_term_by_term_in_a_continued_chain_is_never_a_false_equation(
    checker, a: int, b: int, c: int, off: int
) -> None:
    chain = f"So, {a} + {b} + {c}= {a} +{b}={a + b} +{c}={a + b + c}."
    for problem in (COMPETITION, WORD):
        assert "incorrect" not in _labels(checker, [chain], problem), chain
    # the running total worked out wrong is still an error, and so is the restart with nothing after it
    wrong = f"So, {a} + {b} + {c}= {a} +{b}={a + b} +{c}={a + b + c + off}."
    assert _labels(checker, [wrong], COMPETITION) == ["incorrect"], wrong
    alone = f"So {a} + {b} + {c} = {a} + {b}."
    assert _labels(checker, [alone], COMPETITION) == ["incorrect"], alone
    # terms dropped for good: the side after the restart does not add them back
    dropped = f"So A = ({a} + {b} + {c}) = ({a} + {b}) = {a + b}."
    assert _labels(checker, [dropped], WORD) == ["incorrect"], dropped


# --- a name given its bounds, `from $n=1$ to $n=5$`, and a substitution shown, `3x + y = 3*0 + 1` -----------


@SETTINGS
@given(low=st.integers(0, 5), high=st.integers(6, 40), x=st.integers(0, 9), y=st.integers(0, 9))
def test_bounds_and_shown_substitutions_give_names_values_of_their_own(
    checker, low: int, high: int, x: int, y: int
) -> None:
    bounds = f"Then sum this quantity from $n={low}$ to $n={high}$."
    assert "incorrect" not in _labels(checker, [bounds], WORD), bounds
    # names bound before (the axes x = 0 and y = 0), then the objective evaluated at a point of its own
    axes = "The region is bounded by the axes x = 0 and y = 0."
    point = f"- At ({x}, {y}), 3x + y = 3*{x} + {y} = {3 * x + y}"
    assert "incorrect" not in _labels(checker, [axes, point], WORD), point
    # the arithmetic after the substitution is still the chain's own
    wrong = f"- At ({x}, {y}), 3x + y = 3*{x} + {y} = {3 * x + y + 1}"
    assert _labels(checker, [axes, wrong], WORD)[-1] == "incorrect", wrong
    # with no point named, values put in are read against the names' own: a value copied wrong is an error
    bound = [f"So A = {x + 10} and B = {y + 20}.", f"Then A + B = {x + 11} + {y + 20} = {x + y + 31}."]
    assert _labels(checker, bound, WORD)[-1] == "incorrect", bound


# --- a correction restarts from an earlier equation: "No, we subtract ..." ----------------------------------


@SETTINGS
@given(a=st.integers(2, 9), b=st.integers(10, 40), c=st.integers(2, 9), slip=st.integers(1, 5))
def test_an_equation_after_a_correction_is_never_read_as_a_rewrite_of_the_refuted_one(
    checker, a: int, b: int, c: int, slip: int
) -> None:
    # a x + b = c x + d, with a > c: one step slips, the next says "No," and restarts from the equation
    d = b + (a + c) * 3
    start = f"After we multiply, we get ${a + c}x + {b} = {c}x + {d}$."
    slipped = f"Now we subtract ${a + c}x$ from both sides and get ${b} = {a + slip}x + {d}$."
    corrected = f"No, we subtract ${c}x$ from both sides to get ${a}x={d - b}$."
    labels = _labels(checker, [start, slipped, corrected], COMPETITION)
    assert labels[1] == "incorrect" and labels[2] != "incorrect", labels


# --- an equation derived in prose: "simplify that equation to get 2(r+6)^2 = 8r^2" --------------------------


@SETTINGS
@given(k=st.integers(2, 9), m=st.integers(2, 9))
def test_a_relation_prose_derives_from_an_equation_is_never_a_false_identity(checker, k: int, m: int) -> None:
    derived = f"Ok, so we can simplify that equation to get 2(r+{k})^2 = {m}r^2."
    assert "incorrect" not in _labels(checker, [derived], COMPETITION), derived
    # a relation the words do not call an equation is still read as an identity
    claimed = f"Expanding, we get (r+{k})^2 = r^2 + {k * k}."
    assert _labels(checker, [claimed], COMPETITION) == ["incorrect"], claimed


# --- a function applied in plain text, `4 / sqrt(4) = 2`: never read without it -----------------------------


@SETTINGS
@given(
    b=st.integers(2, 30),
    q=st.integers(2, 30),
    name=st.sampled_from(["sqrt", "exp", "log", "ln", "abs", "sin"]),
    off=st.sampled_from([-2, 1, 3]),
)
def test_a_function_applied_in_plain_text_is_never_read_without_it(
    checker, b: int, q: int, name: str, off: int
) -> None:
    # right as written for sqrt, anything for the rest: no reading may drop the name and keep its bracket
    for value in (q, q + off):
        step = f"So the ratio is {q * b} / {name}({b * b}) = {value}."
        for problem in (WORD, NEUTRAL):
            assert "incorrect" not in _labels(checker, [step], problem), step
    # a rate unit after `/` is still a unit, and its arithmetic still judged
    rate = f"He pays ${b}/hour * {q} hours = ${b * q + off}."
    assert _labels(checker, [rate], WORD) == ["incorrect"], rate


# --- a condition's antecedent and a value put in: supposed, not stated --------------------------------------


@SETTINGS
@given(k=st.integers(1, 12), values=st.lists(st.integers(1, 30), min_size=2, max_size=4, unique=True))
def test_one_case_per_value_under_if_is_never_incorrect(checker, k: int, values: list[int]) -> None:
    # "If (n+7) = 1, then n = -6. If (n+7) = 2, then n = -5.": each antecedent supposes its own value;
    # none is a claim against the value the case before solved
    lines = [f"If (n+{k}) = {v}, then n = {v - k}." for v in values]
    step = "Therefore (n+" + str(k) + ") must be one of these.\n" + "\n".join(lines)
    for problem in (WORD, NEUTRAL):
        assert "incorrect" not in _labels(checker, [step], problem), step


@SETTINGS
@given(claim=claims())
def test_a_claim_in_the_antecedent_of_a_condition_is_never_incorrect(checker, claim: Claim) -> None:
    for step, problem in (
        (f"If {claim.plain}, then he has more apples.", WORD),
        (rf"If \( {claim.latex} \), then the sum is even.", COMPETITION),
    ):
        assert "incorrect" not in _labels(checker, [step], problem), step


@SETTINGS
@given(a=st.integers(2, 9), b=st.integers(1, 20), r=st.integers(1, 12), off=st.sampled_from([-2, 1, 3]))
def test_an_implication_under_if_is_still_read_as_a_rewrite(
    checker, a: int, b: int, r: int, off: int
) -> None:
    # the antecedent is supposed, but `if A then B` asserts A => B: a false consequence stays an error
    wrong = f"So if ${a}x + {b} = {a * r + b}$ then $x = {r + off}$."
    assert _labels(checker, [wrong]) == ["incorrect"], wrong
    right = f"So if ${a}x + {b} = {a * r + b}$ then $x = {r}$."
    assert _labels(checker, [right]) != ["incorrect"], right


@SETTINGS
@given(
    first=st.integers(2, 9),
    p=st.integers(1, 9),
    q=st.integers(2, 9),
    verb=st.sampled_from(["substitute", "Setting", "putting"]),
)
def test_a_value_put_in_is_never_read_against_an_earlier_one(
    checker, first: int, p: int, q: int, verb: str
) -> None:
    # "substitute x = 1/2 into the given equation" after "substitute x = 2": the value is chosen
    if Fraction(p, q) == first:
        return
    steps = [
        f"Now {verb} x = {first} into the given equation:",
        f"f({first}) + f(1) = {first}",
        f"Now, {verb} x = {p}/{q} into the given equation:",
    ]
    assert "incorrect" not in _labels(checker, steps, WORD), steps
    # a relation of written numbers put back in is the chain's own statement: a wrong one stays an error
    back = rf"Substituting \({first} \times {q} = {first * q + p}\) back into the expression, we get a sum."
    assert _labels(checker, [back]) == ["incorrect"], back


# --- a name set again by a formula: its old value is no side of the new one ---------------------------------


@SETTINGS
@given(
    name=st.sampled_from(["E", "F", "T"]),
    a=st.integers(2, 90),
    b=st.integers(2, 9),
    c=st.integers(2, 9),
    off=st.sampled_from([-3, 1, 2]),
    times=st.sampled_from(["*", "times", r"\times"]),
)
def test_a_name_set_again_by_a_formula_is_never_read_against_its_old_value(
    checker, name: str, a: int, b: int, c: int, off: int, times: str
) -> None:
    # `E = 4.97 J`, then `E = (4.97 J) / (1.602 J/eV) = 3.1`: the same name, a new value
    steps = [
        f"So {name} = {a} J.",
        f"In the other unit:\n{name} = {a} {times} {b} / {c}\n{name} = {a * b / c:g}",
    ]
    assert "incorrect" not in _labels(checker, steps, WORD), steps
    # the formula's own arithmetic is still read: a wrong value after it stays incorrect
    wrong = [f"So {name} = {a} J.", f"In the other unit: {name} = {a} * {b} = {a * b + off}."]
    assert _labels(checker, wrong, WORD)[1] == "incorrect", wrong
    # and a written value (money too) after a name solved and set by a formula is still held to it
    money = [f"We know ${a * b} = {b}{name}", f"{name}=${a * b}/{b}", f"{name}=${a + abs(off)} was the bet"]
    assert _labels(checker, money, WORD)[2] == "incorrect", money


# --- a letter on every term that the chain names: an equation in it, not a unit ---------------------------


@SETTINGS
@given(k=st.integers(2, 9), a=st.integers(2, 9), b=st.integers(2, 9), c=st.integers(2, 9))
def test_an_equation_in_a_named_unknown_is_never_read_as_a_unit(
    checker, k: int, a: int, b: int, c: int
) -> None:
    # `y = -8x`, then `-6x + 8(-8x) = 15(-8x)`: x is the unknown, the equation holds for x = 0
    if a + b * k == c * k:
        return
    steps = [
        f"From the first equation, y = {k}x.",
        f"Substitute y:\n{a}x + {b}({k}x) = {c}({k}x)",
        "So x = 0.",
    ]
    assert "incorrect" not in _labels(checker, steps, WORD), steps
    # a letter the chain never names is a unit, and a wrong sum of it stays incorrect
    grams = f"The bag weighs {a * 100}g + {b * 100}g = {(a + b) * 100 + 10}g."
    assert _labels(checker, [grams], WORD) == ["incorrect"], grams


# --- verifier 2.17.0: alternatives, lists read crosswise, signs glued to a claim, congruences with `=` ------


@SETTINGS
@given(a=st.integers(2, 9), b=st.integers(1, 30), v=st.integers(1, 40), w=st.integers(1, 40))
def test_one_expression_put_equal_to_two_values_in_one_step_is_never_incorrect(
    checker, a: int, b: int, v: int, w: int
) -> None:
    # "two cases: 2x - 9 = 3 or 2x - 9 = -3": the unknown solved from the first is no premise of the second
    for lead, joint in (("We have two cases:\n1) ", "\n2) "), ("This gives two possible cases: ", " or ")):
        step = f"{lead}{a}x - {b} = {v}{joint}{a}x - {b} = -{w}"
        for problem in (WORD, NEUTRAL):
            assert "incorrect" not in _labels(checker, [step], problem), step


@SETTINGS
@given(a=st.integers(2, 9), b=st.integers(1, 30), v=st.integers(1, 40), claim=claims(right=False))
def test_wrong_arithmetic_beside_two_cases_stays_incorrect(
    checker, a: int, b: int, v: int, claim: Claim
) -> None:
    step = f"We have two cases: {a}x - {b} = {v} or {a}x - {b} = -{v}. Also {claim.plain}."
    assert _labels(checker, [step], WORD) == ["incorrect"], step


@SETTINGS
@given(p=st.integers(1, 9), q=st.integers(1, 9))
def test_two_lists_linked_by_words_are_never_paired_item_to_item(checker, p: int, q: int) -> None:
    # "x - p = 0 and x + q = 0 ... we find x = p and x = -q": the words link the lists, so the last item of
    # the first (`x + q = 0`) is no rewrite into the first of the second (`x = p`)
    step = (
        f"Setting each factor equal to zero, we get $x - {p} = 0$ and $x + {q} = 0$. "
        f"Solving for $x$, we find that the critical points are $x = {p}$ and $x = -{q}$."
    )
    assert "incorrect" not in _labels(checker, [step], NEUTRAL), step


@SETTINGS
@given(a=st.integers(2, 9), b=st.integers(1, 20), r=st.integers(1, 12), off=st.sampled_from([-2, 1, 3]))
def test_a_wrong_solution_after_one_listed_equation_stays_incorrect(
    checker, a: int, b: int, r: int, off: int
) -> None:
    # a list before the link, but a single relation after it: still read as the rewrite it writes
    step = f"We have $y = 2$ and ${a}x + {b} = {a * r + b}$, so $x = {r + off}$."
    assert _labels(checker, [step], NEUTRAL) == ["incorrect"], step


_SIGNS = st.sampled_from(["√", "∛", "∑", "∫", "⌈", "⌊"])


@SETTINGS
@given(claim=claims(right=False), sign=_SIGNS, k=st.integers(2, 9))
def test_a_claim_glued_to_a_mathematical_sign_is_never_incorrect(
    checker, claim: Claim, sign: str, k: int
) -> None:
    # `x = 4√2 / 2 = 2√2` is not `2 / 2 = 2`: a sign the grammar does not read continues the claim
    for step in (
        f"So x = {k}{sign}{claim.plain}{sign}{k}.",
        f"So x = {k}{sign}{claim.plain}.",
        f"So ${k}{sign}{claim.plain}$.",
    ):
        assert "incorrect" not in _labels(checker, [step]), step


@SETTINGS
@given(claim=claims(right=False), sign=_SIGNS)
def test_a_wrong_claim_apart_from_a_sign_stays_incorrect(checker, claim: Claim, sign: str) -> None:
    step = f"The sign {sign} is not needed here. So {claim.plain}."
    assert _labels(checker, [step]) == ["incorrect"], step


@SETTINGS
@given(
    a=st.integers(100, 900),
    b=st.integers(100, 900),
    n=st.integers(1, 12),
    off=st.sampled_from([-10, 1, 7]),
    noun=st.sampled_from(["grade", "floor", "row", "batch"]),
)
def test_remarks_in_brackets_after_numbers_are_never_read_as_factors(
    checker, a: int, b: int, n: int, off: int, noun: str
) -> None:
    # `520 (7th grade) + 650 (8th grade) = 1170`: an ordinal and a word in brackets name, they do not multiply
    for total in (a + b, a + b + off):
        step = f"* Total = {a} ({n}th {noun}) + {b} ({n + 1}th {noun}) = {total} students"
        assert "incorrect" not in _labels(checker, [step], WORD), step


@SETTINGS
@given(m=st.sampled_from([7, 11, 13]), base=st.integers(2, 9), power=st.integers(2, 3))
def test_a_power_chain_written_with_equals_under_a_modulus_is_never_incorrect(
    checker, m: int, base: int, power: int
) -> None:
    # `8^4 = (8^2)^2 = 9^2 = 81 \equiv 4 \pmod{11}`: `=` where the chain means `\equiv`, true modulo m
    reduced = pow(base, power, m)
    assume(reduced > 1)
    square = reduced * reduced
    step = (
        rf"Now we compute \({base}^{{{2 * power}}} \pmod{{{m}}}\):"
        "\n\\[\n"
        rf"{base}^{{{2 * power}}} = ({base}^{power})^2 = {reduced}^2 = {square}"
        rf" \equiv {square % m} \pmod{{{m}}}"
        "\n\\]"
    )
    assert "incorrect" not in _labels(checker, [step]), step


@SETTINGS
@given(m=st.sampled_from([7, 11, 13]), base=st.integers(2, 6), power=st.integers(2, 3))
def test_a_power_chain_false_modulo_its_modulus_too_stays_incorrect(
    checker, m: int, base: int, power: int
) -> None:
    wrong = base + 1
    assume(pow(base, power, m) != pow(wrong, power, m))  # false modulo m as well
    step = (
        rf"Now we compute \({base}^{power} \pmod{{{m}}}\):"
        "\n\\[\n"
        rf"{base}^{power} = {wrong}^{power}"
        "\n\\]"
    )
    assert _labels(checker, [step]) == ["incorrect"], step


@SETTINGS
@given(
    pairs=st.lists(st.tuples(st.integers(1, 40), st.integers(1, 40)), min_size=2, max_size=3, unique=True),
)
def test_one_case_per_pair_gives_names_values_of_their_own(checker, pairs: list[tuple[int, int]]) -> None:
    # "For the pair (1, 2123): l = 11 and w = 2133 ... For the pair (11, 193): l = 21 and w = 203", then the
    # perimeter worked at the pair's own values
    steps = []
    for p, q in pairs:
        steps.append(rf"For the pair \( ({p}, {q}) \): \[ l = {p} \quad \text{{and}} \quad w = {q} \]")
        steps.append(rf"The perimeter is: \[ 2(l + w) = 2({p} + {q}) = {2 * (p + q)} \]")
    assert "incorrect" not in _labels(checker, steps, WORD), steps


@SETTINGS
@given(p=st.integers(1, 40), q=st.integers(1, 40), slip=st.sampled_from([-1, 1, 2]))
def test_a_value_copied_wrong_into_a_substitution_stays_incorrect(checker, p: int, q: int, slip: int) -> None:
    steps = [
        rf"So \[ l = {p} \quad \text{{and}} \quad w = {q} \]",
        rf"The perimeter is: \[ 2(l + w) = 2({p + slip} + {q}) \]",
    ]
    assert _labels(checker, steps, WORD)[1] == "incorrect", steps


# --- verifier 2.18.0: operands written rounded, a slash before a product, counting multiples -------------


@st.composite
def rounded_operand(draw) -> tuple[Fraction, str]:
    """A value whose decimals do not end (p/q, q with a factor other than 2 and 5) and its decimal written
    rounded to 2 or 3 places, keeping at least three figures."""
    q = draw(st.sampled_from([3, 6, 7, 9, 11, 12, 13]))
    p = draw(st.integers(10 * q, 90 * q).filter(lambda p: p % q))
    places = draw(st.integers(2, 3))
    return Fraction(p, q), f"{float(Fraction(p, q)):.{places}f}"


@SETTINGS
@given(operand=rounded_operand(), k=st.integers(2, 9))
def test_a_result_worked_from_the_value_an_operand_rounds_is_never_incorrect(
    checker, operand: tuple[Fraction, str], k: int
) -> None:
    # `85.33 * 3.14159 ≈ 268.08`: the right side is the exact value the rounded operand stands for
    exact, written = operand
    meant = f"{float(exact * k):.2f}"
    assume(Fraction(written) * k != Fraction(meant))
    for step in (f"So the total is {written} * {k} = {meant}.", rf"So \( {written} \times {k} = {meant} \)."):
        assert "incorrect" not in _labels(checker, [step]), step


@SETTINGS
@given(operand=rounded_operand(), k=st.integers(2, 9), off=st.sampled_from([-3, 2, 5]))
def test_a_result_off_by_more_than_the_rounding_of_its_operands_stays_incorrect(
    checker, operand: tuple[Fraction, str], k: int, off: int
) -> None:
    _, written = operand
    wrong = f"{float(Fraction(written) * k) + off:.2f}"
    step = rf"So \( {written} \times {k} = {wrong} \)."
    assert _labels(checker, [step]) == ["incorrect"], step


@SETTINGS
@given(a=st.integers(1, 9), b=st.integers(2, 9), c=st.integers(2, 9))
def test_a_slash_before_a_product_side_by_side_is_never_incorrect(checker, a: int, b: int, c: int) -> None:
    # `\frac{4/3\pi}{8} = \frac{1}{6}\pi`: (4/3)π / 8, true; read as 4 / (3π) / 8 it fails
    assume(Fraction(a, b) != Fraction(a, b * b))
    step = rf"The ratio is $\frac{{{a}/{b}\pi}}{{{c}}} = \frac{{{a}}}{{{b * c}}}\pi$."
    assert "incorrect" not in _labels(checker, [step]), step


@SETTINGS
@given(n=st.integers(126, 999))
def test_counting_multiples_reads_each_quotient_as_its_integer_part(checker, n: int) -> None:
    # Legendre's formula said in words: "every 125th number contributes one more 5"
    assume(n % 125)
    problem = Problem("m4", "olympiad", "math", f"How many zeros are at the end of {n}! when multiplied out?")
    step = f"Every 5th number contributes a 5: {n}/5 = {n // 5}, {n}/25 = {n // 25}, {n}/125 = {n // 125}."
    assert "incorrect" not in _labels(checker, [step], problem), step
    wrong = f"Every 5th number contributes a 5: {n}/125 = {n // 125 + 1}."
    assert _labels(checker, [wrong], problem) == ["incorrect"], wrong


# --- verifier 2.19.0: a name that goes on, decimals and ratios that go on, the object of "such that" --------


_EVENTS = st.sampled_from(["Oil Change only", "Ben", "On time", "A and B", "job search"])


@SETTINGS
@given(first=st.integers(1, 40), a=st.integers(41, 90), b=st.integers(1, 40), event=_EVENTS)
def test_a_probability_of_an_event_is_never_read_as_a_name_given_again(
    checker, first: int, a: int, b: int, event: str
) -> None:
    # `P(Late) = 0.09`, then `P(On time) = 1 - 0.09`: `P(...)` is no name `P` given a second value
    steps = [
        f"We know P(Late) = 0.{first:02d}.",
        f"So P({event}) = 0.{a} - 0.{b:02d}",
        f"P({event}) = 0.{a - b:02d}",
    ]
    assert "incorrect" not in _labels(checker, steps, WORD), steps


@SETTINGS
@given(a=st.integers(2, 9), whole=st.integers(1, 9), thousandths=st.integers(1, 999))
def test_a_decimal_result_is_never_read_without_its_decimals(
    checker, a: int, whole: int, thousandths: int
) -> None:
    x = Fraction(whole * 1000 + thousandths, 1000)
    unit = r"\text{ lb} \cdot \text{s/ft}"
    step = rf"\[ \gamma \approx {a} \times {float(x):.3f} = {float(a * x):.3f} {unit} \]"
    assert _labels(checker, [step]) != ["incorrect"], step


@SETTINGS
@given(g=st.integers(2, 9), p=st.integers(1, 9), q=st.integers(1, 9))
def test_a_ratio_simplified_term_by_term_is_never_read_as_one_equation(
    checker, p: int, q: int, g: int
) -> None:
    # `\frac{3}{3} : \frac{9}{3} = 1 : 3`: a ratio, not `\frac{9}{3} = 1`
    step = rf"\[ \frac{{{p * g}}}{{{g}}} : \frac{{{q * g}}}{{{g}}} = {p} : {q} \]"
    assert "incorrect" not in _labels(checker, [step]), step


@SETTINGS
@given(claim=claims(right=False))
def test_the_object_of_such_that_is_never_incorrect(checker, claim: Claim) -> None:
    # "there is no real number b such that 0 · b = 1": a condition sought, not stated
    for step, problem in (
        (f"However, there is no number such that {claim.plain}.", WORD),
        (rf"There is no integer \( n \) such that \( {claim.latex} \).", COMPETITION),
    ):
        assert "incorrect" not in _labels(checker, [step], problem), step


# --- verifier 2.20.0: one factor set to zero, listed options ----------------------------------------------


@SETTINGS
@given(a=st.integers(1, 9), b=st.integers(1, 9), c=st.integers(1, 9))
def test_each_factor_set_to_zero_is_never_a_false_rewrite(a: int, b: int, c: int) -> None:
    # "(x - 3)(x + 3)(x + 2) = 0 ... Setting each factor to zero: x - 3 = 0": one case, not a rewrite (the
    # gate, as a real chain pairs them: the reader's pairing depends on its wording); a relation that is no
    # factor stays judged
    product = f"(x - {a})(x + {b})(x + {c}) = 0"
    for factor in (f"x - {a}", f"x + {b}", f"(x + {c})"):
        assert uncertain_reason(EQUATION_STEP, f"{product} => {factor} = 0", 0, ["..."]) is not None, factor
    assert uncertain_reason(EQUATION_STEP, f"{product} => x - {a + 10} = 0", 0, ["..."]) is None


@SETTINGS
@given(total=st.integers(6, 60), parts=st.integers(2, 5))
def test_listed_options_are_never_read_against_each_other(checker, total: int, parts: int) -> None:
    # options `A. \( 12 - t = 4 \)`, `B. \( 4 \div 12 = t \)`, `C. \( 4 \times t = 12 \)`: items of a list
    step = (
        "Now, let's match this with the given options:\n"
        rf"A. \( {total} - t = {parts} \)" + "\n"
        rf"B. \( {parts} \div {total} = t \)" + "\n"
        rf"C. \( {parts} \times t = {total} \)"
    )
    assert "incorrect" not in _labels(checker, [step], WORD), step


# --- verifier 2.21.0: the misreadings read on dev4 and dev5 ------------------------------------------------


@SETTINGS
@given(a=st.integers(2, 9), b=st.integers(2, 9), c=st.integers(2, 9), claim=claims(right=False))
def test_a_functions_argument_is_never_given_a_value(checker, a: int, b: int, c: int, claim: Claim) -> None:
    # `f'(x) = 2 cos x`, `cos 4x = 0`, `ln x = 1/2`: the side is inside a call (never `x = 2`, `4x = 0`)
    steps = [
        f"Calculate the critical points of f'(x) = {a} cos x + {b} cos {c}x = 0 on the interval (0, π).",
        f"Setting f'(x) = 0 leads to cos x + {a} cos {c}x = 0.",
        f"Solving ln x = 1/{b} gives x = {1 + 1 / b:.5f}. Solving ln x = {c} gives x = {c + 0.5:.5f}.",
    ]
    assert "incorrect" not in _labels(checker, steps, WORD), steps
    # a false claim written beside them is still judged
    assert _labels(checker, [*steps, f"So {claim.plain}."], WORD)[-1] == "incorrect"


@SETTINGS
@given(z=st.integers(101, 299), p=st.integers(500, 999))
def test_a_value_that_is_a_prepositions_object_is_no_side_of_is(checker, z: int, p: int) -> None:
    # "the probability corresponding to z = 1.55 is around 0.939": the probability is 0.939, not z
    step = f"Consulting a table, the probability corresponding to z = {z / 100} is around 0.{p}."
    assert "incorrect" not in _labels(checker, [step], WORD), step


@SETTINGS
@given(q=st.integers(2, 9), v=st.integers(2, 9))
def test_a_name_given_a_fraction_and_a_number_is_two_values(checker, q: int, v: int) -> None:
    step = f"We first need the x-values corresponding to y = 1/{q} and y = {v}."
    assert "incorrect" not in _labels(checker, [step], WORD), step


@SETTINGS
@given(p=st.sampled_from([5, 7, 11, 13]), g=st.integers(2, 4))
def test_powers_in_a_field_the_problem_names_are_read_modulo_it(checker, p: int, g: int) -> None:
    problem = Problem("z", "mmlu", "math", f"Find the generator for the finite field Z_{p}.")
    powers = ", ".join(f"{g}^{k} = {pow(g, k, p)}" for k in range(1, 5))
    assert "incorrect" not in _labels(checker, [f"{g}: {powers}"], problem)
    # a power that fails modulo p too is still an error
    assert _labels(checker, [f"{g}: {g}^3 = {(pow(g, 3, p) + 1) % p}"], problem) == ["incorrect"]


@SETTINGS
@given(b=st.integers(12, 40), a=st.integers(1, 99))
def test_goes_into_reads_a_quotient_as_its_whole_part(checker, b: int, a: int) -> None:
    assume(a % b)
    step = rf"\({a} \div {b} = {a // b}\) (since {b} goes into {a} {a // b} times)"
    assert "incorrect" not in _labels(checker, [step], WORD), step


@SETTINGS
@given(wet=st.integers(1, 99))
def test_a_percent_in_brackets_restates_the_value_before_it(checker, wet: int) -> None:
    dry = 100 - wet
    step = f"Dry weather has probability 1 - {wet / 100:.2f} (probability of wet) = {dry / 100:.2f} ({dry}%)."
    assert "incorrect" not in _labels(checker, [step], WORD), step


@SETTINGS
@given(r=st.integers(11, 500))
def test_an_irrational_value_written_to_its_last_digit_is_rounded(checker, r: int) -> None:
    area = sympy.pi * r**2
    rounded = int(sympy.floor(area + sympy.Rational(1, 2)))
    step = rf"The area of the circle is \(\pi \times {r}^2 = {rounded}\) square meters."
    assert "incorrect" not in _labels(checker, [step], NEUTRAL), step
    off = rf"The area of the circle is \(\pi \times {r}^2 = {rounded + 10}\) square meters."
    assert _labels(checker, [off], NEUTRAL) == ["incorrect"], off


@SETTINGS
@given(first=st.integers(1, 5), count=st.integers(2, 6))
def test_a_minus_opening_each_line_of_a_list_may_be_a_bullet(checker, first: int, count: int) -> None:
    lines = "\n".join(f"   -{k * k} = (-{k})^2" for k in range(first, first + count))
    step = f"4. The perfect squares in this range are:\n{lines}"
    assert "incorrect" not in _labels(checker, [step], NEUTRAL), step


@SETTINGS
@given(a=st.integers(2, 9), b=st.integers(2, 9), c=st.integers(1, 99))
def test_a_hyphen_inside_a_word_is_no_minus(checker, a: int, b: int, c: int) -> None:
    step = (
        f"Therefore, the number of integers with exactly {a} digits in their base-{b} representation is {c}."
    )
    assert "incorrect" not in _labels(checker, [step], WORD), step


@SETTINGS
@given(x=st.integers(50, 70), m1=st.integers(40, 49), m2=st.integers(100, 120))
def test_a_value_given_under_a_heading_is_not_carried_past_the_next(
    checker, x: int, m1: int, m2: int
) -> None:
    # "For the midterm: X = 58 ... For the final exam: 1.5 = (X - 112) / 10": X is the final score, unknown
    z = Fraction(x - m1, 2)
    steps = [
        f"For the midterm:\nX = {x}\nμ = {m1}\nσ = 2",
        f"z = ({x} - {m1}) / 2\nz = {float(z)}",
        f"For the final exam:\nz = {float(z)}\nμ = {m2}\nσ = 10",
        f"{float(z)} = (X - {m2}) / 10",
        f"Multiply both sides by 10:\n{float(z * 10)} = X - {m2}",
    ]
    assert "incorrect" not in _labels(checker, steps, WORD), steps


@SETTINGS
@given(v=st.integers(2, 9), a=st.integers(2, 5), c=st.integers(2, 5))
def test_a_relation_put_into_another_is_no_premise_of_the_result(checker, v: int, a: int, c: int) -> None:
    step = (
        rf"Substitute $xy = -{v}$ into the expanded equation to get ${a}x^2 + 12(-{v}) + {c}y^2 = 4$, "
        rf"which simplifies to ${a}x^2 - {12 * v} + {c}y^2 = 4$."
    )
    assert "incorrect" not in _labels(checker, [step], NEUTRAL), step


# --- verifier 2.22.0: the misreadings read on untuned6 and untuned7 --------------------------------------


@SETTINGS
@given(draw=st.integers(0, 1000), whole=st.sampled_from([3, 7, 9, 11, 81]))
def test_a_percent_rounded_to_its_places_is_right_and_one_off_is_not(checker, draw: int, whole: int) -> None:
    part = 1 + draw % (whole - 1)  # a share that is never a whole number of hundredths of a percent
    percent = Fraction(part * 100, whole)
    shown = float(round(percent, 2))
    step = f"The share left is ({part}/{whole}) * 100% ≈ {shown:.2f}%, about {round(percent)}%."
    assert _labels(checker, [step], WORD) != ["incorrect"], step
    off = f"The share left is ({part}/{whole}) * 100% = {shown + 1:.2f}%."
    assert _labels(checker, [off], WORD) == ["incorrect"], off


@SETTINGS
@given(claim=claims(right=False))
def test_a_relation_the_problem_writes_is_quoted_not_asserted(checker, claim: Claim) -> None:
    problem = Problem("q", "mmlu", "math", f"Which statement is false?\nA. 2 + 2 = 4\nB. {claim.plain}")
    steps = [
        f"For statement B, we have {claim.plain}. We work out the left side first.",
        f"Therefore, the final result is {claim.plain}.\nBy problem, the option corresponding to it is B.",
    ]
    assert "incorrect" not in _labels(checker, steps, problem), steps
    # the same false claim, not in the problem, is still an error
    assert _labels(checker, [f"So {claim.plain}."], WORD) == ["incorrect"]


@SETTINGS
@given(millions=st.integers(1, 9), thousands=st.integers(100, 999), rest=st.integers(100, 999))
def test_digits_grouped_by_spaces_are_never_read_as_products(
    checker, millions: int, thousands: int, rest: int
) -> None:
    spaced = f"{millions} {thousands} {rest} - {millions} {thousands} 000"
    step = rf"Simplifying, we get $\square = {spaced} = {rest}$."
    assert "incorrect" not in _labels(checker, [step], NEUTRAL), step


@SETTINGS
@given(hundreds=st.integers(1, 9), percent=st.integers(1, 99))
def test_a_currency_word_after_an_operator_leaves_the_side_whole(
    checker, hundreds: int, percent: int
) -> None:
    profit, cost = hundreds * percent, hundreds * 100
    step = f"The percentage gain is Rs. {profit} / Rs. {cost} * 100% = {percent}%."
    assert "incorrect" not in _labels(checker, [step], WORD), step


@SETTINGS
@given(n=st.integers(5, 12), k=st.integers(2, 4))
def test_a_product_after_a_slash_may_be_the_denominator(checker, n: int, k: int) -> None:
    top = "*".join(str(n - i) for i in range(k))
    bottom = "*".join(str(k - i) for i in range(k))
    step = f"There are {n}C{k} = {top}/{bottom} = {sympy.binomial(n, k)} ways to choose them."
    assert "incorrect" not in _labels(checker, [step], WORD), step
    wrong = f"There are {n}C{k} = {top}/{bottom} = {sympy.binomial(n, k) + 1} ways to choose them."
    assert _labels(checker, [wrong], WORD) == ["incorrect"], wrong


@SETTINGS
@given(whole=st.integers(2, 9), share=st.integers(2, 30), draw=st.integers(0, 100))
def test_a_share_of_whole_things_reads_its_quotient_as_an_integer_part(
    checker, whole: int, share: int, draw: int
) -> None:
    rest = 1 + draw % (whole - 1)
    total = whole * share + rest
    question = "Final Answer: How many croissants will each have?"
    step = f"{question}\nEach will have {total}/{whole} = {share} croissants."
    assert "incorrect" not in _labels(checker, [step], WORD), step
    # a wrong integer part, or a rate, is still an error
    wrong = f"Each will have {total}/{whole} = {share + 1} croissants."
    rate = f"That is {total} cups / {whole} chairs = {share} cups per chair."
    assert _labels(checker, [wrong], WORD) == ["incorrect"], wrong
    assert _labels(checker, [rate], WORD) == ["incorrect"], rate


@SETTINGS
@given(age=st.integers(20, 60), times=st.integers(2, 5), more=st.integers(1, 9))
def test_a_product_sign_written_x_before_words_leaves_the_side_unread(
    checker, age: int, times: int, more: int
) -> None:
    step = f"We substitute his age:\n{age} = {more} + {times} x son's age"
    assert "incorrect" not in _labels(checker, [step], WORD), step


@SETTINGS
@given(
    factor=st.integers(2, 9),
    n=st.integers(4, 12),
    k=st.integers(1, 3),
    shape=st.sampled_from(
        ["{c}\\binom{{{n}}}{{{k}}}", "{c} \\binom{{{n}}}{{{k}}}", "\\binom{{{n}}}{{{k}}} {c}"]
    ),
)
def test_a_number_beside_a_binomial_multiplies_it(checker, factor: int, n: int, k: int, shape: str) -> None:
    """latex2sympy reads an integer before a positive rational as a mixed number, binomials included
    (`4 \\binom{15}{10}` was 3,007): side by side, they multiply (`latex_fast.side_by_side`)."""
    side = shape.format(c=factor, n=n, k=k)
    product = factor * sympy.binomial(n, k)
    step = f"So there are ${side} = {product}$ ways."
    assert _labels(checker, [step], COMPETITION) == ["correct"], step
    wrong = f"So there are ${side} = {product + factor}$ ways."
    assert _labels(checker, [wrong], COMPETITION) == ["incorrect"], wrong


@SETTINGS
@given(area=st.integers(10, 200), base=st.integers(2, 9))
def test_a_side_running_on_into_an_absolute_value_is_not_read_without_it(
    checker, area: int, base: int
) -> None:
    """`120 = \\frac{1}{2} |3ay_1|` was read as `120 = 1/2`: a bar opening on an operand right after the
    last side carries the side on; written with spaces around it (a table's column bar) it does not."""
    for bar in (f"|{base}a y_1|", f"\\left|{base}a\\right|"):
        step = f"Simplifying, we get:\n${area} = \\frac{{1}}{{2}} {bar}$"
        assert "incorrect" not in _labels(checker, [step], NEUTRAL), step
    table = f"Total | {area} + {base} = {area + base + 1} | rows"
    assert _labels(checker, [table], WORD) == ["incorrect"], table


@SETTINGS
@given(
    value=st.integers(0, 9),
    times=st.integers(2, 90),
    off=st.sampled_from([1, 3, 11, 40]),
    other=st.integers(2, 9),
    name=st.sampled_from(["x", "\\alpha", "k", "t_1"]),
    opener=st.sampled_from(["If", "Suppose", "When", "Let's try"]),
)
def test_an_equation_a_supposed_value_introduces_across_a_step_break_is_a_test(
    checker, value: int, times: int, off: int, other: int, name: str, opener: str
) -> None:
    """A step ending on `:` goes on through the step it introduces: the equation worked out for a value
    supposed there is put to the test, not asserted; after "Expanding, we get:" or "For $i = 0$:" (one
    round of a computation) it is asserted."""
    plus = times * value + value * other + off  # the left side is the right one plus `off`: wrong
    left, right = f"-{times}({value}) + {plus}", f"{value} \\cdot {other}"
    tried = [f"{opener} ${name} = {value}$, then the equation above becomes:", f"${left} = {right}$"]
    assert "incorrect" not in _labels(checker, tried, NEUTRAL), tried
    for opening in ("Expanding the left side, we get:", f"For ${name} = {value}$:"):  # a round of work
        said = [opening, f"${left} = {right}$"]
        assert _labels(checker, said, NEUTRAL)[1] == "incorrect", said


@SETTINGS
@given(radius=st.integers(2, 30), index=st.sampled_from(["1", "2", "{10}"]))
def test_a_side_running_on_into_a_subscripted_name_is_not_read_without_it(
    checker, radius: int, index: str
) -> None:
    """`49\\pi = \\pi r_1^2` written without math delimiters was read as `49\\pi = \\pi`: a name with a
    subscript right after a side's last operand is a factor of that side; arithmetic beside it still
    counts."""
    area = radius * radius
    step = f"For the first circle, we set up the equation {area}\\pi = \\pi r_{index}^2."
    assert "incorrect" not in _labels(checker, [step], WORD), step
    wrong = f"{step} So {radius} * {radius} = {area + 1}."
    assert _labels(checker, [wrong], WORD) == ["incorrect"], wrong


@SETTINGS
@given(
    root=st.integers(2, 9),
    offset=st.sampled_from([-15, -7, -5, -1, 1, 3, 7]),
    delimited=st.booleans(),
    refutation=st.sampled_from(
        ["This equation does not hold for x = {v}.", "So x = {v} is not a solution.", "This is false."]
    ),
)
def test_a_block_worked_line_by_line_is_judged_by_the_words_after_its_last_line(
    checker, root: int, offset: int, delimited: bool, refutation: str
) -> None:
    """`(-2)^2 + (-2) - 6 = 0`, `4 - 2 - 6 = 0`, `-4 = 0`, then "This equation does not hold": the lines of a
    displayed block are one test, which the words after its last line refute (in the step or the next)."""
    tried = root + offset  # an odd offset: never root, never -root (offset -2 root is even)
    value = tried * tried - root * root
    wrap = (lambda text: f"${text}$") if delimited else (lambda text: text)
    lines = [f"({tried})^2 - {root * root} = 0", f"{tried * tried} - {root * root} = 0", f"{value} = 0"]
    block = [f"Substitute x = {tried} into x^2 - {root * root} = 0:", *map(wrap, lines)]
    refuted = "\n".join([*block, refutation.format(v=tried)])
    assert "incorrect" not in _labels(checker, [refuted], NEUTRAL), refuted
    across = ["\n".join(block), "The check shows a mistake: " + refutation.format(v=tried)]
    assert "incorrect" not in _labels(checker, across, NEUTRAL), across
    said = "\n".join([*block, "So the equation holds."])
    assert _labels(checker, [said], NEUTRAL) == ["incorrect"], said


@SETTINGS
@given(
    a=st.integers(2, 9),
    b=st.integers(1, 40),
    x=st.integers(1, 20),
    off=st.sampled_from([-7, -2, -1, 1, 3, 10]),
    connector=st.sampled_from(["\\Rightarrow", "\\implies", "\\therefore"]),
    delimiters=st.sampled_from([("\\[", "\\]"), ("$$", "$$"), ("$", "$")]),
)
def test_a_display_opening_on_a_connector_goes_on_from_the_relation_above(
    checker, a: int, b: int, x: int, off: int, connector: str, delimiters: tuple[str, str]
) -> None:
    """`\\[ ax + b = c \\]` then `\\[ \\Rightarrow ax = d \\]`: the arrow opening the second display links it
    to the first, so a wrong rewrite is an equation step; a right one is not `incorrect`, nor is a line after
    a listed system (the arrow derives from all of it) or after words between."""
    opening, closing = delimiters
    c = a * x + b
    first = f"{opening} {a}t + {b} = {c} {closing}"

    def then(d: int) -> str:
        return f"{opening} {connector} {a}t = {d} {closing}"

    wrong = ["Multiplying out, we have", f"{first}\n{then(c - b + off)}"]
    assert _labels(checker, wrong, COMPETITION)[1] == "incorrect", wrong
    right = ["Multiplying out, we have", f"{first}\n{then(c - b)}"]
    assert "incorrect" not in _labels(checker, right, COMPETITION), right
    listed = f"Solve the system of equations:\n{first}\n{opening} {a}t - {b} = {c - 2 * b} {closing}\n"
    # (after a list the arrow derives from all of it: never paired with its last item alone)
    assert "incorrect" not in _labels(checker, [listed + then(c - b + off)], COMPETITION), listed
    between = f"{first} which we check next. {then(c - b + off)}"
    assert "incorrect" not in _labels(checker, ["We have", between], COMPETITION), between


@SETTINGS
@given(
    total=st.integers(5, 200),
    count=st.integers(2, 9000),
    names=st.sampled_from(["a + b + c", "x + y", "2m + n", "p * q"]),
    clause=st.sampled_from(["such that", "with", "satisfying", "for which"]),
)
def test_is_after_a_relation_in_names_gives_the_subjects_value(
    checker, total: int, count: int, names: str, clause: str
) -> None:
    """The number of triples "such that a + b + c = 99 is 5050": the relation is a condition inside the
    subject's phrase, so "is" does not set its number equal to the count; in written numbers alone
    (`2 + 3 = 5 is 6`) the words still chain."""
    assume(count != total)
    step = f"Therefore, the number of ordered solutions {clause} {names} = {total} is {count}."
    assert "incorrect" not in _labels(checker, [step], WORD), step
    low = total // 2
    numbers = f"Therefore, {low} + {total - low} = {total} is {count}."
    assert _labels(checker, [numbers], WORD) == ["incorrect"], numbers


@SETTINGS
@given(
    a=st.integers(2, 9),
    b=st.integers(2, 9),
    c=st.integers(10, 60),
    off=st.sampled_from([-5, -1, 1, 4]),
    words=st.sampled_from(["which is equivalent to", "equivalently,", "that is equivalent to the equation"]),
)
def test_which_is_equivalent_to_links_a_rewrite_of_one_equation(
    checker, a: int, b: int, c: int, off: int, words: str
) -> None:
    """`\\( ax + by = c \\)`, "which is equivalent to" `\\( ax = c - by \\)`: the words say the second is
    the first rewritten, so in two unknowns a wrong rewrite is an equation step; a right one is not
    `incorrect`."""

    def step(d: int) -> str:
        return f"Expanding, we get \\( {a}x + {b}y = {c} \\), {words} \\( {a}x = {d} - {b}y \\)."

    assert _labels(checker, [step(c + off)], COMPETITION) == ["incorrect"], step(c + off)
    assert "incorrect" not in _labels(checker, [step(c)], COMPETITION), step(c)


@SETTINGS
@given(
    radius=st.integers(2, 30),
    power=st.sampled_from([2, 3]),
    off=st.sampled_from([-3, -1, 2, 5]),
    bracket=st.sampled_from([("(", ")"), ("\\left(", "\\right)")]),
    space=st.sampled_from(["", " "]),
)
def test_pi_before_a_bracket_raised_to_a_power_is_a_product(
    checker, radius: int, power: int, off: int, bracket: tuple[str, str], space: str
) -> None:
    """`\\pi (3)^2 = 9\\pi`: pi before a bracket raised to a power multiplies it (the parser applied a
    function named pi to the bracket, and the claim was unread); `\\pi(10) = 4`, the prime-counting
    function's way of writing, stays unread."""
    opening, closing = bracket
    value = radius**power

    def step(coefficient: int) -> str:
        return f"The area is \\( \\pi{space}{opening}{radius}{closing}^{power} = {coefficient}\\pi \\)."

    assert _labels(checker, [step(value + off)], COMPETITION) == ["incorrect"], step(value + off)
    assert _labels(checker, [step(value)], COMPETITION) == ["correct"], step(value)
    counting = f"There are 4 primes up to 10, so \\( \\pi{space}({radius}) = {radius + off} \\)."
    assert "incorrect" not in _labels(checker, [counting], COMPETITION), counting


@SETTINGS
@given(
    base=st.integers(2, 9),
    power=st.integers(2, 6),
    off=st.sampled_from([-2, -1, 1, 3]),
    bracket=st.sampled_from([("(", ")"), ("\\left(", "\\right)")]),
)
def test_a_logarithm_with_a_digit_base_reads_its_bracket_as_the_argument(
    checker, base: int, power: int, off: int, bracket: tuple[str, str]
) -> None:
    """`\\log_2 (2^8) = 8`: the base's digit is no number multiplying the bracket (`\\log_2 \\cdot (2^8)`,
    which the parser refused); a number before a bracket still multiplies it (`6(2) = 12`)."""
    opening, closing = bracket

    def step(value: int) -> str:
        return f"So \\( \\log_{base} {opening}{base}^{{{power}}}{closing} = {value} \\)."

    assert _labels(checker, [step(power + off)], COMPETITION) == ["incorrect"], step(power + off)
    assert _labels(checker, [step(power)], COMPETITION) == ["correct"], step(power)
    product = f"So \\( {base}{opening}{power}{closing} = {base * power + off} \\)."
    assert _labels(checker, [product], COMPETITION) == ["incorrect"], product


@SETTINGS
@given(
    hundredths=st.integers(11, 99).filter(lambda k: k % 10 != 0),
    total=st.integers(2, 99),
    places=st.sampled_from([2, 3]),
    off=st.sampled_from([-0.4, 0.3, 0.6]),
)
def test_a_solution_rounded_to_its_places_is_no_wrong_step(
    checker, hundredths: int, total: int, places: int, off: float
) -> None:
    """`0.45x = 7`, so `x = 15.56`: a decimal of two places or more may itself be rounded, and the value
    solved from it, rounded to the places written, is no certain error (2.28.0 compared 140/9 with 15.56
    exactly and flagged it); a value off by more than rounding can move it is still `incorrect`."""
    coefficient = Fraction(hundredths, 100)
    exact = total / coefficient
    rounded = Decimal(exact.numerator) / Decimal(exact.denominator)
    value = rounded.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    assume(Fraction(value) != exact)

    def step(x: Decimal) -> str:
        return f"We have \\( {float(coefficient)}x = {total} \\), so \\( x = {x} \\)."

    assert _labels(checker, [step(value)], COMPETITION) != ["incorrect"], step(value)
    wrong = (rounded * Decimal(1 + off)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    assert _labels(checker, [step(wrong)], COMPETITION) == ["incorrect"], step(wrong)


@SETTINGS
@given(
    p=st.integers(1, 9),
    q=st.integers(2, 9),
    k=st.integers(1, 3),
    sign=st.sampled_from(["+", "-"]),
)
def test_an_equation_rewritten_after_a_cue_is_no_identity(checker, p: int, q: int, k: int, sign: str) -> None:
    """`\\left(\\frac{a - 1}{2}\\right)^2 = a^3`, then "Simplifying, we get" `\\frac{(a - 1)^2}{4} = a^3`: the
    step rewrote one side of an equation, so the claim is that equation (a condition on `a`), not an
    identity to be false (2.28.0 read it as one after the cue, and so the equation derived from it); a wrong
    rewrite of it is still `incorrect` (as an equation step), and so is a false identity after an identity."""
    power = "" if k == 1 else f"^{k}"
    first = f"\\( \\left(\\frac{{a {sign} {p}}}{{{q}}}\\right)^2 = a{power} \\)"

    def step(denominator: int) -> str:
        return (
            f"Substituting, we obtain {first}. Simplifying, we get "
            f"\\( \\frac{{(a {sign} {p})^2}}{{{denominator}}} = a{power} \\), which leads to "
            f"\\( (a {sign} {p})^2 = {denominator}a{power} \\)."
        )

    assert _labels(checker, [step(q * q)], COMPETITION) != ["incorrect"], step(q * q)
    assert _labels(checker, [step(q * q + 1)], COMPETITION) == ["incorrect"], step(q * q + 1)
    wrong = f"Expanding, \\( (x + {p})(x + {q}) = x^2 + {p + q + 1}x + {p * q} \\)."
    assert _labels(checker, [wrong], COMPETITION) == ["incorrect"], wrong


@SETTINGS
@given(
    p=st.integers(-9, 9).filter(bool),
    q=st.integers(1, 9),
    off=st.sampled_from([-3, -1, 1, 2, 5]),
    cue=st.sampled_from(["Expanding", "Multiplying out", "Factoring"]),
)
def test_an_expansion_off_by_a_constant_is_read(checker, p: int, q: int, off: int, cue: str) -> None:
    """`(x + 1)(x + 2) = x^2 + 3x + 3`: the two sides differ by a number, and the reader asked that number
    for a value of written numbers, a TypeError that left the whole run unread (2.28.0); the identity
    reading now judges it, and the right expansion stays `correct`."""

    def step(constant: int) -> str:
        return f"{cue}, \\( (x {p:+d})(x + {q}) = x^2 {p + q:+d}x {constant:+d} \\)."

    assert _labels(checker, [step(p * q + off)], COMPETITION) == ["incorrect"], step(p * q + off)
    assert _labels(checker, [step(p * q)], COMPETITION) == ["correct"], step(p * q)


@SETTINGS
@given(
    name=st.sampled_from(["x", "r", "t"]),
    p=st.integers(1, 9),
    q=st.integers(2, 5),
    extra=st.integers(1, 9),
    off=st.sampled_from([-2, 1, 3]),
)
def test_a_plain_text_equation_rewritten_is_no_identity(
    checker, name: str, p: int, q: int, extra: int, off: int
) -> None:
    """A chain written without math delimiters: "the equation gives 2(r+6)^2 = 8r^2", then "we get
    2(r^2 + 12r + 36) = 8r^2", the right side kept and the left expanded: that equation rewritten, not an
    identity to be false (2.29.0 read the earlier relations inside `$...$` only, so it flagged the right
    expansion); a wrong expansion (other solutions) is still `incorrect`, as is a false identity alone."""
    m = q + extra  # m > q: both equations have real solutions, so a wrong expansion changes them
    given = f"Putting the value into the equation gives {q}({name}+{p})^2 = {m}{name}^2."

    def expanded(constant: int) -> str:
        return f"Expanding the left side, we get {q}({name}^2 + {2 * p}{name} + {constant}) = {m}{name}^2."

    right = _labels(checker, [given, expanded(p * p)], COMPETITION)
    assert "incorrect" not in right, (given, expanded(p * p))
    wrong = _labels(checker, [given, expanded(p * p + off)], COMPETITION)
    assert wrong[1] == "incorrect", (given, expanded(p * p + off))
    alone = f"Expanding, ({name} + {p})({name} + {q}) = {name}^2 + {p + q}{name} + {p * q + off}."
    assert _labels(checker, [alone], COMPETITION) == ["incorrect"], alone


# made-up unit words (none a unit pint reads)
_MADE_UP_UNITS = ["dap", "yap", "bap", "wallop", "ballop", "knick", "knack", "glip", "florp", "zorb"]


@SETTINGS
@given(
    units=st.lists(st.sampled_from(_MADE_UP_UNITS), min_size=3, max_size=3, unique=True),
    a=st.integers(2, 9),
    b=st.integers(2, 9),
    c=st.integers(2, 9),
    d=st.integers(2, 9),
    n=st.integers(2, 60),
    off=st.sampled_from([-3, 1, 2]),
)
def test_units_a_problem_defines_make_a_conversion(
    checker, units: list[str], a: int, b: int, c: int, d: int, n: int, off: int
) -> None:
    """ "If 4 daps = 7 yaps, and 5 yaps = 3 baps, how many daps equal 42 baps?": amounts of the problem's
    made-up units, `40 daps = 42 baps`, differ by the factor between the units, which the claim does not
    state (2.29.0 read `42 * 20/21 daps = 42` as arithmetic and flagged it); arithmetic in one unit is
    still judged."""
    u, v, w = units
    text = f"If {a} {u}s = {b} {v}s, and {c} {v}s = {d} {w}s, how many {u}s equal {n} {w}s?"
    problem = Problem("m4", "math", "math", text)
    conversion = f"So, multiplying both sides by {n} * {a}/{d}, I get {n} * {a}/{d} {u}s = {n} {w}s."
    assume(Fraction(n * a, d) != n)
    assert _labels(checker, [conversion], problem) != ["incorrect"], (problem.text, conversion)
    same_unit = f"So {a} * {c} {u}s = {a * c + off} {u}s."
    assert _labels(checker, [same_unit], problem) == ["incorrect"], (problem.text, same_unit)


@SETTINGS
@given(
    whole=st.integers(1, 9),
    tenth=st.integers(1, 9),
    divisor=st.sampled_from([3, 4, 6, 8, 12, 24, 60]),
    scale=st.sampled_from([("million", 10**6), ("lakh", 10**5), ("crore", 10**7), ("thousand", 10**3)]),
    off=st.sampled_from([-7, 1, 5]),
)
def test_a_number_with_a_scale_word_is_never_read_as_its_digits(
    checker, whole: int, tenth: int, divisor: int, scale: tuple[str, int], off: int
) -> None:
    """`2.4 million / 60 = 40,000`, `Solving 60x = 0.24 lakh, we get x = 400`: the readers took the digits
    alone (`2.4 / 60`), so a right claim was `incorrect` (2.30.0); a claim in a sentence that scales a
    number is not read with certainty, and a false one in a sentence of its own is still `incorrect`."""
    word, factor = scale
    amount = Fraction(whole * 10 + tenth, 10) * factor
    assume((amount / divisor).denominator == 1)
    share = int(amount / divisor)
    stated = f"So {whole}.{tenth} {word} / {divisor} = {share:,} each."
    assert _labels(checker, [stated], WORD) != ["incorrect"], stated
    solved = f"Solving {divisor}x = {whole}.{tenth} {word}, we get x = {share}."
    assert _labels(checker, [solved], WORD) != ["incorrect"], solved
    alone = f"So {whole}.{tenth} {word} it is. Then {divisor} * {tenth} = {divisor * tenth + off}."
    assert _labels(checker, [alone], WORD) == ["incorrect"], alone


@SETTINGS
@given(
    total=st.integers(100, 9999),
    divisor=st.sampled_from([3, 7, 9, 11, 12, 13, 30, 60]),
    off=st.sampled_from([-3, 2, 9]),
)
def test_a_value_with_no_finite_decimal_rounded_to_a_whole_number_is_no_error(
    checker, total: int, divisor: int, off: int
) -> None:
    """`$20,000 / 30 = $667`: 2000/3 has no finite decimal form, so any number written for it is rounded,
    to two places (`$666.67`, already read so) or to none (2.30.0 flagged the whole dollar); a value off by
    more than rounding is still `incorrect`."""
    exact = Fraction(total, divisor)
    assume(
        exact.denominator % 3 == 0
        or exact.denominator % 7 == 0
        or exact.denominator % 11 == 0
        or exact.denominator % 13 == 0
    )  # no finite decimal form
    nearest = int(exact + Fraction(1, 2))
    assume(nearest >= 10 and Fraction(nearest) - exact != Fraction(1, 2))
    step = f"Each of them costs ${total:,} / {divisor} = ${nearest:,}."
    assert _labels(checker, [step], WORD) != ["incorrect"], step
    wrong = f"Each of them costs ${total:,} / {divisor} = ${nearest + off:,}."
    assert _labels(checker, [wrong], WORD) == ["incorrect"], wrong


@SETTINGS
@given(
    size=st.integers(3, 9),
    boxes=st.integers(2, 8),
    rest=st.integers(1, 4),
    things=st.sampled_from(["boxes", "trips", "loads", "buses"]),
)
def test_a_quotient_rounded_up_to_the_things_needed_is_no_error(
    checker, size: int, boxes: int, rest: int, things: str
) -> None:
    """ "You would need 462/9 = 52 flash drives": a count that must cover a quotient is the quotient rounded
    up (2.30.0 read it as a false equality; rounding down, a share, was already left unjudged); a count
    rounded up by more than one is still `incorrect`."""
    assume(2 * rest < size)  # below one half: rounding up is no rounding to the nearest
    items = boxes * size + rest
    step = f"You would need {items}/{size} = {boxes + 1} {things}."
    assert _labels(checker, [step], WORD) != ["incorrect"], step
    wrong = f"You would need {items}/{size} = {boxes + 2} {things}."
    assert _labels(checker, [wrong], WORD) == ["incorrect"], wrong


@SETTINGS
@given(
    first=st.integers(1, 9),
    second=st.integers(2, 9),
    scale=st.integers(2, 30),
    off=st.sampled_from([-1, 1, 3]),
)
def test_a_side_running_on_into_a_ratio_is_never_read_without_it(
    checker, first: int, second: int, scale: int, off: int
) -> None:
    """`So the ratio is 3/6 = 1:2`: the reader took the ratio's first term for the side (`3/6 = 1`), a false
    equality (2.30.0); a claim whose last number runs on into `:` and a number is cut from a ratio, so not
    read with certainty, spaced or not; a false quotient ending the sentence is still `incorrect`."""
    assume(first % second != 0 and second % first != 0)
    a, b = first * scale, second * scale
    for colon in (":", " : "):
        step = f"So the ratio is {a}/{b} = {first}{colon}{second}."
        assert _labels(checker, [step], WORD) != ["incorrect"], step
    wrong = f"So each share is {a * second}/{second} = {a + off}."
    assert _labels(checker, [wrong], WORD) == ["incorrect"], wrong


@SETTINGS
@given(
    size=st.integers(3, 9),
    full=st.integers(2, 60),
    rest=st.integers(1, 8),
    sign=st.sampled_from(["÷", "/"]),
    things=st.sampled_from(["boxes", "packages", "red marbles", "wrappers"]),
)
def test_a_quotients_integer_part_with_the_things_counted_is_no_error_in_competition_text(
    checker, size: int, full: int, rest: int, sign: str, things: str
) -> None:
    """`She can trade all of them for 16/3 = 5 red marbles`, `989 ÷ 4 = 247 packages have been filled`: the
    integer part of a share of whole things, read by the competition reader, which had no share rule
    (2.31.0 flagged it; the word-problem reader left it unjudged); a count off by more is still
    `incorrect`, and so is the quotient with no things after it."""
    assume(rest < size)
    items = full * size + rest
    step = f"So {items} {sign} {size} = {full} {things} are filled."
    assert _labels(checker, [step], COMPETITION) != ["incorrect"], step
    wrong = f"So {items} {sign} {size} = {full - 1} {things} are filled."
    assert _labels(checker, [wrong], COMPETITION) == ["incorrect"], wrong
    bare = f"So {items} {sign} {size} = {full}, and we go on."
    assert _labels(checker, [bare], COMPETITION) == ["incorrect"], bare


@SETTINGS
@given(
    b=st.sampled_from([5, 10]),
    r=st.sampled_from([Fraction(1, 5), Fraction(2, 5)]),
    d=st.sampled_from([13, 17, 19, 23, 26, 29, 31, 37]),
)
def test_decimals_written_rounded_may_reach_a_result_of_one_figure(
    checker, b: int, r: Fraction, d: int
) -> None:
    """`(0.231 - 0.192) / 0.192 = 0.2`: 0.231 and 0.192 are 6/26 and 5/26 rounded, whose relative change is
    exactly 0.2; worked with the rounded decimals it is 0.203. A right side of one figure stands for itself,
    and the operands' rounding reaches it, so the claim is no certain error (2.32.0 left a one-figure right
    side out of the operands' rule); a value the rounding cannot reach is still `incorrect`."""
    a = b * (1 + r)
    assume(a.denominator == 1 and a < d)

    def three(value: Fraction) -> str:
        return (
            str(Decimal(value.numerator) / Decimal(value.denominator)).split(".")[0]
            + "."
            + str(
                (Decimal(value.numerator * 1000) / Decimal(value.denominator)).quantize(
                    Decimal(1), rounding=ROUND_HALF_UP
                )
            )[-3:]
        )

    big, small = three(Fraction(int(a), d)), three(Fraction(b, d))
    exact = (Fraction(big) - Fraction(small)) / Fraction(small)
    assume(exact != r)
    step = f"So the change is ({big} - {small}) / {small} = {float(r):g}, an increase of {int(r * 100)}%."
    assert _labels(checker, [step], WORD) != ["incorrect"], step
    wrong = f"So the change is ({big} - {small}) / {small} = {float(r + Fraction(2, 5)):g}."
    assert _labels(checker, [wrong], WORD) == ["incorrect"], wrong


@SETTINGS
@given(old=st.integers(30, 999), num=st.integers(1, 2), den=st.sampled_from([3, 6, 7, 9, 11]))
def test_a_percent_with_no_finite_decimal_may_be_written_rounded(
    checker, old: int, num: int, den: int
) -> None:
    """`($3,200 - $4,800) / $4,800 * 100 = -33%`: a percent whose exact value has no finite decimal form
    is written rounded, as money is (2.31.0); the places written must still be the exact value's
    rounding, so a percent off by one is `incorrect`, and so is a percent of one figure (`-9%` for -9.09)."""
    assume(Fraction(num, den).denominator == den)
    base = old * den
    new = base - num * old
    exact = Fraction(new - base, base) * 100
    rounded = int(exact.__round__())
    assume(abs(exact - rounded) < Fraction(1, 2) and abs(rounded) >= 10)  # one figure is no rounding kept
    step = f"The change is ({new} - {base}) / {base} * 100 = {rounded}%."
    assert _labels(checker, [step], WORD) != ["incorrect"], step
    wrong = f"The change is ({new} - {base}) / {base} * 100 = {rounded - 1}%."
    assert _labels(checker, [wrong], WORD) == ["incorrect"], wrong


@SETTINGS
@given(a=st.integers(2, 40), b=st.integers(2, 20), c=st.integers(2, 9), off=st.sampled_from([-7, 1, 3]))
def test_a_quotient_right_after_a_slash_may_be_the_denominator(
    checker, a: int, b: int, c: int, off: int
) -> None:
    """`20 inches * 10 miles/1/4 inch = 800 miles`: a scale of 10 miles to a quarter inch, `b / (1/c)`; read
    left to right it is 50, so the claim has two readings and is no certain error. A value neither reading
    gives is still `incorrect`."""
    step = f"The actual distance is {a} inches * {b} miles/1/{c} inch = {a * b * c} miles."
    assert _labels(checker, [step], WORD) != ["incorrect"], step
    value = a * b * c + off
    assume(Fraction(a * b, c) != value)
    wrong = f"The actual distance is {a} inches * {b} miles/1/{c} inch = {value} miles."
    assert _labels(checker, [wrong], WORD) == ["incorrect"], wrong


@SETTINGS
@given(k=st.integers(2, 12), n=st.integers(2, 30), off=st.sampled_from([-1, 1, 5]))
def test_a_word_of_relation_inside_a_claim_leaves_it_unjudged(checker, k: int, n: int, off: int) -> None:
    """ "the number that multiplied by 4 equals 36 is 9": read as `multiplied by 4 equals 36 = 9`, its words
    taken for units; a word of relation inside a claim joins two relations, so the claim is no certain
    error. The same product said with one relation is still judged."""
    step = f"So, the number that multiplied by {k} equals {k * n} is {n}."
    assert _labels(checker, [step], WORD) != ["incorrect"], step
    wrong = f"Thus {k} multiplied by {n} equals {k * n + off}."
    assert _labels(checker, [wrong], WORD) == ["incorrect"], wrong


@SETTINGS
@given(
    first=st.integers(2, 9),
    second=st.integers(1, 9),
    both=st.integers(1, 9),
    names=st.sampled_from([("Alfred", "Ben"), ("Anna", "Carl"), ("rain", "snow")]),
)
def test_a_name_applied_to_words_is_never_read_as_the_name_alone(
    checker, first: int, second: int, both: int, names: tuple[str, str]
) -> None:
    """`P(Alfred) = 0.6`, then `0.72 = 0.6 + P(Ben) - 0.18`: the claim reader drops `(Ben)` as a label and
    reads `P` with the value of `P(Alfred)`. A letter the step applies to words is no name, so the claim is
    no certain error; a name written alone is still judged."""
    assume(first + first - both != first + second - both)
    a, b, ab = (Fraction(x, 10) for x in (first, second, both))
    total = a + b - ab
    assume(0 < total <= 1)
    given_step = f"P({names[0]}) = {float(a):g}"
    step = f"So, we have:\n{float(total):g} = {float(a):g} + P({names[1]}) - {float(ab):g}"
    assert _labels(checker, [given_step, step], WORD)[1] != "incorrect", step
    wrong = f"So, we have:\n{float(total):g} = {float(a):g} + x - {float(ab):g}"
    assert _labels(checker, [f"x = {float(a):g}", wrong], WORD)[1] == "incorrect", wrong


@SETTINGS
@given(whole=st.integers(1, 20), num=st.integers(1, 7), den=st.sampled_from([2, 4, 5, 8]))
def test_a_mixed_number_said_with_and_is_never_read_as_its_fraction(
    checker, whole: int, num: int, den: int
) -> None:
    """`$3 \\text{ and } \\frac{1}{8} = 3 + 0.125 = 3.125$`: a whole number and a fraction said with `and`;
    the claim reader keeps `\\frac{1}{8} = 3 + 0.125`, which fails. The claim is cut out of a mixed number,
    no certain error; the same claim with nothing before it is still `incorrect`."""
    assume(num < den and Fraction(num, den).denominator == den)
    decimal = Decimal(num) / Decimal(den)
    step = f"2. ${whole} \\text{{ and }} \\frac{{{num}}}{{{den}}} = {whole} + {decimal} = {whole + decimal}$"
    assert _labels(checker, [step], WORD) != ["incorrect"], step
    bare = f"2. $\\frac{{{num}}}{{{den}}} = {whole} + {decimal}$"
    assert _labels(checker, [bare], WORD) == ["incorrect"], bare


@SETTINGS
@given(
    low=st.integers(11, 99),
    high=st.integers(101, 299),
    p=st.integers(1000, 4000),
    q=st.integers(4001, 9000),
    off=st.sampled_from([-20, 30]),
)
def test_a_claim_that_closes_a_bracket_it_never_opened_is_never_incorrect(
    checker, low: int, high: int, p: int, q: int, off: int
) -> None:
    """`P(z < 2.0833 | z > 0.4167) = 0.3201 / 0.3388 ≈ 0.9446`: the claim reader kept
    `0.4167) = 0.3201 / 0.3388 ≈ 0.9446`, cut out of the probability's bracket; a claim that closes a
    bracket it never opened is not read whole, so it is no certain error (2.32.0 judged it). The same
    quotient written alone with a wrong value is still `incorrect`."""
    value = Fraction(p, q)
    wrong = f"{Decimal(round(value * 10000) + off) / Decimal(10000):.4f}"
    step = f"The probability is P(z < {high / 100} | z > 0.{low}) = 0.{p} / 0.{q} ≈ {wrong}."
    assert _labels(checker, [step], WORD) != ["incorrect"], step
    alone = f"The probability is 0.{p} / 0.{q} ≈ {wrong}."
    assert _labels(checker, [alone], WORD) == ["incorrect"], alone


@SETTINGS
@given(
    a=st.integers(10, 40),
    b=st.integers(2, 9),
    c=st.integers(2, 9),
    off=st.sampled_from([-3, 1, 7]),
    wrap=st.sampled_from(["$${}$$", "'{}'", "{}"]),
)
def test_arithmetic_under_signs_the_problem_redefines_is_never_incorrect(
    checker, a: int, b: int, c: int, off: int, wrap: str
) -> None:
    """ "If $$-$$ means $$\\times$$, $$+$$ means $$\\div$$ ... Then 20 + (4 ÷ 2) - 2 × 5 = ?": the chain
    writes claims in the new meaning of the signs, or rewrites between the two meanings, so no claim of it
    is read with certainty (2.33.0 judged them with the usual signs). The same claim under a problem that
    redefines nothing is still `incorrect`."""
    signs = [("-", "\\times"), ("+", "\\div"), ("\\times", "+"), ("\\div", "-")]
    rules = "  ".join(f"{wrap.format(s)} means {wrap.format(t)}" for s, t in signs)
    puzzle = Problem("m4", "olympiad", "math", f"If {rules}  Then: ${a}+{b}-{c}=$?")
    value = a + b - c + off
    step = f"So we get $$({a}+{b}) - {c} = {value}$$."
    assert _labels(checker, [step], puzzle) != ["incorrect"], step
    assert _labels(checker, [step], NEUTRAL) == ["incorrect"], step


@SETTINGS
@given(
    b=st.sampled_from([3, 6, 7, 9, 11, 13]),
    k=st.integers(1, 9),
    m=st.integers(1, 9),
    off=st.sampled_from([-2, 1, 5]),
)
def test_a_value_solved_from_a_rounded_ratio_may_be_written_as_meant(
    checker, b: int, k: int, m: int, off: int
) -> None:
    """`17.5/40.25 = 0.435`, then `0.435 = x/28.75` and `x = 12.5`: solved exactly from the rounded 0.435, x
    is 12.50625; 12.5 is the value the ratio stands for. A name's value solved from a relation holding a
    decimal carried rounded (three figures or more, not written in the problem) is no certain error within
    what that decimal's rounding allows (2.34.0 judged it); a value off by more is still `incorrect`."""
    a = b * k + 1  # a / b has no finite decimal form (b has a factor other than 2 and 5)
    c = b * m
    ratio = f"{Decimal(a) / Decimal(b):.3f}"
    assume(len(ratio.replace(".", "").lstrip("0")) >= 3 and Fraction(ratio) * c != a * m)
    problem = Problem(
        "m5",
        "aqua",
        "math",
        f"A pole {a} metres high casts a shadow {b} metres long. How tall is a pole "
        f"whose shadow is {c} metres long?",
    )
    steps = [f"The ratio is {a}/{b} = {ratio}.", f"Since the ratios are equal, {ratio} = x/{c}."]
    meant = f"Solving {ratio} = x/{c}, we get x = {a * m}. So the pole is {a * m} metres tall."
    assert _labels(checker, [*steps, meant], problem)[2] != "incorrect", meant
    wrong = f"Solving {ratio} = x/{c}, we get x = {a * m + off}. So the pole is {a * m + off} metres tall."
    assert _labels(checker, [*steps, wrong], problem)[2] == "incorrect", wrong
