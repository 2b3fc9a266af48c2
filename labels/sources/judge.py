"""The `judge` label source: a generative critic names each chain's earliest wrong step (labels/judge.py),
on the run's engine or on OpenAI-compatible servers (`[judge]`). It runs when `[judge] enabled` (or
`judge` is in `[labels] sources`), after the verifier, the reference and MC, whose labels its budget rule
reads (`judge.budget = "disputed"`: only chains where they disagree). Its verdicts vote as the reference's
do: strong either way."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from prm_factory.labels.source import BaseSource, ChainLabels, SourceSetup
from prm_factory.schemas.step_labels import StepLabel
from prm_factory.verifiers.identity import code_digest

if TYPE_CHECKING:
    from prm_factory.config.run_config import RunConfig
    from prm_factory.labels.assemble import SampledChain
    from prm_factory.labels.judge import JudgeResult
    from prm_factory.sampling.vllm_sampler import EngineSettings


class JudgeSource(BaseSource):
    name = "judge"
    needs = frozenset({"engine"})
    reads = ("verifier", "reference", "mc")

    def applies(self, setup: SourceSetup) -> bool:
        return setup.engine is not None

    def identity(self, setup: SourceSetup) -> dict[str, str]:
        """The judge model, the prompt's hash and the judge's code (a changed prompt is another labeler)."""
        from prm_factory.labels.judge import prompt_hash

        model = judge_settings(setup.config, setup.engine).model_id if setup.engine else ""
        return {"name": model, "version": prompt_hash(), "code": code_digest(("prm_factory.labels.judge",))}

    def label(
        self,
        chains: Sequence[SampledChain],
        prior: Mapping[str, Sequence[ChainLabels | None]],
        setup: SourceSetup,
    ) -> list[ChainLabels | None]:
        if setup.engine is None:
            raise ValueError("the judge source needs an engine")
        results = judge_chains(judge_settings(setup.config, setup.engine), setup.config, chains, prior)
        return [from_result(results[c.chain_id]) if c.chain_id in results else None for c in chains]

    def labeler(self, setup: SourceSetup) -> str:
        """`<judge model>@<prompt hash>` (labels.judge.judge_labeler)."""
        from prm_factory.labels.judge import judge_labeler

        return judge_labeler(judge_settings(setup.config, setup.engine).model_id if setup.engine else "")

    def first_error(self, labels: Sequence[StepLabel]) -> int | None:
        """The step the judge named; -1 when it found no error; None when its judgement was unreadable."""
        if labels and all(label.verdict == "correct" for label in labels):
            return -1
        return next((i for i, label in enumerate(labels) if label.verdict == "incorrect"), None)


def judge_settings(config: RunConfig, settings: EngineSettings) -> EngineSettings:
    """Where the judge runs: the run's own engine, or the OpenAI-compatible servers of `[judge]`."""
    from prm_factory.sampling.model_prep import resolve_model
    from prm_factory.sampling.vllm_sampler import EngineSettings

    j = config.judge
    if not j.base_urls:
        return settings
    checkpoint, model_id = (
        resolve_model(j.model_path) if j.model_path else (settings.checkpoint, settings.model_id)
    )
    return EngineSettings(
        checkpoint=str(checkpoint),
        model_id=model_id,
        seed=settings.seed,
        backend="openai",
        base_urls=tuple(j.base_urls),
        served_model_name=j.served_model_name,
    )


def picked(
    config: RunConfig, chains: Sequence[SampledChain], prior: Mapping[str, Sequence[ChainLabels | None]]
) -> list[SampledChain]:
    """The chains the budget sends to the judge: all of them, or (`disputed`) those whose verifier,
    reference and MC labels disagree (labels.judge.needs_judge); a chain without steps never."""
    from prm_factory.labels.judge import needs_judge

    chosen = []
    for position, chain in enumerate(chains):
        if not chain.steps:
            continue
        if config.judge.budget == "all":
            chosen.append(chain)
            continue
        verifier = _verdicts(prior, "verifier", position) or ["unverifiable"] * len(chain.steps)
        reference = _verdicts(prior, "reference", position)
        mc = _verdicts(prior, "mc", position)
        hard = (
            [None if v == "unverifiable" else v == "correct" for v in mc] if mc else [None] * len(chain.steps)
        )
        if needs_judge(verifier, reference, hard):
            chosen.append(chain)
    return chosen


def _verdicts(
    prior: Mapping[str, Sequence[ChainLabels | None]], source: str, position: int
) -> list[str] | None:
    labels = prior[source][position] if source in prior else None
    return None if labels is None else [label.verdict for label in labels]


def judge_chains(
    settings: EngineSettings,
    config: RunConfig,
    chains: Sequence[SampledChain],
    prior: Mapping[str, Sequence[ChainLabels | None]],
) -> dict[str, JudgeResult]:
    """Judge the chains the budget picks, in one engine call (a failure drops the engine, so a retry
    starts a fresh one)."""
    from prm_factory.labels.judge import Judge
    from prm_factory.sampling.backends import drop_sampler, get_sampler
    from prm_factory.sampling.protocol import GenerationParams

    chosen = picked(config, chains, prior)
    if not chosen:
        return {}
    params = GenerationParams(n=1, temperature=0.0, top_p=1.0, max_tokens=config.judge.max_tokens)
    try:
        judge = Judge(get_sampler(settings), settings.model_id, params)
        results = judge.judge_many([(c.problem.text, [s.text for s in c.steps]) for c in chosen])
    except Exception:
        drop_sampler(settings)
        raise
    return {c.chain_id: r for c, r in zip(chosen, results, strict=True)}


def from_result(result: JudgeResult) -> ChainLabels | None:
    """A judgement as labels (None when it holds none: a chain without steps)."""
    return (
        tuple(
            StepLabel("judge", v.label, None, v.reason, json.dumps(v.evidence, default=str), result.labeler)
            for v in result.verdicts
        )
        or None
    )


SOURCE = JudgeSource()
