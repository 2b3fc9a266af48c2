"""The sampling stage's one protocol: raw prompts in, n generations per prompt out."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass
from typing import Protocol


@dataclass(frozen=True)
class GenerationParams:
    n: int = 1
    temperature: float = 0.7
    top_p: float = 1.0
    max_tokens: int = 256
    stop: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Generation:
    text: str
    n_tokens: int
    finish_reason: str  # "stop" | "length" | ...
    # the stop string that ended it; None for end-of-sequence, length, or a backend that does not say
    # (a step-wise search needs it: an empty step cut at "\n" is a blank line, not the end of the chain)
    stop_reason: str | None = None


class Sampler(Protocol):
    """A text generator. Prompts are raw strings: `render_chat` applies the model's chat template, so a
    rollout can continue an assistant turn by appending the step prefix to the rendered prompt."""

    model_id: str
    seed: int

    def render_chat(self, system: str | None, user: str) -> str:
        """The model's chat template applied to one user turn, ready for the assistant's reply."""
        ...

    def generate(self, prompts: Sequence[str], params: GenerationParams) -> list[list[Generation]]:
        """`params.n` generations for each prompt, all prompts in as few engine calls as possible."""
        ...


def batch_scope(sampler: Sampler) -> AbstractContextManager[None]:
    """The sampler's scope of one stage of one chunk (`VLLMSampler.batch_scope`): its engine calls may reuse
    each other's cached prefixes, and nothing else runs on the engine meanwhile. A sampler without scopes
    (servers, stand-ins in tests) gets a scope that does nothing."""
    scope = getattr(sampler, "batch_scope", None)
    return scope() if callable(scope) else nullcontext()
