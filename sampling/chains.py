"""Sample reasoning chains for problems: render prompts, draw n chains per prompt in one engine call."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from prm_factory.sampling.protocol import Generation, GenerationParams, Sampler
from prm_factory.schemas.records import Problem


@dataclass(frozen=True)
class DrawnChain:
    problem: Problem
    prompt: str
    sample_index: int
    generation: Generation


def draw_chains(
    sampler: Sampler,
    problems: Sequence[Problem],
    params: GenerationParams,
    system_prompt: str,
    user_prompt: Callable[[str], str],
) -> list[DrawnChain]:
    """`params.n` chains per problem; every prompt goes to the engine in one batched call."""
    prompts = [sampler.render_chat(system_prompt, user_prompt(p.text)) for p in problems]
    generations = sampler.generate(prompts, params)
    return [
        DrawnChain(problem, prompt, index, generation)
        for problem, prompt, per_prompt in zip(problems, prompts, generations, strict=True)
        for index, generation in enumerate(per_prompt)
    ]
