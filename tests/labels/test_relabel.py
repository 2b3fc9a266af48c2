"""Relabelling a stored chain with the current label sources (labels/relabel.py): new verdicts, consensus
and first errors on the stored steps, the kept sources' labels voting as in a fresh run; rows already
written by these labelers are left alone."""

from __future__ import annotations

from dataclasses import replace

from prm_factory.config.run_config import RunConfig
from prm_factory.labels.registry import registry
from prm_factory.labels.relabel import current, grade_text, relabel_chain
from prm_factory.labels.source import SourceSetup
from prm_factory.labels.sources.verifier import VerifierSource
from prm_factory.schemas.step_labels import mc_label
from prm_factory.verifiers.protocol import Verdict
from tests.storage_fixtures import storage_fixtures, with_label

IDENTITY = {"name": "math-sympy", "version": "9.0.0", "code": "abc"}
TAG = "math-sympy@9.0.0+abc"


class ScriptedVerifierSource(VerifierSource):
    """The verifier source with a fixed identity (the scripted verifiers below have no package to hash)."""

    def identity(self, setup):
        return dict(IDENTITY)


class Scripted:
    """Grades every chain wrong and finds a false claim in step 1."""

    def grade(self, problem, text):
        return Verdict("incorrect", "wrong answer")

    def check_steps(self, problem, steps):
        return [Verdict("incorrect" if i == 1 else "correct", "scripted") for i in range(len(steps))]


def relabel(problem, chain, steps, verifier, run_id):
    setup = SourceSetup(RunConfig(), "math", verifier, pipeline="relabel")
    return relabel_chain(problem, chain, steps, [ScriptedVerifierSource()], registry(), setup, run_id)


def records():
    run = storage_fixtures().make_run("a", n_problems=1, chains_per_problem=1, steps_per_chain=3)
    return run.problems[0], run.chains[0], run.steps


def test_stale_rows_get_new_labels_and_mc_values_stay():
    problem, chain, steps = records()
    assert not current(steps, {"verifier": TAG})
    new_chain, rows = relabel(problem, chain, steps, Scripted(), "run-2")  # type: ignore[misc]
    assert (
        new_chain.run_id == "run-2"
        and new_chain.outcome == "incorrect"
        and new_chain.first_errors["verifier"] == 1
    )
    assert [r.label("verifier").verdict for r in rows] == ["correct", "incorrect", "correct"]
    # the verifier's `incorrect` against a reached answer: P(right) falls, the first error follows the label
    assert rows[1].p_correct < min(rows[0].p_correct, rows[2].p_correct)
    assert [r.first_error for r in rows] == [False, rows[1].consensus == "negative", False]
    ordered = sorted(steps, key=lambda s: s.step_index)
    assert [r.label("mc").value for r in rows] == [s.label("mc").value for s in ordered]
    assert all(r.step_id != s.step_id for r, s in zip(rows, steps, strict=True))  # they replace the old rows
    assert current(rows, {"verifier": TAG})
    assert relabel(problem, new_chain, rows, Scripted(), "run-3") is None


def test_no_steps_nothing_to_relabel():
    problem, chain, _ = records()
    assert relabel(problem, chain, [], Scripted(), "run-2") is None


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
    fresh run does: the judge's `incorrect` against the verifier's `correct` is not `positive`."""
    problem, chain, steps = records()
    ordered = sorted(steps, key=lambda s: s.step_index)
    judged = [
        with_label(s, "judge", verdict="incorrect" if s.step_index == 1 else "correct", labeler="critic@h")
        for s in ordered
    ]
    no_mc = [with_label(s, "mc", verdict="unverifiable", value=None) for s in judged]
    _, rows = relabel(problem, chain, no_mc, AllCorrect(), "run-2")  # type: ignore[misc]
    assert [r.label("judge").verdict for r in rows] == ["correct", "incorrect", "correct"]
    assert rows[1].consensus != "positive" and rows[1].p_correct < min(rows[0].p_correct, rows[2].p_correct)
    assert [r.labels_agree for r in rows] == [True, False, True]
    assert [r.first_error for r in rows] == [False, rows[1].consensus == "negative", False]


def test_the_last_steps_mc_value_follows_the_new_outcome():
    """The last step's MC value is the chain's own outcome (`value_source` outcome): a new grade moves it,
    and only it."""
    problem, chain, steps = records()
    ordered = sorted(steps, key=lambda s: s.step_index)
    outcome = {"value_source": "outcome", "n_rollouts": 0, "n_correct": 0, "n_judged": 0, "tokens": 0}
    ordered[-1] = replace(
        ordered[-1],
        labels=tuple(
            mc_label(True, 1.0, {**outcome, "seconds": 0.0}, "mc@toy-model") if lb.source == "mc" else lb
            for lb in ordered[-1].labels
        ),
    )
    _, rows = relabel(problem, chain, ordered, Scripted(), "run-2")  # type: ignore[misc]  # graded wrong
    assert rows[-1].label("mc").verdict == "incorrect" and rows[-1].label("mc").value == 0.0
    assert [r.label("mc") for r in rows[:-1]] == [s.label("mc") for s in ordered[:-1]]


def test_a_batch_of_chains_is_one_call_per_source_and_current_chains_are_counted():
    from prm_factory.labels.relabel import StoredChain, label_directly, relabel_chains

    run = storage_fixtures().make_run("a", n_problems=2, chains_per_problem=1, steps_per_chain=3)
    stored = [
        StoredChain(problem, chain, [s for s in run.steps if s.chain_id == chain.chain_id])
        for problem, chain in zip(run.problems, run.chains, strict=True)
    ]
    setup = SourceSetup(RunConfig(), "math", Scripted(), pipeline="relabel")
    calls: list[int] = []

    def counted(sources, chains, labels, setup):
        calls.append(len(chains))
        return label_directly(sources, chains, labels, setup)

    source = ScriptedVerifierSource()
    results, unchanged = relabel_chains(stored, [source], registry(), setup, "run-2", counted)
    assert calls == [2] and unchanged == 0 and [c.run_id for c, _ in results] == ["run-2", "run-2"]
    done = StoredChain(stored[0].problem, *results[0])
    again, unchanged = relabel_chains([done, stored[1]], [source], registry(), setup, "run-3", counted)
    assert calls == [2, 1] and unchanged == 1 and len(again) == 1
