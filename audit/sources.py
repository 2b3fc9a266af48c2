"""The label sources an audit measures, each read from a step row as one vote: `correct`, `incorrect` or none.

Why a module of its own: the sample's strata, the review page's "what the sources said" panel and the report's
per-source figures must read a source the same way. A vote is the source's own three-valued label, as
labels/consensus.py reads it: the verifier's and the reference's and the judge's verdicts as written
(`unverifiable` is no vote), MC's hard label (True: some rollout from the prefix reaches the answer), and the
consensus (`positive` / `negative`; `disputed` and `unlabeled` are no vote).

>>> [source.name for source in SOURCES if source.name != "prm"]  # prm: the trained PRM, where installed
['verifier', 'reference', 'mc', 'judge', 'consensus']
>>> SOURCES[2].vote_sql
"CASE WHEN hard_label THEN 'correct' WHEN NOT hard_label THEN 'incorrect' END"
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Vote = Literal["correct", "incorrect"]
VOTES: tuple[Vote, ...] = ("correct", "incorrect")


@dataclass(frozen=True)
class AuditedSource:
    """One source as the audit reads it: its name, the step columns it needs, its vote as SQL over `steps`,
    and the columns shown (after the reviewer answered) as its verdict and reason."""

    name: str
    columns: tuple[str, ...]
    vote_sql: str
    shown: tuple[str, ...]
    combined: bool = False  # the consensus: a rule over the other sources, not a labeler of its own


def _verdict(column: str) -> str:
    return f"CASE {column} WHEN 'correct' THEN 'correct' WHEN 'incorrect' THEN 'incorrect' END"


FIRST_SOURCES: tuple[AuditedSource, ...] = (
    AuditedSource(
        "verifier",
        ("verdict",),
        _verdict("verdict"),
        ("verdict", "verdict_reason", "verifier", "verifier_version", "verdict_evidence"),
    ),
    AuditedSource(
        "reference",
        ("reference_verdict",),
        _verdict("reference_verdict"),
        ("reference_verdict", "reference_reason", "reference_labeler", "reference_evidence"),
    ),
    AuditedSource(
        "mc",
        ("hard_label",),
        "CASE WHEN hard_label THEN 'correct' WHEN NOT hard_label THEN 'incorrect' END",
        ("hard_label", "mc_value", "n_rollouts", "n_rollouts_correct", "value_source"),
    ),
    AuditedSource(
        "judge",
        ("judge_verdict",),
        _verdict("judge_verdict"),
        ("judge_verdict", "judge_reason", "judge_labeler"),
    ),
)
"""The four first sources, in the order the page and the report show them; their columns predate the
generic ones (`NAME_verdict`, ...) of sources registered later."""

CONSENSUS = AuditedSource(
    "consensus",
    ("consensus",),
    "CASE consensus WHEN 'positive' THEN 'correct' WHEN 'negative' THEN 'incorrect' END",
    ("consensus", "labels_agree", "first_error"),
    combined=True,
)


def registered_sources() -> tuple[AuditedSource, ...]:
    """Every other label source of the registry (labels/registry.py: the trained PRM, a package's), read
    from its columns (schemas/step_labels.py) as the first sources are; not `human`, the reviewers' own."""
    from prm_factory.labels.registry import registered_names
    from prm_factory.schemas.step_labels import columns_of

    first = {source.name for source in FIRST_SOURCES} | {"human"}  # what the sources are measured by
    audited = []
    for name in registered_names():
        if name in first:
            continue
        c = columns_of(name)
        shown = tuple(column for column in (c.verdict, c.value, c.reason, c.labeler, c.evidence) if column)
        audited.append(AuditedSource(name, (c.verdict,), _verdict(c.verdict), shown))
    return tuple(audited)


SOURCES: tuple[AuditedSource, ...] = (*FIRST_SOURCES, *registered_sources(), CONSENSUS)
"""The sources an audit can measure, in the order the page and the report show them."""

BY_NAME = {source.name: source for source in SOURCES}


def present_sources(step_columns: Iterable[str]) -> tuple[AuditedSource, ...]:
    """The sources whose columns a steps table has (an older dataset lacks `reference_verdict`, say)."""
    columns = set(step_columns)
    return tuple(source for source in SOURCES if set(source.columns) <= columns)


def pattern_key(votes: dict[str, str | None], sources: Iterable[str]) -> str:
    """A stratum's name from the raw sources' votes, e.g. `verifier=incorrect mc=correct` (`-`: no vote).

    >>> pattern_key({"verifier": "incorrect", "mc": None}, ["verifier", "mc"])
    'verifier=incorrect mc=-'
    """
    return " ".join(f"{name}={votes.get(name) or '-'}" for name in sources)


def disagree(votes: dict[str, str | None], sources: Iterable[str]) -> bool:
    """Two raw sources voted and not alike.

    >>> disagree({"verifier": "correct", "mc": "incorrect"}, ["verifier", "mc"])
    True
    """
    return len({votes.get(name) for name in sources} - {None}) > 1
