"""`verifiers` (PrimeIntellect): the process reward for a `@vf.reward` task method (0.4's `verifiers.v1`
API), a reward to plug into any task's config by import path, and a rubric function of earlier releases
(`vf.Rubric(funcs=[process_reward])`, up to 0.3).

In 0.4 a reward is a weighted method of a `Task` (or a function plugged by name into its config), handed
what it names of the task data (`task`) and the rollout's `Trace` (`trace`); `trace_reward` scores the
trace's last reply and records the first error and whether the checks finished as metrics:

    class MathData(vf.TaskData):
        answer: str

    class MathTask(vf.Task[MathData]):
        @vf.reward(weight=1.0)
        async def process(self, trace) -> float:
            return await trace_reward(trace, prompt=self.data.prompt_text, answer=self.data.answer)

or, with no subclass, plugged into any task's config by import path:
`TaskConfig(rewards={"process": {"fn": "prm_factory.reward.verifiers_reward:task_reward"}})`
(`--env.taskset.task.rewards` on their CLI). A rubric of 0.3 calls each function with the arguments its
signature names (`prompt`, `completion`, `answer`, `info`, ...) and awaits a coroutine. The labelling runs in
a thread (`asyncio.to_thread`) so the environment's event loop goes on. A response the checks could not
finish scores 0.0: a hang earns nothing. Neither release has a per-step reward (PR #1554, `@vf.step_reward`,
is open); the `RewardResult`'s steps are what it would take. The 0.4 paths run inside verifiers 0.4.0
(tests/reward/test_verifiers_library.py); the 0.3 rubric function against its call shape only (0.3.1 pins
mcp<2, below vLLM 0.32's mcp>=2).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from prm_factory.reward.scorer import DEFAULT_AGGREGATE, RewardResult, score_batch
from prm_factory.reward.trl_reward import completion_text, prompt_text


async def _scored(item: dict[str, Any], aggregate: str) -> RewardResult:
    (result,) = await asyncio.to_thread(score_batch, [item], aggregate=aggregate)
    return result


async def trace_reward(
    trace: Any,
    *,
    prompt: str = "",
    answer: Any = None,
    solution: str | None = None,
    aggregate: str = DEFAULT_AGGREGATE,
) -> float:
    """The process reward of a `verifiers.v1` trace's last reply (metrics `prm_factory_first_error`, -1
    for none, and `prm_factory_unverified`)."""
    item = {
        "prompt": prompt,
        "response": str(trace.last_reply or ""),
        "answer": None if answer in (None, "") else str(answer),
        "solution": solution,
    }
    result = await _scored(item, aggregate)
    trace.record_metric(
        "prm_factory_first_error", -1.0 if result.first_error is None else float(result.first_error)
    )
    trace.record_metric("prm_factory_unverified", float(result.status != "ok"))
    return result.score if result.status == "ok" else 0.0


async def task_reward(task: Any, trace: Any) -> float:
    """A reward `(task, trace)` to plug into a `verifiers.v1` task's config by import path: the prompt is
    the task data's `prompt_text`, the final answer its `answer` field and a worked solution its `solution`
    field, where the data has them (declared on a `TaskData` subclass, or extra fields of the wire form)."""
    solution = getattr(task, "solution", None)
    return await trace_reward(
        trace,
        prompt=task.prompt_text,
        answer=getattr(task, "answer", None),
        solution=None if solution is None else str(solution),
    )


async def process_reward(
    completion: Any,
    answer: Any = None,
    prompt: Any = None,
    info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> float:
    """A rubric reward function (`min` over the steps; `info["aggregate"]` picks another rule and
    `info["solution"]` passes a worked solution)."""
    info = dict(info or {})
    item = {
        "prompt": prompt_text(prompt) if prompt is not None else "",
        "response": completion_text(completion),
        "answer": None if answer in (None, "") else str(answer),
        "solution": info.get("solution"),
    }
    result = await _scored(item, str(info.get("aggregate", DEFAULT_AGGREGATE)))
    return result.score if result.status == "ok" else 0.0
