"""Competition-math steps (issue 22): a true step of each misread class is never `incorrect`; a false claim
whose reading is certain still is."""

from __future__ import annotations

import pytest
import sympy

from prm_factory.schemas.records import Problem
from prm_factory.verifiers.math.competition import (
    certain_claim_text,
    certain_context,
    looks_competition,
    safe_binding,
)
from prm_factory.verifiers.math.symbolic import false_as_identity, in_degrees
from prm_factory.verifiers.math.verifier import MathVerifier

COMPETITION = Problem("c1", "math", "math", r"Find all real $x$ such that $x^2 - 5x + 6 = 0$.")
WORD_PROBLEM = Problem("g1", "gsm8k", "math", "Natalia sold 48 clips in April and half as many in May.")


def labels(verifier: MathVerifier, steps: list[str], problem: Problem = COMPETITION) -> list[str]:
    return [v.label for v in verifier.check_steps(problem, steps)]


# Each class: a true chain that must carry no `incorrect` label.
TRUE_CHAINS = {
    "degrees": [r"We know $\sin 30^\circ = \frac{1}{2}$ and $\sin 18^\circ = \cos 72^\circ$."],
    "degrees outside trigonometry": [r"$1050^\circ - 2(360^\circ) = 1050^\circ - 720^\circ = 330^\circ$."],
    "radians or degrees unsaid": [r"Then $\sin 30 = \frac{1}{2}$."],
    "alternative": [r"So $b = 0$ or $b = 5$.", r"Since $b$ is positive, $b = 5$.", r"Then $2b = 10$."],
    "cases": [r"If $d = 1$, then $d^2 = 1$.", r"If $d = -1$, then $d + 3 = 2$."],
    "trial values": [r"For $x = 1$: $x^2 + 1 = 2$.", r"For $x = 2$: $x^2 + 1 = 5$."],
    "dummy index": [r"Let $m = 1$ be the first term.", r"Then $\sum_{m=2}^{5} m = 14$."],
    "juxtaposed names": [r"Here $s = 1$.", r"So $2c = 2rs$ and $5AD^2 = 20$."],
    "unknown of an equation": [r"$x \log(10) = \log(10000)$", r"so $x = 4$."],
    "approximation": [r"$\frac{1}{0.2599} \approx 3.848$ and $\sqrt{2} \approx 1.41$."],
    "factorial after the run": [r"We have $120 = 5!$."],
    "repeating decimal": [r"Dividing, $\frac{1}{37} = 0.\overline{027}$."],
    "run cut by notation": [r"\[ 60 = 30 + 20 + 40 - |B \cap S| - |B \cap M| + 8 \]"],
    "quotient": [r"\[ 2863 \div 1344 = 2 \quad \text{(quotient)} \]"],
    "expansion": [r"Expanding, $(x+1)^2 = x^2 + 2x + 1$."],
    "equation chain": [r"$2x + 3 = 7$", r"$2x = 4$", r"$x = 2$"],
    "equation after expanding": [
        r"We expand both sides of the equation: \[ x^3 - 2x^2 - 3x + 6 = 2x^2 + 4x. \]"
    ],
    "trial value in words": [r"Let $G = 13$.", r"If \(G = 26\), then \(B = 35 - 26 = 9\)."],
    "remainder stated": ["So the remainder of 2004 divided by 12 is 0."],
    "rounded value carried": [r"\[ x^2 = (2.8284)^2 = 8 \]", r"and $145 / 488 \approx 0.2969$."],
    "bracketed name": [r"\[ \pi (r')^2 = 16\pi \]"],
    "degrees after a bracket": [r"\(3 \times 30^\circ + (30/2)^\circ = 90^\circ + 15^\circ = 105^\circ\)"],
    "products of brackets": [
        r"\[ (0)\left(\frac{2}{3}\right) + (1)\left(-\frac{1}{3}\right) = -\frac{1}{3} \]"
    ],
    "closed forms": [r"$\cos(90^\circ) = 0$ and $\frac{\sqrt{1-1}}{1-2} = \frac{\sqrt{0}}{-1}$"],
    "quotient and remainder": [r"\[20 \div 6 = 3\, R\, 2\]"],
}


@pytest.mark.parametrize("name", sorted(TRUE_CHAINS))
def test_true_step_of_each_class_is_never_incorrect(verifier: MathVerifier, name: str) -> None:
    assert "incorrect" not in labels(verifier, TRUE_CHAINS[name])


@pytest.mark.parametrize(
    "step",
    [
        r"So $\frac{48}{2} = 25$.",  # pure numbers
        r"\[ 7 \times 27 \times 13 = 2547 \]",
        r"We know $\cos 60^\circ = \frac{\sqrt{3}}{2}$.",  # degrees, read as degrees, still false
        r"Expanding, $(x+1)^2 = x^2 + x + 1$.",  # a false expansion
        r"$\sqrt{2} \approx 2.5$",  # far beyond any rounding
        r"$(2.8284)^2 = 9$",  # a rounded value carried, but far off
        r"So $\frac{1024-1}{512} = 1.9999995$.",  # a decimal far beyond its rounding
        r"$\lceil -8.8 \rceil = -9$",  # ceiling of a pure number
        r"$\left(\frac{3}{2}\right)^2 - 2(2) = \boxed{\frac{1}{4}}$",  # a box holds a value
    ],
)
def test_certainly_false_claim_is_still_caught(verifier: MathVerifier, step: str) -> None:
    assert labels(verifier, [step]) == ["incorrect"]


def test_word_problems_keep_the_word_problem_readings(verifier: MathVerifier) -> None:
    assert labels(verifier, ["She sold 48/2 = 25 clips.", "x = 12"], WORD_PROBLEM)[0] == "incorrect"
    assert labels(verifier, ["So 3x = 36, and x = 12.", "Then x + 5 = 18."], WORD_PROBLEM)[1] == "incorrect"


def test_a_failed_claim_names_why_it_was_not_judged(verifier: MathVerifier) -> None:
    verdict = verifier.check_steps(COMPETITION, [r"So $b = 0$.", r"Then $b = 5$ and $2c = 2rs$."])[1]
    assert verdict.label == "unverifiable"
    assert any("competition math" in claim["reason"] for claim in verdict.evidence["claims"])


def test_looks_competition() -> None:
    assert looks_competition(r"Find $x$ if $x^2 = 9$.")
    assert looks_competition("What is the 2004th odd number?", [r"$\sqrt{16} = 4$"])
    assert not looks_competition("Tom pays $5 for 2 pens and $3 for a book.", ["5 + 3 = 8"])
    assert not looks_competition(None)


def test_certain_claim_text() -> None:
    assert certain_claim_text(r"\frac{48}{2} = 25")
    assert certain_claim_text(r"\cos 60^\circ = \frac{1}{2}")
    for claim in ("2c = 2", "5! = 12", r"\sin 30 = 0.5", r"a_1 = 3", r"x = \pm 2", r"\log 8 = 3"):
        assert not certain_claim_text(claim), claim


def test_certain_context() -> None:
    step = r"so \log_2{8} = 3 and 120 = 5! but 4 + 4 = 8."
    assert not certain_context(step, step.index("2{8}"), step.index(" and"))
    assert not certain_context(step, step.index("120"), step.index("!"))
    assert certain_context(step, step.index("4 + 4"), step.index("."))


def test_false_as_identity_needs_both_opinions() -> None:
    x, y = sympy.symbols("x y")
    assert false_as_identity((x + 1) ** 2, x**2 + x + 1)
    assert not false_as_identity((x + 1) ** 2, x**2 + 2 * x + 1)
    assert not false_as_identity((x + y) * (x - y), x**2 - y**2)
    assert not false_as_identity(sympy.Integer(3), sympy.Integer(4))  # no free names: not an identity


def test_degree_marks_read_as_degrees() -> None:
    assert in_degrees(r"\sin 30^\circ") == r"\sin \left(\frac{30 \pi}{180}\right)"
    assert in_degrees(r"\cos 45^{\circ}") == r"\cos \left(\frac{45 \pi}{180}\right)"
    assert in_degrees("90°") == r"\left(\frac{90 \pi}{180}\right)"
    assert in_degrees(r"x^2") == "x^2"


def test_a_name_bound_once_is_substituted(verifier: MathVerifier) -> None:
    assert labels(verifier, [r"Here $s = 1$.", r"So $2s + 1 = 3$."]) == ["unverifiable", "correct"]
    assert labels(verifier, [r"Here $s = 1$.", r"So $2s + 1 = 4$."])[1] == "incorrect"


@pytest.mark.parametrize(
    "chain",
    [
        [r"So $b = 0$ or $b = 5$.", r"Then $2b + 1 = 11$."],  # an alternative
        [r"If $d = 1$, the sum is 1.", r"Then $d + 3 = 2$."],  # a case
        [r"Let $s = 1$.", r"Later $s = 2$.", r"So $2s = 4$."],  # set twice
        [r"Let $n = 1$.", r"Then $\sum_{n=2}^{4} n = 9$ and $n + 1 = 5$."],  # also an index
    ],
)
def test_a_name_not_bound_once_is_not_substituted(verifier: MathVerifier, chain: list[str]) -> None:
    assert "incorrect" not in labels(verifier, chain)


def test_safe_binding() -> None:
    assert safe_binding("s", ["Here $s = 1$.", "So $2s + 1 = 3$."])
    assert not safe_binding("b", ["$b = 0$ or $b = 5$"])
    assert not safe_binding("x", ["For $x = 1$: $x^2 = 1$."])
    assert not safe_binding("k", ["Let $k = 2$.", r"$a_k = 3$"])
