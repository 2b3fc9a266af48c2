"""Step scores from a trained PRM, at the positions training put the labels (training.layout).

`PrmScorer` reads `prm_factory.json` for the head and layout (a TRL checkpoint without it is read as TRL
wrote it: two labels, separator "\\n"); its `score` answers training.step_scorer's `ChainScorer` protocol,
so search can use either. `score_file` scores a ProcessBench-shape file (schemas.external_chains) and, when
the chains carry gold first errors, gives ProcessBench's first-error F1 at threshold 0.5 on P(right).
`score_rows` scores a dataset version's chains (training.rows, chosen as training chooses them) against
their stored step labels: step AUROC and accuracy and first-error F1 (training.step_metrics), over the
chains the alignment check passes, as training evaluates. `write_scores` writes either as JSONL or parquet.

>>> scorer = PrmScorer(Path("/tmp/prm"))                                   # doctest: +SKIP
>>> scorer.score([("Ana has 3 apples, buys 2.", ["3 + 2 = 5", "The answer is 5."])])  # doctest: +SKIP
[StepScores(scores=(0.91, 0.88), tokens=24)]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prm_factory.labels.metrics import FirstErrorScores, first_error_scores
from prm_factory.training.layout import Example, alignment_problem, layout_chain
from prm_factory.training.model import METADATA, HeadSpec, load_model, score_examples
from prm_factory.training.rows import TrainRow, is_held_out
from prm_factory.training.step_metrics import (
    THRESHOLD,
    StepMetrics,
    gold_first_error,
    predicted_first_error,
    step_metrics,
)
from prm_factory.training.step_scorer import StepScores


class PrmScorer:
    """A trained PRM checkpoint, on a GPU when there is one."""

    def __init__(
        self,
        checkpoint: Path,
        *,
        separator: str | None = None,
        max_length: int | None = None,
        batch_size: int = 8,
    ) -> None:
        import torch

        self.checkpoint = Path(checkpoint)
        self.model, self.tokenizer = load_model(self.checkpoint)
        spec = HeadSpec.load(self.checkpoint, self.model.config.num_labels)
        self.head = spec.head
        self.separator = spec.separator if separator is None else separator
        self.max_length = spec.max_length if max_length is None else max_length
        self.batch_size = batch_size
        self.model.to("cuda" if torch.cuda.is_available() else "cpu").eval()

    def problem(self, prompt: str, steps: Sequence[str]) -> str | None:
        """Why this chain cannot be scored at its own step ends (training's alignment check), or None."""
        return alignment_problem(self.tokenizer, prompt, steps, self.separator, self.max_length)

    def score(self, chains: Sequence[tuple[str, Sequence[str]]]) -> list[StepScores]:
        """(prompt, steps) per chain -> P(right) per step; steps cut by max_length get no score."""
        examples = []
        for number, (prompt, steps) in enumerate(chains):
            laid = layout_chain(self.tokenizer, prompt, steps, self.separator, self.max_length)
            examples.append(
                Example(str(number), laid.input_ids, laid.positions, (True,) * len(laid.positions))
            )
        scores = score_examples(self.model, examples, self.head, self.tokenizer.pad_token_id, self.batch_size)
        return [
            StepScores(tuple(s), len(e.input_ids) if e.positions else 0)
            for s, e in zip(scores, examples, strict=True)
        ]


@dataclass(frozen=True)
class ScoredChain:
    id: str
    scores: tuple[float, ...]
    predicted_first_error: int
    gold_first_error: int | None
    problem: str | None  # the alignment check's complaint; the chain is still scored where it can be
    problem_id: str | None = None
    labels: tuple[bool, ...] | None = None  # the stored step labels (dataset rows), None for a chain file

    def record(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "problem_id": self.problem_id,
            "scores": list(self.scores),
            "labels": None if self.labels is None else list(self.labels),
            "predicted_first_error": self.predicted_first_error,
            "gold_first_error": self.gold_first_error,
            "alignment_problem": self.problem,
        }


def _score_chains(
    scorer: PrmScorer, chains: Sequence[tuple[str, Sequence[str], dict[str, Any]]], threshold: float
) -> list[ScoredChain]:
    """Score (prompt, steps, ScoredChain's other fields) in one batch; each with its predicted first error."""
    scored = scorer.score([(prompt, steps) for prompt, steps, _ in chains])
    return [
        ScoredChain(
            scores=result.scores,
            predicted_first_error=predicted_first_error(result.scores, threshold),
            problem=scorer.problem(prompt, steps),
            **fields,
        )
        for (prompt, steps, fields), result in zip(chains, scored, strict=True)
    ]


@dataclass(frozen=True)
class ScoredFile:
    chains: list[ScoredChain]
    rejected: int  # rows the reader refused
    first_error: FirstErrorScores | None  # None when no chain has a gold first error


def score_file(scorer: PrmScorer, path: Path, threshold: float = THRESHOLD) -> ScoredFile:
    """Score every chain of a ProcessBench-shape file (JSONL, JSON list or a folder of them)."""
    from prm_factory.schemas.external_chains import read_external_chains

    chains, rejected = read_external_chains(path)
    out = _score_chains(
        scorer,
        [(c.problem, c.steps, {"id": c.id, "gold_first_error": c.first_error_label}) for c in chains],
        threshold,
    )
    gold = [c for c in out if c.gold_first_error is not None]
    f1 = (
        first_error_scores([c.gold_first_error for c in gold], [c.predicted_first_error for c in gold])  # type: ignore[misc]
        if gold
        else None
    )
    return ScoredFile(out, len(rejected), f1)


@dataclass(frozen=True)
class ScoredRows:
    chains: list[ScoredChain]
    metrics: StepMetrics | None  # over the aligned chains; None when no chain passed the alignment check
    n_misaligned: int  # chains the alignment check refused, scored but left out of `metrics`


def score_rows(scorer: PrmScorer, rows: Sequence[TrainRow], threshold: float = THRESHOLD) -> ScoredRows:
    """Score dataset rows (training.rows) at training's positions and measure them against their labels.

    A chain the alignment check refuses is scored where it can be but left out of the metrics, as training
    leaves it out of its evaluation: its scores would not sit one per labelled step.
    """
    chains = _score_chains(
        scorer,
        [
            (
                row.prompt,
                row.steps,
                {
                    "id": row.chain_id,
                    "gold_first_error": gold_first_error(row.labels),
                    "problem_id": row.problem_id,
                    "labels": row.labels,
                },
            )
            for row in rows
        ],
        threshold,
    )
    aligned = [c for c in chains if c.problem is None]
    metrics = (
        step_metrics([c.scores for c in aligned], [c.labels or () for c in aligned], threshold)
        if aligned
        else None
    )
    return ScoredRows(chains, metrics, len(chains) - len(aligned))


def held_out_rows(checkpoint: Path, rows: Sequence[TrainRow]) -> list[TrainRow]:
    """The rows of the problems this checkpoint held out in training (its recorded share, by problem id)."""
    path = Path(checkpoint) / METADATA
    share = json.loads(path.read_text()).get("training", {}).get("held_out") if path.exists() else None
    if share is None:
        raise ValueError(
            f"{checkpoint}: no held-out share recorded ({METADATA}); not from `prm-factory train`"
        )
    return [row for row in rows if is_held_out(row.problem_id, float(share))]


def write_scores(chains: Sequence[ScoredChain], path: Path) -> None:
    """One record per chain (ScoredChain.record): parquet for a `.parquet` path, JSON Lines otherwise."""
    path.parent.mkdir(parents=True, exist_ok=True)
    records = [chain.record() for chain in chains]
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = pa.schema(
            [
                ("id", pa.string()),
                ("problem_id", pa.string()),
                ("scores", pa.list_(pa.float64())),
                ("labels", pa.list_(pa.bool_())),
                ("predicted_first_error", pa.int64()),
                ("gold_first_error", pa.int64()),
                ("alignment_problem", pa.string()),
            ]
        )
        pq.write_table(pa.Table.from_pylist(records, schema=schema), path)
        return
    with path.open("w", encoding="utf-8") as sink:
        for record in records:
            sink.write(json.dumps(record) + "\n")
