"""A small two-version dataset for report tests, with every label kind and hostile chain text.

Follows tests/storage/conftest.py's pattern (content-hash keys, one RunInfo per config) but keeps its own
records: the report needs disputed, unlabeled and outcome-valued steps and text that must be escaped.
"""

from __future__ import annotations

import pytest

from prm_factory.labels.calibration import CalibrationTable, Cell
from prm_factory.labels.consensus import Weighing, step_consensus
from prm_factory.labels.registry import registry
from prm_factory.schemas.ids import content_id
from prm_factory.schemas.records import Chain, Problem, RunInfo, Step
from prm_factory.schemas.step_labels import StepLabel, mc_label
from prm_factory.storage.dataset import Dataset
from tests.storage.conftest import RunRecords

WEIGHING = Weighing(
    {
        "verifier": CalibrationTable(
            "verifier",
            "",
            "dev set",
            0.5,
            (Cell("incorrect", "", "math", 1000, 995), Cell("correct", "", "math", 1000, 990)),
        ),
        "mc": CalibrationTable(
            "mc",
            "",
            "dev set",
            0.5,
            (Cell("incorrect", "", "math", 1000, 990), Cell("correct", "", "math", 1000, 990)),
        ),
    }
)
"""Fixed tables, so the fixture's consensus has every label whatever the shipped tables measure."""

HOSTILE_STEP = '<script>alert("step")</script> & <img src=x onerror=alert(1)>'
HOSTILE_PROBLEM = "<b>What</b> is 2 & 3? <a href='https://example.com'>x</a>"

# (verdict, mc_value, value_source) per step of each chain shape; consensus and agreement are derived
CHAIN_SHAPES: tuple[tuple[tuple[str, float | None, str], ...], ...] = (
    (("correct", 0.75, "rollouts"), ("correct", 0.5, "rollouts"), ("correct", 1.0, "outcome")),
    (("correct", 0.5, "rollouts"), ("incorrect", 0.0, "rollouts"), ("unverifiable", 0.0, "outcome")),
    (("correct", 0.0, "rollouts"), ("unverifiable", None, "none"), ("incorrect", 0.0, "outcome")),
    (("unverifiable", 0.25, "rollouts"), ("unverifiable", 0.0, "rollouts"), ("unverifiable", None, "none")),
)


def _steps(chain_id: str, problem_id: str, run_id: str, shape, texts: list[str]) -> list[Step]:
    steps, seen_error = [], False
    for index, ((verdict, mc_value, value_source), text) in enumerate(zip(shape, texts, strict=True)):
        hard = None if mc_value is None else mc_value > 0
        rollouts = value_source == "rollouts"
        evidence = {
            "value_source": value_source,
            "n_rollouts": 4 if rollouts else 0,
            "n_correct": round(4 * (mc_value or 0)) if rollouts else 0,
            "n_judged": 0,
            "tokens": 100 if rollouts else 0,
            "seconds": 0.5 if rollouts else 0.0,
        }
        labels = (
            StepLabel("verifier", verdict, reason=f"reason <{verdict}>", labeler="sympy@1+"),
            mc_label(hard, mc_value, evidence, "mc@toy-model"),
        )
        consensus, agree = step_consensus(labels, registry(), WEIGHING)
        first_error = consensus == "negative" and not seen_error
        seen_error = seen_error or first_error
        steps.append(
            Step(
                step_id=content_id("step", chain_id, index),
                chain_id=chain_id,
                problem_id=problem_id,
                run_id=run_id,
                step_index=index,
                text=text,
                char_start=10 * index,
                char_end=10 * index + 9,
                consensus=consensus,
                labels_agree=agree,
                first_error=first_error,
                model="toy-model",
                label_config_hash="labelhash",
                labels=labels,
            )
        )
    return steps


def _first_errors(steps: list[Step]) -> dict[str, int]:
    verifier = next((s.step_index for s in steps if s.label("verifier").verdict == "incorrect"), None)
    mc = next((s.step_index for s in steps if s.label("mc").verdict == "incorrect"), None)
    return {name: index for name, index in (("verifier", verifier), ("mc", mc)) if index is not None}


def make_run(config_name: str, n_problems: int = 2, problem_offset: int = 0) -> RunRecords:
    """One run: every chain shape on every problem; the first problem and chain carry hostile text."""
    run_id = content_id("run", config_name)
    problems, chains, steps = [], [], []
    for p in range(problem_offset, problem_offset + n_problems):
        text = HOSTILE_PROBLEM if p == 0 else f"What is {p} + {p}?"
        problem = Problem(content_id("gsm8k", text), "gsm8k", "math", text, reference_answer=str(2 * p))
        problems.append(problem)
        for c, shape in enumerate(CHAIN_SHAPES):
            chain_id = content_id("chain", problem.problem_id, "toy-model", c)
            texts = [HOSTILE_STEP if p == 0 and c == 0 and s == 0 else f"step {s} of {c}" for s in range(3)]
            chain_steps = _steps(chain_id, problem.problem_id, run_id, shape, texts)
            errors = [s.step_index for s in chain_steps if s.first_error]
            chains.append(
                Chain(
                    chain_id=chain_id,
                    problem_id=problem.problem_id,
                    run_id=run_id,
                    model="toy-model",
                    sampling="{}",
                    seed=7,
                    sample_index=c,
                    prompt=text,
                    text="\n".join(texts),
                    n_tokens=42,
                    finish_reason="stop",
                    final_answer=str(2 * p) if c == 0 else None,
                    outcome="correct" if c == 0 else "incorrect",
                    outcome_reason="matched" if c == 0 else "mismatch",
                    outcome_evidence="{}",
                    n_steps=len(chain_steps),
                    first_errors=_first_errors(chain_steps),
                )
            )
            assert len(errors) <= 1
            steps.extend(chain_steps)
    run = RunInfo(
        run_id=run_id,
        started_at="2026-01-01T00:00:00Z",
        ended_at="2026-01-01T00:01:00Z",
        status="succeeded",
        error="",
        config="{}",
        config_hash=content_id("config", config_name),
        git_commit="abc123",
        package_versions="{}",
        model="toy-model",
        model_weights_hash="weights",
        verifier_versions="{}",
        counts="{}",
        stage_seconds="{}",
        n_problems=len(problems),
        n_chains=len(chains),
        n_steps=len(steps),
        n_rejected=0,
        chain_accuracy=0.25,
        rollout_tokens=100
        * sum(v == "rollouts" for shape in CHAIN_SHAPES for _, _, v in shape)
        * len(problems),
    )
    return RunRecords(run, problems, chains, steps)


@pytest.fixture(scope="module")
def report_dataset(tmp_path_factory) -> Dataset:
    """Version 1: one run of 2 problems (8 chains, 24 steps); version 2 adds a run of 2 more problems."""
    dataset = Dataset(str(tmp_path_factory.mktemp("report") / "ds"))
    dataset.commit_run(*make_run("a").args())
    dataset.commit_run(*make_run("b", problem_offset=5).args())
    return dataset


@pytest.fixture
def hostile_texts() -> dict[str, str]:
    """Texts in the dataset that must reach the page escaped (test modules cannot import conftest)."""
    return {"step": HOSTILE_STEP, "problem": HOSTILE_PROBLEM}
