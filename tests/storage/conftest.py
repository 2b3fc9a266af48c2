"""Synthetic records for storage tests: small, deterministic, covering every column type and nulls."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from prm_factory.schemas.ids import content_id
from prm_factory.schemas.records import Chain, Problem, Rejection, RunInfo, Step
from prm_factory.schemas.step_labels import StepLabel, mc_label


@dataclass
class RunRecords:
    run: RunInfo
    problems: list[Problem]
    chains: list[Chain]
    steps: list[Step]
    rejections: list[Rejection] = field(default_factory=list)

    def args(self) -> tuple:
        return self.run, self.problems, self.chains, self.steps, self.rejections


def make_run(
    config_name: str,
    n_problems: int = 2,
    chains_per_problem: int = 2,
    steps_per_chain: int = 3,
    source: str = "gsm8k",
    model: str = "toy-model",
    problem_offset: int = 0,
) -> RunRecords:
    """Records of one run; the same arguments always give the same keys (like a rerun of one config)."""
    run_id = content_id("run", config_name)
    problems, chains, steps = [], [], []
    for p in range(problem_offset, problem_offset + n_problems):
        text = f"What is {p} + {p}?"
        problem_id = content_id(source, text)
        problems.append(
            Problem(
                problem_id,
                source,
                "math",
                text,
                reference_answer=str(2 * p),
                source_file="train.jsonl",
                source_line=p + 1,
            )
        )
        for c in range(chains_per_problem):
            # like schemas/assemble.py: chain and step keys do not include the run id
            chain_id = content_id("chain", problem_id, model, c)
            first_error = 1 if c % 2 else None
            chains.append(
                Chain(
                    chain_id=chain_id,
                    problem_id=problem_id,
                    run_id=run_id,
                    model=model,
                    sampling='{"temperature": 0.7}',
                    seed=7,
                    sample_index=c,
                    prompt=text,
                    text="steps...",
                    n_tokens=42,
                    finish_reason="stop",
                    final_answer=str(2 * p) if c % 2 == 0 else None,
                    outcome="correct" if c % 2 == 0 else "incorrect",
                    outcome_reason="matched" if c % 2 == 0 else "mismatch",
                    outcome_evidence="{}",
                    n_steps=steps_per_chain,
                    first_errors={} if first_error is None else {"verifier": first_error, "mc": first_error},
                )
            )
            for s in range(steps_per_chain):
                wrong = first_error is not None and s >= first_error
                mc_value = None if s == steps_per_chain - 1 and c == 0 else (0.0 if wrong else 0.75)
                steps.append(
                    Step(
                        step_id=content_id("step", chain_id, s),
                        chain_id=chain_id,
                        problem_id=problem_id,
                        run_id=run_id,
                        step_index=s,
                        text=f"step {s}",
                        char_start=10 * s,
                        char_end=10 * s + 9,
                        consensus="negative" if wrong else "positive",
                        labels_agree=None if mc_value is None else True,
                        first_error=first_error is not None and s == first_error,
                        model=model,
                        label_config_hash="labelhash",
                        labels=(
                            StepLabel(
                                "verifier",
                                "incorrect" if wrong else "correct",
                                reason="claim checked",
                                labeler="sympy@1+",
                            ),
                            mc_label(
                                None if mc_value is None else not wrong,
                                mc_value,
                                {
                                    "value_source": "rollouts",
                                    "n_rollouts": 4,
                                    "n_correct": 0 if wrong else 3,
                                    "n_judged": 0,
                                    "tokens": 120,
                                    "seconds": 0.5,
                                },
                                f"mc@{model}",
                            ),
                        ),
                    )
                )
    rejections = [Rejection(run_id, "train.jsonl", 99, "question", "empty question")]
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
        model=model,
        model_weights_hash="weights",
        verifier_versions="{}",
        counts="{}",
        stage_seconds="{}",
        n_problems=len(problems),
        n_chains=len(chains),
        n_steps=len(steps),
        n_rejected=len(rejections),
        chain_accuracy=0.5,
        rollout_tokens=1000,
    )
    return RunRecords(run, problems, chains, steps, rejections)


@pytest.fixture
def run_factory() -> Callable[..., RunRecords]:
    return make_run


# A four-column keyed step table and one run's rows against it, a row for each write rule
# (storage/write_rules.py): the writers' tests (tests/storage/test_delta_io_insert.py, test_rewrite.py) check
# that each leaves the table as a merge would.
KEYED_SCHEMA = pa.schema(
    [("chain_id", pa.string()), ("step_index", pa.int64()), ("step_id", pa.string()), ("run_id", pa.string())]
)
KEYS = ("chain_id", "step_index")
STORED = [("a", 0, "a0", "done"), ("a", 1, "a1", "done"), ("b", 0, "b0", "killed"), ("c", 0, "c0", "done")]
INCOMING = [
    ("a", 0, "a0", "new"),  # same labels: kept as stored
    ("a", 1, "a1-relabelled", "new"),  # another labeler: replaced
    ("b", 0, "b0", "new"),  # owned by a run that never committed: claimed
    ("c", 1, "c1", "new"),  # same chain, a step the table lacks: added
    ("d", 0, "d0", "new"),  # a chain the table lacks: added
    ("d", 0, "d0-twice", "new"),  # a repeated key: the first row wins
]


def keyed_rows(spec: list[tuple[str, int, str, str]]) -> pa.Table:
    """(chain_id, step_index, step_id, run_id) tuples as a table of KEYED_SCHEMA."""
    names = KEYED_SCHEMA.names
    return pa.Table.from_pylist([dict(zip(names, row, strict=True)) for row in spec], schema=KEYED_SCHEMA)


def keyed_contents(uri: str, version: int | None = None) -> list[dict]:
    """The table's rows, sorted by key."""
    rows = DeltaTable(uri, version=version).to_pyarrow_table().to_pylist()
    return sorted(rows, key=lambda r: (r["chain_id"], r["step_index"]))
