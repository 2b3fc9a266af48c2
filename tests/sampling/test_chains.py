"""Drawing chains (sampling/chains.py) with the prompts of sampling/prompts.py, on a scripted sampler: one
batched engine call for every problem, n chains each, in order."""

from __future__ import annotations

from collections.abc import Sequence

from prm_factory.sampling.chains import draw_chains
from prm_factory.sampling.prompts import (
    CODE_SYSTEM_PROMPT,
    MATH_SYSTEM_PROMPT,
    code_user_prompt,
    math_user_prompt,
)
from prm_factory.sampling.protocol import Generation, GenerationParams
from prm_factory.schemas.records import Problem


class Scripted:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def render_chat(self, system: str | None, user: str) -> str:
        return f"<system>{system}</system><user>{user}</user>"

    def generate(self, prompts: Sequence[str], params: GenerationParams) -> list[list[Generation]]:
        self.calls.append(list(prompts))
        return [[Generation(f"{p[-12:]}#{i}", 3, "stop") for i in range(params.n)] for p in prompts]


PROBLEMS = [Problem("p1", "t", "math", "  What is 2 + 2?\n"), Problem("p2", "t", "math", "What is 3 * 3?")]


def test_n_chains_per_problem_in_one_call():
    sampler = Scripted()
    chains = draw_chains(sampler, PROBLEMS, GenerationParams(n=3), MATH_SYSTEM_PROMPT, math_user_prompt)
    assert len(sampler.calls) == 1 and len(sampler.calls[0]) == 2
    assert [(c.problem.problem_id, c.sample_index) for c in chains] == [
        ("p1", 0), ("p1", 1), ("p1", 2), ("p2", 0), ("p2", 1), ("p2", 2),
    ]  # fmt: skip
    assert chains[0].prompt == sampler.calls[0][0] and chains[0].generation.text.endswith("#0")
    assert chains[3].prompt != chains[0].prompt


def test_prompts_ask_for_the_shapes_the_readers_expect():
    assert math_user_prompt("  What is 2 + 2?\n") == "What is 2 + 2?"
    assert "The answer is N." in MATH_SYSTEM_PROMPT and "```python" in CODE_SYSTEM_PROMPT
    code = code_user_prompt("def f(x):\n    '''Double x.'''\n")
    assert code.startswith("Write the Python function described below.") and code.endswith("'''Double x.'''")
    assert "Write the Python function" not in math_user_prompt("def f(x): ...")
