"""verl, against its call shapes (no verl in the test environment: docs/rewards.md; inside verl 0.4.1,
where it is installed: test_verl_library.py): `compute_score` as its reward managers call it,
and the step reward manager over the tensors and numpy object arrays a `DataProto` holds, each step's
reward on its last token."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from prm_factory.reward.verl_reward import StepRewardManager, compute_score

QUESTION = "Tom has 48 apples and gives half away. How many are left?"
SOLUTION = "48/2=<<48/2=24>>24\n#### 24"


def test_compute_score_as_verls_reward_managers_call_it(monkeypatch, scorer) -> None:
    import prm_factory.reward.verl_reward as verl_reward

    monkeypatch.setattr(verl_reward, "score_batch", _with(scorer, verl_reward.score_batch))
    result = compute_score(
        data_source="openai/gsm8k",
        solution_str="Half of 48 is 48/2 = 25.\n\nThe answer is 25.",
        ground_truth="24",
        extra_info={"split": "train", "index": 0, "question": QUESTION, "answer": SOLUTION},
    )
    assert set(result) == {"score", "step_scores", "first_error", "outcome", "status"}
    assert result["first_error"] == 0 and result["outcome"] == "incorrect" and len(result["step_scores"]) == 2
    right = compute_score(
        "openai/gsm8k", "Half of 48 is 48/2 = 24.\n\nThe answer is 24.", "24", {"question": QUESTION}
    )
    assert right["score"] > result["score"] and right["first_error"] == -1


@dataclass
class DataProtoShape:
    """What verl's reward managers read of a DataProto: `batch` (tensors by key) and `non_tensor_batch`
    (numpy object arrays by key)."""

    batch: dict
    non_tensor_batch: dict


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from prm_factory.sampling.model_prep import prepare_default_model

    return AutoTokenizer.from_pretrained(prepare_default_model())


def test_the_step_manager_puts_each_steps_reward_on_its_last_token(tokenizer, scorer) -> None:
    import torch

    responses = [
        "Half of 48 is 48/2 = 25.\n\nThe answer is 25.",
        "Half of 48 is 48/2 = 24.\n\nThe answer is 24.",
    ]
    prompt_ids = tokenizer(QUESTION, add_special_tokens=False)["input_ids"]
    encoded = [tokenizer(r, add_special_tokens=False)["input_ids"] for r in responses]
    width = max(map(len, encoded)) + 3  # right padding, as verl's responses
    pad = tokenizer.eos_token_id
    batch = {
        "prompts": torch.tensor([prompt_ids, prompt_ids]),
        "responses": torch.tensor([ids + [pad] * (width - len(ids)) for ids in encoded]),
        "attention_mask": torch.tensor(
            [[1] * len(prompt_ids) + [1] * len(ids) + [0] * (width - len(ids)) for ids in encoded]
        ),
    }
    non_tensor = {
        "data_source": np.array(["openai/gsm8k"] * 2, dtype=object),
        "reward_model": np.array([{"ground_truth": "24", "style": "rule"}] * 2, dtype=object),
        "extra_info": np.array([{"answer": SOLUTION}] * 2, dtype=object),
    }
    manager = StepRewardManager(tokenizer, num_examine=0, scorer=scorer)
    out = manager(DataProtoShape(batch, non_tensor), return_dict=True)
    rewards = out["reward_tensor"]
    assert rewards.shape == batch["responses"].shape
    first_step_end = len(tokenizer("Half of 48 is 48/2 = 25.", add_special_tokens=False)["input_ids"]) - 1
    assert rewards[0, first_step_end] < -0.5  # the wrong step's penalty sits on its last token
    assert rewards[1, len(encoded[1]) - 1] == pytest.approx(1.0)  # the right answer's outcome, last token
    assert rewards[1].sum() == pytest.approx(1.0) and rewards[0, len(encoded[0]) :].abs().sum() == 0
    assert out["reward_extra_info"]["first_error"] == [0, -1]


def _with(scorer, score_batch):
    return lambda items, **kwargs: score_batch(items, scorer=scorer, **kwargs)
