"""The four built-in label sources behind one shape (labels/sources/): each labels a chain's steps through
its batch call, names its first error by its own rule, and votes with its declared strength."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from prm_factory.config.run_config import RunConfig, load_config
from prm_factory.labels.assemble import SampledChain, join_steps
from prm_factory.labels.source import SourceSetup, Strength, Vote
from prm_factory.labels.sources import judge, mc, reference, verifier
from prm_factory.rollouts.values import ChainValues, StepValue
from prm_factory.sampling.protocol import Generation, GenerationParams
from prm_factory.sampling.vllm_sampler import EngineSettings
from prm_factory.schemas.records import Problem
from prm_factory.schemas.step_labels import StepLabel
from prm_factory.verifiers.protocol import Verdict

JANET = Problem(
    "p",
    "gsm8k",
    "math",
    "Janet's ducks lay 16 eggs. She eats 3 and bakes with 4. She sells the rest at $2 each. How much?",
    reference_answer="18",
    reference_solution="16 - 3 - 4 = <<16-3-4=9>>9 eggs.\n9 * 2 = <<9*2=18>>18\n#### 18",
)


def chain(steps: list[str], outcome: str = "incorrect", chain_id: str = "c") -> SampledChain:
    text, spans = join_steps(steps)
    return SampledChain(chain_id, JANET, "", 0, Generation(text, 0, "stop"), spans, Verdict(outcome), None)


@dataclass(frozen=True)
class KindVerdict(Verdict):
    kind: str | None = None


class Checker:
    name, version = "checker", "1"

    def check_steps(self, problem, steps):
        return [KindVerdict("incorrect", "false", {"c": 1}, "closed_arithmetic") for _ in steps]


def test_the_verifier_source_keeps_reason_evidence_and_the_reading_kind() -> None:
    [label] = verifier.from_verdicts(Checker().check_steps(JANET, ["2 + 2 = 5"]), "checker@1+ab")
    assert (label.verdict, label.reason, json.loads(label.evidence), label.kind) == (
        "incorrect",
        "false",
        {"c": 1},
        "closed_arithmetic",
    )
    # its votes say only yes or no: what they weigh comes from its calibration table (labels/consensus.py)
    assert verifier.SOURCE.vote(label).positive is False
    assert verifier.SOURCE.vote(StepLabel("verifier", "correct")).positive is True


def test_a_verifier_incorrect_weighs_its_kinds_measured_precision() -> None:
    """The verifier source votes its verdict's polarity; its kind is what the consensus looks up in the
    calibration table: a precise kind stays negative against a positive of unmeasured precision, an
    imprecise one is disputed by it; alone, both read their own precision."""
    from prm_factory.labels.calibration import CalibrationTable, Cell
    from prm_factory.labels.consensus import Weighing, step_probability
    from prm_factory.labels.registry import registry
    from prm_factory.schemas.step_labels import mc_label

    table = CalibrationTable(
        "verifier",
        "",
        "dev set",
        0.5,
        (
            Cell("incorrect", "closed_arithmetic", "math", 500, 499),
            Cell("incorrect", "equation_step", "math", 21, 12),
        ),
    )
    weighs = Weighing({"verifier": table})
    assert verifier.SOURCE.vote(StepLabel("verifier", "incorrect", kind="equation_step")).positive is False
    reached = mc_label(True, 1.0, {}, "mc@m")  # a rollout from the prefix reached the answer
    for kind, against, expected in (
        ("closed_arithmetic", [reached], "negative"),
        ("closed_arithmetic", [], "negative"),
        ("equation_step", [reached], "disputed"),
        ("equation_step", [], "disputed"),
    ):
        labels = [StepLabel("verifier", "incorrect", kind=kind), *against]
        assert step_probability(labels, registry(), weighs)[0] == expected, (kind, against)


def test_the_reference_source_runs_on_math_chains_only_and_aligns_them() -> None:
    setup = SourceSetup(RunConfig(), "math", Checker())  # type: ignore[arg-type]
    assert reference.SOURCE.applies(setup)
    assert not reference.SOURCE.applies(SourceSetup(RunConfig(), "code", Checker()))  # type: ignore[arg-type]
    [labels] = reference.SOURCE.label([chain(["She has 16 - 3 = 13 eggs.", "13 * 2 = 26"])], {}, setup)
    assert [label.verdict for label in labels] == ["incorrect", "incorrect"]
    assert labels[0].labeler.startswith("reference-align@") and reference.SOURCE.first_error(labels) == 0


def test_mc_labels_come_from_the_rollout_values_and_its_first_error_needs_known_steps() -> None:
    values = ChainValues(
        "c",
        (
            StepValue(0, 0.5, 2, 1, True, 0.5, "rollouts", 30, 0.2, 2),
            StepValue(1, 0.0, 2, 0, False, 0.0, "rollouts", 20, 0.1, 2),
        ),
        1,
        4,
        50,
    )
    labels = mc.from_values(values, 3, "policy")
    assert [(lb.verdict, lb.value) for lb in labels] == [
        ("correct", 0.5),
        ("incorrect", 0.0),
        ("unverifiable", None),
    ]
    assert json.loads(labels[0].evidence)["tokens"] == 30 and labels[0].labeler == "mc@policy"
    assert mc.SOURCE.first_error(labels) == 1
    assert mc.SOURCE.first_error(mc.from_values(None, 2, "policy")) is None
    assert mc.SOURCE.vote(labels[0]) == Vote(True, Strength.STRONG)
    assert mc.SOURCE.vote(labels[1]) == Vote(False, Strength.WEAK)


class ScriptedJudge:
    """A sampler that answers every critique with `answer`."""

    model_id = "critic"

    def __init__(self, answer: str) -> None:
        self.answer, self.prompts = answer, 0

    def render_chat(self, system, user):
        return user

    def generate(self, prompts, params: GenerationParams):
        self.prompts += len(prompts)
        return [[Generation(self.answer, 5, "stop")] for _ in prompts]


def test_the_judge_budget_sends_only_chains_whose_sources_disagree(monkeypatch) -> None:
    calm, split = (
        chain(["16 - 3 - 4 = 9", "9 * 2 = 18"], chain_id="calm"),
        chain(["a", "b"], chain_id="split"),
    )
    prior = {
        "verifier": [tuple(StepLabel("verifier", "correct") for _ in range(2))] * 2,
        "mc": [
            tuple(StepLabel("mc", "correct") for _ in range(2)),
            (StepLabel("mc", "correct"), StepLabel("mc", "incorrect")),
        ],
    }
    config = RunConfig()
    assert [c.chain_id for c in judge.picked(config, [calm, split], prior)] == ["split"]
    everything = load_config(None, {"judge.budget": "all"})
    assert [c.chain_id for c in judge.picked(everything, [calm, split], prior)] == ["calm", "split"]
    sampler = ScriptedJudge(r"The first error is in paragraph 1. \boxed{1}")
    monkeypatch.setattr("prm_factory.sampling.backends.get_sampler", lambda settings: sampler)
    engine = EngineSettings(checkpoint="/none", model_id="critic", seed=0)
    setup = SourceSetup(config, "math", Checker(), engine)  # type: ignore[arg-type]
    out = judge.SOURCE.label([calm, split], prior, setup)
    assert out[0] is None and [lb.verdict for lb in out[1]] == ["correct", "incorrect"]
    assert sampler.prompts == 1 and out[1][0].labeler == judge.SOURCE.labeler(setup) == f"critic@{_hash()}"


def _hash() -> str:
    from prm_factory.labels.judge import prompt_hash

    return prompt_hash()


@pytest.mark.parametrize(
    ("verdicts", "first"),
    [
        (["correct", "correct"], -1),  # the judge found no error
        (["correct", "incorrect"], 1),
        (["unverifiable", "unverifiable"], None),  # an unreadable judgement
    ],
)
def test_the_judges_first_error_is_the_step_it_named(verdicts, first) -> None:
    assert judge.SOURCE.first_error([StepLabel("judge", v) for v in verdicts]) == first


def test_the_verifier_and_mc_sources_make_a_runs_labels_from_its_cached_stages_as_label_does() -> None:
    """`run` computes verdicts and rollouts in cached stages and hands them to the registry's sources
    (`labels_of`): the labels are the ones the sources' own batch calls give `label`, with their identity."""
    from prm_factory.labels.registry import RegistryError, registry, stage_source
    from prm_factory.verifiers.math.verifier import MathVerifier

    checker = MathVerifier()
    engine = EngineSettings(checkpoint="/none", model_id="policy", seed=0)
    setup = SourceSetup(RunConfig(), "math", checker, engine)
    chains = [chain(["2 + 2 = 5", "So 4."], chain_id="c"), chain(["1 + 1 = 3"], chain_id="d")]
    try:
        checked = [checker.check_steps(c.problem, [s.text for s in c.steps]) for c in chains]
        source = stage_source(registry(), "verifier", verifier.VerifierSource)
        assert source.labels_of(checked, setup) == source.label(chains, {}, setup)
    finally:
        checker.close()
    made = source.labels_of(checked, setup)
    assert made[0][0].verdict == "incorrect" and made[0][0].labeler == source.labeler(setup)

    values = [ChainValues("d", (StepValue(0, 0.0, 2, 0, False, 0.0, "rollouts", 20, 0.1, 2),), 0, 2, 20)]
    drawn = stage_source(registry(), "mc", mc.MonteCarloSource).labels_of(chains, values, setup)
    assert drawn == [mc.from_values(None, 2, "policy"), mc.from_values(values[0], 1, "policy")]
    with pytest.raises(RegistryError, match="'mc' is a MonteCarloSource, not the VerifierSource"):
        stage_source(registry(), "mc", verifier.VerifierSource)
