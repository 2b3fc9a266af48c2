"""The PRM scorer reads a chain where TRL's PRM trainer put the labels, one score per step, batch-invariant.

A tiny random Llama with the embedded model's tokenizer stands in for a trained PRM: what is checked is the
layout and the reading, not what the model learnt.
"""

from __future__ import annotations

import pytest

from prm_factory.training.step_scorer import IGNORED, StepScorer

PROMPT = "Ana has 12 marbles. She buys 5 more. How many marbles does she have?"
STEPS = ["Ana starts with 12 marbles.", "12 + 5 = 17", "The answer is 17."]


@pytest.fixture(scope="module")
def tiny_prm(tmp_path_factory, tiny_token_classifier):
    return tiny_token_classifier(tmp_path_factory.mktemp("tiny-prm"))


def test_layout_is_the_trainers_own(tiny_prm) -> None:
    from trl.experimental.prm import PRMTrainer

    scorer = StepScorer(tiny_prm, batch_size=2)
    ids, positions = scorer.layout(PROMPT, STEPS)
    row = PRMTrainer.tokenize_row(
        {"prompt": PROMPT, "completions": STEPS, "labels": [True, False, True]},
        scorer._tokenizer,
        "\n",
        None,
        None,
        False,
        False,
    )
    assert ids == row["input_ids"]
    assert positions == [i for i, label in enumerate(row["labels"]) if label != IGNORED]
    # each position is the separator closing its step
    assert [scorer._tokenizer.decode(ids[p]) for p in positions] == ["\n"] * 3


def test_one_score_per_step_and_batching_does_not_change_them(tiny_prm) -> None:
    scorer = StepScorer(tiny_prm, batch_size=4)
    chains = [(PROMPT, STEPS), ("Short?", ["1 + 1 = 2"]), ("Nothing.", []), (PROMPT, STEPS[:2])]
    together = scorer.score(chains)
    alone = [StepScorer(tiny_prm, batch_size=1).score([chain])[0] for chain in chains]
    assert [len(s.scores) for s in together] == [3, 1, 0, 2]
    assert together[2].tokens == 0
    assert together[0].tokens == len(scorer.layout(PROMPT, STEPS)[0])
    for batched, single in zip(together, alone, strict=True):
        assert batched.scores == pytest.approx(single.scores, abs=1e-5)
        assert all(0.0 < s < 1.0 for s in batched.scores)
    # a prefix's step scores are the full chain's first scores (causal model, same layout)
    assert together[3].scores == pytest.approx(together[0].scores[:2], abs=1e-5)


def test_a_checkpoint_that_is_not_two_label_is_refused(tmp_path, tiny_token_classifier) -> None:
    tiny_token_classifier(tmp_path, num_labels=3)
    with pytest.raises(ValueError, match="2-label"):
        StepScorer(tmp_path)
