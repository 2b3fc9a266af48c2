"""Which LaTeX statements are plain algebra the bounded worker (`solution_sets`) may judge, and their names.

Shared by the equation steps (`equation_steps`) and the system results (`systems`), checked before a
statement goes to the worker, so that the worker parses only what it may judge.
"""

from __future__ import annotations

import re

COMMAND = re.compile(r"\\[A-Za-z]+")
# what the worker reads (`solution_sets`): only the commands of plain algebra, no applied names, no
# segment names; checked here first so that the worker parses only what it may judge
_PLAIN_COMMANDS = re.compile(
    r"\\(?:[dt]?frac|sqrt|cdot|times|left|right|leq?|geq?|lt|gt|pm|quad|qquad|text\{\s*or\s*\}|lor)(?![A-Za-z])"
)
# a name applied (`f(x)`, `f^{-1}(2)`: never a power times a bracket), capitals side by side (segments)
_NOT_PLAIN = re.compile(
    r"[A-Za-z]\s*(?:\^\s*(?:\{[^{}]*\}|\S)\s*)?\(|[A-Z]\s*[A-Z]|\d\s*\\[dt]?frac|[|!_]|\\[{}]|\.\.\.|[\[\]]"
)


def names(text: str) -> frozenset[str]:
    """The single-letter names of a LaTeX statement (commands taken out)."""
    return frozenset(re.findall(r"[A-Za-z]", COMMAND.sub(" ", re.sub(r"\\text\{[^{}]*\}", " ", text))))


_PI = re.compile(r"\\pi(?![A-Za-z])")


def plain_algebra(text: str, *, pi: bool = False) -> bool:
    """Only plain algebra: the commands the worker reads, and no name applied or juxtaposed in capitals;
    with `pi`, `\\pi` too, read as the constant (equation steps only: `solution_sets.judge_step`)."""
    rest = _PLAIN_COMMANDS.sub(" ", _PI.sub(" 1 ", text) if pi else text)
    return not COMMAND.search(rest) and not _NOT_PLAIN.search(rest)
