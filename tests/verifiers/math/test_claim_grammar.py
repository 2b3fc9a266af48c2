"""Readings that account for every character (issue 46): a claim is judged only where the grammar reads all
of it and it is not cut out of a longer expression."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prm_factory.verifiers.math.claim_grammar import (
    NAMES,
    WORDS,
    WRITTEN_NUMBERS,
    cut_from_source,
    cut_in_prose,
    unread_span,
)


@pytest.mark.parametrize(
    "claim",
    [
        r"\frac{1}{2} \times 6 \times 8 = 24",
        r"1{,}000 + 007 = 1007",
        r"\sqrt[3]{27} = 3",
        r"\left( 2 + 3 \right)^2 = 25",
        r"5! = 120",
        r"\sin 30^\circ = \frac12",
        r"\log_{2} 8 = 3",
        r"\lceil 2.5 \rceil = 3",
        r"\binom{5}{2} = 10",
        r"$2 \cdot 3 = 6$.",
        r"50\% \cdot 8 = 4",
    ],
)
def test_the_written_number_grammar_reads_every_character(claim: str) -> None:
    assert unread_span(claim, WRITTEN_NUMBERS) is None


@pytest.mark.parametrize(
    ("claim", "unread"),
    [
        ("√16 = 4", "√"),
        ("!4 = 9", "!"),
        (r"\overline{3} = 1/3", "\\overline"),
        (r"2 + 3 \ldots = 5", "\\ldots"),
        ("x + 1 = 3", "x"),
        ("(2 + 3 (the sum)) = 5", "t"),
    ],
)
def test_what_no_rule_reads_is_named(claim: str, unread: str) -> None:
    found = unread_span(claim, WRITTEN_NUMBERS)
    assert found is not None and found.text == unread
    assert unread in found.evidence()


def test_names_and_words_have_grammars_of_their_own() -> None:
    assert unread_span(r"(x+1)^2 = x^2 + 2x + 1", NAMES) is None
    assert unread_span(r"a_1 + a_{2} = 2a", NAMES) is None
    assert unread_span("7 stickers/page * 6 pages = 42 stickers", WORDS) is None
    assert unread_span("48 beads – 36 beads = 12", WORDS) is None
    assert unread_span("√49 = 7 apples", WORDS) is not None


def test_a_claim_cut_out_of_a_longer_expression_is_found() -> None:
    step = r"Then \( a\sqrt{3} = 5 \) and \( 2 + 2 = 4 \)."
    assert cut_from_source(r"\sqrt{3} = 5", step, [step.index(r"\sqrt")]) is not None
    assert cut_from_source("2 + 2 = 4", step, [step.index("2 + 2")]) is None
    after = r"So \( 2 + 3 = 5x \)."
    assert cut_from_source("2 + 3 = 5", after, [after.index("2 + 3")]) is not None
    # outside math (a word problem's prose) the readers' own bounds hold
    assert cut_from_source("2 + 3 = 5", "So 2 + 3 = 5x.", [3]) is None


@settings(deadline=None)
@given(base=st.integers(2, 9), power=st.integers(2, 9))
def test_a_claim_glued_to_prose_is_cut_out_of_a_longer_expression(base: int, power: int) -> None:
    # plain text, no math delimiters: `log_5(5^5)=5` read from `(5^5)` (generated, issue 46)
    step = f"If x={base}, then log_{base}({base}^{power})={power}, which is not 10."
    at = step.index(f"({base}^")
    cut = cut_in_prose(f"({base}^{power})={power}", step, [at])
    assert cut is not None and cut.text == str(base)
    word = f"So 10 times {base} over 2 times {power} = {power + 1}."
    assert cut_in_prose(f"2 times {power} = {power + 1}", word, [word.index("2 times")]) is not None
    whole = f"So {base}+{power}={base + power + 1} apples."
    assert cut_in_prose(f"{base}+{power}={base + power + 1}", whole, [3]) is None
    glued = f"So {base}+{power}={base + power + 1}kg."
    assert cut_in_prose(f"{base}+{power}={base + power + 1}", glued, [3], units_after=True) is None
    assert cut_in_prose(f"{base}+{power}={base + power + 1}", glued, [3]) is not None
