"""Real `EngineInputs` for `bench/bench_rollouts.py --engine bench.engine_inputs:FUNCTION`.

The rollout bench compares strategies on the chains and rollouts of a real model only if someone builds
those chains: this module samples GSM8K chains with the embedded model, segments them as the math run
does (`sampling.segment.segment`, mode auto), grades them with the math verifier, and returns them as
rollout items with the live engine, so exhaustive and the cheaper strategies are measured on real text.

    python -m bench.bench_rollouts --engine bench.engine_inputs:gsm8k_offline_engine --k 4
    PRM_BENCH_SERVER_URLS=http://127.0.0.1:8000 python -m bench.bench_rollouts \\
        --engine bench.engine_inputs:gsm8k_openai_server --k 4

Run it with `python -m` from the repo root (or PYTHONPATH=.): `bench` is not an installed package.

Sizes come from environment variables, because the bench calls FUNCTION() without arguments:

- PRM_BENCH_PROBLEMS (default 6): GSM8K train questions, from PRM_BENCH_OFFSET (default 0);
- PRM_BENCH_N (default 2): chains per question;
- PRM_BENCH_CHAIN_TOKENS (default 160): max tokens of a chain;
- PRM_BENCH_ROLLOUT_TOKENS (default 96): max tokens of a rollout;
- PRM_BENCH_MIN_STEPS / PRM_BENCH_MAX_STEPS (default 2 / 8): chains with a step count outside are left
  out (one step has no prefix to probe; very long chains dominate an exhaustive run's cost).
- PRM_BENCH_COMPILE=1: compile the offline engine (default eager: the bench counts rollouts, not seconds);
- PRM_BENCH_SERVER_URLS, PRM_BENCH_SERVER_MODEL: for `gsm8k_openai_server` (comma-separated URLs).

The engine stays up for the bench (it samples the rollouts); nothing here stops it.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):  # imported from a script run: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_rollouts import EngineInputs  # noqa: E402
from prm_factory.rollouts import RolloutItem  # noqa: E402
from prm_factory.sampling.chains import DrawnChain, draw_chains  # noqa: E402
from prm_factory.sampling.prompts import MATH_SYSTEM_PROMPT, math_user_prompt  # noqa: E402
from prm_factory.sampling.protocol import GenerationParams, Sampler  # noqa: E402
from prm_factory.sampling.segment import segment  # noqa: E402
from prm_factory.schemas.gsm8k import load_gsm8k  # noqa: E402
from prm_factory.verifiers.math import MathVerifier, MathVerifierConfig  # noqa: E402
from prm_factory.verifiers.protocol import outcome_value  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "gsm8k" / "train.jsonl"


def _env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


def rollout_items(
    drawn: Sequence[DrawnChain], verifier: MathVerifier, min_steps: int, max_steps: int
) -> tuple[list[RolloutItem], Counter[str]]:
    """Segment and grade drawn chains into rollout items, with a count of why chains were left out."""
    items: list[RolloutItem] = []
    left_out: Counter[str] = Counter()
    for chain in drawn:
        steps = segment(chain.generation.text, "auto")
        if not min_steps <= len(steps) <= max_steps:
            left_out[f"steps outside {min_steps}..{max_steps}"] += 1
            continue
        verdict = verifier.grade(chain.problem, chain.generation.text)
        items.append(
            RolloutItem(
                chain_id=f"{chain.problem.problem_id}/{chain.sample_index}",
                problem=chain.problem,
                prompt=chain.prompt,
                chain_text=chain.generation.text,
                step_ends=tuple(s.end for s in steps),
                # as the math run does: an unjudged outcome is None
                outcome_correct=outcome_value(verdict.label),
            )
        )
    return items, left_out


def build_inputs(sampler: Sampler) -> EngineInputs:
    """Draw, segment and grade chains on `sampler`; return them with the sampler and the grader."""
    problems = load_gsm8k(
        os.environ.get("PRM_BENCH_DATA", str(DEFAULT_DATA)),
        offset=_env_int("PRM_BENCH_OFFSET", 0),
        limit=_env_int("PRM_BENCH_PROBLEMS", 6),
    ).problems
    chain_params = GenerationParams(
        n=_env_int("PRM_BENCH_N", 2), temperature=0.7, max_tokens=_env_int("PRM_BENCH_CHAIN_TOKENS", 160)
    )
    drawn = draw_chains(sampler, problems, chain_params, MATH_SYSTEM_PROMPT, math_user_prompt)
    verifier = MathVerifier(MathVerifierConfig())
    items, left_out = rollout_items(
        drawn, verifier, _env_int("PRM_BENCH_MIN_STEPS", 2), _env_int("PRM_BENCH_MAX_STEPS", 8)
    )
    if not items:
        raise RuntimeError(f"no usable chains among {len(drawn)} drawn: {dict(left_out)}")
    correct = sum(item.outcome_correct is True for item in items)
    steps = [item.n_steps for item in items]
    print(
        f"engine inputs: {len(problems)} GSM8K problems x n={chain_params.n} -> {len(drawn)} chains, "
        f"{len(items)} kept ({correct} correct, steps {min(steps)}-{max(steps)}), left out {dict(left_out)}",
        flush=True,
    )
    rollout_params = GenerationParams(temperature=0.7, max_tokens=_env_int("PRM_BENCH_ROLLOUT_TOKENS", 96))
    return EngineInputs(items=items, sampler=sampler, grade=verifier.grade, params=rollout_params)


def gsm8k_offline_engine() -> EngineInputs:
    """The embedded model on this process's vLLM offline engine (engine-seeded, prefix caching on)."""
    from prm_factory.sampling.model_prep import DEFAULT_MODEL_ID, prepare_default_model
    from prm_factory.sampling.vllm_sampler import EngineSettings, get_sampler

    settings = EngineSettings(
        checkpoint=str(prepare_default_model()),
        model_id=DEFAULT_MODEL_ID,
        seed=0,
        # the bench counts rollouts, not seconds: skip torch.compile's minutes of warm-up unless asked
        enforce_eager=os.environ.get("PRM_BENCH_COMPILE", "0") != "1",
    )
    return build_inputs(get_sampler(settings))


def gsm8k_openai_server() -> EngineInputs:
    """The embedded model's tokenizer, sampling on the OpenAI-compatible servers in PRM_BENCH_SERVER_URLS."""
    from prm_factory.sampling.model_prep import DEFAULT_MODEL_ID, prepare_default_model
    from prm_factory.sampling.openai_sampler import OpenAICompatibleSampler

    urls = [u for u in os.environ.get("PRM_BENCH_SERVER_URLS", "").split(",") if u]
    if not urls:
        raise RuntimeError("set PRM_BENCH_SERVER_URLS to the servers' base URLs (comma-separated)")
    model = os.environ.get("PRM_BENCH_SERVER_MODEL", DEFAULT_MODEL_ID)
    return build_inputs(OpenAICompatibleSampler(urls, model, prepare_default_model()))
