"""Relabelling a stored chain with the current labelers (labels/relabel.py): new verdicts, consensus and
first errors on the stored steps, MC values kept; rows already written by these labelers are left alone."""

from __future__ import annotations

from dataclasses import replace

from prm_factory.labels.relabel import current, grade_text, relabel_chain
from prm_factory.verifiers.protocol import Verdict
from tests.storage_fixtures import storage_fixtures

LABELERS = {"verifier": {"name": "math-sympy", "version": "9.0.0", "code": "abc"}}


class Scripted:
    """Grades every chain wrong and finds a false claim in step 1."""

    def grade(self, problem, text):
        return Verdict("incorrect", "wrong answer")

    def check_steps(self, problem, steps):
        return [Verdict("incorrect" if i == 1 else "correct", "scripted") for i in range(len(steps))]


def records():
    run = storage_fixtures().make_run("a", n_problems=1, chains_per_problem=1, steps_per_chain=3)
    return run.problems[0], run.chains[0], run.steps


def test_stale_rows_get_new_labels_and_mc_values_stay():
    problem, chain, steps = records()
    assert not current(steps, LABELERS)
    new_chain, rows = relabel_chain(problem, chain, steps, Scripted(), LABELERS, None, "run-2")  # type: ignore[misc]
    assert (
        new_chain.run_id == "run-2"
        and new_chain.outcome == "incorrect"
        and new_chain.first_error_verifier == 1
    )
    assert [r.verdict for r in rows] == ["correct", "incorrect", "correct"]
    assert [r.first_error for r in rows] == [False, True, False] and rows[1].consensus == "negative"
    assert [r.mc_value for r in rows] == [s.mc_value for s in sorted(steps, key=lambda s: s.step_index)]
    assert all(r.step_id != s.step_id for r, s in zip(rows, steps, strict=True))  # they replace the old rows
    assert current(rows, LABELERS)
    assert relabel_chain(problem, new_chain, rows, Scripted(), LABELERS, None, "run-3") is None


def test_no_steps_nothing_to_relabel():
    problem, chain, _ = records()
    assert relabel_chain(problem, chain, [], Scripted(), LABELERS, None, "run-2") is None


def test_grade_text_of_a_chain_from_elsewhere_is_its_given_answer():
    _, chain, _ = records()
    assert grade_text(chain) == chain.text
    external = replace(chain, model="external", final_answer="42")
    assert grade_text(external) == "The answer is 42"
    assert grade_text(replace(external, final_answer=None)) == chain.text


class AllCorrect:
    """Grades every chain right and holds every step."""

    def grade(self, problem, text):
        return Verdict("correct", "right answer")

    def check_steps(self, problem, steps):
        return [Verdict("correct", "scripted") for _ in steps]


def test_the_kept_judge_vote_counts_in_the_new_consensus():
    """A relabel keeps the judge's stored verdicts (it runs no engine), so its consensus must weigh them as a
    fresh run does: the judge's `incorrect` against the verifier's `correct` is `negative`, not `positive`."""
    problem, chain, steps = records()
    ordered = sorted(steps, key=lambda s: s.step_index)
    judged = [
        replace(s, judge_verdict="incorrect" if s.step_index == 1 else "correct", judge_labeler="critic@h")
        for s in ordered
    ]
    no_mc = [replace(s, hard_label=None, mc_value=None, soft_label=None, value_source="none") for s in judged]
    _, rows = relabel_chain(problem, chain, no_mc, AllCorrect(), LABELERS, None, "run-2")  # type: ignore[misc]
    assert [r.judge_verdict for r in rows] == ["correct", "incorrect", "correct"]
    assert [r.consensus for r in rows] == ["positive", "negative", "positive"]
    assert [r.labels_agree for r in rows] == [True, False, True]
    assert [r.first_error for r in rows] == [False, True, False]
