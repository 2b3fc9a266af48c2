"""First-error F1 of the model-free label sources on real model errors.

Run: `python -m prm_factory.evaluation.real_errors PATH`.

Input: ProcessBench-shape jsonl with reference fields, one chain a line:
`{"id", "problem", "steps", "final_answer", "label", "reference_answer", "solution", "source"}` (`label` =
hand-marked first error, -1 when every step holds). Rows without `solution` / `reference_answer` (the
altered-GSM8K set) take them from the GSM8K source by their `gsm8k-train-N` id, else by question text.

Three label sources are scored on the same chains:
- `verifier`: `MathVerifier.check_steps` (the claim checker: false arithmetic);
- `reference`: `labels.reference_step_labels` (alignment with the worked solution), given the chain's
  outcome as graded here by `MathVerifier.grade` against the reference answer, never read from the label;
- `combined`: the consensus of the two (`consensus_step_labels`: `labels.consensus` over the registered
  sources' votes), `incorrect` where it is negative, `correct` where positive, else `unverifiable`. Either
  source alone flags for its own reason (a false claim, a quantity off the reference), and each is precise
  on its own kind of error, so the consensus keeps both, except where the verifier's `incorrect` is of a
  reading kind it does not count final (`FINAL_KINDS`) and the reference calls the step on track: that
  step is disputed. (Before verifiers named their reading kinds the consensus was the union here: a step
  `incorrect` when either source said so. Dropping a verifier flag on a step the reference calls on track
  for every kind lost on both the dev set and the altered-GSM8K set: the verifier's flags are rarely wrong,
  and a false claim can land on a reference number by chance.)

Per source: first-error F1 (ProcessBench: exact first-error index on erroneous chains, -1 on correct ones)
and per-step precision/recall of `incorrect`; also F1 per chain `source` when the file mixes several.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from prm_factory.evaluation.external import predicted_first_error
from prm_factory.evaluation.source_labels import other_labels
from prm_factory.labels.consensus import domains_of, step_consensus
from prm_factory.labels.metrics import (
    FirstErrorScores,
    PrecisionRecall,
    first_error_scores,
    step_incorrect_scores,
    step_labels_from_first_error,
)
from prm_factory.labels.reference import reference_step_labels
from prm_factory.labels.registry import registry
from prm_factory.labels.source import LabelSource
from prm_factory.schemas.external_chains import ExternalChain
from prm_factory.schemas.records import Problem
from prm_factory.schemas.reference_solutions import question_key
from prm_factory.schemas.step_labels import StepLabel
from prm_factory.verifiers.protocol import Verdict, Verifier

REAL_ERRORS_SET = Path(__file__).parent / "data" / "real_errors_gsm8k.jsonl"
# the shared GSM8K train split beside the checkout (../shared/data/gsm8k), for rows that carry no solution
SHARED_GSM8K_TRAIN = Path(__file__).resolve().parents[2] / "shared" / "data" / "gsm8k" / "train.jsonl"


@dataclass(frozen=True)
class ReferenceSample:
    """One chain with its hand-marked first error and the problem's worked reference solution."""

    id: str
    problem: str
    steps: tuple[str, ...]
    label: int
    final_answer: str
    reference_answer: str | None
    solution: str | None
    source: str


@dataclass(frozen=True)
class SourceReport:
    first_error: FirstErrorScores
    steps: PrecisionRecall
    predictions: tuple[int, ...]


CONSENSUS_LABEL = {"negative": "incorrect", "positive": "correct"}  # disputed, unlabeled: unverifiable


def consensus_step_labels(
    checked: Sequence[Verdict],
    aligned: Sequence[Verdict],
    sources: Mapping[str, LabelSource] | None = None,
    domains: Sequence[str] = ("math",),
) -> list[str]:
    """The consensus of the verifier's step verdicts (with their reading kinds) and the reference's, step by
    step, as a step label: `incorrect` where it is negative, `correct` where positive, `unverifiable` where
    disputed or unlabeled. `sources`: the label sources whose votes are weighed (the registry's by default);
    `domains`: where the tables are read (`labels.consensus.domains_of` of the problem, as `label` does).

    >>> kind = "word_problem_arithmetic"
    >>> ok, words = Verdict("correct", kind=kind), Verdict("incorrect", kind=kind)
    >>> wrong, aligned = Verdict("incorrect", kind="closed_arithmetic"), Verdict("correct")
    >>> none = Verdict("unverifiable")
    >>> competition = ("math/competition", "math")
    >>> consensus_step_labels([ok, words, wrong], [aligned, aligned, none], None, competition)
    ['correct', 'unverifiable', 'incorrect']
    """
    weigh = registry() if sources is None else sources
    labels = []
    for verdict, reference in zip(checked, aligned, strict=True):
        votes = [StepLabel("verifier", verdict.label, kind=verdict.kind)]
        votes.append(StepLabel("reference", reference.label))
        labels.append(CONSENSUS_LABEL.get(step_consensus(votes, weigh, None, domains)[0], "unverifiable"))
    return labels


def _gsm8k_rows(source: Path | None) -> dict[str, dict]:
    """GSM8K rows by `gsm8k-train-N` id and by question key (schemas.reference_solutions)."""
    if source is None or not source.exists():
        return {}
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_id = {f"gsm8k-train-{index}": row for index, row in enumerate(rows)}
    return {**{question_key(row["question"]): row for row in rows}, **by_id}


def load_samples(path: Path, gsm8k_source: Path | None = SHARED_GSM8K_TRAIN) -> list[ReferenceSample]:
    """Read a ProcessBench-shape file; rows lacking reference fields take them from GSM8K by id."""
    gsm8k: dict[str, dict] | None = None
    samples = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        solution, answer = row.get("solution"), row.get("reference_answer")
        if solution is None or answer is None:
            gsm8k = _gsm8k_rows(gsm8k_source) if gsm8k is None else gsm8k
            gold = gsm8k.get(row["id"]) or gsm8k.get(question_key(row["problem"]))
            if gold is not None and question_key(gold["question"]) == question_key(row["problem"]):
                solution = solution if solution is not None else gold["answer"]
                answer = answer if answer is not None else gold["answer"].rsplit("####", 1)[-1].strip()
        samples.append(
            ReferenceSample(
                row["id"],
                row["problem"],
                tuple(row["steps"]),
                int(row["label"]),
                str(row.get("final_answer", "")),
                answer,
                solution,
                row.get("source", path.stem),
            )
        )
    return samples


def _score(samples: Sequence[ReferenceSample], step_labels: Sequence[Sequence[str]]) -> SourceReport:
    predictions = tuple(predicted_first_error(labels) for labels in step_labels)
    gold_steps = [step_labels_from_first_error(s.label, len(s.steps)) for s in samples]
    return SourceReport(
        first_error_scores([s.label for s in samples], predictions),
        step_incorrect_scores(gold_steps, [list(labels) for labels in step_labels]),
        predictions,
    )


def sample_problem(sample: ReferenceSample) -> Problem:
    return Problem(sample.id, "gsm8k", "math", sample.problem, sample.reference_answer, sample.solution)


def label_chains(samples: Sequence[ReferenceSample], verifier: Verifier) -> dict[str, list[list[str]]]:
    """Step labels of every label source for every chain (the outcome graded here, not read from gold):
    the verifier, the reference, their consensus, and any other registered source that needs no engine."""
    by_source: dict[str, list[list[str]]] = {"verifier": [], "reference": [], "combined": []}
    for sample in samples:
        problem = sample_problem(sample)
        outcome = verifier.grade(problem, "\n".join(sample.steps)).label
        checked = verifier.check_steps(problem, sample.steps)
        aligned = reference_step_labels(problem, sample.steps, outcome)
        by_source["verifier"].append([v.label for v in checked])
        by_source["reference"].append([v.label for v in aligned])
        domains = domains_of(problem.domain, problem.source, problem.text)
        by_source["combined"].append(consensus_step_labels(checked, aligned, None, domains))
    chains = [ExternalChain(s.id, s.problem, s.steps) for s in samples]
    by_id = {s.id: s for s in samples}
    by_source.update(
        other_labels(
            chains,
            verifier,
            lambda chain: sample_problem(by_id[chain.id]),
            lambda chain, problem: verifier.grade(problem, "\n".join(chain.steps)).label,
        )
    )
    return by_source


def evaluate_real_errors(
    samples: Sequence[ReferenceSample], verifier: Verifier
) -> tuple[dict[str, SourceReport], dict[str, dict[str, SourceReport]]]:
    """Scores per label source over all chains, and per chain source (`source` field) and label source."""
    labelled = label_chains(samples, verifier)
    overall = {name: _score(samples, labels) for name, labels in labelled.items()}
    per_chain_source: dict[str, dict[str, SourceReport]] = {}
    for chain_source in sorted({s.source for s in samples}):
        keep = [i for i, s in enumerate(samples) if s.source == chain_source]
        subset = [samples[i] for i in keep]
        per_chain_source[chain_source] = {
            name: _score(subset, [labels[i] for i in keep]) for name, labels in labelled.items()
        }
    return overall, per_chain_source


def _percent(value: float, defined: bool) -> str:
    return f"{100 * value:.1f}" if defined else "n/a"


def format_table(reports: dict[str, SourceReport]) -> list[str]:
    """One row per label source; `n/a` where the set has no chain of that class (F1 then too)."""
    lines = [f"  {'labels':<10} {'F1':>6} {'acc.err':>8} {'acc.cor':>8} {'step P':>7} {'step R':>7}"]
    for name, report in reports.items():
        fe, st = report.first_error, report.steps
        both = fe.n_erroneous > 0 and fe.n_correct > 0
        lines.append(
            f"  {name:<10} {_percent(fe.f1, both):>6} "
            f"{_percent(fe.accuracy_erroneous, fe.n_erroneous > 0):>8} "
            f"{_percent(fe.accuracy_correct, fe.n_correct > 0):>8} "
            f"{100 * st.precision:7.1f} {100 * st.recall:7.1f}"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, nargs="?", default=REAL_ERRORS_SET)
    parser.add_argument(
        "--gsm8k", type=Path, default=SHARED_GSM8K_TRAIN, help="GSM8K jsonl for rows lacking a solution"
    )
    args = parser.parse_args(argv)

    from prm_factory.verifiers.math import MathVerifier

    samples = load_samples(args.path, args.gsm8k)
    missing = sum(s.solution is None for s in samples)
    overall, per_source = evaluate_real_errors(samples, MathVerifier())
    n_err = sum(s.label != -1 for s in samples)
    print(
        f"{args.path.name}: {len(samples)} chains ({n_err} erroneous, {len(samples) - n_err} correct); "
        f"{missing} without a reference solution"
    )
    print("\n".join(format_table(overall)))
    if len(per_source) > 1:
        for chain_source, reports in per_source.items():
            n = reports["combined"].first_error
            print(f"source {chain_source}: {n.n_erroneous} erroneous, {n.n_correct} correct")
            print("\n".join(format_table(reports)))


if __name__ == "__main__":
    main()
