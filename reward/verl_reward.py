"""verl: a `compute_score` for `custom_reward_function`, and a reward manager that puts each step's reward
on the step's last token (the pattern of per-step reward managers, verl #1039).

`compute_score(data_source, solution_str, ground_truth, extra_info)` is what verl's reward managers call per
response: `ground_truth` is the reference answer; `extra_info["question"]` the prompt and
`extra_info["solution"]` (or the worked `answer` verl's GSM8K preprocessing stores) a worked solution. It
returns `{"score", "step_scores", "first_error", "outcome", "status"}`; verl logs every key beside the score.

`StepRewardManager` is shaped like verl's `NaiveRewardManager` (`__init__(tokenizer, num_examine,
compute_score=None, reward_fn_key="data_source", **kwargs)`, `__call__(data, return_dict=False)`) and fills
the `responses`-shaped reward tensor with, at the last token of each step whose verdict is `incorrect`,
`p_correct - 1` (about -1 for a sure error; 0 elsewhere: penalties only, so a policy can neither earn more by
cutting a right answer into more steps, the bias verl RFC #7244 warns of, nor lose by writing checkable
claims), plus `outcome_weight` at the response's last token when the final answer is right. Register it
with verl's `register("prm_factory_steps")` decorator in your launcher: it is a manager of verl's first
interface (`verl.workers.reward_manager`), which the PPO trainer loads up to 0.6.x; from 0.7 the trainer
builds the reward loop's managers (one float a sample), where `compute_score` is the way in
(docs/rewards.md). Both ran inside verl 0.4.1 in an environment of this lock plus verl
(tests/reward/test_verl_library.py: verl's `load_reward_manager` and `NaiveRewardManager` over a real
`DataProto`), the newest verl that installs beside it: 0.5 to 0.8 pin numpy<2 and 0.9.1
transformers<5.11, below vLLM 0.32's 5.16.1; the suite's environment leaves verl out (docs/rewards.md), so
there those tests skip and test_verl_reward.py checks the call shapes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from prm_factory.reward.scorer import DEFAULT_AGGREGATE, RewardResult, default_scorer, score_batch
from prm_factory.reward.tokens import token_ends


def _request(solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None) -> dict[str, Any]:
    info = dict(extra_info or {})
    worked = info.get("solution") or info.get("answer")
    return {
        "prompt": str(info.get("question") or info.get("prompt") or ""),
        "response": solution_str,
        "answer": None if ground_truth is None else str(ground_truth),
        "solution": None if worked is None else str(worked),
    }


def _as_dict(result: RewardResult) -> dict[str, Any]:
    return {
        "score": result.score if result.status == "ok" else 0.0,  # a hang earns nothing
        "step_scores": result.step_scores,
        "first_error": -1 if result.first_error is None else result.first_error,
        "outcome": result.outcome,
        "status": result.status,
    }


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """verl's `custom_reward_function`: the response's process reward (min over steps by default;
    `aggregate=` in `custom_reward_function.reward_kwargs` picks another)."""
    aggregate = str(kwargs.get("aggregate", DEFAULT_AGGREGATE))
    (result,) = score_batch([_request(solution_str, ground_truth, extra_info)], aggregate=aggregate)
    return _as_dict(result)


class StepRewardManager:
    """A verl reward manager writing each step's reward at its last token (module docstring)."""

    def __init__(
        self,
        tokenizer: Any,
        num_examine: int = 0,
        compute_score: Any = None,
        reward_fn_key: str = "data_source",
        outcome_weight: float = 1.0,
        **kwargs: Any,
    ) -> None:
        self.tokenizer = tokenizer
        self.num_examine = num_examine
        self.reward_fn_key = reward_fn_key
        self.outcome_weight = outcome_weight
        self.scorer = kwargs.get("scorer") or default_scorer()

    def __call__(self, data: Any, return_dict: bool = False) -> Any:
        import torch

        if "rm_scores" in data.batch.keys():  # scores a reward model already wrote (verl's convention)
            scores = data.batch["rm_scores"]
            return {"reward_tensor": scores, "reward_extra_info": {}} if return_dict else scores
        responses = data.batch["responses"]
        prompt_length = data.batch["prompts"].shape[-1]
        rewards = torch.zeros_like(responses, dtype=torch.float32)
        texts, lengths, items = [], [], []
        for i in range(responses.shape[0]):
            mask = data.batch["attention_mask"][i]
            length = int(mask[prompt_length:].sum())
            prompt_ids = data.batch["prompts"][i][-int(mask[:prompt_length].sum()) :]
            text = self.tokenizer.decode(responses[i][:length], skip_special_tokens=True)
            info = _row(data.non_tensor_batch.get("extra_info"), i) or {}
            if not info.get("question"):
                info = {**info, "question": self.tokenizer.decode(prompt_ids, skip_special_tokens=True)}
            truth = (_row(data.non_tensor_batch.get("reward_model"), i) or {}).get("ground_truth")
            texts.append(text)
            lengths.append(length)
            items.append(_request(text, truth, info))
        results = score_batch(items, scorer=self.scorer)
        extra: dict[str, list[Any]] = defaultdict(list)
        for i, (text, length, result) in enumerate(zip(texts, lengths, results, strict=True)):
            for key, value in _as_dict(result).items():
                extra[key].append(value)
            if length == 0 or result.status != "ok":
                continue
            ends = token_ends(self.tokenizer, text, [step.end for step in result.steps])
            for step, end in zip(result.steps, ends, strict=True):
                if step.verdict == "incorrect" and step.p_correct is not None and end is not None:
                    rewards[i, min(end, length - 1)] += step.p_correct - 1.0
            if result.outcome == "correct":
                rewards[i, length - 1] += self.outcome_weight
        if return_dict:
            return {"reward_tensor": rewards, "reward_extra_info": dict(extra)}
        return rewards


def _row(column: Any, index: int) -> Any:
    """Row `index` of a non-tensor column (verl keeps them as numpy object arrays); None without it."""
    if column is None:
        return None
    value = column[index]
    return dict(value) if isinstance(value, Mapping) else value
