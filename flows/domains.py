"""What differs between math and code runs, chosen by `problems.source`: how problems load, how chains
are prompted and split into steps, and which verifier judges them. The flow itself is the same."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prm_factory.config.run_config import RunConfig
from prm_factory.sampling.prompts import (
    CODE_SYSTEM_PROMPT,
    MATH_SYSTEM_PROMPT,
    code_user_prompt,
    math_user_prompt,
)
from prm_factory.sampling.segment import StepSpan, segment
from prm_factory.schemas.gsm8k import load_gsm8k
from prm_factory.schemas.records import Problem
from prm_factory.schemas.rejected import RejectedRow
from prm_factory.verifiers.protocol import Verdict, Verifier

if TYPE_CHECKING:
    from prm_factory.verifiers.math import MathVerifier


@dataclass(frozen=True)
class Domain:
    name: str
    # (config, limit): valid problems from `problems.offset`, at most `limit` of them (None: all)
    load: Callable[[RunConfig, int | None], tuple[list[Problem], list[RejectedRow]]]
    system_prompt: str
    user_prompt: Callable[[str], str]
    segment: Callable[[str], list[StepSpan]]
    make_verifier: Callable[[], Verifier]
    reference: ReferenceLabeler | None = None  # the `reference` label source, where the domain has one


def _load_math(config: RunConfig, limit: int | None) -> tuple[list[Problem], list[RejectedRow]]:
    p = config.problems
    if p.source == "synthetic":
        from prm_factory.schemas.synthetic import load_synthetic

        return load_synthetic(p.synthetic.model_dump(), offset=p.offset, limit=limit), []
    loaded = load_gsm8k(p.resolved_path(), offset=p.offset, limit=limit)
    return loaded.problems, loaded.rejected


def _load_code(config: RunConfig, limit: int | None) -> tuple[list[Problem], list[RejectedRow]]:
    from prm_factory.schemas.code_problems import load_code_problems

    p = config.problems
    path = p.resolved_path()
    if not path.is_file():
        from prm_factory.schemas.gsm8k import ProblemSourceError

        raise ProblemSourceError(f"problem file not found: {path}")
    problems, rejected = load_code_problems(path)
    return problems[p.offset :][:limit], rejected


ReferenceLabeler = Callable[[Problem, list[str], str], list[Verdict]]


def reference_identity() -> dict[str, str]:
    """Name, version and code digest of the reference-alignment labeler (labels/sources/reference.py)."""
    from prm_factory.labels.sources.reference import SOURCE

    return SOURCE.identity()


def reference_labels(problem: Problem, steps: list[str], outcome: str) -> list[Verdict]:
    """The `reference` source for one chain: alignment with the problem's worked solution."""
    from prm_factory.labels.sources.reference import step_verdicts

    return step_verdicts(problem, steps, outcome)


def math_verifier(config: RunConfig) -> MathVerifier:
    """The math verifier as the config sets it up (sampled runs and `prm-factory label` alike)."""
    from prm_factory.verifiers.math import MathVerifier, MathVerifierConfig

    v = config.verifier
    return MathVerifier(
        MathVerifierConfig(timeout_s=v.timeout_seconds, last_number_fallback=v.last_number_fallback)
    )


def _code_verifier(config: RunConfig) -> Verifier:
    from prm_factory.verifiers.code.sandbox import SandboxLimits
    from prm_factory.verifiers.code.verifier import CodeVerifier, CodeVerifierConfig

    s = config.sandbox
    limits = SandboxLimits(memory_mb=s.memory_mb, pids=s.pids, cpus=s.cpus, wall_seconds=s.wall_seconds)
    return CodeVerifier(
        CodeVerifierConfig(pool_size=s.pool_size, limits=limits, engine_wait_s=s.engine_wait_seconds)
    )


def _code_segments(text: str, mode: str) -> list[StepSpan]:
    from prm_factory.verifiers.code.program import segment_chain

    return [StepSpan(i, seg.text, seg.start, seg.end) for i, seg in enumerate(segment_chain(text, mode))]  # type: ignore[arg-type]


def domain_for(config: RunConfig) -> Domain:
    if config.problems.domain == "code":
        return Domain(
            "code",
            _load_code,
            CODE_SYSTEM_PROMPT,
            code_user_prompt,
            lambda text: _code_segments(text, config.segmentation.code_mode),
            lambda: _code_verifier(config),
        )
    return Domain(
        "math",
        _load_math,
        MATH_SYSTEM_PROMPT,
        math_user_prompt,
        lambda text: segment(text, config.segmentation.mode),
        lambda: math_verifier(config),
        reference_labels,
    )
