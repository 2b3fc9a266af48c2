"""One consensus per step: the probability that the step is right given every source's label, and the
label that follows from it; and each source's first error.

The sources fail differently: the verifier misses wrong reasoning that makes no false arithmetic claim, MC
misses a wrong step the model recovers from (or a right step a weak model cannot finish), the reference
sees only quantities off the worked solution. Keeping every source's label, the consensus and whether they
agree lets a training export filter to agreeing steps (Qwen2.5-Math-PRM, "The Lessons of Developing PRMs",
2025).

The model (`p_correct`). Sources are independent noisy readers of one hidden truth (right or wrong), each
label's reliability measured per source, verdict, reading kind and domain in a calibration table
(labels/calibration.py): a one-coin model per kind, combined as naive Bayes in log-odds. A label of
measured precision q (the share of such labels that agreed with the truth where the table was measured,
under that table's base rate b of right steps, or of the kind's own steps where the table keeps one: MC's)
multiplies the odds of a right step by

    (q / (1 - q)) / (b / (1 - b))            for a `correct`
    ((1 - q) / q) / (b / (1 - b))            for an `incorrect`

and `p_correct` = the prior odds (`[labels.consensus] prior_correct`, by default the voting sources' base
rates) times every vote's ratio, as a probability. A lone vote therefore reads its measured precision. An
`unverifiable` label casts no vote. MC's table is its policy's (a model that fails from right prefixes makes
its `incorrect` weak): it weighs only the labels of the labeler it measured, by kind (a value drawn from
rollouts, or the chain's own outcome on the last step), and another policy's MC votes are unmeasured. A
source with no table for a label (a plug-in, MC of another policy) weighs `UNMEASURED_RATIO` either
way, the conservative default (a lone such vote reads P = 0.75 at an even prior), and votes of unmeasured
precision alone never make a step `negative` or `positive`, whatever the prior: it stays `disputed`. A
reviewer's answer (a source whose vote overrules or is of strength REVIEWED, `human`) weighs as a vote
of precision `REVIEWED_PRECISION` and decides the label whatever the rest say.

Sources that err together. Where a joint table (labels/joint_calibration.py) measured a pair of sources'
verdicts together in the step's domain, a step both labelled weighs that cell's share of right steps as one
vote, instead of the two votes' product: the product assumes the sources err independently given the
truth, which the synthetic problems refute (a misread value makes the verifier's arithmetic hold and the
reference's quantity wrong together).

The label: `negative` where P(wrong) >= `negative_at`, `positive` where P(right) >= `positive_at` (0.95 each
by default), `disputed` between, `unlabeled` without a vote. The first error is the earliest `negative`.

Why not crowd-kit's Dawid-Skene: it estimates each worker's confusion matrix unsupervised, by EM over the
labels being aggregated; here the reliabilities are measured against truth on labelled dev sets and the
user's audits, per reading kind (a worker's confusion depends on what it read), so the posterior is the
closed form above and needs no EM (nor crowd-kit's scipy / scikit-learn stack beside the lock).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from prm_factory.config.run_config import RunConfig
from prm_factory.labels.calibration import CalibrationTable, Precision, load_tables
from prm_factory.labels.joint_calibration import JointTable, load_joint_tables
from prm_factory.labels.source import LabelSource, Strength, Vote, tables_per_labeler
from prm_factory.rollouts.first_error import first_error_mc
from prm_factory.schemas.step_labels import StepLabel

Consensus = Literal["positive", "negative", "disputed", "unlabeled"]


MODEL_VERSION = "p_correct-2"
"""The consensus model's version: with the tables' digest, what a dataset version records it used."""

UNMEASURED_RATIO = 3.0
"""Odds ratio of a vote whose source has no table for it: a 75 % precise vote at an even prior."""

REVIEWED_PRECISION = 0.99
"""Precision of a reviewer's answer where no audit of the reviewers measured it."""


@dataclass(frozen=True)
class Weighing:
    """What turns a step's labels into `p_correct` and a label: the tables by source and the thresholds."""

    tables: Mapping[str, CalibrationTable] = field(default_factory=dict)
    negative_at: float = 0.95
    positive_at: float = 0.95
    prior_correct: float | None = None
    joint: Mapping[tuple[str, str], JointTable] = field(default_factory=dict)

    def digest(self) -> str:
        """Model version, tables and thresholds in one short digest (a dataset version records it)."""
        parts = {
            "model": MODEL_VERSION,
            "tables": sorted((name, t.digest()) for name, t in self.tables.items()),
            "thresholds": [self.negative_at, self.positive_at, self.prior_correct],
            "joint": sorted((t.name, t.digest()) for t in self.joint.values()),
        }
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:12]

    def identity(self) -> dict[str, str]:
        """As a labeler identity (`{"name", "version", "code"}`), for the run record and label hash."""
        return {"name": "consensus", "version": MODEL_VERSION, "code": self.digest()}

    def label(self, p_correct: float | None) -> Consensus:
        if p_correct is None:
            return "unlabeled"
        if 1.0 - p_correct >= self.negative_at:
            return "negative"
        if p_correct >= self.positive_at:
            return "positive"
        return "disputed"


def weighing(config: RunConfig | None = None) -> Weighing:
    """The weighing a config asks for (`[labels.consensus]`): the shipped tables, those the dataset's audits
    refined (labels.calibration.dataset_tables), and the config's own tables over them."""
    if config is None:
        return Weighing(load_tables(), joint=load_joint_tables())
    consensus = config.labels.consensus
    tables = load_tables(consensus.tables, config.dataset_root())
    joint = load_joint_tables(config.dataset_root())
    return Weighing(tables, consensus.negative_at, consensus.positive_at, consensus.prior_correct, joint)


_LATEX = re.compile(r"\\|\$(?!\d)")
"""A backslash, or a `$` not followed by a digit (a price is `$5`; LaTeX math closes with `$` after it)."""

GRADE_SCHOOL_SOURCES = ("gsm8k", "synthetic")
"""Problem sources whose problems are grade-school word problems (the tables' `math/gsm8k` cells)."""


def problem_set(domain: str, problem_source: str | None, text: str | None) -> str | None:
    """The set of problems a step is read in when its source is not one the tables name: a math problem
    of a grade-school source, or written without LaTeX, is `gsm8k`; one with LaTeX (a backslash, or a `$`
    that is no price: not followed by a digit) is `competition`. None outside math, or without the text.

    >>> problem_set("math", "external:processbench", "Let $x^2 = 4$."), problem_set("math", "gsm8k", None)
    ('competition', 'gsm8k')
    >>> problem_set("math", "external", "A pen costs $2 and a book $12.50. What do both cost?")
    'gsm8k'
    """
    if domain != "math":
        return None
    if problem_source and problem_source.split(":")[0] in GRADE_SCHOOL_SOURCES:
        return "gsm8k"
    if text is None:
        return None
    return "competition" if _LATEX.search(text) else "gsm8k"


def domains_of(domain: str, problem_source: str | None = None, text: str | None = None) -> tuple[str, ...]:
    """Where a label's precision is looked up, most specific first: the problem source's own cells
    (`math/gsm8k`), the set its problems belong to (`problem_set`), then the pooled `math`."""
    found = [f"{domain}/{problem_source}"] if problem_source else []
    kind = problem_set(domain, problem_source, text)
    if kind is not None and f"{domain}/{kind}" not in found:
        found.append(f"{domain}/{kind}")
    return (*found, domain)


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


@dataclass(frozen=True)
class Weighed:
    """One label's part in a step's consensus."""

    source: str
    positive: bool
    log_ratio: float  # what it adds to the log-odds of a right step
    precision: Precision | None  # None: no table measured it (UNMEASURED_RATIO)
    reviewed: bool = False  # a reviewer's answer (a vote of strength REVIEWED, or one that overrules)


def weigh_label(
    label: StepLabel, vote: Vote, weighing: Weighing, domains: Sequence[str], per_labeler: bool = False
) -> Weighed:
    """A vote's log odds ratio from its source's table (module docstring), or the unmeasured default.
    `per_labeler` (a source whose precision is its labeler's, MC's policy): a table that names another
    labeler than the label's does not weigh it."""
    table = weighing.tables.get(label.source)
    if per_labeler and table is not None and not table.measured(label.labeler):
        table = None
    found = table.precision(label.verdict, label.kind, domains) if table is not None else None
    reviewed = vote.overrules or vote.strength >= Strength.REVIEWED
    if found is None:
        if reviewed:
            ratio = _logit(REVIEWED_PRECISION)
        else:
            ratio = math.log(UNMEASURED_RATIO)
        return Weighed(label.source, vote.positive, ratio if vote.positive else -ratio, None, reviewed)
    right_given_vote = found.value if vote.positive else 1.0 - found.value
    ratio = _logit(right_given_vote) - _logit(found.base_rate)
    return Weighed(label.source, vote.positive, ratio, found, reviewed)


def step_votes(
    labels: Iterable[StepLabel],
    sources: Mapping[str, LabelSource],
    weighing: Weighing,
    domains: Sequence[str] = ("math",),
) -> list[Weighed]:
    """Each label's weighed vote (`unverifiable` and sources that do not vote cast none). A label of a source
    `sources` does not name is an error, not a silent abstention."""
    weighed = []
    for label in labels:
        if label.source not in sources:
            raise ValueError(f"a label of {label.source!r}, which is no registered source")
        source = sources[label.source]
        vote = source.vote(label)
        if vote is not None:
            weighed.append(weigh_label(label, vote, weighing, domains, tables_per_labeler(source)))
    return weighed


def joint_votes(
    labels: Sequence[StepLabel], weighed: list[Weighed], weighing: Weighing, domains: Sequence[str]
) -> list[Weighed]:
    """`weighed` with the votes of each pair of sources that has a joint cell for this step (both labelled
    it, not both `unverifiable`, in a domain the joint table measured; labels/joint_calibration.py) put
    into one vote of that cell's measured P(right); a reviewer's answer is never merged."""
    verdicts = {label.source: label.verdict for label in labels}
    for pair, table in weighing.joint.items():
        if not all(source in verdicts for source in pair):
            continue
        if any(w.reviewed for w in weighed if w.source in pair):
            continue
        found = table.probability((verdicts[pair[0]], verdicts[pair[1]]), domains)
        if found is None:
            continue
        ratio = _logit(found.value) - _logit(found.base_rate)
        merged = Weighed(table.name, found.value >= found.base_rate, ratio, found)
        weighed = [*(w for w in weighed if w.source not in pair), merged]
    return weighed


def probability(weighed: Sequence[Weighed], weighing: Weighing) -> float | None:
    """`p_correct` of a step from its weighed votes (None: no vote)."""
    if not weighed:
        return None
    if weighing.prior_correct is not None:
        prior = weighing.prior_correct
    else:
        bases = [w.precision.base_rate for w in weighed if w.precision is not None]
        prior = sum(bases) / len(bases) if bases else 0.5
    log_odds = _logit(prior) + sum(w.log_ratio for w in weighed)
    return 1.0 / (1.0 + math.exp(-max(min(log_odds, 50.0), -50.0)))


def step_probability(
    labels: Iterable[StepLabel],
    sources: Mapping[str, LabelSource],
    weighing: Weighing | None = None,
    domains: Sequence[str] = ("math",),
) -> tuple[Consensus, bool | None, float | None]:
    """A step's consensus, whether its votes agree (None: at most one vote) and its `p_correct`.

    >>> from prm_factory.labels.registry import registry
    >>> from prm_factory.labels.calibration import CalibrationTable, Cell
    >>> table = CalibrationTable("verifier", "", "dev set", 0.8, (Cell("incorrect", "k", "math", 1000, 990),))
    >>> w = Weighing({"verifier": table})
    >>> step_probability([StepLabel("verifier", "incorrect", kind="k")], registry(), w)[0]
    'negative'
    >>> step_probability([StepLabel("reference", "incorrect")], registry(), Weighing())[0]  # unmeasured
    'disputed'
    """
    weighing = weighing if weighing is not None else default_weighing()
    labels = list(labels)
    weighed = step_votes(labels, sources, weighing, domains)
    agree = None if len(weighed) < 2 else len({w.positive for w in weighed}) == 1
    weighed = joint_votes(labels, weighed, weighing, domains)
    p_correct = probability(weighed, weighing)
    reviewed = {w.positive for w in weighed if w.reviewed}
    if len(reviewed) == 1:  # the reviewers' answer decides, whatever the automatic sources say
        return ("positive" if reviewed.pop() else "negative"), agree, p_correct
    label = weighing.label(p_correct)
    if label in ("positive", "negative") and all(w.precision is None for w in weighed):
        return "disputed", agree, p_correct  # votes of unmeasured precision alone decide nothing
    return label, agree, p_correct


_DEFAULT: list[Weighing] = []


def default_weighing() -> Weighing:
    """The shipped tables with the default thresholds (read once)."""
    if not _DEFAULT:
        _DEFAULT.append(weighing(None))
    return _DEFAULT[0]


def step_consensus(
    labels: Iterable[StepLabel],
    sources: Mapping[str, LabelSource],
    weighing: Weighing | None = None,
    domains: Sequence[str] = ("math",),
) -> tuple[Consensus, bool | None]:
    """`step_probability` without the probability: the consensus and whether the votes agree."""
    label, agree, _ = step_probability(labels, sources, weighing, domains)
    return label, agree


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
