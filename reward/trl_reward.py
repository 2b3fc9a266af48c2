"""TRL: a `reward_funcs` callable for GRPOTrainer (and RLOO, which calls reward functions the same way).

TRL calls `func(prompts=..., completions=..., completion_ids=..., **columns)` once per batch, with every
dataset column as a list beside them (`answer`, `solution`, ...), plus `trainer_state`, `log_extra` and
`log_metric`; it wants one float per completion (None becomes NaN, which TRL leaves out of the mean). TRL
has no per-step reward channel (its `reward_funcs` return one float per completion, huggingface/trl#3090),
so the steps reach it as the aggregated scalar; the first error and the share of timed-out responses are
logged beside it.

>>> from prm_factory.reward.trl_reward import ProcessReward                       # doctest: +SKIP
>>> trainer = GRPOTrainer(model, reward_funcs=[ProcessReward(aggregate="min")], ...)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from prm_factory.reward.labelling import DEFAULT_SOURCES
from prm_factory.reward.scorer import DEFAULT_AGGREGATE, RewardScorer, default_scorer, score_batch


def completion_text(completion: Any) -> str:
    """A completion as text: TRL passes a string, or for conversational data a list of messages (the
    assistant's contents joined)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence):
        return "".join(str(m.get("content", "")) for m in completion if isinstance(m, dict))
    return str(completion)


def prompt_text(prompt: Any) -> str:
    """A prompt as text: the last user message of a conversational prompt."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence):
        users = [m for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
        return str((users or list(prompt) or [{}])[-1].get("content", ""))
    return str(prompt)


class ProcessReward:
    """A TRL reward function: the factory's step checks aggregated into one float per completion.

    `answer_column` / `solution_column` name the dataset columns holding the reference answer and a worked
    solution (absent columns: not used). `unverified` is the reward of a response the checks could not
    finish (timed out): None (NaN to TRL, left out of the group's mean) by default, so a hang earns nothing.
    """

    def __init__(
        self,
        *,
        aggregate: str = DEFAULT_AGGREGATE,
        sources: Sequence[str] = DEFAULT_SOURCES,
        answer_column: str = "answer",
        solution_column: str = "solution",
        unverified: float | None = None,
        scorer: RewardScorer | None = None,
        name: str = "prm_factory_process_reward",
    ) -> None:
        self.aggregate = aggregate
        self.sources = tuple(sources)
        self.answer_column = answer_column
        self.solution_column = solution_column
        self.unverified = unverified
        self.scorer = scorer
        self.__name__ = name  # TRL names the reward's logged column by it

    def __call__(
        self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any
    ) -> list[float | None]:
        answers = kwargs.get(self.answer_column) or [None] * len(prompts)
        solutions = kwargs.get(self.solution_column) or [None] * len(prompts)
        items = [
            {
                "prompt": prompt_text(prompt),
                "response": completion_text(completion),
                "answer": None if answer is None else str(answer),
                "solution": None if solution is None else str(solution),
                "sources": self.sources,
            }
            for prompt, completion, answer, solution in zip(
                prompts, completions, answers, solutions, strict=True
            )
        ]
        results = score_batch(items, aggregate=self.aggregate, scorer=self.scorer or default_scorer())
        log_metric: Callable[[str, float], None] | None = kwargs.get("log_metric")
        if log_metric is not None and results:
            log_metric(
                "prm_factory/first_error_rate", sum(r.first_error is not None for r in results) / len(results)
            )
            log_metric("prm_factory/unverified_rate", sum(r.status != "ok" for r in results) / len(results))
        return [r.score if r.status == "ok" else self.unverified for r in results]
