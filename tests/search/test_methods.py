"""Selection methods on hand-made candidates: what each picks, tie credit, budgets, intervals, cost."""

from __future__ import annotations

import pytest

from prm_factory.search.methods import (
    Candidate,
    aggregate,
    best_of_n,
    bootstrap_mean,
    groups_of,
    majority,
    pass_at_n,
    per_problem_credit,
    render_markdown,
    rows_as_dicts,
    search_rows,
    single_pick_rows,
    standard_methods,
    weighted_vote,
)


def cand(answer: str | None, correct: bool, prm=(0.5,), orm=(0.5,), tokens: int = 10) -> Candidate:
    return Candidate(
        answer, correct, tokens, {"prm": tuple(prm), "orm": tuple(orm)}, {"prm": 3 * len(prm), "orm": 5}
    )


def test_aggregations_read_the_steps_as_documented() -> None:
    steps = [0.9, 0.2, 0.8]
    assert aggregate(steps, "last") == 0.8
    assert aggregate(steps, "min") == 0.2
    assert aggregate(steps, "product") == pytest.approx(0.144)
    assert aggregate([], "min") == 0.0
    with pytest.raises(ValueError):
        aggregate(steps, "mean")  # type: ignore[arg-type]


def test_majority_counts_answers_and_abstentions_do_not_vote() -> None:
    group = [cand("4", True), cand("5", False), cand("5", False), cand(None, False), cand(None, False)]
    assert majority(group) == 0.0
    assert majority([cand(None, False), cand("4", True)]) == 1.0
    assert majority([cand(None, False)]) == 0.0


def test_ties_are_credited_by_expectation() -> None:
    assert majority([cand("4", True), cand("5", False)]) == 0.5
    assert best_of_n("prm", "last")([cand("4", True, prm=(0.7,)), cand("5", False, prm=(0.7,))]) == 0.5


def test_best_of_n_aggregations_pick_different_chains() -> None:
    # right chain: one shaky middle step, confident end; wrong chain: steady but lower end
    right = cand("4", True, prm=(0.9, 0.3, 0.95))
    wrong = cand("5", False, prm=(0.8, 0.8, 0.9))
    assert best_of_n("prm", "last")([right, wrong]) == 1.0
    assert best_of_n("prm", "min")([right, wrong]) == 0.0
    assert best_of_n("prm", "product")([right, wrong]) == 0.0


def test_weighted_vote_outweighs_a_low_scored_majority() -> None:
    group = [cand("4", True, prm=(0.9,)), cand("5", False, prm=(0.2,)), cand("5", False, prm=(0.3,))]
    assert majority(group) == 0.0
    assert weighted_vote("prm", "last")(group) == 1.0
    assert pass_at_n(group) == 1.0


def test_budgets_average_over_disjoint_groups() -> None:
    chains = [cand("4", True), cand("5", False), cand("5", False), cand("5", False)]
    assert [len(g) for g in groups_of(chains, 2)] == [2, 2]
    assert groups_of(chains, 3) == [chains[:3]]
    # N = 1: each chain alone, 1 of 4 right; N = 2: (0.5 tie + 0) / 2
    assert per_problem_credit(majority, chains, 1) == 0.25
    assert per_problem_credit(majority, chains, 2) == 0.25
    assert per_problem_credit(pass_at_n, chains, 2) == 0.5
    with pytest.raises(ValueError):
        per_problem_credit(majority, chains[:1], 2)


def test_bootstrap_interval_brackets_the_mean_and_is_deterministic() -> None:
    values = [1.0] * 30 + [0.0] * 10
    interval = bootstrap_mean(values)
    assert interval.mean == 0.75
    assert interval.low < 0.75 < interval.high
    assert 0.55 < interval.low and interval.high < 0.9
    assert bootstrap_mean(values) == interval
    assert bootstrap_mean([]).mean == 0.0


def test_rows_compare_with_majority_and_count_the_scorers_compute() -> None:
    # problem where the PRM finds the lone right answer, and one where everyone is right
    problems = [
        [cand("4", True, prm=(0.9,)), cand("5", False, prm=(0.1,)), cand("5", False), cand("5", False)],
        [cand("7", True), cand("7", True), cand("7", True), cand("7", True)],
    ]
    rows = {(r.method, r.n): r for r in search_rows(problems, [1, 4])}
    assert rows["majority vote", 4].accuracy.mean == 0.5
    assert rows["majority vote", 4].vs_majority is None
    best = rows["prm best-of-n (last)", 4]
    assert best.accuracy.mean == 1.0 and best.vs_majority.mean == 0.5
    assert rows["pass@n (oracle)", 4].accuracy.mean == 1.0
    # compute: 4 chains x 10 policy tokens; PRM reads 3 tokens a step per chain; majority reads none
    assert rows["majority vote", 4].policy_tokens == 40 and rows["majority vote", 4].scorer_tokens == 0
    assert best.scorer_tokens == 12 and rows["orm best-of-n", 4].scorer_tokens == 20
    assert rows["majority vote", 1].policy_tokens == 10
    assert {name for name, _ in rows} == set(standard_methods())


def test_single_pick_rows_and_the_table() -> None:
    problems = [[cand("4", True), cand("5", False)], [cand("6", False), cand("6", False)]]
    picks = {2: [cand("4", True, tokens=25), cand("7", True, tokens=30)]}
    (row,) = single_pick_rows("prm beam search", picks, problems)
    assert row.accuracy.mean == 1.0 and row.vs_majority.mean == 0.75  # majority: 0.5 tie, 0
    assert row.policy_tokens == 27.5
    table = render_markdown(search_rows(problems, [1, 2]) + [row])
    lines = table.splitlines()
    assert lines[0].startswith("| method | N = 1 | N = 2 | Δ vs majority at N = 2 |")
    beam = next(line for line in lines if line.startswith("| prm beam search |"))
    assert "|  | 100.0 [100.0, 100.0] | +75.0" in beam  # no N = 1 cell for the beam
    assert rows_as_dicts([row])[0]["vs_majority"] == 0.75
