"""Host-side output comparison of stdin/stdout programs (verifiers/code/compare.py), per dataset rule."""

from __future__ import annotations

import pytest

from prm_factory.verifiers.code.compare import any_output_matches, outputs_match


def test_tokens_ignore_layout_but_not_content():
    assert outputs_match("1 2\n3\n", "1  2 3", "tokens")
    assert not outputs_match("1 2\n", "1 2 3", "tokens")
    assert not outputs_match("Yes\n", "YES", "tokens")


def test_lines_drop_trailing_blanks_only():
    assert outputs_match("a b  \nc\n\n\n", "a b\nc", "lines")
    assert not outputs_match("a b\nc", "a\nb c", "lines")  # same tokens, other lines
    assert not outputs_match("x\n", "x\ny", "lines")


def test_exact_is_exact():
    assert outputs_match("42\n", "42\n", "exact")
    assert not outputs_match("42\n", "42", "exact")


def test_float_tolerance_applies_to_reals_never_to_integers():
    assert outputs_match("0.3333333\n", "0.333333333", "tokens", 1e-6)
    assert not outputs_match("0.3333\n", "0.333333333", "tokens", 1e-6)
    assert outputs_match("1.0", "1", "tokens", 1e-6)  # an integer answer met exactly
    assert not outputs_match("999999999999999999", "1000000000000000000", "tokens", 1e-6)
    assert not outputs_match("nan", "nan0", "tokens", 1e-6) and not outputs_match(
        "inf", "1e400", "tokens", 1e-6
    )
    assert outputs_match("0.5000001 x\n", "0.5 x", "lines", 1e-6)


def test_any_of_several_accepted_outputs_and_unknown_rules():
    assert any_output_matches("2\n", ("1", "2"), "tokens", None)
    assert not any_output_matches("3\n", ("1", "2"), "tokens", None)
    with pytest.raises(ValueError, match="unknown comparison rule"):
        outputs_match("1", "1", "fuzzy")
