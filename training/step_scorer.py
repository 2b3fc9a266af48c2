"""Score every step of a chain with a reward model trained by TRL's PRM trainer (examples/train_prm_trl.py).

Why this reads rows the trainer's way: a token-classification PRM only means something at the positions it
was trained on, the last token of each step's separator. So a chain is laid out by
`trl.experimental.prm.PRMTrainer.tokenize_row` itself (the problem text as prompt, each step tokenized on
its own followed by `step_separator`, BOS first), and the step's score is the softmax probability of label 1
("step is right") at the positions that call marks. A checkpoint trained on outcome labels only (an ORM)
is scored the same way; its last step's score is its estimate of the chain's outcome.

Steps come from `sampling.segment` in `line` mode, the segmentation the training export used (TRL's
default separator is a newline, so a step never holds one).

>>> scorer = StepScorer(Path("/tmp/prm-trl"))                                  # doctest: +SKIP
>>> scorer.score([("Ana has 3 apples, buys 2.", ["3 + 2 = 5", "The answer is 5."])])  # doctest: +SKIP
[StepScores(scores=(0.91, 0.88), tokens=24)]
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

IGNORED = -100
DEFAULT_SEPARATOR = "\n"  # PRMConfig's default, which `prm-factory export trl --check-tokenizer` assumes


@dataclass(frozen=True)
class StepScores:
    """P(step right) per step, and the tokens the model read for them (its forward-pass cost)."""

    scores: tuple[float, ...]
    tokens: int


class ChainScorer(Protocol):
    """What search needs of a reward model: step scores for (problem text, steps) pairs."""

    def score(self, chains: Sequence[tuple[str, Sequence[str]]]) -> list[StepScores]: ...


class StepScorer:
    """A token-classification checkpoint with two labels, on CPU unless a GPU is there."""

    def __init__(
        self,
        checkpoint: Path,
        *,
        step_separator: str = DEFAULT_SEPARATOR,
        batch_size: int = 8,
        max_length: int | None = None,
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
        import torch
        from transformers import AutoModelForTokenClassification, AutoTokenizer

        self.checkpoint = Path(checkpoint)
        self.step_separator = step_separator
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self._tokenizer = AutoTokenizer.from_pretrained(self.checkpoint)
        if self._tokenizer.pad_token_id is None:
            self._tokenizer.pad_token = self._tokenizer.eos_token
        self._model = AutoModelForTokenClassification.from_pretrained(self.checkpoint, dtype=torch.float32)
        self._model.to(self.device).eval()
        if self._model.config.num_labels != 2:
            raise ValueError(
                f"{self.checkpoint}: expected a 2-label PRM, found {self._model.config.num_labels}"
            )

    def layout(self, prompt: str, steps: Sequence[str]) -> tuple[list[int], list[int]]:
        """Input ids and the label positions of each step, exactly as the PRM trainer builds them."""
        from trl.experimental.prm import PRMTrainer

        row = PRMTrainer.tokenize_row(
            {"prompt": prompt, "completions": list(steps), "labels": [False] * len(steps)},
            self._tokenizer,
            self.step_separator,
            self.max_length,
            None,
            False,
            True,
        )
        positions = [i for i, label in enumerate(row["labels"]) if label != IGNORED]
        return row["input_ids"], positions

    def score(self, chains: Sequence[tuple[str, Sequence[str]]]) -> list[StepScores]:
        """(prompt, steps) per chain -> its step scores; a chain without steps scores `()` at no cost.
        Steps cut off by `max_length` get no score, so a score tuple may be shorter than the steps."""
        import torch

        laid = [self.layout(prompt, steps) if steps else ([], []) for prompt, steps in chains]
        out: list[StepScores | None] = [None] * len(chains)
        order = sorted(range(len(laid)), key=lambda i: len(laid[i][0]))  # similar lengths pad less
        pad = self._tokenizer.pad_token_id
        for start in range(0, len(order), self.batch_size):
            batch = [i for i in order[start : start + self.batch_size] if laid[i][0]]
            for i in order[start : start + self.batch_size]:
                if not laid[i][0]:
                    out[i] = StepScores((), 0)
            if not batch:
                continue
            width = max(len(laid[i][0]) for i in batch)
            ids = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, i in enumerate(batch):
                tokens = laid[i][0]
                ids[row, : len(tokens)] = torch.tensor(tokens)
                mask[row, : len(tokens)] = 1
            with torch.inference_mode():
                logits = self._model(
                    input_ids=ids.to(self.device), attention_mask=mask.to(self.device)
                ).logits
            probabilities = torch.softmax(logits.float(), dim=-1)[..., 1].cpu()
            for row, i in enumerate(batch):
                tokens, positions = laid[i]
                out[i] = StepScores(tuple(float(probabilities[row, p]) for p in positions), len(tokens))
        return [s for s in out if s is not None]
