"""Step scores from a trained PRM, at the positions training put the labels (training.layout).

`PrmScorer` reads `prm_factory.json` for the head and layout (a TRL checkpoint without it is read as TRL
wrote it: two labels, separator "\\n"); its `score` answers evaluation.step_scorer's `ChainScorer` protocol,
so search can use either. `score_file` scores a ProcessBench-shape file (schemas.external_chains) and, when
the chains carry gold first errors, gives ProcessBench's first-error F1 at threshold 0.5 on P(right).

>>> scorer = PrmScorer(Path("/tmp/prm"))                                   # doctest: +SKIP
>>> scorer.score([("Ana has 3 apples, buys 2.", ["3 + 2 = 5", "The answer is 5."])])  # doctest: +SKIP
[StepScores(scores=(0.91, 0.88), tokens=24)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evaluation.metrics import FirstErrorScores, first_error_scores
from evaluation.step_scorer import StepScores
from training.layout import Example, alignment_problem, layout_chain
from training.model import HeadSpec, load_model, score_examples
from training.step_metrics import THRESHOLD, predicted_first_error


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


@dataclass(frozen=True)
class ScoredFile:
    chains: list[ScoredChain]
    rejected: int  # rows the reader refused
    first_error: FirstErrorScores | None  # None when no chain has a gold first error


def score_file(scorer: PrmScorer, path: Path, threshold: float = THRESHOLD) -> ScoredFile:
    """Score every chain of a ProcessBench-shape file (JSONL, JSON list or a folder of them)."""
    from schemas.external_chains import read_external_chains

    chains, rejected = read_external_chains(path)
    scored = scorer.score([(chain.problem, chain.steps) for chain in chains])
    out = []
    for chain, steps in zip(chains, scored, strict=True):
        out.append(
            ScoredChain(
                id=chain.id,
                scores=steps.scores,
                predicted_first_error=predicted_first_error(steps.scores, threshold),
                gold_first_error=chain.first_error_label,
                problem=scorer.problem(chain.problem, chain.steps),
            )
        )
    gold = [c for c in out if c.gold_first_error is not None]
    f1 = (
        first_error_scores([c.gold_first_error for c in gold], [c.predicted_first_error for c in gold])  # type: ignore[misc]
        if gold
        else None
    )
    return ScoredFile(out, len(rejected), f1)
