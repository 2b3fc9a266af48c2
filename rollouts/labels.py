"""Combine a step's verifier verdict with its Monte Carlo hard label, and find each source's first error.

Two sources speak about a step: the verifier (a checked claim: correct | incorrect | unverifiable) and
the Monte Carlo hard label (can the prefix still reach a correct answer). They fail differently: a
verifier misses wrong reasoning that makes no false arithmetic claim, and MC misses a wrong step the model
recovers from (or a right step a weak model cannot finish). Keeping both, plus whether they agree, lets a
training export filter to agreeing steps (Qwen2.5-Math-PRM, "The Lessons of Developing PRMs", 2025).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

Consensus = Literal["positive", "negative", "disputed", "unlabeled"]

_VERDICTS = ("correct", "incorrect", "unverifiable")


def consensus(verdict_label: str, hard_label: bool | None) -> tuple[Consensus, bool | None]:
    """The step's consensus label and whether the two sources agree (None: only one source spoke).

    Rules:

    ============== ============ ============ ======
    verdict        MC hard      consensus    agree
    ============== ============ ============ ======
    correct        True         positive     True
    incorrect      False        negative     True
    correct        False        disputed     False
    incorrect      True         disputed     False
    unverifiable   True/False   follows MC   None
    correct        None         positive     None
    incorrect      None         negative     None
    unverifiable   None         unlabeled    None
    ============== ============ ============ ======

    >>> consensus("incorrect", False)
    ('negative', True)
    >>> consensus("correct", False)
    ('disputed', False)
    >>> consensus("unverifiable", True)
    ('positive', None)

    An unknown verdict label raises ValueError rather than being guessed at.
    """
    if verdict_label not in _VERDICTS:
        raise ValueError(f"unknown verdict label {verdict_label!r}; expected one of {_VERDICTS}")
    if verdict_label == "unverifiable":
        if hard_label is None:
            return "unlabeled", None
        return ("positive" if hard_label else "negative"), None
    verdict_ok = verdict_label == "correct"
    if hard_label is None:
        return ("positive" if verdict_ok else "negative"), None
    if verdict_ok == hard_label:
        return ("positive" if verdict_ok else "negative"), True
    return "disputed", False


def first_error_verifier(verdict_labels: Sequence[str]) -> int | None:
    """Index of the first step the verifier calls "incorrect"; "unverifiable" steps are passed over,
    since the verifier simply had nothing to check there.

    >>> first_error_verifier(["correct", "unverifiable", "incorrect", "incorrect"])
    2
    """
    return next((i for i, label in enumerate(verdict_labels) if label == "incorrect"), None)


def first_error_mc(hard_labels: Sequence[bool | None]) -> int | None:
    """Index of the first step whose prefix cannot reach a correct answer (hard label False).

    Unlike the verifier's unverifiable steps, an unestimated step (None) before the first False means the
    first error may lie there, so the answer is None: an unknown first error beats a wrong one in a
    first-error benchmark such as ProcessBench.

    >>> first_error_mc([True, True, False, False])
    2
    >>> first_error_mc([True, None, False]) is None
    True
    """
    for i, hard in enumerate(hard_labels):
        if hard is None:
            return None
        if hard is False:
            return i
    return None


def first_error_index(labels: Sequence[str | bool | None]) -> int | None:
    """First error of one source's per-step labels: verifier verdicts (str) or MC hard labels (bool/None).

    Dispatches on the label type so callers with either column can use one name; see
    `first_error_verifier` and `first_error_mc` for each source's rule.
    """
    if any(isinstance(label, str) for label in labels):
        return first_error_verifier([str(label) for label in labels])
    return first_error_mc(labels)  # type: ignore[arg-type]
