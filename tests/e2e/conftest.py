"""The real stack for end-to-end tests: the embedded model on one offline vLLM engine shared by every test
(`engine`), and on the session's `vllm serve` (`served_model`, tests/conftest.py) for the tests whose runs
start in other processes (CLI, Prefect workers), which would otherwise each pay an engine start.

Every e2e config derives from `SMALL_RUN`, whose model section equals the default, so the flow's
`get_sampler` finds the engine this fixture started instead of starting a second one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from prm_factory.config.run_config import RunConfig, load_config

if TYPE_CHECKING:
    from prm_factory.flows.run_summary import RunSummary
    from tests.conftest import ServedModel

SMALL_RUN = {
    "problems.limit": 2,
    "sampling.n": 2,
    "sampling.max_tokens": 128,
    "rollouts.k": 2,
    "rollouts.max_steps": 2,
    "rollouts.max_tokens": 96,
}


def _small_config(dataset: Path, problems: Path | None, **overrides: object) -> RunConfig:
    paths = {"dataset.root": str(dataset)} | ({"problems.path": str(problems)} if problems else {})
    return load_config(None, {**SMALL_RUN, **paths, **overrides})


@pytest.fixture()
def small_config():
    """Builds a tiny run config (2 problems, n=2, k=2) over a given dataset root and problems file."""
    return _small_config


CODE_RUN = {
    "problems.source": "code",
    "problems.limit": 2,
    "sampling.max_tokens": 192,
    "rollouts.max_tokens": 128,
    "sandbox.pool_size": 1,
}


@pytest.fixture()
def code_config():
    """Builds a tiny code-run config (2 bundled code problems, one sandbox container) over a dataset root."""

    def make(dataset: Path, **overrides: object) -> RunConfig:
        return _small_config(dataset, None, **{**CODE_RUN, **overrides})

    return make


@pytest.fixture()
def served_overrides(served_model: ServedModel) -> dict[str, object]:
    """Config overrides that send a run's requests to the session's `vllm serve` instead of an engine of its
    own, each prompt with its own seed (the server's draws for a prompt are then the same alone or batched,
    in any process: what lets two runs on it be compared row for row)."""
    return {
        "model.path": served_model.checkpoint,
        "model.backend": "openai",
        "model.base_urls": [served_model.server.base_url],
        "model.served_model_name": served_model.name,
        "model.request_seeds": True,
    }


@pytest.fixture(scope="session")
def engine(prefect_server: None, _engine_slot):
    """The default config's offline engine in this process, started in the background ahead of the first
    test that asks for it (tests/conftest.py)."""
    return _engine_slot.ready()


def _write_problems(folder: Path) -> Path:
    rows = [
        json.dumps(
            {
                "question": "Tom has 3 apples and buys 4 more. How many apples does he have?",
                "answer": "3+4=<<3+4=7>>7\n#### 7",
            }
        ),
        "{this is not json",
        json.dumps({"question": "Where is the answer?"}),
        json.dumps({"question": "  ", "answer": "#### 1"}),
        json.dumps(
            {
                "question": "A box holds 6 eggs. How many eggs are in 2 boxes?",
                "answer": "6*2=<<6*2=12>>12\n#### 12",
            }
        ),
    ]
    path = folder / "problems.jsonl"
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.fixture()
def problems_file(tmp_path: Path) -> Path:
    """Two real GSM8K-style problems and three bad rows (malformed line, missing field, empty question)."""
    return _write_problems(tmp_path)


@dataclass(frozen=True)
class TwoRuns:
    """A dataset written by two small runs on the session's engine, one problem each."""

    root: Path
    first: RunSummary
    second: RunSummary


@pytest.fixture(scope="module")
def two_runs(engine, tmp_path_factory: pytest.TempPathFactory) -> TwoRuns:
    """One dataset, two runs (the first problem, then the second): shared by the tests that read a written
    dataset's versions or query it, instead of a run or two each."""
    from prm_factory.flows.generation_run import generation_run

    folder = tmp_path_factory.mktemp("two-runs")
    problems, root = _write_problems(folder), folder / "ds"
    first = generation_run(_small_config(root, problems, **{"problems.limit": 1}))
    second = generation_run(_small_config(root, problems, **{"problems.offset": 1, "problems.limit": 1}))
    return TwoRuns(root, first, second)
