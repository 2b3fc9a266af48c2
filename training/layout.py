"""Where a chain's step labels sit in its tokens: the layout training and scoring share.

The layout is TRL's PRM trainer's (trl <= 1.13.0, `PRMTrainer.tokenize_row`), so checkpoints trained by
either are read at the same positions: BOS (when the tokenizer has one), the prompt's tokens, then each step
tokenized on its own followed by the separator's tokens; a step's label sits on the last separator token.
Truncation at `max_length` drops the positions past it.

The alignment check (`alignment_problem`) reports, instead of training on it, a chain where a label would
not land on exactly one position of its own step (the failures exports/tokenizer_check.py finds in exports):

* the separator encodes to no tokens (labels would fall on the steps' own last tokens);
* a step contains the separator (split on it, the chain has more steps than labels);
* truncation cuts a labelled step;
* the separator tokenizes differently in running text than step by step (SmolLM2 reads a lone "\\n\\n" as
  one token and the same characters between lines as two), so a model scored on the running text would
  read its step ends elsewhere.

The default separator " ки\\n" passed every row of the embedded model's GSM8K and synthetic exports, where
"\\n" fails multi-line steps and "\\n\\n" most rows (README, "Training a PRM with TRL").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_SEPARATOR = " ки\n"
IGNORED = -100
"""The target PyTorch's cross-entropy skips."""


@dataclass(frozen=True)
class Layout:
    """A chain's input ids and the position of each step's label (fewer than the steps when truncated)."""

    input_ids: tuple[int, ...]
    positions: tuple[int, ...]


def _encode(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def layout_chain(
    tokenizer: Any, prompt: str, steps: Sequence[str], separator: str, max_length: int | None = None
) -> Layout:
    """The chain's tokens and label positions, exactly as TRL 1.13.0's `tokenize_row` lays them out."""
    ids = _encode(tokenizer, prompt)
    if tokenizer.bos_token_id is not None:
        ids = [tokenizer.bos_token_id, *ids]
    separator_ids = _encode(tokenizer, separator)
    positions = []
    for step in steps:
        ids += _encode(tokenizer, step) + separator_ids
        positions.append(len(ids) - 1)
    if max_length is not None:
        ids = ids[:max_length]
        positions = [p for p in positions if p < max_length]
    return Layout(tuple(ids), tuple(positions))


def alignment_problem(
    tokenizer: Any, prompt: str, steps: Sequence[str], separator: str, max_length: int | None = None
) -> str | None:
    """Why this chain's labels would not land one per step on its own separator, or None when they do."""
    if not steps:
        return "no steps"
    if not _encode(tokenizer, separator):
        return f"step separator {separator!r} encodes to no tokens: labels fall on the steps' own tokens"
    for index, step in enumerate(steps):
        if separator in step:
            return f"step {index} contains the step separator {separator!r}: split on it, it is several steps"
    laid = layout_chain(tokenizer, prompt, steps, separator, max_length)
    if len(laid.positions) < len(steps):
        return (
            f"truncation keeps {len(laid.positions)} of {len(steps)} labelled steps (max_length={max_length})"
        )
    running = _encode(tokenizer, "".join(step + separator for step in steps))
    step_by_step = [
        token for step in steps for token in _encode(tokenizer, step) + _encode(tokenizer, separator)
    ]
    if running != step_by_step:
        return (
            f"the steps and the separator {separator!r} tokenize differently as running text than step by "
            "step: a model scored on the running text reads its step ends elsewhere"
        )
    return None


@dataclass(frozen=True)
class Example:
    """A row ready for the model: ids, label positions, and per position the hard target and soft value."""

    chain_id: str
    input_ids: tuple[int, ...]
    positions: tuple[int, ...]
    labels: tuple[bool, ...]
    values: tuple[float, ...] | None = None


@dataclass(frozen=True)
class Skipped:
    chain_id: str
    reason: str


def example_of(row: Any, tokenizer: Any, separator: str, max_length: int | None = None) -> Example:
    """One row (training.rows.TrainRow) laid out, without the alignment check: for a row that passed it."""
    laid = layout_chain(tokenizer, row.prompt, row.steps, separator, max_length)
    return Example(row.chain_id, laid.input_ids, laid.positions, row.labels, row.values)


def prepare(
    rows: Sequence[Any], tokenizer: Any, separator: str, max_length: int | None = None
) -> tuple[list[Example], list[Skipped]]:
    """Lay out every row (training.rows.TrainRow); a row that fails the alignment check is skipped, by id."""
    examples, skipped = [], []
    for row in rows:
        reason = alignment_problem(tokenizer, row.prompt, row.steps, separator, max_length)
        if reason is not None:
            skipped.append(Skipped(row.chain_id, reason))
            continue
        examples.append(example_of(row, tokenizer, separator, max_length))
    return examples, skipped
