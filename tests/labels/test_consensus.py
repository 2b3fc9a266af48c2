"""The consensus as a probability (labels/consensus.py): each vote weighs what its source's calibration table
measured, `p_correct` combines them, and the label follows the thresholds."""

import math

import pytest

from prm_factory.config.run_config import RunConfig
from prm_factory.labels.calibration import CalibrationTable, Cell
from prm_factory.labels.consensus import (
    UNMEASURED_RATIO,
    Weighing,
    first_error_index,
    first_error_mc,
    first_error_verifier,
    step_consensus,
    step_probability,
    weighing,
)
from prm_factory.labels.joint_calibration import JointCell, JointTable
from prm_factory.labels.registry import registry
from prm_factory.labels.source import BaseSource, Strength
from prm_factory.schemas.step_labels import StepLabel, mc_label

VERIFIER = CalibrationTable(
    "verifier",
    "math-sympy@test",
    "dev set",
    0.5,
    (
        Cell("incorrect", "closed_arithmetic", "math", 1000, 995),  # 99.5 % right
        Cell("incorrect", "equation_step", "math", 21, 12),  # 57 %: a guess
        Cell("incorrect", "word_problem_arithmetic", "math/gsm8k", 495, 493),
        Cell("incorrect", "word_problem_arithmetic", "math/competition", 27, 7),
        Cell("correct", "closed_arithmetic", "math", 1000, 800),
    ),
)
REFERENCE = CalibrationTable(
    "reference", "reference@test", "dev set", 0.5, (Cell("incorrect", "", "math", 100, 80),)
)
WEIGHING = Weighing({"verifier": VERIFIER, "reference": REFERENCE})


def consensus(*labels, weighs=WEIGHING, domains=("math",), sources=None):
    return step_probability(labels, sources or registry(), weighs, domains)


def wrong(source="verifier", kind=None):
    return StepLabel(source, "incorrect", kind=kind)


def test_a_lone_vote_reads_its_measured_precision():
    label, agree, p = consensus(wrong(kind="closed_arithmetic"))
    shrunk = (995 + 4 * (1007 + 1) / (1021 + 2)) / (1000 + 4)  # the kind, leaning 4 counts on its verdict
    assert label == "negative" and agree is None and math.isclose(1 - p, shrunk)


def test_an_imprecise_kind_is_disputed_not_negative():
    label, _, p = consensus(wrong(kind="equation_step"))
    assert label == "disputed" and 0.5 < 1 - p < 0.95


def test_a_kinds_precision_is_read_where_the_problem_is():
    gsm8k = consensus(wrong(kind="word_problem_arithmetic"), domains=("math/gsm8k", "math"))
    competition = consensus(wrong(kind="word_problem_arithmetic"), domains=("math/competition", "math"))
    assert gsm8k[0] == "negative" and competition[0] == "disputed" and competition[2] > 0.5


def test_agreeing_votes_add_up():
    alone = consensus(wrong(kind="equation_step"))
    together = consensus(wrong(kind="equation_step"), wrong("reference"))
    assert together[2] < alone[2] and together[1] is True


def test_an_unknown_kind_leans_on_its_verdicts_pooled_precision():
    found = VERIFIER.precision("incorrect", "no_such_kind", ("math",))
    assert found is not None and found.cell == "incorrect/*@math" and found.n == 1021


def test_a_lone_unmeasured_vote_never_decides_whatever_the_prior():
    """A plug-in of unmeasured precision (here the reference with no table) alone: `disputed`."""
    for prior in (None, 0.05, 0.5, 0.99):
        weighs = Weighing({}, prior_correct=prior)
        for verdict in ("incorrect", "correct"):
            label, _, p = consensus(StepLabel("reference", verdict), weighs=weighs)
            assert label == "disputed", (prior, verdict)
            expected = (0.5 if prior is None else prior) / (1 - (0.5 if prior is None else prior))
            expected *= UNMEASURED_RATIO if verdict == "correct" else 1 / UNMEASURED_RATIO
            assert math.isclose(p, expected / (1 + expected))


def test_two_unmeasured_votes_still_decide_nothing():
    weighs = Weighing({})
    labels = (wrong("reference"), mc_label(False, 0.0, {}, "mc@m"), wrong("judge"))
    assert consensus(*labels, weighs=weighs)[0] == "disputed"


def test_no_vote_is_unlabeled():
    assert consensus(StepLabel("verifier", "unverifiable")) == ("unlabeled", None, None)


def test_thresholds_come_from_the_config():
    strict = weighing(RunConfig.model_validate({"labels": {"consensus": {"negative_at": 0.999}}}))
    strict = Weighing(WEIGHING.tables, strict.negative_at, strict.positive_at)
    assert consensus(wrong(kind="closed_arithmetic"), weighs=strict)[0] == "disputed"
    loose = Weighing(WEIGHING.tables, negative_at=0.55)
    assert consensus(wrong(kind="equation_step"), weighs=loose)[0] == "negative"


def test_the_weighings_digest_follows_its_tables_and_thresholds():
    assert WEIGHING.digest() == Weighing(dict(WEIGHING.tables)).digest()
    assert WEIGHING.digest() != Weighing({"verifier": VERIFIER}).digest()
    assert WEIGHING.digest() != Weighing(WEIGHING.tables, negative_at=0.9).digest()


def test_consensus_rejects_unknown_verdict():
    with pytest.raises(ValueError, match="unknown verdict"):
        StepLabel("verifier", "unparsed")


class Reviewer(BaseSource):
    """A human source's shape: no engine, the strongest vote, and its `correct` overrules."""

    name = "reviewer"
    positive = negative = Strength.REVIEWED
    positive_overrules = True


def test_a_reviewers_answer_decides_against_any_automatic_vote():
    sources = {**registry(), "reviewer": Reviewer()}
    labels = (wrong(kind="closed_arithmetic"), StepLabel("reviewer", "correct"))
    assert consensus(*labels, sources=sources)[:2] == ("positive", False)
    labels = (StepLabel("verifier", "correct", kind="closed_arithmetic"), StepLabel("reviewer", "incorrect"))
    assert consensus(*labels, sources=sources)[:2] == ("negative", False)


def test_a_label_of_an_unregistered_source_is_refused():
    with pytest.raises(ValueError, match="no registered source"):
        step_consensus([StepLabel("nosuch", "correct")], registry())


def test_first_error_verifier_skips_unverifiable():
    assert first_error_verifier(["unverifiable", "correct", "incorrect", "incorrect"]) == 2
    assert first_error_verifier(["correct", "unverifiable"]) is None
    assert first_error_verifier([]) is None


def test_first_error_mc_needs_every_earlier_step_known():
    assert first_error_mc([True, False, True]) == 1
    assert first_error_mc([False]) == 0
    assert first_error_mc([True, True]) is None
    assert first_error_mc([True, None, False]) is None


def test_first_error_index_dispatches_on_label_type():
    assert first_error_index(["correct", "incorrect"]) == 1
    assert first_error_index([True, True, False]) == 2
    assert first_error_index([None, False]) is None


def test_a_step_is_read_in_its_sources_cells_then_its_problem_set_then_pooled():
    from prm_factory.labels.consensus import domains_of

    assert domains_of("math", "gsm8k", "Ana has 3 apples.") == ("math/gsm8k", "math")
    assert domains_of("math", "external:processbench", "Ana has 3 apples.") == (
        "math/external:processbench",
        "math/gsm8k",
        "math",
    )
    assert domains_of("math", "external:prm800k", "Find $x$ if $x^2 = 4$.")[1] == "math/competition"
    # a price is no LaTeX: a grade-school problem with dollars is read in the GSM8K cells
    assert domains_of("math", "external", "A pen costs $2 and a book $12.50.")[1] == "math/gsm8k"
    assert domains_of("math", "external", "What is $2+3$?")[1] == "math/competition"
    assert domains_of("math", "external", r"Simplify \frac{6}{8}.")[1] == "math/competition"
    assert domains_of("code", "mbpp", "Write add.") == ("code/mbpp", "code")
    label = consensus(
        wrong(kind="word_problem_arithmetic"), domains=domains_of("math", "external:x", "Ana has 3.")
    )
    assert label[0] == "negative"  # the GSM8K cells: 493 / 495


JOINT = JointTable(
    ("verifier", "reference"),
    ("math-sympy@test", "reference@test"),
    "dev set",
    (
        JointCell(("correct", "incorrect"), "math/synthetic", 98, 48),  # the two votes together: a coin
        JointCell(("incorrect", "unverifiable"), "math/synthetic", 50, 0),
    ),
    (("math/synthetic", 0.4),),
)
JOINTLY = Weighing(WEIGHING.tables, joint={JOINT.sources: JOINT})
SYNTHETIC = ("math/synthetic", "math/gsm8k", "math")
PAIR = (StepLabel("verifier", "correct", kind="closed_arithmetic"), wrong("reference"))


def test_two_sources_read_together_weigh_their_joint_cell_not_the_product():
    product = consensus(*PAIR, domains=SYNTHETIC)
    label, agree, p = consensus(*PAIR, weighs=JOINTLY, domains=SYNTHETIC)
    assert math.isclose(p, (48 + 1) / (98 + 2))  # the cell's share at its own base rate as the prior
    assert label == "disputed" and agree is False  # agreement is still the two sources' own votes
    assert not math.isclose(product[2], p)
    # one source abstaining is a pair too: an `unverifiable` beside an `incorrect` reads its cell
    lone = consensus(wrong(kind="closed_arithmetic"), StepLabel("reference", "unverifiable"), weighs=JOINTLY,
                     domains=SYNTHETIC)  # fmt: skip
    assert math.isclose(lone[2], 1 / 52) and lone[0] == "negative"


def test_where_no_joint_cell_was_measured_the_product_stands():
    gsm8k = ("math/gsm8k", "math")
    assert consensus(*PAIR, weighs=JOINTLY, domains=gsm8k) == consensus(*PAIR, domains=gsm8k)
    # a pair the synthetic cells never saw, and a step one source did not label at all
    unseen = (StepLabel("verifier", "correct", kind="closed_arithmetic"), StepLabel("reference", "correct"))
    assert consensus(*unseen, weighs=JOINTLY, domains=SYNTHETIC) == consensus(*unseen, domains=SYNTHETIC)
    alone = (wrong(kind="closed_arithmetic"),)
    assert consensus(*alone, weighs=JOINTLY, domains=SYNTHETIC) == consensus(*alone, domains=SYNTHETIC)


def test_a_reviewers_answer_is_never_merged_into_a_joint_cell():
    sources = {**registry(), "verifier": Reviewer()}  # the pair's first source answers as a reviewer
    labels = (StepLabel("verifier", "correct"), wrong("reference"))
    assert consensus(*labels, weighs=JOINTLY, domains=SYNTHETIC, sources=sources)[0] == "positive"


def test_the_shipped_weighing_holds_the_joint_table_and_its_digest_follows_it():
    shipped = weighing(None)
    assert ("verifier", "reference") in shipped.joint
    assert {c.domain for c in shipped.joint["verifier", "reference"].cells} == {"math/synthetic"}
    assert JOINTLY.digest() != WEIGHING.digest()
    assert weighing(RunConfig()).joint == shipped.joint


def test_an_mc_vote_weighs_the_table_of_its_own_policy_and_no_other():
    """MC's labels name their kind (where the value came from) and their policy; a table measured on one
    policy weighs that policy's votes by kind, and says nothing of another model's rollouts."""
    mc = CalibrationTable(
        "mc",
        "mc@small",
        "dev set",
        0.4,
        (Cell("incorrect", "rollouts", "math", 150, 60), Cell("incorrect", "outcome", "math", 150, 108)),
    )
    w = Weighing({"mc": mc}, prior_correct=0.4)
    rollouts = {"value_source": "rollouts", "n_judged": 1, "n_correct": 0}
    mine = mc_label(False, 0.0, rollouts, "mc@small")
    outcome = mc_label(False, 0.0, {"value_source": "outcome"}, "mc@small")
    assert (mine.kind, outcome.kind) == ("rollouts", "outcome")
    # a lone vote reads its measured precision: this policy's failed rollout is on a wrong step 40 % of the
    # time (it fails from right prefixes), so the step is right with P = 0.6, above the prior
    assert step_probability([mine], registry(), w)[2] == pytest.approx(0.6, abs=0.01)
    assert step_probability([outcome], registry(), w)[2] < 0.35  # its wrong outcomes are 72 % wrong steps
    other = mc_label(False, 0.0, rollouts, "mc@large")
    p_other = step_probability([other], registry(), w)[2]
    assert p_other == pytest.approx(1 / (1 + UNMEASURED_RATIO * 0.6 / 0.4))  # the unmeasured default
    assert step_probability([other], registry(), w)[0] == "disputed"


def test_a_failed_rollout_on_a_first_step_is_no_evidence_that_the_step_is_right():
    """MC's rollouts are drawn on early prefixes, which are right more often than steps overall: read against
    the whole table's base rate (0.4), a failed rollout that lands on a right first step 60 % of the time
    raised a step's P(right) above what the verifier said; read against the rollouts' own steps (right
    62 % of the time), it lowers it, as a failure should (at one prior: `[labels.consensus] prior_correct`).
    """
    cells = (Cell("incorrect", "rollouts", "math", 150, 60), Cell("correct", "k", "math", 100, 90))
    one_base = CalibrationTable("mc", "mc@small", "dev set", 0.4, cells)
    by_kind = CalibrationTable(
        "mc", "mc@small", "dev set", 0.4, cells, kind_base_rates=(("rollouts@math", 0.62),)
    )
    verifier = CalibrationTable("verifier", "", "dev set", 0.4, (Cell("correct", "k", "math", 100, 90),))
    failed = mc_label(False, 0.0, {"value_source": "rollouts", "n_judged": 1, "n_correct": 0}, "mc@small")
    says_right = StepLabel("verifier", "correct", kind="k")
    alone = step_probability([says_right], registry(), Weighing({"verifier": verifier}, prior_correct=0.5))[2]
    before = step_probability(
        [says_right, failed], registry(), Weighing({"verifier": verifier, "mc": one_base}, prior_correct=0.5)
    )[2]
    now = step_probability(
        [says_right, failed], registry(), Weighing({"verifier": verifier, "mc": by_kind}, prior_correct=0.5)
    )[2]
    assert before > alone > now
