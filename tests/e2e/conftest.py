"""The real stack for end-to-end tests: the embedded model on one vLLM engine shared by every test.

Every e2e config derives from `E2E_BASE`, whose model section equals the default, so the flow's
`get_sampler` finds the engine this fixture started instead of starting a second one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from config.run_config import RunConfig, load_config

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


@pytest.fixture(scope="session")
def engine(prefect_server: None):
    from flows.engines import engine_settings
    from sampling.vllm_sampler import drop_sampler, get_sampler

    settings = engine_settings(RunConfig())
    yield get_sampler(settings)
    drop_sampler(settings)


@pytest.fixture()
def problems_file(tmp_path: Path) -> Path:
    """Two real GSM8K-style problems and three bad rows (malformed line, missing field, empty question)."""
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
    path = tmp_path / "problems.jsonl"
    path.write_text("\n".join(rows) + "\n")
    return path
