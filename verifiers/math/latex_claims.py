"""Parent side of LaTeX claim checking: send a chain's hard runs to the bounded worker in one batch.

A run that times out (`5^{5^{5^5}} = 3`) or crashes the worker becomes an unverifiable claim for its step;
the other runs keep their results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prm_factory.verifiers.math.bounded import BoundedPool, run_items
from prm_factory.verifiers.math.claim_result import ClaimResult

DEFAULT_TIMEOUT_S = 3.0


def check_hard_runs_bounded(
    items: Sequence[tuple[int, str, Mapping[str, str]]],
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    pool: BoundedPool | None = None,
) -> dict[int, list[ClaimResult]]:
    """Claim results per step index for `(step_index, latex_run, bindings)` items."""
    payload = [(text, dict(bindings)) for _, text, bindings in items]
    outcomes = run_items("prm_factory.verifiers.math.symbolic:latex_claims", payload, timeout_s, pool)
    by_step: dict[int, list[ClaimResult]] = {}
    for (index, text, _), outcome in zip(items, outcomes, strict=True):
        if isinstance(outcome, str):  # TIMED_OUT or WORKER_FAILED
            reason = "timed out" if outcome.endswith("timed_out__") else "worker failed"
            results = [ClaimResult(text, None, reason=f"{reason} (limit {timeout_s:g} s)")]
        else:
            results = [
                ClaimResult(claim, holds, expected or None, reason)
                for claim, holds, expected, reason in outcome
            ]
        by_step.setdefault(index, []).extend(results)
    return by_step
