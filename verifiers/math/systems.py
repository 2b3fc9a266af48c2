"""Results of solving a system: a relation a step derives from the equations just before it must hold at
one of their solutions.

A competition chain sets up equations and solves them a step or two later, often with no equation step
to check in between: "\\( a - 1 + 2c = 0 \\), \\( 2a + 4 + c = 0 \\)" ... "Solving this system, we obtain
\\( a = -6 \\) and \\( c = \\frac{5}{2} \\)"; "Subtracting the second equation from the first, we obtain
\\( 4B = 9 \\)". The equations before such a result (this step and the two before it) are a subsystem of
the chain's system: when they have finitely many solutions, a result in their unknowns that holds at none
of them is false, whatever else the chain knows (more equations only remove solutions). The worker
(`system_solutions`) solves and judges; this module only finds the pairs, and reads a result only where
nothing could make its equations something else than one system:

- the step says it solves or combines equations (solving, a system, adding, subtracting, substituting,
  eliminating) before the result;
- the result is no value tried or chosen (`Substitute x = 4`, `If x = 2`, `Let a = 1`), no branch of an
  alternative, no member of a list of values of one name, and no rounded decimal;
- the equations are read back from the result up to a barrier: an alternative (`x = 3 or x = -3`,
  `\\pm`), a case, a trial, a retraction ("wait", "mistake", "instead"), or a step three back;
- at least one of them is an equation still to solve (a system of given values alone binds nothing that
  the text may not reuse for something new).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from prm_factory.verifiers.math.bounded import BoundedPool, run_items
from prm_factory.verifiers.math.claim_result import ClaimResult
from prm_factory.verifiers.math.plain_algebra import names, plain_algebra
from prm_factory.verifiers.math.sympy_limits import too_costly

_SEGMENT = re.compile(
    r"\\\[(?P<a>.*?)\\\]|\\\((?P<b>.*?)\\\)|\$\$(?P<c>.*?)\$\$|\$(?P<d>[^$]*?)\$"
    r"|\\begin\{(?P<env>align\*?|aligned|equation\*?|gather\*?)\}(?P<e>.*?)\\end\{(?P=env)\}",
    re.DOTALL,
)
# joins statements inside one segment
_SPLIT = re.compile(
    r"\\(?:Rightarrow|implies|Longrightarrow|iff|Leftrightarrow|therefore|q?quad)(?![A-Za-z])"
    r"|\\\\|\\text\{\s*and\s*\}|;|,\s*(?=[A-Za-z]\s*=)"
)
_TAG = re.compile(r"\\(?:boxed|displaystyle|tag\{[^}]*\}|nonumber|notag)|&|\\[,;!:]")
# an alternative or several values in one segment: a barrier, never a member of a system
_ALTERNATIVE = re.compile(r"\\(?:pm|mp|lor)(?![A-Za-z])|\\text\{\s*or\s*\}|\bor\b")
_NOT_EQUATION = re.compile(r"[<>]|\\(?:[lg]eq?|[lg]t|neq?|ne|approx|sim|equiv|pmod|in)(?![A-Za-z])|≈")
_ROUNDED = re.compile(r"\d\.\d\d")

# the step says it solves or combines equations
_SOLVING = re.compile(
    r"\b(?:solv\w*|system|subtract\w*|adding|add|eliminat\w*|substitut\w*|plug\w*)\b", re.IGNORECASE
)
# in the result's clause: a value tried, a case or a branch
_BRANCH = re.compile(
    r"\b(?:or|if|for|when|whenever|case|cases|suppose|assum\w*|try\w*|test\w*|check\w*|verif\w*|say|example"
    r"|instance|either|otherwise|possible|possibly|could|might|would)\b",
    re.IGNORECASE,
)
# after the last word that states a result: a value chosen or put in (`Substitute x = 4`, `Let a = 1`)
_CHOSEN = re.compile(
    r"\b(?:let|set|setting|put|take|taking|choos\w*|pick\w*|at|substitut\w*|plug\w*|into)\b", re.IGNORECASE
)
_STATES_RESULT = re.compile(
    r"\b(?:gives?|giving|get|gets|getting|obtain\w*|yields?|find|found|have|has|becomes?|results?|leads?"
    r"|so|then|thus|hence|therefore)\b",
    re.IGNORECASE,
)
# "solving for \\( x \\)": the unknown solved for, not a value tried
_SOLVING_FOR = re.compile(r"\b(?:solv|isolat)\w*\s+for\s+[A-Za-z]?\b", re.IGNORECASE)


def _tried(words: str) -> bool:
    """Do the words before a statement in its clause try a value, open a branch, or choose a value?"""
    words = _SOLVING_FOR.sub(" ", words)
    if _BRANCH.search(words):
        return True
    said = list(_STATES_RESULT.finditer(words))
    return bool(_CHOSEN.search(words[said[-1].end() :] if said else words))


# between an equation and the result: the text leaves the system (a case, a trial, a retraction)
_LEAVES = re.compile(
    r"\b(?:case|cases|suppose|assum\w*|try\w*|trial|test\w*|example|instance|alternativ\w*|otherwise|instead"
    r"|wait|wrong|mistake|error|incorrect|recheck\w*|re-?evaluat\w*|reconsider\w*|if|when|whenever)\b",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[.;:!?](?:\s|$)|\n")
_WINDOW_STEPS = 2  # the equations of this step and of the two before it
_MAX_EQUATIONS = 6


@dataclass(frozen=True)
class _Statement:
    step: int
    start: int  # offset of its segment in the step
    end: int
    text: str
    kind: str  # "equation", "barrier", "other"


@dataclass(frozen=True)
class SystemItem:
    """A result (`claim`, in step `step`) and the equations read back from it, the latest first."""

    step: int
    claim: str
    system: tuple[str, ...]


def _clean(text: str) -> str:
    text = re.sub(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}", r"\1", text)
    return " ".join(_TAG.sub(" ", text).split()).strip(" ,.")


def _statements(chain: Sequence[str]) -> list[_Statement]:
    out: list[_Statement] = []
    for index, step in enumerate(chain):
        segments = [
            (m.start(), m.end(), next(g for g in m.group("a", "b", "c", "d", "e") if g is not None))
            for m in _SEGMENT.finditer(step)
        ]
        for number, (start, end, body) in enumerate(segments):
            joined_or = number > 0 and re.fullmatch(r"[\s,]*or[\s,]*", step[segments[number - 1][1] : start])
            following_or = number + 1 < len(segments) and re.fullmatch(
                r"[\s,]*or[\s,]*", step[end : segments[number + 1][0]]
            )
            if _ALTERNATIVE.search(body) or joined_or or following_or:
                out.append(_Statement(index, start, end, body, "barrier"))
                continue
            for piece in _SPLIT.split(body):
                text = _clean(piece)
                if "=" not in text:
                    continue  # an expression named in the text
                if text.count("=") != 1 or _NOT_EQUATION.search(text):
                    out.append(_Statement(index, start, end, text, "other"))
                    continue
                kind = "equation" if plain_algebra(text) and names(text) else "other"
                out.append(_Statement(index, start, end, text, kind))
    return out


def _clause_before(step: str, start: int) -> str:
    cuts = [m.end() for m in _CLAUSE_END.finditer(step, 0, start)]
    return step[cuts[-1] if cuts else 0 : start]


def _sentence_after(step: str, end: int) -> str:
    cut = _CLAUSE_END.search(step, end)
    return step[end : cut.start() if cut else len(step)]


def _text_between(chain: Sequence[str], first: _Statement, last: _Statement) -> str:
    """The words from the end of `first`'s segment to the start of `last`'s, math taken out."""
    if first.step == last.step:
        text = chain[first.step][first.end : last.start]
    else:
        parts = [
            chain[first.step][first.end :],
            *chain[first.step + 1 : last.step],
            chain[last.step][: last.start],
        ]
        text = "\n".join(parts)
    return _SEGMENT.sub(" ", text)


def _value_of_name(text: str) -> bool:
    """`x = 5`, `x = 4 - \\sqrt{3}`: one name given a value with no name in it."""
    left, _, right = text.partition("=")
    return bool(re.fullmatch(r"\s*[A-Za-z]\s*", left)) and not names(right)


def _listed_values(found: list[_Statement], result: _Statement) -> bool:
    """Does the result's step give its name more than one value (`x = 1`, `x = 4 - \\sqrt{3}`, ...)?"""
    name = names(result.text)
    same = [s for s in found if s.step == result.step and s.kind == "equation" and _value_of_name(s.text)]
    return len([s for s in same if names(s.text) == name]) > 1


def _squeezed(text: str) -> str:
    return re.sub(r"\s+|\\[,;!: ]|\\left|\\right", "", text)


def _restated(chain: Sequence[str], result: _Statement) -> bool:
    """Is the result written before it in the chain (`5 - a = 3 \\text{ or } 5 - a = -3`, then "Solve the
    second equation: \\( 5 - a = -3 \\)")? Then it is a given taken up again, not a result."""
    before = "".join(chain[: result.step]) + chain[result.step][: result.start]
    return _squeezed(result.text) in _squeezed(before)


def _after_a_value(chain: Sequence[str], found: list[_Statement], i: int) -> bool:
    """Does the result come right after a value of one of its names, nothing but spacing between
    (`\\[ x - 4 = 1 \\implies x = 5 \\] \\[ x - 4 = 11 \\implies ... \\]`)? Then it opens the next item of
    a list, not a result of the lines above."""
    if i == 0:
        return False
    last, result = found[i - 1], found[i]
    if last.step != result.step or last.kind != "equation" or not _value_of_name(last.text):
        return False
    between = chain[result.step][last.end : result.start] if last.end <= result.start else ""
    return not names(last.text).isdisjoint(names(result.text)) and not re.search(r"[A-Za-z]", between)


def system_items(chain: Sequence[str]) -> list[SystemItem]:
    """Every result the chain derives from a system of equations just before it (see the module)."""
    found = _statements(chain)
    items: list[SystemItem] = []
    for i, result in enumerate(found):
        if result.kind != "equation" or _ROUNDED.search(result.text):
            continue
        step = chain[result.step]
        if not _SOLVING.search(_SEGMENT.sub(" ", step[: result.start])):
            continue
        if _tried(_SEGMENT.sub(" ", _clause_before(step, result.start))):
            continue
        if _BRANCH.search(_SEGMENT.sub(" ", _sentence_after(step, result.end))):
            continue
        if _value_of_name(result.text) and _listed_values(found, result):
            continue
        if _restated(chain, result) or _after_a_value(chain, found, i):
            continue
        system: list[str] = []
        for earlier in reversed(found[:i]):
            if earlier.step < result.step - _WINDOW_STEPS or earlier.kind == "barrier":
                break
            if _LEAVES.search(_text_between(chain, earlier, result)):
                break
            if _tried(_SEGMENT.sub(" ", _clause_before(chain[earlier.step], earlier.start))):
                break  # `Plugging in x = 1`, `If a = 2`: a value tried, and what follows is its branch
            if earlier.kind == "equation" and (earlier.start, earlier.text) != (result.start, result.text):
                system.append(earlier.text)
            if len(system) == _MAX_EQUATIONS:
                break
        if system and not all(_value_of_name(text) for text in system):
            items.append(SystemItem(result.step, result.text, tuple(system)))
    return items


SYSTEM_FALSE = "the result of solving a system holds at none of its solutions"


def check_system_results_bounded(
    chain: Sequence[str], *, timeout_s: float = 3.0, pool: BoundedPool | None = None
) -> dict[int, list[ClaimResult]]:
    """The chain's system results judged in the bounded worker: failed results per step index (a result
    that holds, or that the worker cannot decide, adds nothing; nor does one with an expression known to
    blow up, `sympy_limits`, which is never sent)."""
    items = [
        item
        for item in system_items(chain)
        if all(too_costly(text) is None for text in (item.claim, *item.system))
    ]
    if not items:
        return {}
    payload = [(item.claim, item.system) for item in items]
    outcomes = run_items(
        "prm_factory.verifiers.math.system_solutions:system_results", payload, timeout_s, pool
    )
    by_step: dict[int, list[ClaimResult]] = {}
    for item, outcome in zip(items, outcomes, strict=True):
        if isinstance(outcome, str) or outcome[0] is not False:
            continue
        claim = f"{' ; '.join(reversed(item.system))} => {item.claim}"
        by_step.setdefault(item.step, []).append(
            ClaimResult(claim, False, outcome[1], SYSTEM_FALSE, rule="system result")
        )
    return by_step
