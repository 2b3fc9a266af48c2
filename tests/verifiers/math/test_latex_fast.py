"""`latex_fast.fast_parse` gives the ANTLR converter's srepr or refuses (issue 49): differential tests against
it on generated texts of the subset and on typical sides, and the shapes the grammar reads otherwise. The
converter is latex2sympy's (`latex_parse`), whose one change, factors side by side (`side_by_side`), is
pinned against the library at the end."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from latex2sympy2_extended import latex2sympy
from sympy import srepr

from prm_factory.verifiers.math.latex_fast import fast_parse, fast_read
from prm_factory.verifiers.math.latex_parse import parse_antlr


def antlr(text: str):
    """The ANTLR parse alone (SLL, then LL) of the text as the fast reader normalizes it."""
    return parse_antlr(fast_read(text).normalized)


HANDLED = [
    "x^2 - 2x - 3",
    "\\frac{x^2}{8}",
    "\\sqrt{x^2 + 64}",
    "2\\frac{1}{2}",
    "-3(x+1)^2",
    "\\frac{x^2 - 2x - 3}{5 \\cdot (x^2 - 2x - 8)}",
    "(25 +100 -81)/(100)",
    "11/25",
    "x^23",  # the exponent is the whole number token
    "a/bc",  # juxtaposition binds tighter than /
    "a - b - c + d",
    "a - (b + c) + (d + f)",
    "-\\frac{-2}{4}",
    "\\frac{1}{0}",
    "3.5 \\times 10^{4}",
    "0.25 + .5 - 007",
    "\\sqrt[3]{27} \\cdot \\sqrt[n]{x}",
    "2\\pi r^2",
    "\\theta^2 + \\Pi",
    "\\left( x + 1 \\right)^{2} \\div 4",
    "x(x+1)",
    "x^2(x-3)",
    "d^2 - 4",
    "[x+1]",
    "(x+1)",
    "+x - -y",
    "\\dfrac{3}{4}\\tfrac{x}{2}",
    "\\frac{3}{4}5",
    "\\cos x / 2",  # the argument without parentheses takes the quotient: cos(x/2)
    "\\cos(x) / 2",  # with them it does not
    "\\cos x \\sin x",
    "\\sin^2 \\theta + \\cos^2 \\theta",
    "\\sin^{-1}(x)",
    "\\sin^0 x",  # the converter drops a power of 0
    "2\\cos(2x) - 1",
    "\\tan \\frac{\\pi}{4} + \\log 100 - \\ln(x)",
    "e^{2x} + 2e - e",
    "\\exp x \\sqrt{2}",
    "\\cos 2e",
    "\\log_2 256 - \\log_{10} x + \\ln_{b}(x) + \\log_x \\frac{1}{100}",
]

REFUSED = [
    "x(y)",  # a function x applied to y
    "x^2(3)",
    "x[y]",
    "x{(y)}",
    "\\pi(2)",
    "2^x^2",  # 2^(x^2): the exponent's letter takes its own exponent
    "I^2",  # the converter drops the exponent of I
    "{x+1}",  # a set
    "({0})",  # a tuple of one element, the set {0}
    "[(({x+1}))]",
    "\\sinh x",
    "\\log_x^2 8",
    "\\log^2_x 8",
    "\\sin_2 x",
    "e^x^2",
    "dx",
    "2tr",
    "x_1",
    "1,000",
    "x = 2",
    "5\\%",
    "",
    "\\frac12",
]


def agrees(text: str) -> bool:
    """What the contract asks: the converter's srepr, or a refusal (always where the converter raises)."""
    fast = fast_parse(text)
    try:
        expected = antlr(text)
    except Exception:
        return fast is None
    if fast is None:
        return True
    try:
        return srepr(fast) == srepr(expected)
    except TypeError:  # srepr sorts factors, and `nan * 0` cannot be sorted: compare the trees themselves
        return fast == expected and fast.args == expected.args


@pytest.mark.parametrize("text", HANDLED)
def test_typical_sides_are_read_as_the_converter_reads_them(text):
    fast = fast_parse(text)
    assert fast is not None
    assert srepr(fast) == srepr(antlr(text))


@pytest.mark.parametrize("text", REFUSED)
def test_what_the_grammar_reads_otherwise_is_refused(text):
    assert fast_parse(text) is None
    assert agrees(text)


_ATOMS = st.one_of(
    st.integers(0, 120).map(str),
    st.sampled_from(["0", "007", "1.5", ".5", "2.50", "10"]),
    st.sampled_from(list("xyabncdtrIeEzT")),
    st.sampled_from(["\\pi", "\\theta", "\\omega", "\\Pi", "\\alpha "]),
)
_SPACE = st.sampled_from(["", "", " ", "  "])


def _combined(parts: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    operators = ["+", "-", "*", "/", "\\cdot", "\\times", "\\div", "", " ", " "]
    binary = st.tuples(parts, st.sampled_from(operators), parts)
    wrapped = st.tuples(
        st.sampled_from(
            ["(", "{", "[", "\\left(", "\\frac{", "\\dfrac{", "\\sqrt{", "\\sqrt[3]{", "-", "+"]
            + ["\\cos ", "\\sin(", "\\tan^2 ", "\\sin^{-1}(", "\\log ", "\\ln(", "\\exp ", "e^{", "e^"]
            + ["\\log_2 ", "\\log_{10}(", "\\ln_x "]
        ),
        parts,
    )
    power = st.tuples(parts, st.sampled_from(["^", "^", "^{"]), st.one_of(_ATOMS, parts))
    close = {"(": ")", "{": "}", "[": "]", "\\left(": "\\right)", "-": "", "+": "", "e^": ""}
    close |= {
        "\\cos ": "",
        "\\tan^2 ": "",
        "\\log ": "",
        "\\log_2 ": "",
        "\\ln_x ": "",
        "\\log_{10}(": ")",
        "\\exp ": "",
        "\\sin(": ")",
        "\\sin^{-1}(": ")",
        "\\ln(": ")",
    }
    return st.one_of(
        st.tuples(binary, _SPACE).map(lambda b: f"{b[0][0]}{b[1]}{b[0][1]}{b[1]}{b[0][2]}"),
        wrapped.map(
            lambda w: f"{w[0]}{w[1]}" + close.get(w[0], "}{2}" if "frac" in w[0] else "}"),
        ),
        power.map(lambda p: f"{p[0]}{p[1]}{p[2]}" + ("}" if p[1] == "^{" else "")),
    )


TEXTS = st.recursive(_ATOMS, _combined, max_leaves=8)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS)
def test_generated_texts_agree_with_the_converter(text):
    assert agrees(text), text


def test_generated_texts_are_mostly_handled():
    """The differential test above says something only where texts are accepted: most of a fixed sample is."""
    sample = [
        "x^2 + 2x + 1",
        "\\frac{a + b}{2} - 3c",
        "(n - 1)(n + 2)",
        "4 \\cdot \\sqrt{2} / 3",
        "-\\frac{\\pi}{4} + 2\\pi",
    ]
    assert all(fast_parse(text) is not None for text in sample)


@settings(max_examples=150, deadline=None)
@given(st.tuples(_ATOMS, _ATOMS, _ATOMS, _SPACE))
def test_chained_exponents_agree_with_the_converter(parts):
    """`a^b^c`: the grammar reads `b^c` as one atom where `b` is a letter, `(a^b)^c` otherwise."""
    base, middle, last, space = parts
    assert agrees(f"{base}^{space}{middle}{space}^{last}")


_PIECES = st.one_of(
    _ATOMS,
    st.sampled_from(
        ["(y)", "(2)", "(x+1)", "^2", "^{n}", "\\cos x", "\\sin(x)", "\\log_2 ", "e", "\\sqrt{2}"]
    ),
    st.sampled_from(["\\frac{1}{2}", "\\frac{3}{2}", "\\binom{4}{2}", "\\cdot", "/", "-", "+"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_PIECES, _SPACE), min_size=2, max_size=5))
def test_juxtaposed_pieces_agree_with_the_converter(pieces):
    """Shapes where the grammar's choices matter: a call `x(y)`, a function's argument without parentheses
    (`\\cos x \\sin x`), mixed numbers, exponents after groups."""
    assert agrees("".join(piece + space for piece, space in pieces))


def test_threads_read_what_one_thread_reads():
    """fast_parse is called from the checker's threads: a lexer per call, no state shared but caches."""
    texts = HANDLED * 8
    alone = [srepr(fast_parse(text)) for text in texts]
    with ThreadPoolExecutor(max_workers=8) as pool:
        assert [srepr(value) for value in pool.map(fast_parse, texts)] == alone


@pytest.mark.parametrize(
    ("text", "library", "read"),
    [
        ("2\\frac{1}{2}", "5/2", "5/2"),  # a mixed number, as written
        ("4 \\binom{15}{10}", "3007", "12012"),
        ("\\binom{5}{2} 4", "14", "40"),
        ("(2) 3", "5", "6"),
        ("(2)\\frac{1}{3}", "7/3", "2/3"),
        ("\\frac{6}{3}\\frac{1}{2}", "5/2", "1"),
        ("2\\frac{3}{2}", "7/2", None),  # a mixed number or a product: refused
        ("2 3", "5", None),
    ],
)
def test_factors_side_by_side_are_a_mixed_number_only_as_written(text, library, read):
    """The library reads any integer value before a positive rational one as a mixed number; the converter
    and the fast reader read one only where digits stand before a proper fraction in digits."""
    assert str(latex2sympy(text)) == library
    if read is None:
        assert fast_parse(text) is None
        with pytest.raises(Exception, match="side by side"):
            antlr(text)
    else:
        assert str(antlr(text).doit()) == read
        assert fast_parse(text) is None or srepr(fast_parse(text)) == srepr(antlr(text))
