"""Does every labelled step of a TRL export land on exactly one label position after the trainer's own
tokenization?

TRL's `PRMTrainer` tokenizes each step on its own, appends the tokens of `step_separator`, puts the step's
label on the last of them and -100 everywhere else, then truncates to `max_completion_length` and
`max_length`. Nothing in it complains when that goes wrong; users see it as a PRM that learns nothing.
What goes wrong, and what this check reports per row (by chain id):

* truncation cuts trailing steps: fewer label positions than labelled steps;
* a label lands anywhere but at the end of its step's separator, or holds another value (e.g. an empty
  separator with an empty step shifts every later label);
* a step contains the separator: a reader that splits the text on it (inference, other trainers) sees a
  different number of steps than the labels;
* the separator tokenizes two ways: the steps joined as running text give other tokens than the trainer's
  step-by-step concatenation (`"\\n\\n"` is one token, `"\\n"` + `"\\n"` two), so a model scored on the
  running text reads its step ends at other positions than it was trained on.

The row is tokenized by `PRMTrainer.tokenize_row` itself (trl 1.13.0), with `PRMConfig`'s defaults unless
given, so the check tracks the trainer rather than a copy of it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

IGNORED = -100
"""The label id PyTorch's cross-entropy (and so the trainer) skips."""


@dataclass(frozen=True)
class TrainerSettings:
    """The PRMConfig fields that decide tokenization; None takes PRMConfig's own default."""

    step_separator: str | None = None
    max_length: int | None = None
    max_completion_length: int | None = None

    def resolved(self) -> TrainerSettings:
        config = _prm_config_defaults()
        return TrainerSettings(
            step_separator=config["step_separator"] if self.step_separator is None else self.step_separator,
            max_length=config["max_length"] if self.max_length is None else self.max_length,
            max_completion_length=self.max_completion_length,
        )


@dataclass(frozen=True)
class RowProblem:
    row_id: str
    reason: str


class TrlUnavailable(RuntimeError):
    pass


def _trl_prm() -> Any:
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    try:
        from trl.experimental import prm
    except ImportError as error:
        raise TrlUnavailable(
            f"the tokenizer check runs TRL's PRMTrainer tokenization: install trl==1.13.0 "
            f"(pip install -e '.[train]'): {error}"
        ) from error
    return prm


def _prm_config_defaults() -> dict[str, Any]:
    fields = _trl_prm().PRMConfig.__dataclass_fields__
    return {name: fields[name].default for name in ("step_separator", "max_length")}


def load_tokenizer(model_dir: str | Path) -> Any:
    """The checkpoint's tokenizer, as a training script loads it (no hub access)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoTokenizer

    path = Path(model_dir).expanduser()
    if not path.is_dir():
        raise FileNotFoundError(f"tokenizer folder not found: {path}")
    return AutoTokenizer.from_pretrained(path)


def check_row(row: dict, tokenizer: Any, settings: TrainerSettings) -> str | None:
    """Why this row (prompt, completions, labels) trains misaligned, or None when every step is fine."""
    settings = settings.resolved()
    separator = settings.step_separator or ""
    steps: Sequence[str] = row["completions"]
    if any(label is None for label in row["labels"]):
        return f"step {list(row['labels']).index(None)} has no label"
    expected = [int(label) for label in row["labels"]]
    if len(steps) != len(expected):
        return f"{len(steps)} steps but {len(expected)} labels"
    separator_ids = tokenizer.encode(separator, add_special_tokens=False)
    if not separator_ids:
        return f"step separator {separator!r} encodes to no tokens: labels fall on the steps' own tokens"
    for index, step in enumerate(steps):
        if separator in step:
            return (
                f"step {index} contains the step separator {separator!r}: split on it, the row has "
                "more steps than labels"
            )
    tokenized = _trl_prm().PRMTrainer.tokenize_row(
        row,
        tokenizer,
        separator,
        settings.max_length,
        settings.max_completion_length,
        train_on_last_step_only=False,
        is_eval=False,
    )
    input_ids, labels = tokenized["input_ids"], tokenized["labels"]
    positions = [i for i, label in enumerate(labels) if label != IGNORED]
    if len(positions) < len(expected):
        return (
            f"truncation keeps {len(positions)} of {len(expected)} labelled steps "
            f"({len(input_ids)} tokens kept; max_length={settings.max_length}, "
            f"max_completion_length={settings.max_completion_length})"
        )
    if len(positions) > len(expected):
        return f"{len(positions)} label positions for {len(expected)} labelled steps"
    width = len(separator_ids)
    for index, position in enumerate(positions):
        if input_ids[position - width + 1 : position + 1] != separator_ids:
            return f"the label of step {index} is not on the end of its step separator (token {position})"
        if labels[position] != expected[index]:
            return f"step {index}: label {labels[position]} for the trainer, {expected[index]} in the export"
    running = tokenizer.encode("".join(step + separator for step in steps), add_special_tokens=False)
    step_by_step = [tokenizer.encode(step, add_special_tokens=False) + separator_ids for step in steps]
    if running != [token for ids in step_by_step for token in ids]:
        index = _first_divergent_step(steps, separator, step_by_step, tokenizer)
        return (
            f"step {index} and the separator {separator!r} tokenize differently as running text than "
            "step by step: a model scored on the running text reads its step ends elsewhere"
        )
    return None


def _first_divergent_step(
    steps: Sequence[str], separator: str, step_by_step: list[list[int]], tokenizer: Any
) -> int:
    expected: list[int] = []
    for index, ids in enumerate(step_by_step):
        expected += ids
        running = tokenizer.encode(
            "".join(s + separator for s in steps[: index + 1]), add_special_tokens=False
        )
        if running != expected:
            return index
    return len(steps) - 1


def check_rows(
    rows: Iterable[dict], tokenizer: Any, settings: TrainerSettings, id_column: str = "chain_id"
) -> list[RowProblem]:
    """Every misaligned row, with its id (the row number when the export has no id column)."""
    problems = []
    for number, row in enumerate(rows):
        reason = check_row(row, tokenizer, settings)
        if reason is not None:
            problems.append(RowProblem(str(row.get(id_column, f"row {number}")), reason))
    return problems


# OpenRLHF / Math-Shepherd: the label sits on the placeholder token itself, found by its id.
PLACEHOLDER_CANDIDATES: tuple[str, ...] = ("ки", "¶", "§", "ſ", "⊕", "<step>", "|")
"""Step tags tried when the configured one is not a single token, to name one that is."""


def single_token_id(text: str, tokenizer: Any) -> int | None:
    """The id of `text` when it encodes to exactly one token (OpenRLHF's `convert_token_to_id` asserts
    this for the placeholder and each reward token), else None."""
    ids = tokenizer.encode(text, add_special_tokens=False)
    return ids[0] if len(ids) == 1 else None


def placeholder_problem(placeholder: str, tokenizer: Any) -> str | None:
    """Why `placeholder` cannot tag steps for this tokenizer (None when it can), naming tags that could.

    It must be one token on its own, and stay that token after a space and a step's last word (the
    exports write `step text ки`): otherwise the placeholder id never occurs in the input, and every
    label is silently dropped.
    """
    if _usable_tag(placeholder, tokenizer):
        return None
    if single_token_id(placeholder, tokenizer) is not None:
        reason = f"placeholder {placeholder!r} is one token alone but merges with the text around it"
    else:
        n = len(tokenizer.encode(placeholder, add_special_tokens=False))
        reason = f"placeholder {placeholder!r} encodes to {n} tokens (OpenRLHF needs exactly one)"
    added = [  # tokens the tokenizer keeps whole wherever they stand, and that no chat turn uses
        t.content
        for t in getattr(tokenizer, "added_tokens_decoder", {}).values()
        if t.content not in tokenizer.all_special_tokens
    ]
    candidates = [*PLACEHOLDER_CANDIDATES, *added]
    usable = [c for c in candidates if c != placeholder and _usable_tag(c, tokenizer)][:5]
    hint = f"; single-token tags for this tokenizer: {', '.join(map(repr, usable))}" if usable else ""
    return f"{reason}: pass --placeholder TAG{hint}"


def _usable_tag(tag: str, tokenizer: Any) -> bool:
    token = single_token_id(tag, tokenizer)
    return (
        token is not None
        and tokenizer.encode(f"so 5 {tag}\nnext", add_special_tokens=False).count(token) == 1
    )


def tag_id_after_space(tag: str, tokenizer: Any) -> int | None:
    """The one token `tag` adds after a word and a space (how the exports write it), else None.

    Math-Shepherd reads its step tag and the `+` / `-` of the label text at the same positions, so each
    must be exactly one token there, whatever the tokenizer does to a leading space.
    """
    base = tokenizer.encode("so 5", add_special_tokens=False)
    ids = tokenizer.encode(f"so 5 {tag}", add_special_tokens=False)
    return ids[-1] if len(ids) == len(base) + 1 and ids[: len(base)] == base else None


def check_placeholder_row(
    row: dict, fmt: str, placeholder: str, tokenizer: Any, max_length: int | None = None
) -> str | None:
    """Why an `openrlhf` / `math-shepherd` row trains misaligned (None when every step has its label).

    OpenRLHF tokenizes `input` (no special tokens, truncated at `max_length`), finds the placeholder's id
    (the placeholder encoded alone must be one token) and puts the labels there in order, cutting the
    labels to the placeholders found; Math-Shepherd reads the `label` text's token at each position of the
    tag in `input`. Reported: a placeholder lost to truncation or merged with its neighbours, extra
    placeholders in a step's own text, a reward token that is not one token, and (Math-Shepherd) label
    text that tokenizes out of step with the input.
    """
    if fmt == "openrlhf":
        token = single_token_id(placeholder, tokenizer)
        if token is None:
            return placeholder_problem(placeholder, tokenizer)
    else:
        token = tag_id_after_space(placeholder, tokenizer)
        if token is None:
            usable = [c for c in PLACEHOLDER_CANDIDATES if tag_id_after_space(c, tokenizer) is not None]
            hint = f" (one token here: {', '.join(map(repr, usable))})" if usable else ""
            return f"step tag {placeholder!r} is not one token after a space: pass --placeholder TAG{hint}"
    ids = tokenizer.encode(row["input"], add_special_tokens=False)
    kept = ids if max_length is None else ids[:max_length]
    found = [i for i, t in enumerate(kept) if t == token]
    labels = row["value"] if fmt == "openrlhf" else None
    expected = len(labels) if labels is not None else row["input"].count(placeholder)
    if len(found) > expected:
        return f"{len(found)} placeholder tokens for {expected} labelled steps: a step's text holds the tag"
    if len(found) < expected:
        if sum(1 for t in ids if t == token) > len(found):
            return (
                f"truncation keeps {len(found)} of {expected} labelled steps "
                f"({len(kept)} of {len(ids)} tokens; max_length={max_length})"
            )
        return f"only {len(found)} of {expected} placeholders tokenize as {placeholder!r}: labels are dropped"
    if fmt == "openrlhf":
        for value in labels or ():
            if isinstance(value, str) and single_token_id(value, tokenizer) is None:
                return f"reward token {value!r} is not a single token"
        return None
    label_ids = tokenizer.encode(row["label"], add_special_tokens=False)
    if len(label_ids) != len(ids):
        return (
            f"the label text tokenizes to {len(label_ids)} tokens, the input to {len(ids)}: "
            "labels read at the placeholder positions are shifted"
        )
    rewards = {tag_id_after_space("+", tokenizer), tag_id_after_space("-", tokenizer)} - {None}
    for index, position in enumerate(found):
        if label_ids[position] not in rewards:
            return f"step {index}: the label text has no '+' / '-' token at the placeholder's position"
    return None


def check_placeholder_rows(
    rows: Iterable[dict],
    fmt: str,
    placeholder: str,
    tokenizer: Any,
    max_length: int | None = None,
    id_column: str = "chain_id",
) -> list[RowProblem]:
    """Every misaligned row of an `openrlhf` / `math-shepherd` export, with its id."""
    problems = []
    for number, row in enumerate(rows):
        reason = check_placeholder_row(row, fmt, placeholder, tokenizer, max_length)
        if reason is not None:
            problems.append(RowProblem(str(row.get(id_column, f"row {number}")), reason))
    return problems
