"""Final-answer extraction and equivalence, one row per form issues 3 and 12 name; fail-closed outcomes."""

from __future__ import annotations

from pathlib import Path

import pytest

from prm_factory.verifiers.math import answers, bounded
from prm_factory.verifiers.math.answers import answers_equivalent, extract_answer, grade_answer, plain_value
from prm_factory.verifiers.math.bounded import TIMED_OUT, WORKER_FAILED, BoundedPool, PoolConfig
from prm_factory.verifiers.math.fork_server import ForkServer
from prm_factory.verifiers.protocol import outcome_value


@pytest.mark.parametrize(
    ("text", "expected", "method"),
    [
        ("So 48/2 = 24. The answer is 24.", "24", "the_answer_is"),
        ("The final answer is $18.", "$18", "the_answer_is"),
        ("The answer is 2.5.", "2.5", "the_answer_is"),
        ("Natalia sold 72 clips.\n#### 72", "72", "hashes"),
        ("#### 1,000", "1,000", "hashes"),
        (r"Thus \boxed{\frac{1}{2}} is it; 5 more words", r"\frac{1}{2}", "boxed"),
        (r"\boxed{\frac{\sqrt{2}}{\{2\}}}", r"\frac{\sqrt{2}}{\{2\}}", "boxed"),
        (r"first \boxed{1} then \boxed{2}", "2", "boxed"),
        (r"The answer is \boxed{7}.", "7", "boxed"),
        ("She has 3 apples and buys 4 more, 7 in all", "7", "last_number"),
        ("It costs $1,250.50 in total", "$1,250.50", "last_number"),
    ],
)
def test_extract_answer(text: str, expected: str, method: str) -> None:
    answer = extract_answer(text)
    assert answer is not None
    assert (answer.text, answer.method) == (expected, method)
    assert expected in text[answer.start : answer.end]


def test_extract_answer_without_fallback_finds_nothing_in_bare_text() -> None:
    assert extract_answer("She has 7 apples", last_number_fallback=False) is None
    assert extract_answer("no numbers at all") is None
    assert extract_answer(r"\boxed{unclosed 5", last_number_fallback=False) is None


@pytest.mark.parametrize(
    ("predicted", "reference", "label"),
    [
        ("1,000", "1000", "correct"),  # comma numbers
        ("10,000", "1000", "incorrect"),
        ("$18", "18", "correct"),  # currency
        (r"\$18.00", "18", "correct"),
        ("$19", "18", "incorrect"),
        ("50%", "50", "correct"),  # percent: p% reads as p/100 or p
        ("50%", "0.5", "correct"),
        ("25%", "50", "incorrect"),
        ("2.50", "2.5", "correct"),  # decimals
        ("2.05", "2.5", "incorrect"),
        ("1/2", "0.5", "correct"),  # fractions
        ("0.33", "1/3", "incorrect"),  # precision first: no rounding of a reference
        (r"\frac{1}{2}", "0.5", "correct"),
        (r"\dfrac{3}{4}", "0.75", "correct"),
        (r"\frac{3}{4}", r"\frac{4}{3}", "incorrect"),
        ("3 1/2", "3.5", "correct"),  # mixed numbers
        (r"3\frac{1}{2}", "7/2", "correct"),
        (r"2\frac{1}{4}", "2.5", "incorrect"),
        ("18 dollars", "18", "correct"),  # units
        (r"12 \text{ cm}", "12", "correct"),
        ("45 minutes", "0.75", "incorrect"),
        ("x = 3", "3", "correct"),  # equations
        ("x = 4", "3", "incorrect"),
        ("1.5e3", "1500", "correct"),  # scientific notation
        (r"1.5 \times 10^{3}", "1500", "correct"),
        (r"1.5 \times 10^{4}", "1500", "incorrect"),
        ("-5", "5", "incorrect"),
        # the relative tolerance, between two decimals, only below half a unit of the coarser one's
        # last place: cents differ, a float's last digit does not
        ("16386.17", "16386.16", "incorrect"),
        ("1.0000001", "1", "correct"),
        (r"\$16386.17", "16386.17", "correct"),
        ("0.3333333", "1/3", "correct"),
    ],
)
def test_answers_equivalent_fast_path(predicted: str, reference: str, label: str) -> None:
    verdict = answers_equivalent(predicted, reference)
    assert verdict.label == label, verdict.reason
    assert verdict.evidence["path"] in ("exact", "structure", "text")  # in-process, no worker


@pytest.mark.parametrize(
    ("predicted", "reference", "label"),
    [
        (r"\sqrt{12}", r"2\sqrt{3}", "correct"),
        (r"\frac{\sqrt{2}}{2}", r"\frac{1}{\sqrt{2}}", "correct"),
        (r"\sqrt{2}", "1.414", "incorrect"),
        (r"2\pi", r"2 \pi", "correct"),
        (r"\pi", "3.14", "incorrect"),
        ("x^2 + 2x + 1", "(x+1)^2", "correct"),
        ("3x", "3y", "incorrect"),  # a variable is not a unit
        ("(1, 2)", "(1,2)", "correct"),  # tuples
        ("(1,2)", "(2,1)", "incorrect"),
        (r"\{1, 2\}", r"\{2, 1\}", "correct"),  # sets
        (r"\{1,2\}", "(1,2)", "incorrect"),  # a set is never a tuple
        ("[1, 2)", "[1,2)", "correct"),  # intervals
        ("[1, 2)", "(1, 2)", "incorrect"),
        (r"\text{garbage}{", "3", "unparsed"),  # LaTeX garbage: unparsed, never correct
        (r"}{\frac", "3", "unparsed"),
    ],
)
def test_answers_equivalent_symbolic_path(predicted: str, reference: str, label: str) -> None:
    verdict = answers_equivalent(predicted, reference)
    assert verdict.label == label, verdict.reason


def test_power_tower_is_unparsed_at_once() -> None:
    verdict = answers_equivalent("5^(5^(5^5))", "3")
    assert verdict.label == "unparsed"
    assert "too large" in verdict.reason


def test_plain_value_reads_percent_both_ways() -> None:
    assert plain_value("50%") == (0.5, 50)
    assert plain_value("5 apples and 3 oranges") is None


def test_grade_answer_records_the_span() -> None:
    completion = "48/2 = 24, and 48 + 24 = 72. The answer is 72."
    verdict = grade_answer(completion, "72")
    assert verdict.label == "correct"
    start, end = verdict.evidence["span"]
    assert completion[start:end] == "72"
    assert verdict.evidence["method"] == "the_answer_is"


def test_grade_answer_without_answer_is_unparsed() -> None:
    assert grade_answer("I do not know.", "72").label == "unparsed"
    assert grade_answer("I think 71", "72").label == "incorrect"
    assert grade_answer("I think 71", "72", last_number_fallback=False).label == "unparsed"


@pytest.mark.parametrize(
    "completion",
    [
        "\\boxed{" * 2000,
        "The answer is " + "1" * 20000,
        "x" * 50000,
        "\\boxed{1} and " * 3000,  # thousands of boxes, each nested-box check once
        "is \\(" * 12000,  # the marker-less last-sentence search looks at the end only
        "Problem: a\n" * 5000,
    ],
)
def test_pathological_completions_are_unparsed_quickly(completion: str) -> None:
    assert grade_answer(completion, "3", last_number_fallback=False, timeout_s=2.0).label in (
        "unparsed",
        "incorrect",
    )


@pytest.mark.parametrize(
    ("predicted", "reference", "label"),
    [
        ("2,5", "2.5", "correct"),  # decimal commas, read only where no thousands separator fits
        ("0{,}75", r"\frac{3}{4}", "correct"),
        ("0,750", "0.75", "correct"),
        ("1,250", "1.25", "incorrect"),  # a thousands separator: 1250
        ("2,5", "2, 5", "correct"),  # against a list it stays a list
        (r"0.\overline{3}", r"\frac{1}{3}", "correct"),  # repeating decimals, exactly
        (r"0.\overline{35625}", ".35625", "incorrect"),
        (r"1.2\overline{45}", r"\frac{137}{110}", "correct"),
        ("52_8", "52_8", "correct"),  # the same text once normalized
        (r"\text{Navin}", "Navin", "correct"),  # word answers compare as words
        ("East", r"\text{east}", "correct"),
        ("neve", r"\text{even}", "incorrect"),  # SymPy would read both as the product e*v*e*n
        (r"\text{odd}", r"\text{even}", "incorrect"),
        ("39.6", r"\text{Navin}", "incorrect"),
    ],
)
def test_answers_equivalent_in_process_forms(predicted: str, reference: str, label: str) -> None:
    assert answers_equivalent(predicted, reference).label == label


@pytest.mark.parametrize(
    ("predicted", "reference", "label"),
    [
        (r"y=-\frac{1}{2}x+\frac{3}{4}", "2x+4y-3=0", "correct"),  # an equation in another form
        (r"y=-\frac{1}{2}x+\frac{3}{4}", "2x+4y+3=0", "incorrect"),
        ("x > 3", r"(3,\infty)", "correct"),  # an inequality against an interval
        (r"x \geq 3", r"(3,\infty)", "incorrect"),
        ("2, -3", "-3, 2", "correct"),  # several boxes joined
        ("12*pi", r"12\pi", "correct"),  # PRM800K's plain maths
        ("2 * 5! * 5!", "28800", "correct"),
        ("-$\\pi/6$", r"-\frac{\pi}{6}", "correct"),
        (r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}", r"\begin{pmatrix}1&2\\3&4\end{pmatrix}", "correct"),
        (
            r"\begin{pmatrix} 1 & 2 \\ 4 & 3 \end{pmatrix}",
            r"\begin{pmatrix}1&2\\3&4\end{pmatrix}",
            "incorrect",
        ),
    ],
)
def test_answers_equivalent_math_verify_forms(predicted: str, reference: str, label: str) -> None:
    assert answers_equivalent(predicted, reference).label == label


@pytest.mark.parametrize(
    ("predicted", "reference", "label"),
    [
        # lines and curves: equal when one side is a nonzero multiple of the other, everything on one side
        ("2x - y - 3 = 0", "y = 2x - 3", "correct"),
        ("-4x-8y+6=0", "2x+4y-3=0", "correct"),
        ("2x+4y+3=0", "2x+4y-3=0", "incorrect"),
        ("2x - y + 3 = 0", "y = 2x - 3", "incorrect"),
        ("x^2 + y^2 - 4x + 6y - 12 = 0", "(x-2)^2+(y+3)^2=25", "correct"),
        ("x^2 + y^2 - 4x + 6y - 12 = 0", "(x-2)^2+(y+3)^2=5", "incorrect"),
        # intervals against inequalities, either way round
        (r"x \in [2,5)", r"2 \le x < 5", "correct"),
        (r"2 \le x < 5", "[2,5)", "correct"),
        ("[2,5)", "[2,5]", "incorrect"),
        (r"2 \le x \le 5", "[2,5)", "incorrect"),
        # inequalities joined by "or" against a union of intervals (math-verify alone reads them as a set)
        (r"x<-2 \text{ or } x>3", r"(-\infty, -2) \cup (3, \infty)", "correct"),
        (r"(-\infty, -2) \cup (3, \infty)", r"x<-2 \text{ or } x>3", "correct"),
        (r"x \le -2 \text{ or } x > 3", r"(-\infty, -2) \cup (3, \infty)", "incorrect"),
        (r"x < -2 \text{ or } x > 4", r"(-\infty, -2) \cup (3, \infty)", "incorrect"),
        (r"x<-2 \text{ or } y>3", r"(-\infty, -2) \cup (3, \infty)", "incorrect"),  # two variables
        # sets and lists of solutions in any order; tuples in theirs
        (r"\{3, 1\}", r"\{1, 3\}", "correct"),
        ("5, -3", "-3, 5", "correct"),
        ("(3, 1)", "(1,3)", "incorrect"),
        # radicals in another form, and PRM800K's plain `sqrt(...)`
        (r"6\sqrt{2}", r"\sqrt{72}", "correct"),
        (r"6\sqrt{3}", r"\sqrt{72}", "incorrect"),
        (r"\dfrac{3\sqrt{5}}{5}", r"\frac{3}{\sqrt{5}}", "correct"),
        ("5 sqrt(2)", r"5\sqrt{2}", "correct"),
        ("5 sqrt(3)", r"5\sqrt{2}", "incorrect"),
        # the same object in another notation
        (r"\langle 1, 2 \rangle", "(1,2)", "correct"),
        (r"\langle 2, 1 \rangle", "(1,2)", "incorrect"),
        (r"\varnothing", r"\emptyset", "correct"),
        # multiple-choice letters with or without `\text{( )}`
        ("(C)", r"\text{(C)}", "correct"),
        ("E", r"\text{(E)}", "correct"),
        (r"\text{(B)}", r"\text{(C)}", "incorrect"),
        # a choice in parentheses followed by its value: the letters decide
        ("(B) 12", r"\text{(B)}", "correct"),
        (r"\textbf{(C) }12", r"\text{(C)}", "correct"),
        ("(C) 12", r"\text{(B)}", "incorrect"),
        ("(2,3)", r"\text{(C)}", "incorrect"),
        # degrees equal radians only where the degree sign (or word) is written
        (r"45^\circ", r"\frac{\pi}{4}", "correct"),
        (r"45 \text{ degrees}", r"\frac{\pi}{4}", "correct"),
        (r"\frac{\pi}{3}", r"60^\circ", "correct"),
        ("45", r"\frac{\pi}{4}", "incorrect"),
        (r"\frac{\pi}{3}", "60", "incorrect"),
        (r"45^\circ", r"\frac{\pi}{2}", "incorrect"),
    ],
)
def test_answers_equivalent_other_forms(predicted: str, reference: str, label: str) -> None:
    verdict = answers_equivalent(predicted, reference)
    assert verdict.label == label, verdict.reason
    assert (verdict.evidence["predicted"], verdict.evidence["reference"]) == (predicted, reference)


@pytest.mark.parametrize(
    ("predicted", "reference", "label"),
    [
        # `\frac52` is read as 5/2, so a decimal comma compares with it
        ("2,5", r"\frac52", "correct"),
        ("0,5", r"\frac52", "incorrect"),
        ("0,5", "5", "incorrect"),  # 0,5 is one half, never five
        ("1,024", "1.024", "incorrect"),  # three digits after the comma: a thousands separator
        # `{,}` before three digits is a thousands separator, also with a currency sign and cents
        (r"\$1{,}250.00", "1250", "correct"),
        ("2{,}016", "2.016", "incorrect"),
        ("0{,}750", "0.75", "correct"),  # a leading 0: a decimal comma
        (r"\$\,42", "42", "correct"),  # LaTeX spacing is no part of a value
        # numbers with a base subscript compare as values in their bases; the LaTeX reader drops it
        ("10101_2", "10101_3", "incorrect"),
        ("10101_2", "111_4", "correct"),
        ("1012_2", "10101_2", "unparsed"),  # `2` is no binary digit: never a judgement
    ],
)
def test_answers_equivalent_numbers_in_process(predicted: str, reference: str, label: str) -> None:
    verdict = answers_equivalent(predicted, reference)
    assert verdict.label == label, verdict.reason
    assert verdict.evidence["path"] in ("exact", "base", "text")


@pytest.mark.parametrize(
    ("outcome", "label"),
    [
        (TIMED_OUT, "timeout"),
        (WORKER_FAILED, "error"),
        (RuntimeError("math worker did not start in time"), "error"),
    ],
)
def test_worker_failures_are_never_a_judgement(
    monkeypatch: pytest.MonkeyPatch, outcome: object, label: str
) -> None:
    def fake_run_items(target: str, items: list, timeout_s: float, pool: object) -> list:
        if isinstance(outcome, Exception):
            raise outcome
        return [outcome] * len(items)

    monkeypatch.setattr(answers, "run_items", fake_run_items)
    monkeypatch.setattr(answers, "_symbolic_cache", {})
    verdict = grade_answer(r"so $\boxed{\sqrt{12}}$", r"2\sqrt{3}")
    assert (verdict.label, outcome_value(verdict.label)) == (label, None)
    assert answers.check_dependencies() != []


@pytest.mark.parametrize("fork_server", [True, False], ids=["forked", "spawned"])
def test_a_worker_without_math_verify_fails_closed_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fork_server: bool
) -> None:
    """A worker that cannot import math-verify grades LaTeX answers `error`, and the preflight says why."""
    shadow = tmp_path / "math_verify"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError('math_verify is broken here')\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # a worker (or its fork server) inherits the parent's path
    monkeypatch.setattr(answers, "_symbolic_cache", {})
    # a fork server of its own, started with the broken path: the process's running one imported the real one
    monkeypatch.setattr(bounded, "FORK_SERVER", ForkServer())
    pool = BoundedPool(PoolConfig(workers=1, fork_server=fork_server))
    try:
        problems = answers.check_dependencies(pool=pool)
        assert len(problems) == 1 and "math-verify cannot be imported" in problems[0], problems
        assert "math_verify is broken here" in problems[0]
        verdict = answers_equivalent(r"\sqrt{12}", r"2\sqrt{3}", pool=pool)
        assert verdict.label == "error", verdict
        assert (
            answers_equivalent("1/2", "0.5", pool=pool).label == "correct"
        )  # the exact path needs no worker
    finally:
        pool.close()
        bounded.FORK_SERVER.close()


def test_check_dependencies_is_empty_on_a_working_install() -> None:
    assert answers.check_dependencies() == []


@pytest.mark.parametrize(
    ("predicted", "reference", "label"),
    [
        # a sentence that names a variable states its value; one stating two values is not judged
        ("Final Answer: The largest $k$ is 17.", "$17$", "correct"),
        ("Final Answer: The largest $k$ is 17.", "$71$", "incorrect"),
        ("Final Answer: $x$ is 9.", "9", "correct"),
        ("The area of triangle $ABC$ is $24$ square units.", "24", "correct"),
        ("$29$", "Final Answer: The greatest possible $d$ is 29.", "correct"),  # either side
        ("Final Answer: The value of $a+b$ is 12.", "a+b", "incorrect"),  # the named variable is no answer
        ("Final Answer: The sum is 5 and the product is 6.", "6", "unparsed"),
        ("Final Answer: The largest $n$ is 34 and the smallest $n$ is 2.", "34", "unparsed"),
        ("x = 2 and y = 3", "3", "unparsed"),
        ("Final Answer: $x = 3$ and $y = 4$.", "4", "incorrect"),
        ("all real numbers except 3", "3", "incorrect"),  # no stating verb: never cut to its number
        # `,\!` is a thousands separator, inside boxes and beside other LaTeX
        (r"\boxed{1,\!000}", "1000", "correct"),
        (r"\boxed{1,\!001}", "1000", "incorrect"),
        (r"The answer is $\boxed{12,\!345,\!678}$.", "12345678", "correct"),
        ("1000", r"$\boxed{1,\!000}$", "correct"),
        (r"\boxed{1,\!000\pi}", r"1000\pi", "correct"),  # not the set {1, 0}
        (r"\boxed{1,\!000\pi}", r"100\pi", "incorrect"),
        (r"\boxed{3{,}600\pi}", r"3600\pi", "correct"),
        # several boxes against one box holding the list
        (r"\boxed{3}, \boxed{7}", r"\boxed{3, 7}", "correct"),
        (r"$\boxed{3}$, $\boxed{7}$", r"$3, 7$", "correct"),
        (r"\boxed{2, 5}", r"$\boxed{2}$ and $\boxed{5}$", "correct"),
        (r"\boxed{3}, \boxed{7}", r"\boxed{3}", "incorrect"),
        (r"\boxed{3}", r"\boxed{3}, \boxed{7}", "incorrect"),
        (r"$\boxed{3}$ and $\boxed{7}$", r"\boxed{3, 7, 9}", "incorrect"),
        (r"\boxed{2}, \boxed{5}", "2.5", "incorrect"),  # a list, not a decimal comma
        # decimal commas, either side, only against one number and never where a list or thousands fits
        ("3.5", "3,5", "incorrect"),  # a bare `3,5` reference is a list in MATH; only `3{,}5` is a decimal
        ("3.5", "3{,}5", "correct"),
        (r"\frac72", r"$3{,}5$", "correct"),
        (r"3,5 \text{ cm}", "3.5", "correct"),
        ("$3{,}5$ cm", "3.5", "correct"),
        ("2, 5", "2.5", "incorrect"),
        ("2.5", "2, 5", "incorrect"),
        ("1,000", "1.0", "incorrect"),
        ("3,5", "35", "incorrect"),
        ("3,5", r"\{3, 5\}", "correct"),  # against a list it stays a list
    ],
)
def test_answers_equivalent_math_style_pairs(predicted: str, reference: str, label: str) -> None:
    verdict = answers_equivalent(predicted, reference)
    assert verdict.label == label, verdict.reason


@pytest.mark.parametrize(
    ("predicted", "reference", "label"),
    [
        ("25_{6}", "25", "unparsed"),  # the plain side may be written in base 6 without its subscript
        ("25_6", "17", "unparsed"),  # or in base 10
        ("25_6", "18", "incorrect"),
        ("1001_2", "9", "unparsed"),
        ("1001_2", "10", "incorrect"),
    ],
)
def test_a_base_subscript_on_one_side_is_never_correct(predicted: str, reference: str, label: str) -> None:
    assert answers_equivalent(predicted, reference).label == label


def test_latex_decimal_comma_is_read_where_it_has_one_reading() -> None:
    """Issue 38: `{,}` before one or two digits (or four and more) is a decimal comma for the parser too;
    before three digits it stays a thousands group, and a bare comma is left alone (`1,22` may be a list)."""
    assert answers._latex_decimal_comma(r"So $x = 2{,}5$.") == r"So $x = 2.5$."
    assert answers._latex_decimal_comma(r"\boxed{2{,}5\text{ m}}") == r"\boxed{2.5\text{ m}}"
    assert answers._latex_decimal_comma(r"$100{,}001$") == r"$100{,}001$"
    assert answers._latex_decimal_comma("1,22") == "1,22"
