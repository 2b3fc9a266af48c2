"""Shapes SymPy would blow up on are refused before they are sent (issue 49): a power of a sum past
`MAX_SUM_EXPONENT` or `MAX_EXPANSION_TERMS`, a name past `MAX_NAME_EXPONENT`, a binomial of a number beside
a name past `MAX_BINOMIAL_BESIDE_NAME`, a factorial or binomial of numbers past `MAX_VALUE_BITS`. Generated
(Hypothesis) on both sides of each limit: as a function, and through the checker, where a refused claim is
`unverifiable` with its reason (never `incorrect`) and ordinary claims inside the limits are still judged.
"""

from __future__ import annotations

import doctest
import math
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prm_factory.verifiers.math import sympy_limits
from prm_factory.verifiers.math.bounded import BoundedPool, PoolConfig
from prm_factory.verifiers.math.claims import check_steps
from prm_factory.verifiers.math.latex_claims import check_hard_runs_bounded
from prm_factory.verifiers.math.symbolic import latex_claims
from prm_factory.verifiers.math.sympy_limits import (
    MAX_BINOMIAL_BESIDE_NAME,
    MAX_EXPANSION_TERMS,
    MAX_NAME_EXPONENT,
    MAX_SCANNED_CHARS,
    MAX_SCANNED_DEPTH,
    MAX_SUM_EXPONENT,
    MAX_VALUE_BITS,
    too_costly,
)

PURE = settings(deadline=None, max_examples=60)  # no timing: a loaded machine is no failure
CHECKED = settings(deadline=None, max_examples=8, suppress_health_check=[HealthCheck.function_scoped_fixture])
LIMIT_S = 30.0  # generous: these pin verdicts, not speed
_SUMS = st.sampled_from([r"a^2 + b^2", "x + 1", "x - y", r"2a - 3", r"\sqrt{x} + 1"])
_NAMES = st.sampled_from(["k", "m", "r"])


@pytest.fixture(scope="module")
def pool() -> Iterator[BoundedPool]:
    pool = BoundedPool(PoolConfig(workers=1))
    yield pool
    pool.close()


def _judged(pool: BoundedPool, text: str) -> list:
    return check_hard_runs_bounded([(0, text, {})], timeout_s=LIMIT_S, pool=pool)[0]


def _expansion(n: int) -> str:
    """`(x - 1)^n` written out: `x^{3} - 3x^{2} + 3x^{1} - 1`."""
    terms = [(math.comb(n, j) * (-1) ** j, n - j) for j in range(n + 1)]
    text = " + ".join(f"{c}x^{{{p}}}" if p else f"{c}" for c, p in terms)
    return text.replace("+ -", "- ")


# --- as a function --------------------------------------------------------------------------------


@PURE
@given(
    base=_SUMS, n=st.integers(2, 3 * MAX_SUM_EXPONENT), factor=st.sampled_from(["", "4a^2 \\cdot ", "2a "])
)
def test_a_power_of_a_sum_is_refused_past_the_exponent_limit(base: str, n: int, factor: str) -> None:
    why = too_costly(f"{factor}({base})^{{{n}}} = 1")
    assert (why is None) == (n <= MAX_SUM_EXPONENT)
    if why is not None:
        assert f"the power {n}" in why and str(MAX_SUM_EXPONENT) in why
    assert too_costly(f"\\left({base}\\right)^{{{n}}} = 1") == why  # sized brackets read the same
    assert too_costly(f"(({base}))^{{{n}}} = 1") == why  # and so do doubled ones
    # the limits of a sum or product are no power, and a subscript names its base
    assert (
        too_costly(f"\\sum_{{k=1}}^{{{n}}} \\frac{{1}}{{(1 - x_k)^2}} = \\prod_{{k=1}}^{{{n}}} (1 + x_k)")
        is None
    )
    assert (too_costly(f"(x_1 + x_{{k+1}})^{{{n}}} = 1") is None) == (n <= MAX_SUM_EXPONENT)


@PURE
@given(m=st.integers(3, 6), n=st.integers(2, 80))
def test_a_power_of_a_sum_of_several_terms_is_refused_past_the_terms_limit(m: int, n: int) -> None:
    base = " + ".join("abcdef"[:m])
    refused = too_costly(f"({base})^{{{n}}} = 1") is not None
    assert refused == (math.comb(m + n - 1, n) > MAX_EXPANSION_TERMS)


@PURE
@given(n=st.integers(2, 4 * MAX_NAME_EXPONENT), name=_NAMES)
def test_a_power_of_a_name_is_refused_past_the_arithmetic_exponent_limit(n: int, name: str) -> None:
    assert (too_costly(f"{name}^{{{n}}} + 1 = 0") is None) == (n <= MAX_NAME_EXPONENT)
    assert (too_costly(f"(2{name})^{{{n}}} = 0") is None) == (n <= MAX_NAME_EXPONENT)
    assert too_costly(f"2^{{{n}}} = 5") is None  # a number's power is left to the worker's time limit


@PURE
@given(n=st.integers(0, 5 * MAX_BINOMIAL_BESIDE_NAME), name=_NAMES, top=st.booleans())
def test_a_binomial_of_a_number_beside_a_name_is_refused_past_its_limit(n: int, name: str, top: bool) -> None:
    args = (n, name) if top else (name, n)
    text = f"\\binom{{{args[0]}}}{{{args[1]}}} = \\frac{{{n}}}{{{name}}} \\dbinom{{{args[0]}}}{{{name} - 1}}"
    assert (too_costly(text) is None) == (n <= MAX_BINOMIAL_BESIDE_NAME)


@PURE
@given(exponent=st.integers(2, 9), k=st.integers(1, 9))
def test_a_binomial_of_ten_to_a_power_beside_a_name_is_refused(exponent: int, k: int) -> None:
    assert too_costly(f"\\binom{{10^{exponent}}}{{k}} = {k}") is not None
    assert too_costly(f"\\binom{{10^{exponent}}}{{{k}}} = {k}") is None  # a few factors of a big number


@PURE
@given(n=st.integers(2, 40_000), k=st.integers(0, 20_000))
def test_a_binomial_or_factorial_of_numbers_is_refused_past_the_value_limit(n: int, k: int) -> None:
    k = min(k, n)
    bits = min(k, n - k) * math.log2(n)
    assert (too_costly(f"\\binom{{{n}}}{{{k}}} = 7") is None) == (bits <= MAX_VALUE_BITS)
    assert (too_costly(f"{n}! = 7") is None) == (n <= 2 or n * math.log2(n) <= MAX_VALUE_BITS)
    assert too_costly("(2n)! = 7") is None and too_costly(f"\\binom{{n}}{{{min(k, 9)}}} = 7") is None


@PURE
@given(n=st.integers(MAX_SUM_EXPONENT + 1, 10**6), name=_NAMES)
def test_a_known_value_of_the_exponent_counts(n: int, name: str) -> None:
    assert too_costly(f"(a + b)^{{{name}}} = 1", {name: str(n)}) is not None
    assert too_costly(f"(a + b)^{{{name}}} = 1") is None
    assert too_costly(f"(a + b)^{{{name}}} = 1", {name: "2"}) is None


def test_ordinary_competition_claims_and_unreadable_text_are_never_refused() -> None:
    for text in [
        "(a+b)^2 = a^2+2ab+b^2",
        "(a + b + c)^2 = a^2 + b^2 + c^2 + 2(ab + bc + ca)",
        f"(x - 1)^{{10}} = {_expansion(10)}",
        r"\binom{10}{3} = 120",
        r"\dbinom{n}{2} = \frac{n(n-1)}{2}",
        "1000! = 5",
        r"i^{2008} = 1",
        r"z^{85} + \frac{1}{z^{85}} = \varphi^{85} + (1 - \varphi)^{85}",
        r"5^{5^{5^{5}}} + \sqrt{2} = 3",  # a number's tower: the worker's limit, as before
        r"((a + b)^{400}",  # unclosed: not read here, and so not refused here
        r"\frac{1",
    ]:
        assert too_costly(text) is None, text


@PURE
@given(depth=st.integers(1, 3 * MAX_SCANNED_DEPTH), padding=st.integers(0, 2 * MAX_SCANNED_CHARS))
def test_a_run_too_long_or_too_deep_to_scan_is_left_to_the_workers_limit(depth: int, padding: int) -> None:
    # the scan is pure Python outside any worker: its cost is bounded by not reading such a run at all
    nested = "(" * (depth - 1) + "(a + b)^{5000}" + ")" * (depth - 1)
    assert (too_costly(nested) is None) == (depth > MAX_SCANNED_DEPTH)
    long = f"(a + b)^{{5000}} = 1 + {'1 + ' * (padding // 4)}1"
    assert (too_costly(long) is None) == (len(long) > MAX_SCANNED_CHARS)


def test_the_module_examples_hold() -> None:
    result = doctest.testmod(sympy_limits, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


# --- through the checker ----------------------------------------------------------------------------


@CHECKED
@given(base=_SUMS, n=st.integers(MAX_SUM_EXPONENT + 1, 5_000))
def test_a_refused_claim_is_unverifiable_with_its_reason_and_never_sent(
    pool: BoundedPool, base: str, n: int
) -> None:
    restarts = pool.restarts
    (result,) = _judged(pool, f"4a^2 \\cdot ({base})^{{{n}}} = 1")
    assert result.holds is None and result.reason.startswith("not sent to SymPy: a sum to the power")
    (wrong,) = _judged(pool, f"({base})^{{{n}}} = 0")  # false at a glance, yet not judged: never incorrect
    assert wrong.holds is None and "not sent to SymPy" in wrong.reason
    assert pool.restarts == restarts


@CHECKED
@given(exponent=st.integers(4, 9))
def test_a_huge_binomial_beside_a_name_is_unverifiable_in_a_chain(pool: BoundedPool, exponent: int) -> None:
    checker = lambda items: check_hard_runs_bounded(items, timeout_s=LIMIT_S, pool=pool)  # noqa: E731
    top = f"10^{exponent}"
    steps = [
        r"\(\sqrt{16} = 4\)",
        rf"so \(\binom{{{top}}}{{k}} = \frac{{{top}}}{{k}} \binom{{{top}}}{{k - 1}}\)",
        r"\(\sqrt{25} = 6\)",
    ]
    verdicts = check_steps(steps, hard_checker=checker)
    assert [v.label for v in verdicts] == ["correct", "unverifiable", "incorrect"]
    assert "not sent to SymPy: a binomial" in verdicts[1].evidence["claims"][0]["reason"]


@CHECKED
@given(n=st.integers(2, 10), off=st.sampled_from([-2, -1, 1, 3]))
def test_expansions_inside_the_limits_are_still_judged(pool: BoundedPool, n: int, off: int) -> None:
    (right,) = _judged(pool, f"(x - 1)^{{{n}}} = {_expansion(n)}")
    assert right.holds is True
    wrong = _expansion(n).replace(f"{n}x^{{{n - 1}}}", f"{n + off}x^{{{n - 1}}}")
    (false,) = _judged(pool, f"(x - 1)^{{{n}}} = {wrong}")
    assert false.reason.startswith("false as an identity")  # its verdict is the certainty gate's


@CHECKED
@given(n=st.integers(2, MAX_BINOMIAL_BESIDE_NAME), k=st.integers(0, MAX_BINOMIAL_BESIDE_NAME))
def test_binomials_of_small_numbers_are_still_judged(pool: BoundedPool, n: int, k: int) -> None:
    k = min(k, n)
    assert [r.holds for r in _judged(pool, f"\\binom{{{n}}}{{{k}}} = {math.comb(n, k)}")] == [True]
    assert [r.holds for r in _judged(pool, f"\\binom{{{n}}}{{{k}}} = {math.comb(n, k) + 1}")] == [False]


@PURE
@given(k=st.integers(1100, 4000), small=st.integers(1, 99))
def test_a_value_past_a_floats_range_is_never_judged_equal_to_a_small_number(k: int, small: int) -> None:
    # `2^{2000} = 5` was `correct`: both sides' floats compared, and inf is within any tolerance of 5
    for text in (f"2^{{{k}}} = {small}", f"2^{{{k}}} \\sqrt{{2}} = {small}", f"{small} = 3^{{{k}}}"):
        ((_, holds, _, _),) = next(latex_claims([(text, {})]))
        assert holds is not True, text
    ((_, holds, _, _),) = next(latex_claims([(f"2^{{{k % 60}}} = {2 ** (k % 60)}", {})]))
    assert holds is True
