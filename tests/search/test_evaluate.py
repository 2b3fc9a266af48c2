"""The search evaluation end to end on a scripted sampler and stand-in scorers: grading, voting keys,
scoring, beam search and the table agree with what the chains say (no engine, no model)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from prm_factory.sampling.protocol import Generation, GenerationParams
from prm_factory.schemas.records import Problem
from prm_factory.search.evaluate import budgets_up_to, evaluate_search, vote_key
from prm_factory.training.step_scorer import StepScores

Q1 = Problem("q1", "test", "math", "Ana has 2 apples and gets 2 more. How many?", reference_answer="4")
Q2 = Problem("q2", "test", "math", "Bo has 3 pens and gets 3 more. How many?", reference_answer="6")

CHAINS = {
    Q1.text: ["2 + 2 = 4\nThe answer is 4.", "2 + 2 = 5\nThe answer is 5."],
    Q2.text: ["3 + 3 = 6\nThe answer is 6.", "3 + 3 = 6\n\nThe answer is 6.0"],
}
LINES = {  # beam search on Q1: the next lines after each prefix (stop at "\n"), served in turn
    "": [("2 + 2 = 5", "\n"), ("2 + 2 = 4", "\n")],
    "2 + 2 = 4\n": [("The answer is 4.", None)],
    "2 + 2 = 5\n": [("The answer is 5.", None)],
}


class ScriptedSampler:
    model_id = "scripted"
    seed = 0

    def __init__(self) -> None:
        self.calls: list[GenerationParams] = []
        self.served: dict[str, int] = {}

    def render_chat(self, system: str | None, user: str) -> str:
        return f"<user>{user}<assistant>"

    def generate(self, prompts: Sequence[str], params: GenerationParams) -> list[list[Generation]]:
        self.calls.append(params)
        out = []
        for prompt in prompts:
            question, _, prefix = prompt.removeprefix("<user>").partition("<assistant>")
            if not params.stop:
                out.append([Generation(text, 10, "stop") for text in CHAINS[question][: params.n]])
                continue
            options = LINES[prefix] if question == Q1.text else [("The answer is 6.", None)]
            k = self.served[prompt] = self.served.get(prompt, -1) + 1
            text, stop = options[k % len(options)]
            out.append([Generation(text, 3, "stop", stop)])
        return out


class FiveIsWrong:
    """Stand-in PRM: a step mentioning 5 is wrong (0.1), any other 0.9; reads 1 token per step."""

    def score(self, chains: Sequence[tuple[str, Sequence[str]]]) -> list[StepScores]:
        return [StepScores(tuple(0.1 if "5" in s else 0.9 for s in steps), len(steps)) for _, steps in chains]


class Indifferent:
    def score(self, chains: Sequence[tuple[str, Sequence[str]]]) -> list[StepScores]:
        return [StepScores(tuple(0.5 for _ in steps), 2 * len(steps)) for _, steps in chains]


def test_vote_keys_join_equal_numbers_and_skip_chains_without_answers() -> None:
    assert vote_key("The answer is 6.") == vote_key("The answer is 6.0") == vote_key("The answer is $6")
    assert vote_key("The answer is 1/2") == vote_key("The answer is 0.5")
    assert vote_key("I do not know.") is None


def test_budgets() -> None:
    assert budgets_up_to(1) == [1] and budgets_up_to(8) == [1, 2, 4, 8]


def test_the_evaluation_grades_scores_and_tabulates_every_method() -> None:
    sampler = ScriptedSampler()
    result = evaluate_search(
        sampler,
        [Q1, Q2],
        FiveIsWrong(),
        Indifferent(),
        n=2,
        params=GenerationParams(temperature=0.7, max_tokens=64),
        beam_budgets=[2],
    )
    rows = {(r.method, r.n): r for r in result.rows}
    assert result.chain_accuracy == 0.75  # 3 of 4 chains right ("6.0" is 6)
    # Q1: a 4 and a 5 tie under majority vote (0.5); Q2: both 6 -> (0.5 + 1) / 2
    assert rows["majority vote", 2].accuracy.mean == 0.75
    assert rows["prm best-of-n (min)", 2].accuracy.mean == 1.0
    assert rows["prm best-of-n (min)", 2].vs_majority.mean == pytest.approx(0.25)
    assert rows["orm best-of-n", 2].accuracy.mean == 0.75  # indifferent: a tie on Q1
    assert rows["majority vote", 1].accuracy.mean == 0.75
    # compute: 2 chains x 10 tokens; the PRM read one token per step (2 + 2 + 2 + 2 steps over 2 problems)
    assert rows["majority vote", 2].policy_tokens == 20
    assert rows["prm best-of-n (min)", 2].scorer_tokens == 4
    assert rows["orm best-of-n", 2].scorer_tokens == 8
    # beam search at N = 2 kept "2 + 2 = 4" and found 4 on Q1, and 6 on Q2
    beam = rows["prm beam search", 2]
    assert beam.accuracy.mean == 1.0 and beam.policy_tokens > 0 and beam.scorer_tokens > 0
    assert ("prm beam search", 1) not in rows
    assert any(p.stop == ("\n",) for p in sampler.calls) and sampler.calls[0].n == 2
    saved = result.to_dict()
    assert saved["beam_budgets"] == [2] and len(saved["rows"]) == len(result.rows)
    assert "| prm beam search |" in result.markdown()


def test_without_an_orm_its_rows_are_left_out() -> None:
    result = evaluate_search(
        ScriptedSampler(), [Q1], FiveIsWrong(), None, n=2, params=GenerationParams(max_tokens=64)
    )
    assert not any("orm" in r.method for r in result.rows)
    assert {r.n for r in result.rows} == {1, 2}
