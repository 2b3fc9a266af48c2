"""Divisibility said in words between written whole numbers: `111111111 is not divisible by 9`.

Number-theory chains state divisibility in prose, and a false one decides the answer (a digit sum
misread, a multiple of 3 called not one). A sentence `A is (not) divisible by B` is a claim read with
certainty only when:

- A and B are written whole numbers, each alone (plain or in a math segment of its own: `$24$`, `\\(9\\)`),
  A at most preceded by `=` (`$4! = 24$ is divisible by $9$`: the value a computation ended on), never by
  another operator or a name (`3x - 1 is divisible by 19` is about `3x - 1`);
- several divisors are joined by "and" (`not divisible by 3 and 6`: read the way that is kindest to the
  text, "not by both": false only when all of them divide; `divisible by 3 and 6`: false when one does
  not); "or" or anything else after a divisor is not read;
- the clause states a fact: no question, test, requirement or supposition around it ("check if", "whether",
  "must be", "for N to be", "suppose", "?").
"""

from __future__ import annotations

import re

from prm_factory.verifiers.math.claim_result import ClaimResult

# a whole number, with thousands groups (`475,032`, `12,\\!000`, `1{,}001`) or without
_NUMBER = r"(?:\$\s*|\\\(\s*)?(\d{1,3}(?:(?:,|\{,\}|,\\!)\d{3})+(?!\d)|\d{1,15})(?:\s*\$|\s*\\\))?"
_CLAIM = re.compile(
    _NUMBER
    + r"\s+is\s+(not\s+|also\s+)?(?:evenly\s+|exactly\s+)?divisible\s+by\s+"
    + _NUMBER
    + r"((?:\s*,?\s*and\s+"
    + _NUMBER
    + r")*)"
)
_MORE = re.compile(r"\d{1,3}(?:(?:,|\{,\}|,\\!)\d{3})+(?!\d)|\d{1,15}")
# a word that makes A the end of a list or an argument (`both 2 and 3 is`, `the sum of 12`), not a subject
_WORD_BEFORE = re.compile(
    r"\b(?:and|or|by|of|both|than|from|to|with|times|plus|minus|over|divided|multiplied|between|is|are|be"
    r"|digits?)\s*(?:\$|\\\()?\s*$|\d\s*,\s*(?:\$|\\\()?\s*$",
    re.IGNORECASE,
)
# what may stand right before A: a sentence or clause start, a math opening, an `=` ending a computation
_BEFORE_OK = re.compile(r"(?:^|[\s,;:(]|\\\(|\$|=\s*)$")
_OPERATOR_BEFORE = re.compile(r"(?:[-+*/^_×·÷]|\\(?:cdot|times|div))\s*(?:\$|\\\()?\s*$|[A-Za-z]$")
# after the last divisor: a clause end, or a bracketed reason; never "or", a digit, an operator
_AFTER_OK = re.compile(
    r"^(?:\s*$|\s*[.,;:)!]|\s+\(|\s+(?:because|since|as|so|but|while|which|and\s+[^\d$\\]))"
)
_NOT_A_FACT = re.compile(
    r"\b(?:if|whether|must|should|need\w*|suppose|assum\w*|let|for\s+\S+\s+to\s+be"
    r"|want|would|could|can|might|may|whenever|when|unless|only if|iff)\b|\?",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[.;!?](?:\s|$)|\n")


def _whole(text: str) -> int:
    return int(re.sub(r"\D", "", text))


def _clause(step: str, start: int, end: int) -> str:
    begins = [m.end() for m in _CLAUSE_END.finditer(step, 0, start)]
    close = _CLAUSE_END.search(step, end)
    return step[begins[-1] if begins else 0 : close.start() if close else len(step)]


def divisibility_claims(step: str) -> list[ClaimResult]:
    """Each divisibility sentence of the step between written numbers, as one claim (rule `divisibility`).

    >>> [r.holds for r in divisibility_claims("Since 111111111 is not divisible by 9, we stop.")]
    [False]
    >>> divisibility_claims("Check if 102 is divisible by 3.")
    []
    """
    results = []
    for match in _CLAIM.finditer(step):
        before = step[max(0, match.start() - 16) : match.start()]
        if not _BEFORE_OK.search(before) or (
            _OPERATOR_BEFORE.search(before) and not re.search(r"=\s*(?:\$|\\\()?\s*$", before)
        ):
            continue
        if _WORD_BEFORE.search(step[max(0, match.start() - 24) : match.start()]):
            continue
        if not _AFTER_OK.match(step[match.end() :]):
            continue
        if _NOT_A_FACT.search(_clause(step, match.start(), match.end())):
            continue
        number = _whole(match.group(1))
        negated = bool(match.group(2)) and match.group(2).strip() == "not"
        divisors = [_whole(match.group(3)), *(_whole(d) for d in _MORE.findall(match.group(4) or ""))]
        if any(d == 0 for d in divisors):
            continue
        dividing = [number % d == 0 for d in divisors]
        holds = not all(dividing) if negated else all(dividing)
        claim = f"{number} is {'not ' if negated else ''}divisible by {' and '.join(map(str, divisors))}"
        remainders = ", ".join(f"{number} mod {d} = {number % d}" for d in divisors)
        results.append(
            ClaimResult(claim, holds, remainders, "divisibility of written numbers", rule="divisibility")
        )
    return results
