"""Precision of the verifier's `incorrect` per reading kind (issue 38), and the eval report with it."""

from __future__ import annotations

from prm_factory.evaluation.kind_precision import UNNAMED, kind_precision, kind_rows
from prm_factory.evaluation.processbench import Split, evaluate_split, report_json
from prm_factory.schemas.external_chains import ExternalChain
from prm_factory.verifiers.math.reading_kinds import CLOSED_ARITHMETIC, EQUATION_STEP, KindPrecision
from prm_factory.verifiers.protocol import Verdict


def _chain(name: str, steps: int, first_error: int) -> ExternalChain:
    return ExternalChain(
        id=name, problem="p", steps=tuple(f"s{i}" for i in range(steps)), first_error_label=first_error
    )


def test_flags_count_right_at_the_first_error_and_wrong_before_it_or_in_a_correct_chain() -> None:
    chains = [_chain("a", 3, 1), _chain("b", 2, -1)]
    labels = [["incorrect", "incorrect", "incorrect"], ["correct", "incorrect"]]
    kinds = [[EQUATION_STEP, CLOSED_ARITHMETIC, CLOSED_ARITHMETIC], [None, None]]
    table = kind_precision(chains, labels, kinds)
    assert table == {
        CLOSED_ARITHMETIC: KindPrecision(1, 0),  # the step after the first error is not counted
        EQUATION_STEP: KindPrecision(0, 1),
        UNNAMED: KindPrecision(0, 1),
    }
    assert list(table) == [CLOSED_ARITHMETIC, EQUATION_STEP, UNNAMED]  # READING_KINDS order, then others
    assert kind_rows(table)[1] == (EQUATION_STEP, "0.0", "0.0-79.3", "0 / 1", "1")
    # few flags, a wide interval: 12 of 12 right is not known to be 98 % precise
    assert kind_rows({CLOSED_ARITHMETIC: KindPrecision(12, 0)})[0][2] == "75.8-100.0"


class KindVerifier:
    name = "kinds"
    version = "0"

    def grade(self, problem, completion):  # pragma: no cover - not used here
        return Verdict("unparsed")

    def check_steps(self, problem, steps):
        return [
            Verdict("incorrect", kind=CLOSED_ARITHMETIC) if "bad" in s else Verdict("correct") for s in steps
        ]


def test_an_eval_report_carries_the_verifier_flags_by_kind() -> None:
    chain = ExternalChain(id="c", problem="p", steps=("fine", "bad", "bad"), first_error_label=1)
    right = ExternalChain(id="d", problem="p", steps=("bad",), first_error_label=-1)
    report = evaluate_split(Split("s", ("s.json",), (chain, right), ()), KindVerifier())
    assert report.verifier_kinds == {CLOSED_ARITHMETIC: KindPrecision(1, 1)}
    figures = report_json("s.json", [report])
    kinds = figures["splits"][0]["verifier_kinds"]
    interval = kinds[CLOSED_ARITHMETIC].pop("interval")
    assert kinds == {CLOSED_ARITHMETIC: {"right": 1, "wrong": 1, "precision": 0.5}}
    assert [round(x, 3) for x in interval] == [0.095, 0.905]  # Wilson 95 % of 1 in 2
