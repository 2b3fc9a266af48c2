"""Calibration tables from labelled dev sets (evaluation/calibrate.py): only steps up to the first error
count, every label is counted under `math` and `math/<where>`."""

from __future__ import annotations

import json

import pytest

from prm_factory.evaluation.calibrate import (
    MeasuredLabel,
    bench_step_rows,
    joint_table_from,
    main,
    measure_chain,
    parse_set,
    read_rows,
    tables_from,
    truth,
    with_apart_cells,
    with_apart_joint,
)
from prm_factory.labels.calibration import read_table
from prm_factory.labels.joint_calibration import read_joint_table
from prm_factory.schemas.external_chains import ExternalChain
from prm_factory.verifiers.protocol import Verdict


class Scripted:
    """Flags step 1 as a false closed-arithmetic claim, calls the rest correct."""

    def check_steps(self, problem, steps):
        return [
            Verdict("incorrect", kind="closed_arithmetic") if i == 1 else Verdict("correct")
            for i in range(len(steps))
        ]

    def grade(self, problem, text):
        return Verdict("incorrect")


def test_steps_after_the_first_error_have_no_known_truth():
    assert truth(0, 3) == [False, None, None]
    assert truth(-1, 3) == [True, True, True]


def test_a_chain_is_measured_up_to_its_first_error():
    chain = ExternalChain("c", "q?", ("a", "b", "c"), first_error_label=1)
    measured = measure_chain(chain, "competition", Scripted())
    verifier = [m for m in measured if m.source == "verifier"]
    assert [(m.step_index, m.verdict, m.right) for m in verifier] == [
        (0, "correct", True),
        (1, "incorrect", False),
    ]
    reference = [m for m in measured if m.source == "reference"]
    assert {m.verdict for m in reference} == {"unverifiable"}  # no worked solution


def test_tables_count_every_label_pooled_and_where_it_was_read(tmp_path):
    rows = [
        MeasuredLabel("c", 0, "verifier", "incorrect", "k", "gsm8k", False),
        MeasuredLabel("d", 0, "verifier", "incorrect", "k", "competition", True),
        MeasuredLabel("d", 0, "reference", "correct", None, "competition", True),
    ]
    tables = tables_from(rows, {"verifier": "math-sympy@1"}, ["set"])
    verifier = tables["verifier"]
    assert (
        verifier.cell("incorrect", "k", "math").n == 2
        and verifier.cell("incorrect", "k", "math").n_right == 1
    )
    assert verifier.cell("incorrect", "k", "math/gsm8k").n_right == 1
    assert verifier.cell("incorrect", "k", "math/competition").n_right == 0
    assert verifier.labeler == "math-sympy@1" and tables["reference"].cell("correct", "", "math").n == 1
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(m.__dict__) + "\n" for m in rows))
    assert read_rows(path) == rows


def test_a_set_names_where_its_problems_come_from():
    path, where = parse_set("data/real_errors.jsonl:gsm8k")
    assert path.name == "real_errors.jsonl" and where == "gsm8k"


def test_a_real_slip_the_gold_missed_counts_as_a_wrong_step(tmp_path):
    from prm_factory.evaluation.calibrate import main, read_adjudication

    rows = [
        MeasuredLabel("c", i, "verifier", "incorrect" if i == 1 else "correct", None, "x", True)
        for i in range(3)
    ]
    rows.append(MeasuredLabel("d", 0, "verifier", "incorrect", "k", "x", True))
    kept = tmp_path / "rows.jsonl"
    kept.write_text("".join(json.dumps(m.__dict__) + "\n" for m in rows))
    readings = tmp_path / "adjudication.jsonl"
    readings.write_text(
        json.dumps({"id": "c", "step": 1, "read": "real slip"})
        + "\n"
        + json.dumps({"id": "d", "step": 0, "read": "misreading"})
        + "\n"
    )
    assert read_adjudication(readings) == {"c": 1}
    out, adjudicated = tmp_path / "tables", tmp_path / "adjudicated.jsonl"
    args = ["--out", str(out), "--from-rows", str(kept), "--adjudication", str(readings)]
    assert main([*args, "--rows", str(adjudicated)]) == 0
    assert [(m.chain_id, m.step_index, m.right) for m in read_rows(adjudicated)] == [
        ("c", 0, True),
        ("c", 1, False),  # the slip: a wrong step, its flag right; step 2 has no known truth now
        ("d", 0, True),  # a misreading: the gold stands, the flag is wrong
    ]
    table = json.loads((out / "verifier.json").read_text())
    flags = next(
        c for c in table["cells"] if c["verdict"] == "incorrect" and c["kind"] == "" and c["domain"] == "math"
    )
    assert (flags["n"], flags["n_right"]) == (1, 1)


def test_worked_solutions_by_question_let_the_reference_vote(tmp_path, monkeypatch):
    from prm_factory.evaluation import calibrate as module
    from prm_factory.evaluation.calibrate import calibrate
    from prm_factory.schemas.reference_solutions import ReferenceSolution, question_key

    class AllRight(Scripted):
        def check_steps(self, problem, steps):
            return [Verdict("correct") for _ in steps]

    monkeypatch.setattr(module, "source_labelers", lambda verifier: {})  # a scripted verifier has no code
    question = "Tom has 3 apples and buys 4 more. How many?"
    chain = {"id": "c", "problem": question, "steps": ["3 + 4 = 7 apples.", "The answer is 7."], "label": -1}
    path = tmp_path / "chains.jsonl"
    path.write_text(json.dumps(chain) + "\n")
    solutions = {question_key(question): ReferenceSolution("He has 3 + 4 = 7 apples. \\boxed{7}", "7")}
    without = calibrate([(path, "competition")], AllRight())["reference"]
    with_ = calibrate([(path, "competition")], AllRight(), solutions=solutions)["reference"]
    assert without.cells == ()  # no worked solution: the reference never votes
    assert with_.cell("correct", "", "math/competition").n == 2


def _bench_steps(tmp_path):
    fields = ("chain", "step", "truth", "verifier", "kind", "reference")
    steps = [
        dict(zip(fields, values, strict=True))
        for values in (
            ("a", 0, "incorrect", "correct", "w", "incorrect"),
            ("a", 1, "correct", "correct", "w", "unverifiable"),
            ("b", 0, "incorrect", "incorrect", "w", "correct"),
        )
    ]
    path = tmp_path / "label_noise_steps.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in steps))
    return path


def test_cells_counted_apart_leave_the_pooled_cells_and_other_domains_as_they_were(tmp_path):
    rows = [
        MeasuredLabel("c", 0, "verifier", "correct", "w", "gsm8k", True),
        MeasuredLabel("c", 0, "reference", "correct", None, "gsm8k", True),
    ]
    base = tables_from(rows, {}, ["dev"])
    measured = bench_step_rows(_bench_steps(tmp_path), "synthetic")
    assert [(m.chain_id, m.step_index, m.source, m.verdict, m.right) for m in measured[:2]] == [
        ("a", 0, "verifier", "correct", False),
        ("a", 0, "reference", "incorrect", False),
    ]
    tables = with_apart_cells(base, measured, ["bench"], note="apart")
    verifier, reference = tables["verifier"], tables["reference"]
    assert verifier.cell("correct", "w", "math/synthetic") is not None
    assert (
        verifier.cell("correct", "w", "math/synthetic").n,
        verifier.cell("correct", "w", "math/synthetic").n_right,
    ) == (2, 1)
    assert verifier.cell("incorrect", "w", "math/synthetic").n_right == 1
    assert reference.cell("incorrect", "", "math/synthetic").n_right == 1  # a wrong step flagged: agreed
    # the pooled cells, the other domain and the base rate are the dev sets' alone
    for source in ("verifier", "reference"):
        kept = {c for c in tables[source].cells if c.domain != "math/synthetic"}
        assert kept == set(base[source].cells) and tables[source].base_rate == base[source].base_rate
        assert dict(tables[source].domain_base_rates)["math/synthetic"] == pytest.approx(1 / 3)
    assert verifier.sets == ("dev", "bench") and verifier.notes == "apart"
    with pytest.raises(ValueError, match="already has cells"):
        with_apart_cells(tables, measured, ["again"])


def test_apart_on_the_command_line_extends_the_given_tables(tmp_path):
    base = tmp_path / "base"
    rows = [
        MeasuredLabel("c", 0, source, "correct", None, "gsm8k", True) for source in ("verifier", "reference")
    ]
    for source, table in tables_from(rows, {}, ["dev"]).items():
        table.write(base / f"{source}.json")
    out = tmp_path / "out"
    args = ["--out", str(out), "--base", str(base), "--apart", f"{_bench_steps(tmp_path)}:synthetic"]
    assert main(args) == 0
    assert read_table(out / "verifier.json").cell("incorrect", "w", "math/synthetic").n == 1


def test_joint_cells_pair_the_two_sources_verdicts_of_each_step_where_it_was_read(tmp_path):
    measured = bench_step_rows(_bench_steps(tmp_path), "synthetic")
    lone = MeasuredLabel("z", 0, "verifier", "incorrect", "w", "synthetic", False)  # no reference label
    joint = joint_table_from([*measured, lone], {"verifier": "v@1", "reference": "r@1"}, ["bench"])
    cells = {(c.verdicts, c.domain): (c.n, c.n_right) for c in joint.cells}
    assert cells == {
        (("correct", "incorrect"), "math/synthetic"): (1, 0),
        (("correct", "unverifiable"), "math/synthetic"): (1, 1),
        (("incorrect", "correct"), "math/synthetic"): (1, 0),
    }
    assert joint.labelers == ("v@1", "r@1") and joint.sets == ("bench",)
    assert dict(joint.domain_base_rates)["math/synthetic"] == pytest.approx(1 / 3)
    again = with_apart_joint(None, joint, "apart")
    assert again.notes == "apart"
    with pytest.raises(ValueError, match="already has cells"):
        with_apart_joint(again, joint)


def test_apart_on_the_command_line_writes_the_joint_table_beside_the_tables(tmp_path):
    base = tmp_path / "base"
    rows = [
        MeasuredLabel("c", 0, source, "correct", None, "gsm8k", True) for source in ("verifier", "reference")
    ]
    for source, table in tables_from(rows, {"verifier": "v@2"}, ["dev"]).items():
        table.write(base / f"{source}.json")
    out = tmp_path / "out"
    args = ["--out", str(out), "--base", str(base), "--apart", f"{_bench_steps(tmp_path)}:synthetic"]
    assert main(args) == 0
    joint = read_joint_table(out / "joint" / "verifier+reference.json")
    assert joint.sources == ("verifier", "reference") and joint.labelers == ("v@2", "")
    assert {c.domain for c in joint.cells} == {"math/synthetic"}
    # a second --apart run onto that output extends its joint table with the new domain's cells
    assert (
        main(
            ["--out", str(tmp_path / "o2"), "--base", str(out), "--apart", f"{_bench_steps(tmp_path)}:other"]
        )
        == 0
    )
    extended = read_joint_table(tmp_path / "o2" / "joint" / "verifier+reference.json")
    assert {c.domain for c in extended.cells} == {"math/synthetic", "math/other"}


def _bench_mc_steps(tmp_path, policies=("mc@small",)):
    """Bench steps with MC's columns: a failed rollout on a right step, one on a wrong step, a wrong outcome
    on a wrong last step, and a step MC did not reach."""
    rows = [
        ("a", 0, "correct", False, "rollouts"),
        ("b", 0, "incorrect", False, "rollouts"),
        ("b", 1, "incorrect", False, "outcome"),
        ("b", 2, "correct", None, "none"),
    ]
    path = tmp_path / "mc_steps.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {"chain": c, "step": i, "truth": t, "verifier": "unverifiable", "reference": "unverifiable"}
                | {"mc": mc, "mc_source": src, "mc_labeler": policies[i % len(policies)]}
            )
            + "\n"
            for c, i, t, mc, src in rows
        )
    )
    return path


def test_mc_on_the_command_line_writes_its_policys_table_by_kind_and_refuses_two_policies(tmp_path):
    out = tmp_path / "out"
    assert main(["--out", str(out), "--mc", f"{_bench_mc_steps(tmp_path)}:synthetic", "--notes", "k=1"]) == 0
    mc = read_table(out / "mc.json")
    assert (mc.source, mc.labeler, mc.notes) == ("mc", "mc@small", "k=1")
    rollouts = mc.cell("incorrect", "rollouts", "math/synthetic")
    assert (rollouts.n, rollouts.n_right) == (2, 1)  # one of its two failed rollouts was on a wrong step
    assert (mc.cell("incorrect", "outcome", "math/synthetic").n_right, len(mc.cells)) == (1, 2)
    assert {c.domain for c in mc.cells} == {"math/synthetic"}  # counted apart, never in pooled `math`
    # each kind against its own steps: failed rollouts on a right and a wrong first step, a wrong outcome,
    # and the step MC did not reach (no kind)
    assert dict(mc.kind_base_rates) == {
        "rollouts@math/synthetic": 0.5,
        "outcome@math/synthetic": 0.0,
        "@math/synthetic": 1.0,
    }
    assert not (out / "verifier.json").exists()  # the other sources' tables are left alone
    (tmp_path / "two").mkdir()
    two = _bench_mc_steps(tmp_path / "two", ("mc@small", "mc@large"))
    with pytest.raises(SystemExit, match="2 policies"):
        main(["--out", str(out), "--mc", f"{two}:synthetic"])
