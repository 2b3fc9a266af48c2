"""The label-noise bench: replay of recorded rollouts and scoring, on a tiny hand-made record (no engine)."""

import importlib.util
import sys
from pathlib import Path

import pytest

from prm_factory.evaluation.step_truth import chain_truth
from prm_factory.rollouts import RolloutItem
from prm_factory.sampling.protocol import GenerationParams
from prm_factory.schemas.synthetic import SyntheticSpec, synthetic_problem

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_label_noise.py"
PLUMS = synthetic_problem(SyntheticSpec(seed=3, steps=2), 0)  # 15 plums, /3 -> 5, -4 -> 1
PARAMS = GenerationParams(temperature=0.7, max_tokens=32)


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_label_noise", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_label_noise"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _item(chain_id: str, steps: list[str], outcome: bool | None, prompt: str = "<prompt>") -> RolloutItem:
    text = "\n".join(steps)
    ends, pos = [], 0
    for step in steps:
        pos += len(step)
        ends.append(pos)
        pos += 1
    return RolloutItem(chain_id, PLUMS.problem, prompt, text, tuple(ends), outcome)


WRONG = ["15 / 3 = 5 plums.", "5 - 4 = 2 plums.", "The answer is 2."]  # first error: step 1
RIGHT = ["15 / 3 = 5 plums.", "5 - 4 = 1 plum.", "The answer is 1."]


def _record(bench, item, per_step):
    """per_step[i]: (outcomes, tokens) recorded for prefix i."""
    return {
        item.rollout_prompt(i): [bench.RecordedRollout(o, t) for o, t in zip(outs, toks, strict=True)]
        for i, (outs, toks) in enumerate(per_step)
    }


@pytest.fixture
def wrong_chain(bench):
    item = _item("wrong", WRONG, False)
    recorded = _record(
        bench,
        item,
        [([False, True, False, False], [10, 20, 30, 40]), ([False, False, False, False], [1, 2, 3, 4])],
    )
    return item, recorded


def test_exhaustive_takes_the_first_k_outcomes_and_their_tokens(bench, wrong_chain):
    item, recorded = wrong_chain
    at = {
        k: bench.replay([item], recorded, bench.make_strategy_at("exhaustive", k), PARAMS)[0]
        for k in (1, 2, 4)
    }
    assert bench.mc_labels(at[1], "hard") == ["incorrect", "incorrect", "incorrect"]
    assert bench.mc_labels(at[2], "hard") == ["correct", "incorrect", "incorrect"]
    assert [s.soft_label for s in at[4].steps] == [0.25, 0.0, 0.0]
    assert bench.mc_labels(at[4], "soft") == ["incorrect", "incorrect", "incorrect"]
    assert [at[k].tokens for k in (1, 2, 4)] == [11, 33, 110]


def test_binary_search_stops_where_the_recorded_outcomes_say(bench, wrong_chain):
    item, recorded = wrong_chain
    at1 = bench.replay([item], recorded, bench.make_strategy_at("binary_search", 1), PARAMS)[0]
    # k=1: step 0's one rollout fails, so the search ends there; step 1 is inferred bad without rollouts
    assert [s.value_source for s in at1.steps] == ["rollouts", "inferred", "outcome"]
    assert bench.mc_labels(at1, "hard") == ["incorrect", "incorrect", "incorrect"]
    assert bench.mc_labels(at1, "soft") == ["incorrect", "unlabelled", "incorrect"]
    assert at1.tokens == 10
    at2 = bench.replay([item], recorded, bench.make_strategy_at("binary_search", 2), PARAMS)[0]
    assert bench.mc_labels(at2, "hard") == ["correct", "incorrect", "incorrect"]
    assert at2.tokens == 10 + 20 + 1 + 2


def test_adaptive_draws_more_only_where_the_first_draws_disagree(bench, wrong_chain):
    item, recorded = wrong_chain
    values = bench.replay([item], recorded, bench.make_strategy_at("adaptive", 4), PARAMS)[0]
    assert [s.n_rollouts for s in values.steps[:2]] == [4, 2]
    assert values.tokens == 10 + 20 + 30 + 40 + 1 + 2
    # k=1 is one draw per prefix, like exhaustive at k=1
    at1 = bench.replay([item], recorded, bench.make_strategy_at("adaptive", 1), PARAMS)[0]
    assert at1.tokens == 11


def test_a_shared_prefix_is_charged_once_and_asking_past_the_record_fails(bench, wrong_chain):
    item, recorded = wrong_chain
    twin = _item("twin", WRONG, False)  # same prompt and text: the same prefixes
    values = bench.replay([item, twin], recorded, bench.make_strategy_at("exhaustive", 4), PARAMS)
    assert sum(v.tokens for v in values) == 110
    with pytest.raises(RuntimeError, match="replay exhausted"):
        bench.replay([item], recorded, bench.make_strategy_at("exhaustive", 8), PARAMS)


RECORDED_POLICY = "mc@hand-made-record"
"""The policy of these recorded rollouts: no table measured it, so its MC votes weigh the unmeasured default
(a shipped MC table weighs only its own policy's labels: labels/consensus.py)."""


def _labelled(bench, item, steps, outcome, verifier, reference):
    truth = chain_truth(PLUMS, steps, outcome)
    return bench.LabelledChain(
        item, tuple(steps), outcome, truth, tuple(verifier), tuple(reference), mc_labeler=RECORDED_POLICY
    )


def test_the_table_scores_each_source_against_the_truth(bench, wrong_chain):
    item, recorded = wrong_chain
    right = _item("right", RIGHT, True, prompt="<other prompt>")
    recorded = {
        **recorded,
        **_record(bench, right, [([True] * 4, [5] * 4), ([True, False, True, True], [5] * 4)]),
    }
    chains = [
        _labelled(bench, item, WRONG, "incorrect", ["correct", "incorrect", "unverifiable"], ["correct"] * 3),
        _labelled(bench, right, RIGHT, "correct", ["correct"] * 3, ["correct"] * 3),
    ]
    assert [c.truth.first_error for c in chains] == [1, -1]
    rows = {(r.source, r.strategy, r.k): r for r in bench.noise_table(chains, recorded, [1, 4], PARAMS)}

    verifier = rows["verifier", "", 0]
    # it flags step 1 only (right), misses the wrong answer step: P 1, R 1/2; first errors both right
    assert (verifier.precision, verifier.recall, verifier.first_error_f1) == (1.0, 0.5, 1.0)
    assert verifier.labelled_share == 5 / 6 and verifier.tokens_per_label == 0.0  # no rollouts

    hard1 = rows["mc-hard", "exhaustive", 1]
    # k=1: step 0 of the wrong chain reads wrong (a false positive), so its first error is off by one
    assert hard1.precision == pytest.approx(2 / 3) and hard1.recall == 1.0
    # before the last step (whose MC label is the chain's outcome): one false positive in two flags
    assert (hard1.inner_precision, hard1.inner_recall) == (0.5, 1.0)
    assert hard1.first_error_f1 == 0.0  # erroneous chains 0/1 right: the harmonic mean is 0
    assert hard1.tokens == 11 + 10 and hard1.tokens_per_label == pytest.approx(21 / 6)

    assert (hard1.first_error_exact, hard1.first_error_correct_chains) == (0.0, 1.0)

    hard4 = rows["mc-hard", "exhaustive", 4]
    assert (hard4.precision, hard4.recall, hard4.first_error_f1) == (1.0, 1.0, 1.0)
    assert hard4.tokens == 110 + 40

    soft4 = rows["mc-soft", "exhaustive", 4]
    assert soft4.precision == pytest.approx(2 / 3)  # 0.25 < 0.5 flags the sound step 0

    agreed = rows["consensus", "exhaustive", 4]
    # the wrong answer step: MC's weak negative (unmeasured policy) against the reference's `correct` is
    # disputed, unlabelled
    assert (agreed.precision, agreed.recall, agreed.first_error_f1) == (1.0, 0.5, 1.0)
    # the shipped math/synthetic cells (a synthetic problem's steps are read there first): a verifier
    # `correct` was right 27 times in 190 on the synthetic dev run (its arithmetic holds on a misread value),
    # so beside the reference's `correct` a step stays disputed; only the flagged step is labelled
    assert agreed.labelled_share == 1 / 6
    assert {(r.strategy, r.k) for r in rows.values() if r.source == "mc-soft"} == {
        (s, k) for s in ("exhaustive", "binary_search", "adaptive") for k in (1, 4)
    }
    assert "| exhaustive | 4 |" in bench.render_markdown(list(rows.values()))


def test_first_error_of_mc_is_unknown_behind_an_unlabelled_step(bench):
    assert bench.predicted_first_error(["correct", "unlabelled", "incorrect"], unlabelled_blocks=True) == -1
    assert bench.predicted_first_error(["correct", "unlabelled", "incorrect"], unlabelled_blocks=False) == 2


def test_problems_take_the_step_counts_in_turn(bench):
    problems = bench.synthetic_problems(5, [1, 3], seed=0)
    assert [len(p.steps) for p in problems] == [1, 3, 1, 3, 1]
    assert len({p.problem.problem_id for p in problems}) == 5


def test_the_consensus_row_carries_the_ece_of_p_correct_against_the_truth(bench, wrong_chain):
    item, recorded = wrong_chain
    chain = _labelled(bench, item, WRONG, "incorrect", ["correct", "incorrect", "correct"], ["correct"] * 3)
    # truth: right, wrong, wrong; p_correct 0.9, 0.2, 0.8 -> bins 9 (gap 0.1), 2 (0.2), 8 (0.8), a third each
    ece, n = bench.calibration_error([chain], [[0.9, 0.2, 0.8]])
    assert n == 3 and ece == pytest.approx((0.1 + 0.2 + 0.8) / 3)
    ece, n = bench.calibration_error([chain], [[None, 0.0, None]])  # steps no source voted on are left out
    assert (ece, n) == (0.0, 1)
    rows = bench.noise_table([chain], recorded, [4], PARAMS, strategies=["exhaustive"])
    by = {(r.source, r.strategy): r for r in rows}
    assert by["consensus (no MC)", ""].ece is not None and by["consensus (no MC)", ""].ece_steps == 3
    assert by["verifier", ""].ece is None  # a single source's row has no probability


def test_each_consensus_row_is_set_beside_the_most_precise_single_source(bench):
    def row(source, strategy, k, precision, flagged):
        return bench.NoiseRow(source, strategy, k, precision, 0.0, 0.0, 1.0, 0, None, flagged)

    rows = [
        row("verifier", "", 0, 1.0, 4),
        row("reference", "", 0, 0.5, 2),
        row("consensus (no MC)", "", 0, 1.0, 3),
        row("mc-hard", "exhaustive", 4, 0.8, 10),
        row("mc-soft", "exhaustive", 4, 0.95, 2),  # soft labels are not what the consensus combines
        row("consensus", "exhaustive", 4, 0.9, 12),
    ]
    paired = {(c.source, c.strategy): b.source for c, b in bench.against_single_sources(rows)}
    assert paired == {("consensus (no MC)", ""): "verifier", ("consensus", "exhaustive"): "verifier"}
    rows[0] = row("verifier", "", 0, 0.0, 0)  # flags nothing: no precision to compare with
    paired = {(c.source, c.strategy): b.source for c, b in bench.against_single_sources(rows)}
    assert paired[("consensus", "exhaustive")] == "mc-hard"
    table = bench.render_markdown(rows)
    assert "| exhaustive | 4 | 90.0 (12) | mc-hard 80.0 (10) | yes |" in table


def test_each_step_is_kept_with_its_truth_and_probability(bench, wrong_chain):
    item, _ = wrong_chain
    chain = _labelled(
        bench, item, WRONG, "incorrect", ["correct", "incorrect", "unverifiable"], ["correct"] * 3
    )
    rows = bench.step_rows([chain])
    assert [(r["step"], r["truth"], r["verifier"]) for r in rows] == [
        (0, "correct", "correct"),
        (1, "incorrect", "incorrect"),
        (2, "incorrect", "unverifiable"),
    ]
    assert all(0.0 <= r["p_correct"] <= 1.0 for r in rows) and rows[0]["p_correct"] > rows[1]["p_correct"]


def test_with_mc_values_each_step_keeps_mcs_label_its_origin_and_the_consensus_with_it(bench, wrong_chain):
    """`--out` keeps MC's part too (the exhaustive strategy at k_max): read without drawing again."""
    item, recorded = wrong_chain
    chain = _labelled(
        bench, item, WRONG, "incorrect", ["correct", "incorrect", "unverifiable"], ["correct"] * 3
    )
    values = bench.replay([item], recorded, bench.make_strategy_at("exhaustive", 1), PARAMS)
    rows = bench.step_rows([chain], values)
    assert [(r["mc"], r["mc_source"]) for r in rows] == [
        (False, "rollouts"),
        (False, "rollouts"),
        (False, "outcome"),
    ]
    with_mc = bench.consensus_steps(chain, [False, False, False], ["rollouts", "rollouts", "outcome"])
    assert [(r["consensus_mc"], r["p_correct_mc"]) for r in rows] == with_mc
    assert "mc" not in bench.step_rows([chain])[0]  # without values, the rows are as before
