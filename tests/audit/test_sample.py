"""audit.sample: strata from the sources' votes, seeded draws, inclusion counts, filters, uncertain first."""

import duckdb
import pyarrow as pa
import pytest

from prm_factory.audit.sample import Filters, SampleDesign, SampleError, draw_sample, sources_for
from prm_factory.storage.sql import connect


@pytest.fixture
def connection(audit_dataset):
    con = connect(audit_dataset)
    yield con
    con.close()


def _sources(con):
    return sources_for([row[0] for row in con.execute("DESCRIBE steps").fetchall()])


def test_strata_are_the_vote_patterns_and_record_population_and_draws(connection):
    sample = draw_sample(connection, SampleDesign(size=20, seed=3), _sources(connection))
    assert sample.sources == ("verifier", "mc", "consensus")  # reference and judge never voted here
    assert sample.population == 38
    assert {s.key for s in sample.strata} >= {
        "verifier=incorrect mc=incorrect",
        "verifier=correct mc=incorrect",
    }
    assert sum(s.drawn for s in sample.strata) == len(sample.items) == 20
    for stratum in sample.strata:
        drawn = [i for i in sample.items if i.stratum == stratum.key]
        assert len(drawn) == stratum.drawn <= stratum.population
        assert stratum.uncertain == (
            stratum.key == "verifier=correct mc=incorrect" or stratum.key == "verifier=incorrect mc=correct"
        )
    assert [i.position for i in sample.items] == list(range(1, 21))
    for item in sample.items:  # the stratum is the pattern of the item's own votes
        assert item.stratum == f"verifier={item.votes['verifier'] or '-'} mc={item.votes['mc'] or '-'}"


def test_the_same_seed_draws_the_same_steps_and_another_seed_others(connection):
    sources = _sources(connection)
    first = draw_sample(connection, SampleDesign(size=15, seed=1), sources)
    again = draw_sample(connection, SampleDesign(size=15, seed=1), sources)
    other = draw_sample(connection, SampleDesign(size=15, seed=2), sources)
    keys = [(i.chain_id, i.step_index) for i in first.items]
    assert keys == [(i.chain_id, i.step_index) for i in again.items]
    assert keys != [(i.chain_id, i.step_index) for i in other.items]


def test_first_errors_are_flagged_per_source(connection):
    sample = draw_sample(connection, SampleDesign(size=100, seed=0), _sources(connection))
    by_chain: dict[str, list] = {}
    for item in sample.items:
        by_chain.setdefault(item.chain_id, []).append(item)
    for items in by_chain.values():
        for source in sample.sources:
            wrong = sorted(i.step_index for i in items if i.votes[source] == "incorrect")
            flagged = [i.step_index for i in items if source in i.first_error_of]
            assert flagged == wrong[:1]


def test_a_double_share_of_the_steps_asks_for_two_reviewers(connection):
    sample = draw_sample(connection, SampleDesign(size=30, seed=0, double_share=0.2), _sources(connection))
    assert sum(i.reviews_needed == 2 for i in sample.items) == 6
    assert {i.reviews_needed for i in sample.items} == {1, 2}


def test_filters_restrict_the_population(connection):
    sources = _sources(connection)
    code = draw_sample(connection, SampleDesign(size=50, filters=Filters(domains=("code",))), sources)
    assert code.population == 2 and {i.domain for i in code.items} == {"code"}
    wrong = draw_sample(
        connection, SampleDesign(size=50, filters=Filters(labels=("verifier=incorrect",))), sources
    )
    assert {i.votes["verifier"] for i in wrong.items} == {"incorrect"}
    disputed = draw_sample(
        connection, SampleDesign(size=50, filters=Filters(labels=("consensus=disputed",))), sources
    )
    assert disputed.items and "consensus" not in disputed.sources  # it voted on none of them
    gsm = draw_sample(connection, SampleDesign(size=50, filters=Filters(problem_sets=("gsm8k",))), sources)
    assert gsm.population == 36
    with pytest.raises(SampleError, match="SOURCE=VALUE"):
        draw_sample(connection, SampleDesign(size=5, filters=Filters(labels=("oracle=correct",))), sources)
    with pytest.raises(SampleError, match="nothing to draw"):
        draw_sample(connection, SampleDesign(size=5, filters=Filters(runs=("no-such-run",))), sources)


def test_uncertain_first_spends_the_budget_on_disagreements_and_queues_them_first(connection):
    sources = _sources(connection)
    sample = draw_sample(connection, SampleDesign(size=10, seed=0, mode="uncertain"), sources)
    uncertain = {s.key for s in sample.strata if s.uncertain}
    disagreements = sum(s.population for s in sample.strata if s.uncertain)
    flags = [item.stratum in uncertain for item in sample.items]
    assert sum(flags) == disagreements  # every disagreement drawn (census), the rest from the others
    assert flags == sorted(flags, reverse=True)  # and queued first


def test_prm_scores_add_the_prm_as_a_source_and_near_threshold_steps_as_uncertain(connection):
    steps = connection.execute(
        "SELECT chain_id, step_index FROM steps ORDER BY chain_id, step_index"
    ).fetchall()
    scores = pa.table(
        {
            "chain_id": [c for c, _ in steps],
            "step_index": pa.array([i for _, i in steps], pa.int64()),
            "prm_score": [0.52 if i == 0 else 0.9 for _, i in steps],
        }
    )
    sample = draw_sample(connection, SampleDesign(size=100, mode="uncertain"), _sources(connection), scores)
    assert "prm" in sample.sources
    near = [i for i in sample.items if "prm=near" in i.stratum]
    assert near and all(i.step_index == 0 for i in near)
    assert all(i.votes["prm"] == ("correct" if i.prm_score >= 0.5 else "incorrect") for i in sample.items)


def test_an_arrow_population_draws_like_a_dataset():
    con = duckdb.connect()
    con.register(
        "steps",
        pa.table(
            {
                "chain_id": ["a", "a", "b"],
                "step_index": [0, 1, 0],
                "problem_id": ["p", "p", "q"],
                "run_id": ["r"] * 3,
                "source": ["s"] * 3,
                "domain": ["math"] * 3,
                "verdict": ["correct", "incorrect", "unverifiable"],
                "hard_label": [True, False, None],
                "consensus": ["positive", "negative", "unlabeled"],
            }
        ),
    )
    con.register(
        "problems", pa.table({"problem_id": ["p", "q"], "source": ["s", "s"], "domain": ["math"] * 2})
    )
    sample = draw_sample(con, SampleDesign(size=3), sources_for(["verdict", "hard_label", "consensus"]))
    assert len(sample.items) == 3 and sample.population == 3
