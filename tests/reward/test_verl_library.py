"""The verl adapters inside the real library, where verl is installed: verl 0.4.1 is the newest release that
installs beside this lock (0.5 to 0.8 pin numpy<2, 0.9.1 transformers<5.11 against vLLM 0.32's >=5.16.1),
and it is kept out of the test environment: it and its hydra-core 0.11.3 install a top-level `tests`
package, which shadows this repository's `tests` (a namespace package) in every spawned process, so the
suite's multiprocessing tests hang. Run these beside it (docs/rewards.md has the recipe). verl's own
`load_reward_manager` loads `compute_score` by file path as `custom_reward_function` does, and its
`NaiveRewardManager` scores a real `DataProto` with it; `StepRewardManager`, registered with verl's
`register`, is found by name, as a launcher's config names it, and writes each step's reward at the
step's last token of that `DataProto`."""

from __future__ import annotations

import numpy as np
import pytest

import prm_factory.reward.verl_reward as verl_reward

pytest.importorskip("verl", reason="verl is not in the test environment (module docstring)")

QUESTION = "Tom has 48 apples and gives half away. How many are left?"
SOLUTION = "48/2=<<48/2=24>>24\n#### 24"
WRONG = "Half of 48 is 48/2 = 25.\n\nThe answer is 25."
RIGHT = "Half of 48 is 48/2 = 24.\n\nThe answer is 24."


@pytest.fixture(autouse=True)
def shared_scorer(monkeypatch, scorer):
    batch = verl_reward.score_batch
    monkeypatch.setattr(
        verl_reward, "score_batch", lambda items, **kw: batch(items, **{"scorer": scorer, **kw})
    )


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from prm_factory.sampling.model_prep import prepare_default_model

    return AutoTokenizer.from_pretrained(prepare_default_model())


@pytest.fixture
def data(tokenizer):
    """A verl `DataProto` as its rollout leaves it: left-padded prompts, right-padded responses, the
    attention mask over both, and the non-tensor columns of verl's GSM8K preprocessing."""
    import torch
    from verl import DataProto

    prompt = tokenizer(QUESTION, add_special_tokens=False)["input_ids"]
    encoded = [tokenizer(r, add_special_tokens=False)["input_ids"] for r in (WRONG, RIGHT)]
    width = max(map(len, encoded)) + 3
    pad = tokenizer.eos_token_id
    prompts = torch.tensor([[pad] * 2 + prompt] * 2)
    responses = torch.tensor([ids + [pad] * (width - len(ids)) for ids in encoded])
    mask = torch.tensor(
        [[0] * 2 + [1] * len(prompt) + [1] * len(ids) + [0] * (width - len(ids)) for ids in encoded]
    )
    return DataProto.from_dict(
        tensors={"prompts": prompts, "responses": responses, "attention_mask": mask},
        non_tensors={
            "data_source": np.array(["openai/gsm8k"] * 2, dtype=object),
            "reward_model": np.array([{"ground_truth": "24", "style": "rule"}] * 2, dtype=object),
            "extra_info": np.array([{"question": QUESTION, "answer": SOLUTION}] * 2, dtype=object),
        },
    ), [len(ids) for ids in encoded]


def test_verls_naive_manager_scores_a_dataproto_with_compute_score_loaded_by_path(tokenizer, data) -> None:
    from omegaconf import OmegaConf
    from verl.trainer.ppo.reward import compute_reward, load_reward_manager
    from verl.workers.reward_manager import NaiveRewardManager

    config = OmegaConf.create(
        {
            "custom_reward_function": {"path": verl_reward.__file__, "name": "compute_score"},
            "reward_model": {"reward_manager": "naive"},
            "data": {"reward_fn_key": "data_source"},
        }
    )
    manager = load_reward_manager(config, tokenizer, num_examine=0)
    assert isinstance(manager, NaiveRewardManager)
    batch, lengths = data
    rewards, extra = compute_reward(batch, manager)
    # verl puts the scalar at each response's last token and logs every key compute_score returns
    assert rewards.shape == batch.batch["responses"].shape
    wrong, right = (float(rewards[i, lengths[i] - 1]) for i in range(2))
    assert wrong < right and float(rewards.sum()) == pytest.approx(wrong + right)
    assert set(extra) == {"score", "step_scores", "first_error", "outcome", "status"}
    assert extra["first_error"] == [0, -1] and extra["outcome"] == ["incorrect", "correct"]


def test_the_step_manager_registered_in_verl_writes_each_steps_reward_at_its_last_token(
    tokenizer, data
) -> None:
    from verl.trainer.ppo.reward import compute_reward
    from verl.workers.reward_manager import get_reward_manager_cls, register

    register("prm_factory_steps")(verl_reward.StepRewardManager)  # as a launcher does (again: a no-op)
    cls = get_reward_manager_cls("prm_factory_steps")
    assert cls is verl_reward.StepRewardManager
    manager = cls(tokenizer=tokenizer, num_examine=0, compute_score=None, reward_fn_key="data_source")
    batch, lengths = data
    rewards, extra = compute_reward(batch, manager)
    assert rewards.shape == batch.batch["responses"].shape
    assert extra["first_error"] == [0, -1]
    # the wrong response: a penalty at the first step's last token, nothing at its end (the answer is wrong);
    # the right one: no penalty, the outcome weight at its last token
    penalised = rewards[0].nonzero().flatten().tolist()
    assert len(penalised) == 1 and penalised[0] < lengths[0] - 1 and float(rewards[0, penalised[0]]) < -0.5
    assert (
        rewards[1].nonzero().flatten().tolist() == [lengths[1] - 1]
        and float(rewards[1, lengths[1] - 1]) == 1.0
    )
