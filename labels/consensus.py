"""One consensus label per step from the registered sources' votes, and each source's first error.

The sources fail differently: the verifier misses wrong reasoning that makes no false arithmetic claim, MC
misses a wrong step the model recovers from (or a right step a weak model cannot finish), the reference
sees only quantities off the worked solution. Keeping every source's label, the consensus and whether they
agree lets a training export filter to agreeing steps (Qwen2.5-Math-PRM, "The Lessons of Developing PRMs",
2025). Each source declares its vote (labels/source.py); `combine` is the one rule over the votes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from prm_factory.labels.source import LabelSource, Vote
from prm_factory.rollouts.first_error import first_error_mc
from prm_factory.schemas.step_labels import StepLabel

Consensus = Literal["positive", "negative", "disputed", "unlabeled"]


def combine(votes: Sequence[Vote]) -> tuple[Consensus, bool | None]:
    """The consensus of one step's votes and whether they agree (None: at most one vote).

    Alike votes give their polarity. Against each other, the strongest negative decides when it is
    stronger than every positive (negatives always may), the strongest positive decides when it is stronger
    than every negative and may overrule (a reviewer's), and otherwise the step is `disputed`. No vote:
    `unlabeled`. With today's sources (strengths in labels/source.py) that reads:

    ============== ============ ============ ============ ======
    verifier       MC hard      reference    consensus    agree
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
    incorrect (k)  True         (not run)    disputed     False
    incorrect (k)  None         correct      disputed     False
    incorrect (k)  False        (not run)    negative     True
    ============== ============ ============ ============ ======

    `incorrect` is the verifier's of a final reading kind (or of none named); `incorrect (k)` of a kind the
    verifier source does not count final (labels/sources/verifier.py, `FINAL_KINDS`), which votes as the
    reference's `incorrect` does. The judge votes as the reference does.

    >>> from prm_factory.labels.source import Strength
    >>> weak_no, strong_yes = Vote(False, Strength.WEAK), Vote(True, Strength.STRONG)
    >>> combine([weak_no, strong_yes]), combine([Vote(False, Strength.FINAL), strong_yes])
    (('disputed', False), ('negative', False))
    >>> combine([Vote(True, Strength.REVIEWED, overrules=True), Vote(False, Strength.FINAL)])
    ('positive', False)
    """
    if not votes:
        return "unlabeled", None
    agree = None if len(votes) < 2 else len({vote.positive for vote in votes}) == 1
    negatives = [vote for vote in votes if not vote.positive]
    positives = [vote for vote in votes if vote.positive]
    if not negatives:
        return "positive", agree
    if not positives:
        return "negative", agree
    against, for_ = max(v.strength for v in negatives), max(v.strength for v in positives)
    if against > for_ and any(v.decides for v in negatives if v.strength == against):
        return "negative", agree
    if for_ > against and any(v.decides for v in positives if v.strength == for_):
        return "positive", agree
    return "disputed", agree


def step_consensus(
    labels: Iterable[StepLabel], sources: Mapping[str, LabelSource]
) -> tuple[Consensus, bool | None]:
    """`combine` over the votes of one step's labels, each weighed by its source's declaration.

    A label of a source `sources` does not name is an error, not a silent abstention.
    """
    votes = []
    for label in labels:
        if label.source not in sources:
            raise ValueError(f"a label of {label.source!r}, which is no registered source")
        vote = sources[label.source].vote(label)
        if vote is not None:
            votes.append(vote)
    return combine(votes)


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
