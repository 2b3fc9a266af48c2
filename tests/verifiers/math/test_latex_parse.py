"""`latex_parse.parse_latex` reads every text as `latex2sympy` does (issue 49): the SLL parse where it
succeeds, the library's LL parse where it raises (`x^2` needs LL), the same error where both fail, a cached
answer the second time, and the library's own DFA cache untouched by SLL parses."""

from __future__ import annotations

import doctest

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from latex2sympy2_extended import latex2sympy
from latex2sympy2_extended.antlr_parser import PSParser
from latex2sympy2_extended.latex2sympy2 import ConversionConfig, NormalizationConfig
from latex2sympy2_extended.math_normalization import normalize_latex

from prm_factory.verifiers.math import latex_dfa, latex_parse
from prm_factory.verifiers.math.latex_fast import fast_read
from prm_factory.verifiers.math.latex_parse import (
    SideBySide,
    _LLConverter,
    _SLLConverter,
    clear_cache,
    parse_latex,
    parse_uncached,
)

TEXTS = [
    "x^2 - 1",  # SLL reports a syntax error: parsed again in LL mode
    "\\frac{x^2 - 2x - 3}{5 \\cdot (x^2 - 2x - 8)}",
    "2x - 3",
    "\\sqrt{16} + \\frac{1}{2}",
    "\\tan \\left(\\frac{30 \\pi}{180}\\right)",
    "\\binom{6}{3} \\cdot \\binom{11}{5}",
    "\\log_{11} 5^{-1}",
    "3.5 \\times 10^{4}",
    "1,000",
    "a, b",
    "\\sin^2 \\theta + \\cos^2 \\theta",
    "(t^2 + t - 2t - 2) - (t^2 + 3t - 2t - 6)",
]
BROKEN = ["\\frac{1}{", "x +* 2", "\\left( x"]


def _outcome(parse, text):
    try:
        result = parse(text)
    except Exception as exc:
        return "error", type(exc).__name__
    return "ok", sympy.srepr(result) if isinstance(result, sympy.Basic) else repr(result)


@pytest.mark.parametrize("text", TEXTS + BROKEN)
def test_same_reading_as_latex2sympy(text):
    clear_cache()
    expected = _outcome(latex2sympy, text)
    assert _outcome(parse_uncached, text) == expected
    assert _outcome(parse_latex, text) == expected
    assert _outcome(parse_latex, text) == expected  # from the cache


def test_sll_alone_cannot_read_a_power():
    """Why the LL fallback exists: SLL prediction takes `x^2` for the start of `x^{2}_{...}`."""
    with pytest.raises(Exception, match="expected"):  # the converter's listener: a syntax error
        _SLLConverter(None, None, False).parse("x^2 - 1")
    assert parse_latex("x^2 - 1") == latex2sympy("x^2 - 1")


def test_cached_answers_are_reused_and_bounded(monkeypatch):
    clear_cache()
    calls = []
    monkeypatch.setattr(
        latex_parse, "parse_uncached", lambda text: calls.append(text) or sympy.Integer(len(text))
    )
    monkeypatch.setattr(latex_parse._memo, "size", 2)
    assert [parse_latex(t) for t in ("a", "bb", "a", "ccc", "bb")] == [1, 2, 1, 3, 2]
    assert calls == ["a", "bb", "ccc", "bb"]  # "bb" left the cache when "ccc" came in (two kept)
    clear_cache()


def test_errors_are_cached_without_their_frames():
    clear_cache()
    for _ in range(2):
        with pytest.raises(Exception) as raised:
            parse_latex("\\frac{1}{")
        assert raised.value.__context__ is None
    assert "\\frac{1}{" in latex_parse._memo
    clear_cache()


def test_what_is_never_kept(monkeypatch):
    def bomb(text):
        raise MemoryError

    clear_cache()
    monkeypatch.setattr(latex_parse, "parse_uncached", bomb)
    with pytest.raises(MemoryError):
        parse_latex("y")
    assert "y" not in latex_parse._memo
    clear_cache()


def _dfa_states(dfas) -> int:
    return sum(len(dfa._states) for dfa in dfas)


def _library_dfa_states() -> int:
    return _dfa_states(PSParser.decisionsToDFA)


def test_sll_parses_leave_the_library_dfa_alone(monkeypatch):
    """The SLL parser predicts over its own DFA cache: states it builds never reach the LL parsers."""
    monkeypatch.setattr(latex_parse, "_SLL_DFA", latex_dfa.fresh_dfas())  # cold: no saved states
    text = "7 r \\cdot \\frac{\\frac{r}{s}}{\\frac{w}{4} - 9} - 4 \\cdot w \\cdot 3 r"
    library, own = _library_dfa_states(), _dfa_states(latex_parse.sll_dfas())
    read = _SLLConverter(None, None, False).parse(text)  # SLL reads it: no fallback
    assert _dfa_states(latex_parse.sll_dfas()) > own  # states were built for it ...
    assert _library_dfa_states() == library  # ... and none reached the library's cache
    assert read == latex2sympy(text)


def test_docstrings():
    assert doctest.testmod(latex_parse).failed == 0


_ATOMS = st.sampled_from(["x", "y", "\\theta", "2", "17", "0.5", "\\pi", "a_1", "b_{2}", "\\sqrt{3}"])


def _latex(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    pair = st.tuples(children, children)
    return st.one_of(
        pair.map(lambda p: f"{p[0]} + {p[1]}"),
        pair.map(lambda p: f"{p[0]} - {p[1]}"),
        pair.map(lambda p: f"{p[0]} \\cdot {p[1]}"),
        pair.map(lambda p: f"{p[0]} {p[1]}"),
        pair.map(lambda p: f"\\frac{{{p[0]}}}{{{p[1]}}}"),
        pair.map(lambda p: f"{{{p[0]}}}^{{{p[1]}}}"),
        children.map(lambda c: f"({c})^2"),
        children.map(lambda c: f"\\sqrt{{{c}}}"),
        children.map(lambda c: f"\\sin ({c})"),
        children.map(lambda c: f"\\left( {c} \\right)"),
        children.map(lambda c: f"-{c}"),
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.recursive(_ATOMS, _latex, max_leaves=8))
def test_generated_latex_reads_as_latex2sympy_reads_it(text):
    """ANTLR's promise on generated input: where SLL returns, it is LL's reading; else LL reads it. The
    reference is the library's own LL parse with the converter's one change (`SideBySide`: generated texts
    put factors side by side, `2 2`, which the library reads as the mixed number 4)."""
    assert _outcome(parse_uncached, text) == _outcome(_library_side_by_side, text)


def _library_side_by_side(text: str):
    """`latex2sympy(text)`, its parser and its DFA, on the converter that reads factors side by side."""
    converter = SideBySide(None, None, False, config=ConversionConfig())
    return converter.parse(normalize_latex(text, NormalizationConfig()))


def test_the_reference_reads_as_the_library_but_side_by_side():
    assert _library_side_by_side("x^2 + \\frac{1}{2}") == latex2sympy("x^2 + \\frac{1}{2}")
    assert str(latex2sympy("2 2")) == "4"
    with pytest.raises(Exception, match="side by side"):
        _library_side_by_side("2 2")


def test_the_common_subset_never_reaches_antlr(monkeypatch):
    """`latex_fast` reads `x^2 - 2x - 3` (the SLL parse fails on it and the LL parse is slow); a text outside
    its subset still goes to the ANTLR parsers."""
    expected = latex2sympy("x^2 - 2x - 3")

    def antlr(*args, **kwargs):
        raise AssertionError("ANTLR parse")

    monkeypatch.setattr(_LLConverter, "parse", antlr)
    monkeypatch.setattr(_SLLConverter, "parse", antlr)
    assert sympy.srepr(parse_uncached("x^2 - 2x - 3")) == sympy.srepr(expected)
    with pytest.raises(AssertionError, match="ANTLR"):
        parse_uncached("\\binom{6}{3}")


# SLL refuses these (a power, a subscript before a group, a percent) and LL mode reads them
SLL_REFUSES = [
    "x^2 -300x +20,000",
    "-\\sqrt{3} c_x + \\sqrt{3}/2",
    "\\omega^{2k \\mod13}",
    "s^2 \\leq (b - 1) b + (b - 1)",
    "f^{-1}(f^{-1}(6))",
    "\\frac{0.9s^2 - s^2}{s^2} \\times 100\\%",
    "\\frac{3a_1 + 1}{2}",
]


@pytest.mark.parametrize("text", SLL_REFUSES)
def test_ll_mode_over_the_shared_dfa_reads_what_sll_refuses_as_the_library_does(text):
    """ANTLR's two-stage parse: the LL stage predicts over the SLL stage's DFA (a state SLL found
    ambiguous is marked for full-context prediction, which LL makes), and reads as latex2sympy does;
    the library's own DFA is never touched."""
    normalized = fast_read(text).normalized  # what the ANTLR parsers read
    with pytest.raises(Exception, match="expected|understand"):
        _SLLConverter(None, None, False).parse(normalized)
    library = _library_dfa_states()
    read = _outcome(_LLConverter(None, None, False).parse, normalized)
    assert _library_dfa_states() == library  # the LL stage predicted over the shared DFA, not the library's
    assert read == _outcome(latex2sympy, text)
    assert _outcome(parse_uncached, text) == read


def test_a_text_the_lexer_refuses_raises_before_any_parse(monkeypatch):
    """The grammar's start rule ends at EOF: a character the lexer refuses fails every parse, so none runs
    (the ANTLR simulation of both modes up to it was most of such a text's time)."""
    expected = _outcome(latex2sympy, "x^{1996} + x^{1995} + \\dots + x + 1")

    def antlr(*args, **kwargs):
        raise AssertionError("ANTLR parse")

    monkeypatch.setattr(_LLConverter, "parse", antlr)
    monkeypatch.setattr(_SLLConverter, "parse", antlr)
    assert (
        _outcome(parse_uncached, "x^{1996} + x^{1995} + \\dots + x + 1") == expected == ("error", "Exception")
    )
    with pytest.raises(Exception, match="I don't understand this"):
        parse_uncached("a \\dots b")
