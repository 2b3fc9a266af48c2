"""Test stand-ins: a sampler that replays recorded rollout outcomes, and the grader that reads them.

Not a real engine. `ReplaySampler` returns, for each rollout prompt, the outcomes recorded for that prefix
in order (consumed across calls), as generations whose text says how they grade; `replay_grade` reads
that back. It records every `generate` call so tests can count engine calls and see their batches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from prm_factory.rollouts.items import RolloutItem
from prm_factory.sampling.protocol import Generation, GenerationParams
from prm_factory.schemas.records import Problem
from prm_factory.verifiers.protocol import Verdict

CORRECT = "REPLAY-OUTCOME: correct"
INCORRECT = "REPLAY-OUTCOME: incorrect"
TIMEOUT = "REPLAY-OUTCOME: timeout"  # a recorded None: the grader could not judge the rollout
TOKENS_PER_ROLLOUT = 10

PROBLEM = Problem(
    problem_id="p-1", source="recorded", domain="math", text="What is 2 + 3?", reference_answer="5"
)


def make_item(
    chain_id: str, steps: Sequence[str], outcome_correct: bool | None, prompt: str | None = None
) -> RolloutItem:
    """A recorded chain: steps joined by line breaks; the prompt is unique to the chain unless given."""
    text = "\n".join(steps)
    ends, pos = [], 0
    for step in steps:
        pos += len(step)
        ends.append(pos)
        pos += 1
    return RolloutItem(
        chain_id, PROBLEM, prompt or f"<prompt {chain_id}>", text, tuple(ends), outcome_correct
    )


@dataclass
class ReplaySampler:
    """Replays `recorded[(chain_id, step_index)]` outcomes for the matching rollout prompts."""

    items: Sequence[RolloutItem]
    recorded: Mapping[tuple[str, int], Sequence[bool | None]]
    model_id: str = "replay"
    seed: int = 0
    calls: list[tuple[list[str], int]] = field(default_factory=list)
    _cursor: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        by_id = {item.chain_id: item for item in self.items}
        self._by_prompt = {by_id[c].rollout_prompt(s): list(o) for (c, s), o in self.recorded.items()}

    def render_chat(self, system: str | None, user: str) -> str:
        return f"<user>{user}</user>"

    def generate(self, prompts: Sequence[str], params: GenerationParams) -> list[list[Generation]]:
        self.calls.append((list(prompts), params.n))
        out = []
        for prompt in prompts:
            start = self._cursor.get(prompt, 0)
            outcomes = self._by_prompt[prompt][start : start + params.n]
            if len(outcomes) < params.n:
                raise AssertionError(f"recorded outcomes exhausted for {prompt!r}")
            self._cursor[prompt] = start + params.n
            out.append(
                [
                    Generation(
                        TIMEOUT if ok is None else CORRECT if ok else INCORRECT, TOKENS_PER_ROLLOUT, "stop"
                    )
                    for ok in outcomes
                ]
            )
        return out

    @property
    def rollouts_drawn(self) -> int:
        return sum(len(prompts) * n for prompts, n in self.calls)


def replay_grade(problem: Problem, text: str) -> Verdict:
    if text.endswith(CORRECT):
        return Verdict("correct", "replayed")
    if text.endswith(INCORRECT):
        return Verdict("incorrect", "replayed")
    if text.endswith(TIMEOUT):
        return Verdict("timeout", "replayed: the grader ran out of time")
    return Verdict("unparsed", "not a replayed rollout")
