"""Label quality on chains from elsewhere, per split and averaged over splits, per label source.

`prm-factory eval` on ProcessBench's files as they ship (a split's JSON list, or a folder of them) and on
any ProcessBench- or PRM800K-shape chain file (`schemas.external_chains`). The figures, per split and label
source: ProcessBench's first-error F1 (harmonic mean of the exact-first-error accuracy on erroneous chains
and the accuracy on correct chains) with both accuracies, the share of correct chains with any step
labelled `incorrect`, and the precision (and recall) of `incorrect` on the steps up to and including the
marked first error. Over several splits each figure is also averaged, the paper's convention for F1 (a
mean of the splits' figures, not a figure of the pooled chains).

The label sources are those `prm-factory label` writes without a model:
- `verifier`: the math verifier's step checks (`check_steps`);
- `reference`: alignment with the problem's worked solution (`labels.reference`), scored only on a split
  where some chain has one. It is told the chain's outcome: the source's own grade
  (`final_answer_correct`, what the factory knows from its reference answer) where the row has one,
  else the steps graded against the reference answer;
- `combined`: their consensus (`evaluation.real_errors.consensus_step_labels`: the rule of
  `labels.consensus` over the registered sources' votes), `incorrect` where it is negative, so its first
  errors and every figure here are those of the consensus a `label` without rollouts writes. That is the
  union of the two (a step `incorrect` when either says so) except where the verifier's `incorrect` is of
  a reading kind it does not count final (`FINAL_KINDS`) and the reference calls the step `correct`:
  disputed, so not `incorrect`;
- every other registered source that needs no engine (a plug-in, `evaluation.source_labels`), by its name;
- `prm`: a trained checkpoint's step scores (`eval --prm`), `incorrect` below P(right) 0.5.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from statistics import fmean
from typing import Any

from prm_factory.config.run_config import RunConfig
from prm_factory.evaluation.external import ExternalEvalReport, evaluate_external
from prm_factory.evaluation.kind_precision import kind_precision
from prm_factory.evaluation.real_errors import consensus_step_labels
from prm_factory.evaluation.source_labels import other_labels
from prm_factory.labels.calibration import wilson
from prm_factory.labels.consensus import domains_of
from prm_factory.labels.reference import reference_step_labels
from prm_factory.labels.registry import registry
from prm_factory.schemas.external_chains import ExternalChain
from prm_factory.schemas.records import Problem
from prm_factory.schemas.rejected import RejectedRow
from prm_factory.verifiers.math.reading_kinds import KindPrecision
from prm_factory.verifiers.protocol import Verdict, Verifier


def chain_problem(chain: ExternalChain) -> Problem:
    """The problem record a chain is checked against (its reference answer and worked solution included)."""
    return Problem(
        chain.id, "external", "math", chain.problem, chain.reference_answer, chain.reference_solution
    )


def chain_outcome(chain: ExternalChain, problem: Problem, verifier: Verifier) -> str:
    """The chain's outcome for the reference source: the source's grade where given, else its steps graded
    against the reference answer (`unparsed` without one)."""
    if chain.final_answer_correct is not None:
        return "correct" if chain.final_answer_correct else "incorrect"
    if not problem.reference_answer:
        return "unparsed"
    return verifier.grade(problem, "\n".join(chain.steps)).label


def label_sources(
    chains: Sequence[ExternalChain],
    verifier: Verifier,
    done: Callable[[int], None] | None = None,
    verifier_kinds: list[list[str | None]] | None = None,
    config: RunConfig | None = None,
) -> dict[str, list[list[str]]]:
    """Each chain's step labels per source: `verifier` always; `reference` and `combined` only when some
    chain carries a worked solution (a chain without one is `unverifiable` throughout for the reference,
    as `labels.reference` says it). `done(1)` is called after each chain (a progress bar); the verifier's
    reading kind of each step (`Verdict.kind`) is appended to `verifier_kinds` when it is given."""
    with_reference = any(chain.reference_solution for chain in chains)
    sources = registry()
    by_source: dict[str, list[list[str]]] = {"verifier": []}
    if with_reference:
        by_source.update(reference=[], combined=[])
    for chain in chains:
        problem = chain_problem(chain)
        verdicts = verifier.check_steps(problem, list(chain.steps))
        checked = [v.label for v in verdicts]
        by_source["verifier"].append(checked)
        if verifier_kinds is not None:
            verifier_kinds.append([v.kind for v in verdicts])
        if with_reference:
            if chain.reference_solution:
                outcome = chain_outcome(chain, problem, verifier)
                aligned = reference_step_labels(problem, chain.steps, outcome)
            else:
                aligned = [Verdict("unverifiable")] * len(chain.steps)
            by_source["reference"].append([v.label for v in aligned])
            domains = domains_of(problem.domain, problem.source, problem.text)
            by_source["combined"].append(consensus_step_labels(verdicts, aligned, sources, domains))
        if done is not None:
            done(1)
    outcome = partial(chain_outcome, verifier=verifier)
    by_source.update(other_labels(chains, verifier, chain_problem, outcome, config))
    return by_source


@dataclass(frozen=True)
class Split:
    """One split's chains and rejected rows (a file of a folder, or the one file given)."""

    name: str
    files: tuple[str, ...]
    chains: tuple[ExternalChain, ...]
    rejected: tuple[RejectedRow, ...]


def group_splits(
    chains: Sequence[ExternalChain],
    rejected: Sequence[RejectedRow],
    limit: int | None = None,
    spread: bool = False,
) -> list[Split]:
    """Chains and rejected rows by split (the file's stem), in file order; with `limit`, only each split's
    first `limit` rows (chains and rejected rows together, by line or item number), or with `spread` that
    many rows evenly spaced over the split (ProcessBench lists a split's erroneous chains first, so its
    first rows hold no correct chain)."""
    rows: dict[str, list[tuple[int, ExternalChain | RejectedRow]]] = {}
    files: dict[str, dict[str, None]] = {}
    for chain in chains:
        split = chain.split or Path(chain.file).stem
        rows.setdefault(split, []).append((chain.line, chain))
        files.setdefault(split, {})[chain.file] = None
    for row in rejected:
        split = Path(row.file).stem
        rows.setdefault(split, []).append((row.line, row))
        files.setdefault(split, {})[row.file] = None
    splits = []
    for name, numbered in rows.items():
        numbered.sort(key=lambda item: item[0])
        kept = [row for _, row in _subset(numbered, limit, spread)]
        splits.append(
            Split(
                name,
                tuple(files[name]),
                tuple(r for r in kept if isinstance(r, ExternalChain)),
                tuple(r for r in kept if isinstance(r, RejectedRow)),
            )
        )
    return splits


def _subset(rows: list[Any], limit: int | None, spread: bool) -> list[Any]:
    """The first `limit` rows, or `limit` rows evenly spaced from the first on (all when `limit` is None).

    >>> _subset(list(range(10)), 4, spread=True)
    [0, 2, 5, 7]
    """
    if limit is None or limit >= len(rows):
        return rows
    if not spread:
        return rows[:limit]
    return [rows[i * len(rows) // limit] for i in range(limit)]


@dataclass(frozen=True)
class SplitReport:
    split: Split
    sources: dict[str, ExternalEvalReport]  # by label source: verifier, reference, combined, others, prm
    # the verifier's `incorrect` flags per reading kind (`evaluation.kind_precision`)
    verifier_kinds: dict[str, KindPrecision] = field(default_factory=dict)

    @property
    def n_with_solution(self) -> int:
        return sum(bool(c.reference_solution) for c in self.split.chains)


def prm_step_labels(scores: Sequence[Sequence[float | None]], threshold: float = 0.5) -> list[list[str]]:
    """A trained PRM's step scores as labels: `incorrect` below the threshold on P(right), `unverifiable`
    where it gave no score (a step cut by its max length).

    >>> prm_step_labels([[0.9, 0.2, None]])
    [['correct', 'incorrect', 'unverifiable']]
    """
    return [
        ["unverifiable" if p is None else ("correct" if p >= threshold else "incorrect") for p in chain]
        for chain in scores
    ]


def evaluate_split(
    split: Split,
    verifier: Verifier,
    done: Callable[[int], None] | None = None,
    prm_scores: Sequence[Sequence[float | None]] | None = None,
    config: RunConfig | None = None,
) -> SplitReport:
    """The split's figures per source; `config`: the run config plug-ins read their options from."""
    kinds: list[list[str | None]] = []
    labelled = label_sources(split.chains, verifier, done, kinds, config)
    if prm_scores is not None:
        labelled["prm"] = prm_step_labels(prm_scores)
    return SplitReport(
        split,
        {name: evaluate_external(split.chains, labels) for name, labels in labelled.items()},
        kind_precision(split.chains, labelled["verifier"], kinds),
    )


@dataclass(frozen=True)
class SourceFigures:
    """The figures of one label source in [0, 1], on a split or averaged over splits; None where undefined
    (F1 without erroneous or without correct chains, a precision without any `incorrect` step)."""

    f1: float | None
    accuracy_erroneous: float | None
    accuracy_correct: float | None
    correct_flagged: float | None  # share of correct chains with any step labelled `incorrect`
    incorrect_precision: float | None  # on steps up to and including the marked first error
    incorrect_recall: float | None
    n_splits: int = 1  # how many splits an average is over


def source_figures(report: ExternalEvalReport) -> SourceFigures:
    fe, steps = report.first_error, report.steps
    has_err = fe is not None and fe.n_erroneous > 0
    has_cor = fe is not None and fe.n_correct > 0
    flags = steps is not None and steps.true_positive + steps.false_positive > 0
    wrong = steps is not None and steps.true_positive + steps.false_negative > 0
    return SourceFigures(
        fe.f1 if fe is not None and has_err and has_cor else None,
        fe.accuracy_erroneous if fe is not None and has_err else None,
        fe.accuracy_correct if fe is not None and has_cor else None,
        fe.correct_flagged_share if fe is not None and has_cor else None,
        steps.precision if steps is not None and flags else None,
        steps.recall if steps is not None and wrong else None,
    )


def _mean(values: Sequence[float | None]) -> float | None:
    defined = [v for v in values if v is not None]
    return fmean(defined) if defined else None


def average_over_splits(reports: Sequence[SplitReport]) -> dict[str, SourceFigures]:
    """Each source's figures averaged over the splits it was scored on; a figure undefined on a split is
    left out of that figure's mean.

    >>> f = SourceFigures(0.5, 0.25, 1.0, 0.0, None, 0.5)
    >>> g = SourceFigures(0.3, 0.75, 0.5, 0.5, 1.0, 0.5)
    >>> mean = _average([f, g])
    >>> (mean.f1, mean.accuracy_erroneous, mean.incorrect_precision, mean.n_splits)
    (0.4, 0.5, 1.0, 2)
    """
    per_source: dict[str, list[SourceFigures]] = {}
    for report in reports:
        for name, scores in report.sources.items():
            per_source.setdefault(name, []).append(source_figures(scores))
    return {name: _average(figures) for name, figures in per_source.items()}


def _average(figures: Sequence[SourceFigures]) -> SourceFigures:
    return SourceFigures(
        _mean([f.f1 for f in figures]),
        _mean([f.accuracy_erroneous for f in figures]),
        _mean([f.accuracy_correct for f in figures]),
        _mean([f.correct_flagged for f in figures]),
        _mean([f.incorrect_precision for f in figures]),
        _mean([f.incorrect_recall for f in figures]),
        len(figures),
    )


def _figures_json(figures: SourceFigures) -> dict[str, Any]:
    return {
        "first_error_f1": figures.f1,
        "accuracy_erroneous": figures.accuracy_erroneous,
        "accuracy_correct": figures.accuracy_correct,
        "correct_chains_flagged": figures.correct_flagged,
        "incorrect_precision": figures.incorrect_precision,
        "incorrect_recall": figures.incorrect_recall,
    }


def report_json(input_path: str, reports: Sequence[SplitReport]) -> dict[str, Any]:
    """The figures as one JSON object: fractions in [0, 1] (null where undefined), the counts behind them."""
    splits = []
    for report in reports:
        chains = report.split.chains
        sources = {}
        for name, scores in report.sources.items():
            fe, steps = scores.first_error, scores.steps
            sources[name] = {
                **_figures_json(source_figures(scores)),
                "counts": {
                    "correct_chains_flagged": fe.n_correct_flagged if fe else 0,
                    "incorrect_true_positive": steps.true_positive if steps else 0,
                    "incorrect_false_positive": steps.false_positive if steps else 0,
                    "incorrect_false_negative": steps.false_negative if steps else 0,
                },
            }
        splits.append(
            {
                "split": report.split.name,
                "files": list(report.split.files),
                "chains": len(chains),
                "erroneous": sum(c.first_error_label not in (None, -1) for c in chains),
                "correct": sum(c.first_error_label == -1 for c in chains),
                "with_solution": report.n_with_solution,
                "rejected": [
                    {"file": r.file, "line": r.line, "field": r.field, "reason": r.reason}
                    for r in report.split.rejected
                ],
                "sources": sources,
                "verifier_kinds": {
                    kind: {
                        "right": c.right,
                        "wrong": c.wrong,
                        "precision": c.precision,
                        "interval": list(wilson(c.right, c.flags)) if c.flags else None,
                    }
                    for kind, c in report.verifier_kinds.items()
                },
            }
        )
    average = {
        name: {**_figures_json(figures), "splits": figures.n_splits}
        for name, figures in average_over_splits(reports).items()
    }
    return {"input": input_path, "splits": splits, "average": average}
