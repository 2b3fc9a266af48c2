"""slime: `--custom-rm-path prm_factory.reward.slime_reward.custom_rm`.

slime awaits `custom_rm(args, sample)` for each sample (`sample.prompt`, `sample.response`, the reference
answer in `sample.label`, a worked solution in `sample.metadata["solution"]`), or with `--group-rm`
`custom_rm(args, samples)` for a group, and takes a float per sample. `custom_rm_dict` returns the steps
too, for a run that sets `--reward-key score`. The labelling runs in a thread so slime's event loop goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from prm_factory.reward.scorer import DEFAULT_AGGREGATE, RewardResult, score_batch
from prm_factory.reward.trl_reward import completion_text, prompt_text


def _item(sample: Any) -> dict[str, Any]:
    metadata = getattr(sample, "metadata", None) or {}
    label = getattr(sample, "label", None)
    return {
        "prompt": prompt_text(getattr(sample, "prompt", "")),
        "response": completion_text(getattr(sample, "response", "")),
        "answer": None if label in (None, "") else str(label),
        "solution": metadata.get("solution"),
    }


async def _results(args: Any, samples: Sequence[Any]) -> list[RewardResult]:
    aggregate = str(getattr(args, "prm_factory_aggregate", None) or DEFAULT_AGGREGATE)
    return await asyncio.to_thread(score_batch, [_item(s) for s in samples], aggregate=aggregate)


async def custom_rm(args: Any, sample: Any) -> float | list[float]:
    """One float per sample (0.0 where the checks could not finish in time)."""
    group = isinstance(sample, list)
    results = await _results(args, sample if group else [sample])
    scores = [r.score if r.status == "ok" else 0.0 for r in results]
    return scores if group else scores[0]


async def custom_rm_dict(args: Any, sample: Any) -> dict[str, Any]:
    """The score with its steps: `{"score", "step_scores", "first_error", "status"}`."""
    (result,) = await _results(args, [sample])
    return {
        "score": result.score if result.status == "ok" else 0.0,
        "step_scores": result.step_scores,
        "first_error": -1 if result.first_error is None else result.first_error,
        "status": result.status,
    }
