"""PRM-guided step-level beam search on a scripted sampler and a stand-in scorer (no engine, no model)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from prm_factory.sampling.protocol import Generation, GenerationParams
from prm_factory.search.beam_search import STEP_STOP, beam_search, beam_shape
from prm_factory.training.step_scorer import StepScores

PROMPT = "<chat>Q?<assistant>"


class ScriptedSampler:
    """Serves the next scripted generation for each beam text, in order; records every request."""

    model_id = "scripted"
    seed = 0

    def __init__(self, script: dict[str, list[Generation]]) -> None:
        self.script = script
        self.served: dict[str, int] = defaultdict(int)
        self.requests: list[tuple[list[str], GenerationParams]] = []

    def render_chat(self, system: str | None, user: str) -> str:
        return PROMPT

    def generate(self, prompts: Sequence[str], params: GenerationParams) -> list[list[Generation]]:
        self.requests.append((list(prompts), params))
        out = []
        for prompt in prompts:
            beam = prompt.removeprefix(PROMPT)
            options = self.script[beam]
            out.append([options[self.served[beam] % len(options)]])
            self.served[beam] += 1
        return out


def line(text: str, tokens: int = 5) -> Generation:
    return Generation(text, tokens, "stop", STEP_STOP)


def end(text: str, tokens: int = 5) -> Generation:
    return Generation(text, tokens, "stop", None)


def good_last_step(chains: Sequence[tuple[str, Sequence[str]]]) -> list[StepScores]:
    """1.0 when the last step says 'good', else 0.1; reads one token per character."""
    return [
        StepScores(tuple(0.9 if "good" in s else 0.1 for s in steps), len(prompt) + sum(map(len, steps)))
        for prompt, steps in chains
    ]


def test_beam_shape_spends_the_budget_per_round() -> None:
    assert beam_shape(8) == (2, 4)
    assert beam_shape(16, expansions=4) == (4, 4)
    assert beam_shape(3) == (1, 3)


def test_the_prm_keeps_the_good_prefix_and_the_search_stops_at_the_end_of_sequence() -> None:
    sampler = ScriptedSampler(
        {
            "": [line("bad 1"), line("good 1"), line("bad 1"), line("bad 1")],
            "good 1\n": [
                line("bad 2"),
                end("good: The answer is 5.", tokens=7),
                line("bad 2"),
                line("bad 2"),
            ],
        }
    )
    params = GenerationParams(temperature=0.7, max_tokens=64)
    (result,) = beam_search(sampler, good_last_step, ["Q?"], [PROMPT], 4, params)
    assert result.text == "good 1\ngood: The answer is 5."
    assert result.steps == 2 and result.score == 0.9
    assert result.rounds == 2
    assert result.policy_tokens == 4 * 5 + 3 * 5 + 7  # every sampled step is paid for, not only the pick
    # round 1: 4 samples of the root; round 2: 4 continuations of the one kept beam, cut at a line end
    assert [len(prompts) for prompts, _ in sampler.requests] == [4, 4]
    assert all(p.stop == (STEP_STOP,) and p.n == 1 for _, p in sampler.requests)
    assert sampler.requests[1][0] == [PROMPT + "good 1\n"] * 4
    # the scorer read every child of both rounds
    # (its stand-in reads one token per character of the problem and of every step of the prefix)
    assert result.scorer_tokens == 3 * (2 + 5) + (2 + 6) + 3 * (2 + 6 + 5) + (2 + 6 + 22)


def test_a_blank_line_is_kept_and_is_not_a_step() -> None:
    sampler = ScriptedSampler(
        {
            "": [line("good 1")],
            "good 1\n": [line("")],
            "good 1\n\n": [end("good end")],
        }
    )
    (result,) = beam_search(sampler, good_last_step, ["Q?"], [PROMPT], 1, GenerationParams(max_tokens=64))
    assert result.text == "good 1\n\ngood end"
    assert result.steps == 2 and result.rounds == 3


def test_token_and_step_caps_end_a_beam_that_never_stops() -> None:
    sampler = ScriptedSampler({"": [line("good")], **{"good\n" * k: [line("good")] for k in range(1, 40)}})
    (capped,) = beam_search(sampler, good_last_step, ["Q?"], [PROMPT], 1, GenerationParams(max_tokens=20))
    assert capped.policy_tokens == 20 and capped.steps == 4
    sampler = ScriptedSampler({"": [line("good")], **{"good\n" * k: [line("good")] for k in range(1, 40)}})
    (capped,) = beam_search(
        sampler, good_last_step, ["Q?"], [PROMPT], 1, GenerationParams(max_tokens=500), max_steps=3
    )
    assert capped.steps == 3


def test_problems_search_together_and_keep_two_beams_at_budget_eight() -> None:
    root = [line(f"good {k}") for k in range(4)] + [line("bad") for _ in range(4)]
    script = {"": root}
    for k in range(4):
        script[f"good {k}\n"] = [end(f"good answer {k}")]
    sampler = ScriptedSampler(script)
    results = beam_search(
        sampler, good_last_step, ["Q1", "Q2"], [PROMPT, PROMPT], 8, GenerationParams(max_tokens=64)
    )
    assert len(results) == 2
    # one engine call per round for both problems: 2 x 8 roots, then 2 kept beams x 4 each
    assert [len(prompts) for prompts, _ in sampler.requests] == [16, 16]
    assert all(r.text.startswith("good ") and "answer" in r.text for r in results)
