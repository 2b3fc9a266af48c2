"""TRL: the reward function inside real GRPOTrainer steps (TRL 1.13.0, CPU, a tiny random Llama with the
embedded model's tokenizer, no hub), and its reading of conversational prompts and completions."""

from __future__ import annotations

import math

from prm_factory.reward.trl_reward import ProcessReward, completion_text, prompt_text

PROMPT = "Tom has 48 apples and gives half away. How many are left?"


def test_conversational_prompts_and_completions_are_read_as_text() -> None:
    chat = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": PROMPT}]
    assert prompt_text(chat) == PROMPT
    assert completion_text([{"role": "assistant", "content": "48/2 = 24"}]) == "48/2 = 24"


def test_one_float_per_completion_with_the_answer_column(scorer) -> None:
    logged = {}
    reward = ProcessReward(scorer=scorer)
    scores = reward(
        prompts=[PROMPT, PROMPT],
        completions=["48/2 = 25. The answer is 25.", "48/2 = 24. The answer is 24."],
        completion_ids=[[1], [2]],
        answer=["24", "24"],
        log_metric=lambda name, value: logged.__setitem__(name, value),
        trainer_state=None,
    )
    assert len(scores) == 2 and scores[0] < scores[1]
    assert logged["prm_factory/unverified_rate"] == 0.0 and reward.__name__ == "prm_factory_process_reward"


def test_real_grpo_trainer_steps_call_it_and_train(tmp_path, scorer) -> None:
    import torch
    from datasets import Dataset
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    from prm_factory.sampling.model_prep import prepare_default_model

    tokenizer = AutoTokenizer.from_pretrained(prepare_default_model())
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        pad_token_id=tokenizer.eos_token_id,
    )
    model = LlamaForCausalLM(config)
    calls = []

    class Counted(ProcessReward):
        def __call__(self, prompts, completions, **kwargs):
            scores = super().__call__(prompts, completions, **kwargs)
            calls.append((len(prompts), kwargs["answer"], scores))
            return scores

    dataset = Dataset.from_list([{"prompt": f"{PROMPT} ({i})", "answer": "24"} for i in range(4)])
    args = GRPOConfig(
        output_dir=str(tmp_path),
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=8,
        max_steps=2,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        use_cpu=True,
        bf16=False,
        seed=0,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[Counted(scorer=scorer)],
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
    )
    trainer.train()
    assert calls and all(n == 2 and answers == ["24", "24"] for n, answers, _ in calls)
    assert all(isinstance(s, float) and math.isfinite(s) for _, _, scores in calls for s in scores)
    logged = [row for row in trainer.state.log_history if "rewards/prm_factory_process_reward/mean" in row]
    assert len(logged) == 2
