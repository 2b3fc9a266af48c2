"""Combine a step's label sources into one consensus label, and find each source's first error.

The sources: the verifier (a checked claim: correct | incorrect | unverifiable), the reference alignment
(labels.reference: on track or not), and the Monte Carlo hard label (can the prefix still reach a correct
answer). They fail differently: a
verifier misses wrong reasoning that makes no false arithmetic claim, and MC misses a wrong step the model
recovers from (or a right step a weak model cannot finish). Keeping both, plus whether they agree, lets a
training export filter to agreeing steps (Qwen2.5-Math-PRM, "The Lessons of Developing PRMs", 2025).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from prm_factory.rollouts.first_error import first_error_mc

Consensus = Literal["positive", "negative", "disputed", "unlabeled"]

_VERDICTS = ("correct", "incorrect", "unverifiable")


def consensus(
    verdict_label: str,
    hard_label: bool | None,
    reference_label: str | None = None,
    judge_label: str | None = None,
) -> tuple[Consensus, bool | None]:
    """The step's consensus label and whether the sources agree (None: at most one source spoke).

    Each source votes positive, negative or not at all, and the votes do not weigh the same:

    - the verifier's `incorrect` is a checked false claim: the step is wrong whatever else says
      (ProcessBench counts a wrong step even when the chain recovers);
    - the reference's `incorrect` (a quantity off the worked solution in a wrong chain) is a negative that
      only a positive from another strong source (an MC rollout that still reaches the answer) disputes;
    - a generative judge's `incorrect` (it named this step as the earliest wrong one) counts like the
      reference's; its `correct` like the reference's `correct`;
    - the reference's `correct` and an MC hard label True are strong positives;
    - the verifier's `correct` (the arithmetic holds) and an MC hard label False (no rollout of a possibly
      weak policy reached the answer) are weak: a weak negative against any positive is `disputed`.

    No vote: `unlabeled`. `labels_agree` is True when two or more sources voted and all alike, False when
    they differ (whatever the consensus), None when at most one voted. `reference_label` (`judge_label`)
    None means that source did not run.

    ============== ============ ============ ============ ======
    verdict        MC hard      reference    consensus    agree
    ============== ============ ============ ============ ======
    correct        True         (not run)    positive     True
    incorrect      False        (not run)    negative     True
    correct        False        (not run)    disputed     False
    incorrect      True         (not run)    negative     False
    unverifiable   True/False   (not run)    follows MC   None
    correct        None         incorrect    negative     False
    unverifiable   True         incorrect    disputed     False
    correct        False        correct      disputed     False
    unverifiable   None         unverifiable unlabeled    None
    ============== ============ ============ ============ ======

    >>> consensus("incorrect", False)
    ('negative', True)
    >>> consensus("correct", False)
    ('disputed', False)
    >>> consensus("unverifiable", True)
    ('positive', None)
    >>> consensus("correct", None, "incorrect")
    ('negative', False)
    >>> consensus("unverifiable", True, "incorrect")
    ('disputed', False)
    >>> consensus("correct", None, None, "incorrect")
    ('negative', False)

    An unknown verdict label raises ValueError rather than being guessed at.
    """
    verifier = _vote(verdict_label)
    reference = _vote(reference_label) if reference_label is not None else None
    judge = _vote(judge_label) if judge_label is not None else None
    cast = [v for v in (verifier, hard_label, reference, judge) if v is not None]
    agree = None if len(cast) < 2 else len(set(cast)) == 1
    if not cast:
        return "unlabeled", None
    if verifier is False:
        return "negative", agree
    strong_negative = reference is False or judge is False
    strong_positive = reference is True or judge is True or hard_label is True
    if strong_negative:
        return ("disputed" if strong_positive else "negative"), agree
    if hard_label is False:
        return ("disputed" if True in cast else "negative"), agree
    return ("positive" if strong_positive or verifier else "unlabeled"), agree


def _vote(label: str) -> bool | None:
    if label not in _VERDICTS:
        raise ValueError(f"unknown verdict label {label!r}; expected one of {_VERDICTS}")
    return None if label == "unverifiable" else label == "correct"


def first_error_verifier(verdict_labels: Sequence[str]) -> int | None:
    """Index of the first step the verifier calls "incorrect"; "unverifiable" steps are passed over,
    since the verifier simply had nothing to check there.

    >>> first_error_verifier(["correct", "unverifiable", "incorrect", "incorrect"])
    2
    """
    return next((i for i, label in enumerate(verdict_labels) if label == "incorrect"), None)


def first_error_index(labels: Sequence[str | bool | None]) -> int | None:
    """First error of one source's per-step labels: verifier verdicts (str) or MC hard labels (bool/None).

    Dispatches on the label type so callers with either column can use one name; see
    `first_error_verifier` and `first_error_mc` for each source's rule.
    """
    if any(isinstance(label, str) for label in labels):
        return first_error_verifier([str(label) for label in labels])
    return first_error_mc(labels)  # type: ignore[arg-type]
