import json

from prm_factory.labels.assemble import RecordContext, SampledChain, build_records, chain_id_for
from prm_factory.labels.calibration import CalibrationTable, Cell
from prm_factory.labels.consensus import Weighing
from prm_factory.labels.registry import registry
from prm_factory.labels.sources.mc import from_values
from prm_factory.labels.sources.verifier import from_verdicts
from prm_factory.rollouts.values import ChainValues, StepValue
from prm_factory.sampling.protocol import Generation
from prm_factory.sampling.segment import segment
from prm_factory.schemas.records import Problem
from prm_factory.verifiers.protocol import Verdict

PROBLEM = Problem("p1", "gsm8k", "math", "q?", reference_answer="7")
TEXT = "3 + 4 = 7\n7 * 2 = 15\n15 - 1 = 14\nThe answer is 14"
VERIFIER = CalibrationTable(
    "verifier",
    "math-sympy@1",
    "dev set",
    0.5,
    (Cell("incorrect", "", "math", 1000, 995), Cell("correct", "", "math", 1000, 900)),
)
WEIGHING = Weighing({"verifier": VERIFIER})  # MC unmeasured: its votes weigh the conservative default


def sampled(text: str = TEXT) -> SampledChain:
    return SampledChain(
        chain_id="c1",
        problem=PROBLEM,
        prompt="<prompt>",
        sample_index=0,
        generation=Generation(text, 30, "stop"),
        steps=tuple(segment(text, "line")),
        outcome=Verdict("incorrect", "14 != 7", {"extracted": "14"}),
        final_answer="14",
    )


def value(i: int, hard: bool | None, source: str = "rollouts") -> StepValue:
    mc = None if hard is None else (0.5 if hard else 0.0)
    return StepValue(i, mc, 2 if hard is not None else 0, 1 if hard else 0, hard, mc, source, 10, 0.1)


def build(verdicts: list[str], values: list[StepValue]):
    chain = sampled()
    labels = {
        "verifier": from_verdicts([Verdict(v, "r", {"claim": "x"}) for v in verdicts], "math-sympy@1+abc"),
        "mc": from_values(ChainValues("c1", tuple(values), None, 6, 40, 0.4), len(chain.steps), "m"),
    }
    return build_records(
        chain,
        labels,
        RecordContext(
            run_id="r1",
            model_id="m",
            sampling_json="{}",
            seed=0,
            verifier_name="math-sympy",
            verifier_version="1",
            label_config_hash="h",
            weighing=WEIGHING,
        ),
        registry(),
    )


def test_consensus_first_error_and_provenance() -> None:
    chain, steps = build(
        ["correct", "incorrect", "correct", "unverifiable"],
        [value(0, True), value(1, False), value(2, False), value(3, False, "outcome")],
    )
    # the last: MC's unmeasured `incorrect` alone decides nothing
    assert [s.consensus for s in steps] == ["positive", "negative", "disputed", "disputed"]
    assert [s.labels_agree for s in steps] == [True, True, False, None]
    p = [s.p_correct for s in steps]
    assert p[1] < 0.05 < p[3] < 0.5 < p[2] < 0.95 < p[0]
    assert [s.first_error for s in steps] == [False, True, False, False]
    assert chain.first_errors["verifier"] == 1 and chain.n_steps == 4 and chain.outcome == "incorrect"
    assert all(
        s.label("verifier").labeler == "math-sympy@1+abc" and s.model == "m" and s.label_config_hash == "h"
        for s in steps
    )
    assert json.loads(steps[1].label("verifier").evidence) == {"claim": "x"}
    assert TEXT[steps[1].char_start : steps[1].char_end] == "7 * 2 = 15"


def test_steps_without_values_follow_the_verifier() -> None:
    _, steps = build(["correct", "correct", "incorrect", "unverifiable"], [])
    # a lone `correct` 90 % precise is not enough for `positive`; the measured `incorrect` is `negative`
    assert [s.consensus for s in steps] == ["disputed", "disputed", "negative", "unlabeled"]
    assert steps[0].p_correct == steps[1].p_correct and steps[3].p_correct is None
    assert [json.loads(s.label("mc").evidence)["value_source"] for s in steps] == ["none"] * 4
    assert [s.first_error for s in steps] == [False, False, True, False]


def test_ids_are_stable_and_distinguish_samples() -> None:
    a = chain_id_for("p1", "m", "w", "{}", 0, 0)
    assert a == chain_id_for("p1", "m", "w", "{}", 0, 0)
    assert a != chain_id_for("p1", "m", "w", "{}", 0, 1)
    assert a != chain_id_for("p1", "m", "w2", "{}", 0, 0)
    _, first = build(["correct"] * 4, [])
    _, again = build(["correct"] * 4, [])
    assert [s.step_id for s in first] == [s.step_id for s in again]
    assert len({s.step_id for s in first}) == 4
