"""A small dataset for audit tests: math chains with every vote pattern, one code chain with its program and
per-test results, and chain text that must stay text (`<script>`, `<img onerror>`).

Module-level builders (not only fixtures) so the browser test's server process and the bench can build the
same dataset: `build_dataset(root)`.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from prm_factory.audit.create import create_audit
from prm_factory.audit.sample import SampleDesign
from prm_factory.audit.store import AuditStore
from prm_factory.labels.consensus import step_consensus
from prm_factory.labels.registry import registry
from prm_factory.schemas.ids import content_id
from prm_factory.schemas.records import Chain, Problem, RunInfo, Step
from prm_factory.schemas.step_labels import StepLabel, mc_label
from prm_factory.storage.dataset import Dataset

HOSTILE_STEP = "<script>window.__pwned = 1; alert('step')</script> 2 + 2 = 4 <img src=x onerror=\"alert(1)\">"
HOSTILE_PROBLEM = "<b>What</b> is 2 & 3? <img src=y onerror=alert(2)>"
CODE_PROGRAM = "def add(a, b):\n    return a + b"

# (verdict, hard label) per step of each chain shape; consensus follows labels/consensus.py
SHAPES: tuple[tuple[tuple[str, bool | None], ...], ...] = (
    (("correct", True), ("correct", True), ("correct", True)),
    (("correct", True), ("incorrect", False), ("unverifiable", False)),
    (("correct", False), ("unverifiable", None), ("incorrect", False)),
    (("unverifiable", True), ("incorrect", True), ("correct", False)),
)


def _labels(verdict: str, hard: bool | None) -> tuple[StepLabel, ...]:
    """The verifier's verdict and the MC label of one step (mc_value 0.75 / 0.0, 4 rollouts where known)."""
    evidence = {
        "value_source": "none" if hard is None else "rollouts",
        "n_rollouts": 0 if hard is None else 4,
        "n_correct": 3 if hard else 0,
        "n_judged": 0,
        "tokens": 10,
        "seconds": 0.1,
    }
    verifier = StepLabel(
        "verifier",
        verdict,
        reason=f"verifier says <{verdict}>",
        evidence=json.dumps({"claims": [f"{verdict}"]}),
        labeler="sympy@1+",
    )
    return verifier, mc_label(
        hard, None if hard is None else (0.75 if hard else 0.0), evidence, "mc@toy-model"
    )


def consensus(verdict: str, hard: bool | None) -> tuple[str, bool | None]:
    """The consensus of the two sources' labels (labels/consensus.py)."""
    return step_consensus(_labels(verdict, hard), registry())


def _step(
    chain_id: str,
    problem: Problem,
    run_id: str,
    index: int,
    text: str,
    verdict: str,
    hard: bool | None,
    first_error: bool,
) -> Step:
    label, agree = consensus(verdict, hard)
    verifier, mc = _labels(verdict, hard)
    verifier = dataclasses.replace(verifier, evidence=json.dumps({"claims": [text[:20]]}))
    return Step(
        step_id=content_id("step", chain_id, index),
        chain_id=chain_id,
        problem_id=problem.problem_id,
        run_id=run_id,
        step_index=index,
        text=text,
        char_start=0,
        char_end=len(text),
        consensus=label,
        labels_agree=agree,
        first_error=first_error,
        model="toy-model",
        label_config_hash="labelhash",
        labels=(verifier, mc),
    )


def _chain(
    chain_id: str,
    problem: Problem,
    run_id: str,
    texts: list[str],
    outcome: str,
    evidence: dict,
    sample_index: int,
) -> Chain:
    return Chain(
        chain_id=chain_id,
        problem_id=problem.problem_id,
        run_id=run_id,
        model="toy-model",
        sampling="{}",
        seed=7,
        sample_index=sample_index,
        prompt=problem.text,
        text="\n".join(texts),
        n_tokens=42,
        finish_reason="stop",
        final_answer=problem.reference_answer if outcome == "correct" else "99",
        outcome=outcome,
        outcome_reason="matched" if outcome == "correct" else "mismatch",
        outcome_evidence=json.dumps(evidence),
        n_steps=len(texts),
    )


def records(n_problems: int = 3) -> tuple[RunInfo, list[Problem], list[Chain], list[Step]]:
    """One run: every shape on every math problem (problem 0 and its first chain hostile), one code chain."""
    run_id = content_id("run", "audit-tests")
    problems, chains, steps = [], [], []
    for p in range(n_problems):
        text = HOSTILE_PROBLEM if p == 0 else f"Ana has {p} apples and buys {p} more. How many now?"
        problem = Problem(
            content_id("gsm8k", text),
            "gsm8k",
            "math",
            text,
            reference_answer=str(2 * p),
            reference_solution=f"She has {p} + {p} = {2 * p} apples.\n#### {2 * p}",
        )
        problems.append(problem)
        for c, shape in enumerate(SHAPES):
            chain_id = content_id("chain", problem.problem_id, c)
            texts = [
                HOSTILE_STEP if p == 0 and c == 0 and s == 0 else f"{p} + {s} = {p + s} (chain {c})"
                for s in range(len(shape))
            ]
            labels = [consensus(v, h)[0] for v, h in shape]
            first = next((i for i, label in enumerate(labels) if label == "negative"), None)
            for s, ((verdict, hard), step_text) in enumerate(zip(shape, texts, strict=True)):
                steps.append(_step(chain_id, problem, run_id, s, step_text, verdict, hard, s == first))
            outcome = "correct" if c == 0 else "incorrect"
            chains.append(_chain(chain_id, problem, run_id, texts, outcome, {}, c))
    code = Problem(
        content_id("mbpp", "add"),
        "mbpp",
        "code",
        "Write add(a, b) returning the sum.",
        tests=json.dumps({"kind": "assert", "tests": ["assert add(1, 2) == 3"]}),
    )
    problems.append(code)
    code_texts = ["I will add the numbers.", f"```python\n{CODE_PROGRAM}\n```"]
    code_chain = content_id("chain", code.problem_id, 0)
    tests = {
        "tests": [
            {"name": "test_1", "passed": True, "status": "passed", "reason": "passed", "actual": "3"},
            {
                "name": "test_2 <b>",
                "passed": False,
                "status": "failed",
                "reason": "mismatch <i>",
                "actual": "-1",
            },
        ]
    }
    chains.append(_chain(code_chain, code, run_id, code_texts, "incorrect", tests, 0))
    steps.append(_step(code_chain, code, run_id, 0, code_texts[0], "unverifiable", True, False))
    steps.append(_step(code_chain, code, run_id, 1, code_texts[1], "incorrect", False, True))
    run = RunInfo(
        run_id=run_id,
        started_at="2026-01-01T00:00:00Z",
        ended_at="2026-01-01T00:01:00Z",
        status="succeeded",
        error="",
        config="{}",
        config_hash=content_id("config", "audit-tests"),
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
        rollout_tokens=0,
    )
    return run, problems, chains, steps


def build_dataset(root: Path, n_problems: int = 3) -> Dataset:
    dataset = Dataset(str(root))
    run, problems, chains, steps = records(n_problems)
    dataset.commit_run(run, problems, chains, steps, [])
    return dataset


def build_audit(root: Path, size: int = 100, seed: int = 0, double_share: float = 0.0) -> AuditStore:
    """An audit of every step of the test dataset (size 100 > its 38 steps), in `root/audit`."""
    dataset = build_dataset(root / "ds")
    return create_audit(
        dataset, root / "audit", SampleDesign(size=size, seed=seed, double_share=double_share)
    )


@pytest.fixture
def audit_dataset(tmp_path) -> Dataset:
    return build_dataset(tmp_path / "ds")


@pytest.fixture
def audit_store(tmp_path) -> AuditStore:
    return build_audit(tmp_path)


@pytest.fixture
def hostile_texts() -> dict[str, str]:
    return {"step": HOSTILE_STEP, "problem": HOSTILE_PROBLEM}
