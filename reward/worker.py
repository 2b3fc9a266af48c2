"""What a reward worker process runs: label each request of a batch, one result per request, streamed
(verifiers.math.bounded runs it and kills the worker when a request runs past its deadline)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from prm_factory.reward.labelling import (
    Context,
    ResponseTimedOut,
    RewardRequest,
    RewardRequestError,
    label_response,
)
from prm_factory.verifiers.math.bounded import run_items

_CONTEXT = Context()  # one per worker process: its verifiers (and their SymPy workers) live across requests

WARM_STEP = r"We have $\sqrt{4} + 1 = 3$, and $x^2 - 1 = (x-1)(x+1)$."


def score_requests(payload: Sequence[RewardRequest]) -> Iterator[tuple[str, Any]]:
    """`("ok", LabelledResponse)`, `("refused", reason)` for a request that cannot be scored as given, or
    `("failed", reason)` for a check that broke (the caller reports it as unverifiable, never incorrect)."""
    for request in payload:
        yield label_one(request, _CONTEXT)


def label_one(request: RewardRequest, context: Context, deadline: float | None = None) -> tuple[str, Any]:
    """`score_requests`'s result for one request; `("timed_out", reason)` where it ran past `deadline`."""
    try:
        return "ok", label_response(request, context, deadline)
    except ResponseTimedOut as error:
        return "timed_out", str(error)
    except RewardRequestError as error:
        return "refused", str(error)
    except Exception as error:  # a broken check is reported with its reason, never raised into a trainer
        return "failed", f"{type(error).__name__}: {error}"


def warm(payload: Sequence[RewardRequest]) -> Iterator[bool]:
    """Label a step with LaTeX so the verifier's own SymPy worker starts now, not inside a timed request.
    The process-wide pool's (the certainty gate's) starts on its first use: GSM8K-sized traffic never
    needs it (120 MiB a worker), and a budgeted check that finds it starting waits until the budget."""
    for request in payload:
        label_one(request, _CONTEXT)
        yield True


WARM_COMPETITION_TEXT = r"\binom{4}{2} = 6"  # outside the fast reader's subset: the parser's DFA loads


def warm_competition(payload: Sequence[RewardRequest]) -> Iterator[bool]:
    """`warm`, and what competition responses need besides: the certainty gate's process-wide SymPy pool
    started, and each SymPy worker's LaTeX DFA loaded, before the first request (`RewardScorer(competition=
    True)`), so that no response pays them (about a second, once per worker)."""
    for request in payload:
        label_one(replace(request, response=f"{request.response} So ${WARM_COMPETITION_TEXT}$."), _CONTEXT)
        run_items("prm_factory.verifiers.math.symbolic:latex_claims", [(WARM_COMPETITION_TEXT, {})], 30.0)
        yield True
