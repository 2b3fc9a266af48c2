"""Step-level beam search guided by a PRM, over any `Sampler`.

Why: best-of-N spends its whole budget before the PRM looks; a beam search lets the PRM prune wrong
prefixes early and spend the same budget on continuing the good ones (Snell et al. 2024, "Scaling LLM
test-time compute"; HF search-and-learn). At budget N with `expansions` M per beam: the first step is
sampled N times, and after every step the `N // M` best unfinished prefixes (by the PRM's score of their
last step) are each continued M times, so every round samples at most N steps, as N independent chains
would. A step is one line: generation stops at "\\n" (the separator the PRM was trained with). A beam ends
at end-of-sequence, at the token cap (the chains' own `max_tokens`, counted over the whole beam), or after
`max_steps` lines. Once `N // M` beams have ended, or no unfinished beam is left, the search returns the
ended beam (or, if none ended, the best unfinished one) with the highest last-step score.

A generation cut at "\\n" with no text is a blank line between steps: it is kept in the text and the beam
goes on. That needs the backend to report the stop string (`Generation.stop_reason`); without it an
empty step reads as the end of the chain.

Cost, counted for the compute column: every generated token (policy) and every token the PRM reads
(each scoring of a prefix reads the whole prefix again: no cache is assumed).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from prm_factory.sampling.protocol import GenerationParams, Sampler
from prm_factory.sampling.segment import segment
from prm_factory.training.step_scorer import StepScores

STEP_STOP = "\n"

ScoreFn = Callable[[Sequence[tuple[str, Sequence[str]]]], list[StepScores]]
"""(problem text, steps) per prefix -> step scores: `StepScorer.score`."""


@dataclass(frozen=True)
class Beam:
    """A partial chain: its text so far, the tokens generated for it, and whether it has ended."""

    text: str
    policy_tokens: int = 0
    score: float = 0.0
    steps: int = 0
    ended: bool = False


@dataclass(frozen=True)
class BeamResult:
    """The chosen chain of one problem and what the whole search spent on that problem."""

    text: str
    score: float
    steps: int
    policy_tokens: int
    scorer_tokens: int
    rounds: int


def beam_shape(budget: int, expansions: int = 4) -> tuple[int, int]:
    """(beams kept, expansions per beam) for a budget of N samples per round.

    >>> beam_shape(8), beam_shape(4), beam_shape(2), beam_shape(1)
    ((2, 4), (1, 4), (1, 2), (1, 1))
    """
    per_beam = max(1, min(expansions, budget))
    return max(1, budget // per_beam), per_beam


def beam_search(
    sampler: Sampler,
    score: ScoreFn,
    problems: Sequence[str],
    prompts: Sequence[str],
    budget: int,
    params: GenerationParams,
    *,
    expansions: int = 4,
    max_steps: int = 12,
) -> list[BeamResult]:
    """One search per problem, all problems advanced together (one engine call and one scoring pass per
    round). `problems[i]` is the text the PRM sees as prompt, `prompts[i]` the rendered chat prompt the
    policy continues; `params` carries temperature, top_p and the per-chain token cap."""
    keep, per_beam = beam_shape(budget, expansions)
    step_params = replace(params, n=1, stop=(STEP_STOP,))
    active: list[list[Beam]] = [[Beam("")] for _ in problems]
    ended: list[list[Beam]] = [[] for _ in problems]
    policy_tokens = [0] * len(problems)
    scorer_tokens = [0] * len(problems)
    rounds = [0] * len(problems)
    first = True
    while any(active):
        # (problem, parent) for every sample of this round; the first round samples N from the root
        jobs = [
            (i, beam)
            for i, beams in enumerate(active)
            for beam in beams
            for _ in range(budget if first else per_beam)
        ]
        first = False
        generations = sampler.generate([prompts[i] + beam.text for i, beam in jobs], step_params)
        children: list[tuple[int, Beam]] = []
        for (i, parent), (generation,) in zip(jobs, generations, strict=True):
            at_line_end = generation.stop_reason == STEP_STOP
            blank = at_line_end and not generation.text.strip()
            tokens = parent.policy_tokens + generation.n_tokens
            steps = parent.steps + (0 if blank else 1)
            text = parent.text + generation.text + (STEP_STOP if at_line_end else "")
            # not at a line end: end of sequence, or the step hit the length cap
            done = not at_line_end or tokens >= params.max_tokens or steps >= max_steps
            children.append((i, Beam(text, tokens, 0.0, steps, done)))
            policy_tokens[i] += generation.n_tokens
        for i in {i for i, _ in jobs}:
            rounds[i] += 1
        scored = score([(problems[i], [s.text for s in segment(b.text, "line")]) for i, b in children])
        unfinished: list[list[Beam]] = [[] for _ in problems]
        for (i, beam), result in zip(children, scored, strict=True):
            scorer_tokens[i] += result.tokens
            beam = replace(beam, score=result.scores[-1] if result.scores else 0.0)
            (ended[i] if beam.ended else unfinished[i]).append(beam)
        # every beam ends (steps and tokens are capped), so `ended` is never empty at the end
        active = [
            sorted(unfinished[i], key=lambda b: -b.score)[: max(0, keep - len(ended[i]))]
            for i in range(len(problems))
        ]
    results = []
    for i in range(len(problems)):
        best = max(ended[i], key=lambda b: b.score)
        results.append(
            BeamResult(best.text, best.score, best.steps, policy_tokens[i], scorer_tokens[i], rounds[i])
        )
    return results
