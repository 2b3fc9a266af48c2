"""What the rollout stage needs to know about one chain, and nothing more.

The rollout stage does not read Chain/Step records: it gets the text that the engine saw (the rendered
prompt), the chain's text, where each step ends, and the chain's own graded outcome. That keeps the value
estimation pure and lets the flow build the items from whatever segmentation it used.
"""

from __future__ import annotations

from dataclasses import dataclass

from prm_factory.schemas.records import Problem


@dataclass(frozen=True)
class RolloutItem:
    """One chain to estimate step values for.

    Attributes:
        chain_id: the chain's stable id; copied to its `ChainValues`.
        problem: the problem the chain answers; passed to the grader with every rollout.
        prompt: the chat-templated prompt, ready for the assistant's reply (what produced the chain).
        chain_text: the assistant's reply, the chain itself.
        step_ends: `chain_text[:step_ends[i]]` is the prefix up to and including step i; strictly increasing.
        outcome_correct: the chain's own graded outcome; None when it could not be judged (unparsed,
            timed out, infrastructure failure): then the last step gets no value.

    The engine continues step i from `prompt + prefix(i) + "\\n"`, and the grader sees
    `prefix(i) + "\\n" + rollout_text`, i.e. a complete solution text as if the model had written it whole.
    """

    chain_id: str
    problem: Problem
    prompt: str
    chain_text: str
    step_ends: tuple[int, ...]
    outcome_correct: bool | None

    def __post_init__(self) -> None:
        ends = self.step_ends
        if any(b <= a for a, b in zip(ends, ends[1:], strict=False)):
            raise ValueError(f"{self.chain_id}: step_ends must be strictly increasing, got {ends}")
        if ends and (ends[0] <= 0 or ends[-1] > len(self.chain_text)):
            raise ValueError(
                f"{self.chain_id}: step_ends {ends} outside the chain text ({len(self.chain_text)})"
            )

    @property
    def n_steps(self) -> int:
        return len(self.step_ends)

    def prefix(self, step_index: int) -> str:
        """The chain text up to and including step `step_index`."""
        return self.chain_text[: self.step_ends[step_index]]

    def rollout_prompt(self, step_index: int) -> str:
        """What the engine continues from for a rollout after step `step_index`."""
        return self.prompt + self.prefix(step_index) + "\n"

    def graded_text(self, step_index: int, rollout_text: str) -> str:
        """The full solution a rollout stands for: the prefix, a line break, and what the engine wrote."""
        return self.prefix(step_index) + "\n" + rollout_text
