"""Parent side of LaTeX claim checking: send a chain's hard runs to the bounded worker in one batch.

A run that times out (`5^{5^{5^5}} = 3`) or crashes the worker becomes an unverifiable claim for its step;
the other runs keep their results. A run whose expansion or value is known to blow up (`sympy_limits`:
`(a^2 + b^2)^{2000}`, `\\binom{10^9}{k}`) is an unverifiable claim at once, never sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prm_factory.verifiers.math.bounded import BoundedPool, run_items
from prm_factory.verifiers.math.claim_result import ClaimResult
from prm_factory.verifiers.math.sympy_limits import too_costly

DEFAULT_TIMEOUT_S = 3.0


def check_hard_runs_bounded(
    items: Sequence[tuple[int, str, Mapping[str, str]]],
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    pool: BoundedPool | None = None,
) -> dict[int, list[ClaimResult]]:
    """Claim results per step index for `(step_index, latex_run, bindings)` items."""
    refused = [too_costly(text, bindings) for _, text, bindings in items]
    payload = [
        (text, dict(bindings)) for (_, text, bindings), why in zip(items, refused, strict=True) if why is None
    ]
    target = "prm_factory.verifiers.math.symbolic:latex_claims"
    sent = iter(run_items(target, payload, timeout_s, pool) if payload else [])
    by_step: dict[int, list[ClaimResult]] = {}
    for (index, text, _), why in zip(items, refused, strict=True):
        outcome = next(sent) if why is None else None
        if why is not None:
            results = [ClaimResult(text, None, reason=f"not sent to SymPy: {why}")]
        elif isinstance(outcome, str):  # TIMED_OUT or WORKER_FAILED
            reason = "timed out" if outcome.endswith("timed_out__") else "worker failed"
            results = [ClaimResult(text, None, reason=f"{reason} (limit {timeout_s:g} s)")]
        else:
            results = [
                ClaimResult(claim, holds, expected or None, reason)
                for claim, holds, expected, reason in outcome
            ]
        by_step.setdefault(index, []).extend(results)
    return by_step
