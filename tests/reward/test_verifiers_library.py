"""The `verifiers` adapter inside the real library (verifiers 0.4.0, the `rl` extra): a `vf.Task` scores real
`vf.Trace`s offline (`Task.score`, as their environments do after a rollout) with the process reward as a
`@vf.reward` method (the adapter's module docstring example, run as written) and as a function plugged into
the task's config by import path.

It runs in a child Python started with `-P` from a temporary folder: `python -m pytest` puts the repository
root first on `sys.path`, where the top-level folder `verifiers/` (this project's `prm_factory.verifiers`)
would shadow the library's import name; an installed `prm_factory` never has that folder on the path.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = r"""
import asyncio, json
import verifiers
import verifiers.v1 as vf
from prm_factory.reward.verifiers_reward import trace_reward

QUESTION = "Tom has 48 apples and gives half away. How many are left?"
WRONG = "Half of 48 is 48/2 = 25.\n\nThe answer is 25."
RIGHT = "Half of 48 is 48/2 = 24.\n\nThe answer is 24."


# the adapter's documented example, as its module docstring writes it (`documented_example`)
#EXAMPLE#


def trace_of(task, reply):
    nodes = [
        vf.MessageNode(message=vf.UserMessage(content=QUESTION)),
        vf.MessageNode(parent=0, message=vf.AssistantMessage(content=reply), sampled=True),
    ]
    return vf.Trace(
        task=vf.TraceTask(type=type(task).__name__, data=task.data),
        agent=vf.AgentInfo(config=vf.AgentConfig()),
        nodes=nodes,
    )


async def scored(task, reply):
    trace = trace_of(task, reply)
    await task.score(trace)
    return {
        "rewards": {k: None if v is None else [v.score, v.weight] for k, v in trace.rewards.items()},
        "metrics": trace.metrics,
        "reward": trace.reward,
        "last_reply": trace.last_reply,
    }


subclass = MathTask(MathData(prompt=QUESTION, answer="24"))
plugged = vf.Task(
    vf.WireTaskData(prompt=QUESTION, answer="24"),
    vf.TaskConfig(
        rewards={"process": {"fn": "prm_factory.reward.verifiers_reward:task_reward", "weight": 2.0}}
    ),
)
out = {"version": verifiers.__version__}
for name, task in (("subclass", subclass), ("plugged", plugged)):
    out[name] = {"wrong": asyncio.run(scored(task, WRONG)), "right": asyncio.run(scored(task, RIGHT))}
print("RESULT " + json.dumps(out))
"""


def documented_example() -> str:
    """The first indented block of the adapter's module docstring: the `@vf.reward` task it documents, run
    here as written, so the example cannot drift from what the library accepts."""
    import textwrap

    import prm_factory.reward.verifiers_reward as adapter

    lines = (adapter.__doc__ or "").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("    "))
    end = next(
        (i for i in range(start, len(lines)) if lines[i].strip() and not lines[i].startswith("    ")),
        len(lines),
    )
    block = textwrap.dedent("\n".join(lines[start:end])).strip()
    assert "class MathTask(vf.Task[MathData])" in block, block
    return block


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The child's report: rewards, metrics and replies of a wrong and a right trace, by each path."""
    folder = tmp_path_factory.mktemp("verifiers-library")
    done = subprocess.run(
        [sys.executable, "-P", "-c", SCRIPT.replace("#EXAMPLE#", documented_example())],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    return json.loads(line.removeprefix("RESULT "))


def test_the_library_is_the_locked_release_not_this_repositorys_folder(scored: dict) -> None:
    assert scored["version"] == "0.4.0"
    root_verifiers = Path(__file__).resolve().parents[2] / "verifiers"
    assert root_verifiers.is_dir()  # the folder that would shadow it under `python -m pytest`


@pytest.mark.parametrize(("path", "weight"), [("subclass", 1.0), ("plugged", 2.0)])
def test_a_task_scores_a_trace_with_the_process_reward(scored: dict, path: str, weight: float) -> None:
    wrong, right = scored[path]["wrong"], scored[path]["right"]
    assert wrong["last_reply"].endswith("The answer is 25.")
    # the first step's 48/2 = 25 is the first error; the right chain has none and scores above it
    assert wrong["metrics"] == {"prm_factory_first_error": 0.0, "prm_factory_unverified": 0.0}
    assert right["metrics"] == {"prm_factory_first_error": -1.0, "prm_factory_unverified": 0.0}
    (name,) = wrong["rewards"]
    assert name == "process" and set(right["rewards"]) == {"process"}
    wrong_score, wrong_weight = wrong["rewards"]["process"]
    right_score, right_weight = right["rewards"]["process"]
    assert wrong_weight == right_weight == weight
    assert wrong_score < right_score
    assert wrong["reward"] == pytest.approx(weight * wrong_score)
