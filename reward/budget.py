"""A time budget per response for the verifier's SymPy work: an explicit, opt-in reward option (`budget_s`).

Why: on competition math a response's SymPy items (LaTeX parsed by an ANTLR grammar, differences
simplified) take from milliseconds to the verifier's per-item limit each, so one 30-step response can take
seconds, and an RL step waits for its slowest reward. With a budget, the SymPy items of the response's step
checks that would start or finish after the budget is spent are not waited for: each such claim is
`unverifiable` (fail closed, never `incorrect`), as a claim past the verifier's own per-item limit is, and
once anything of a response was cut its verifier calls no step `correct` (`without_cut_positives`). The
pure-Python readings, the final answer's grading and the consensus are not cut. Without a budget (the
default) nothing changes: the verdicts are `label`'s (tests/reward/test_same_labels.py).

How: the budget is a stream deadline of the calling thread (verifiers.math.bounded.streams_until, set
around the step checks), so one verifier and its workers serve requests with and without one, and the
SymPy checks that go to the process-wide pool (the certainty gate's) stop at it too. The worker stops a
budgeted stream after the first item that ends past the deadline; the items it did run are the ones a
stream without a budget gives (a stream's state, such as values learned from earlier runs, is only cut
short). The caller stops waiting at the deadline itself; the worker then finishes its one item in a
background thread and goes back to the pool (killed past the verifier's per-item limit, as always).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from prm_factory.schemas.step_labels import StepLabel
from prm_factory.verifiers.math.bounded import Deadline, streams_until

CUT_REASON = "the response's budget cut its SymPy checks: no step of it is called correct by the verifier"


@contextmanager
def budget_until(deadline: float | None) -> Iterator[Deadline | None]:
    """SymPy work in this thread stops at `deadline` (time.time(); None: no budget of its own, though an
    enclosing response deadline still holds); yields the Deadline, whose `cut` says afterwards whether any
    check was cut."""
    with streams_until(deadline) as budget:
        yield budget


def without_cut_positives(labels: tuple[StepLabel | None, ...]) -> tuple[StepLabel | None, ...]:
    """A cut response's verifier labels with every `correct` made `unverifiable`: a check the budget cut
    may have been the one claim of a step that fails (a system result or an equation step that was not
    judged adds nothing, and the step's other claims then make it `correct`), so after a cut no step is
    called right by the verifier; `incorrect` stays (a cut never makes a claim fail)."""
    return tuple(
        replace(label, verdict="unverifiable", value=None, reason=f"{CUT_REASON} ({label.reason})")
        if label is not None and label.verdict == "correct"
        else label
        for label in labels
    )
