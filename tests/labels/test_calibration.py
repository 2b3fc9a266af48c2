"""Calibration tables (labels/calibration.py): counts to precision with an interval, lookup by kind and
where the problems come from, refinement by an audit, and the shipped tables."""

from __future__ import annotations

import math

from prm_factory.labels.calibration import (
    SHRINK,
    CalibrationTable,
    Cell,
    audit_tables,
    dataset_tables,
    load_tables,
    read_table,
    refine,
    shipped_tables,
    tally,
    wilson,
)


def test_wilson_holds_the_share_and_narrows_with_counts():
    low, high = wilson(19, 25)
    assert low < 19 / 25 < high
    assert wilson(190, 250)[1] - wilson(190, 250)[0] < high - low
    assert wilson(0, 0) == (0.0, 1.0)


def test_tally_counts_agreement_with_the_truth_and_the_base_rate():
    rows = [
        ("incorrect", "closed_arithmetic", "math", False),  # right: the step was wrong
        ("incorrect", "closed_arithmetic", "math", True),  # a false alarm
        ("correct", None, "math", True),
        ("unverifiable", None, "math", True),  # no vote: base rate only
    ]
    table = tally(rows, "verifier", "math-sympy@1", "dev set", ["a.jsonl"])
    assert table.cell("incorrect", "closed_arithmetic", "math") == Cell(
        "incorrect", "closed_arithmetic", "math", 2, 1
    )
    assert table.cell("correct", "", "math").n_right == 1 and table.base_rate == 0.75


def test_a_few_counts_lean_on_the_verdicts_pooled_precision():
    cells = (Cell("incorrect", "rare", "math", 1, 0), Cell("incorrect", "common", "math", 99, 99))
    table = CalibrationTable("verifier", "", "dev set", 0.5, cells)
    found = table.precision("incorrect", "rare", ("math",))
    pooled = (99 + 1) / (100 + 2)
    assert math.isclose(found.value, (0 + SHRINK * pooled) / (1 + SHRINK)) and found.value > 0.7


def test_the_most_specific_domain_that_measured_the_verdict_answers():
    cells = (
        Cell("incorrect", "k", "math/gsm8k", 100, 99),
        Cell("incorrect", "k", "math", 130, 106),
        Cell("incorrect", "k", "math/competition", 30, 7),
    )
    table = CalibrationTable("verifier", "", "dev set", 0.5, cells)
    assert table.precision("incorrect", "k", ("math/gsm8k", "math")).cell == "incorrect/k@math/gsm8k"
    assert table.precision("incorrect", "k", ("math/aime", "math")).cell == "incorrect/k@math"
    assert table.precision("correct", "k", ("math",)) is None


def test_an_audit_adds_its_counts_to_the_shipped_table(tmp_path):
    shipped = CalibrationTable("verifier", "v@1", "shipped", 0.5, (Cell("incorrect", "k", "math", 10, 9),))
    audited = [("verifier", "incorrect", "k", "math/mine", True)] * 30  # 30 false alarms on my data
    tables = audit_tables(audited, {"verifier": shipped}, "audit.sqlite")
    refined = tables["verifier"]
    assert (
        refined.cell("incorrect", "k", "math").n == 40 and refined.cell("incorrect", "k", "math").n_right == 9
    )
    assert refined.cell("incorrect", "k", "math/mine").n == 30
    assert "audit 60 steps" in refined.origin and refined.labeler == "v@1"  # counted at both places
    refined.write(tmp_path / "calibration" / "verifier.json")
    assert dataset_tables(tmp_path)["verifier"] == read_table(tmp_path / "calibration" / "verifier.json")
    assert load_tables(None, tmp_path)["verifier"].origin == refined.origin


def test_refine_without_a_prior_is_the_audit_alone():
    answers = tally([("correct", None, "math", True)], "lengthy", "", "audit", ["a"])
    assert refine(None, answers) is answers


def test_a_table_survives_json_and_its_digest_follows_its_content(tmp_path):
    table = CalibrationTable("reference", "r@1", "dev set", 0.6, (Cell("correct", "", "math", 5, 4),), ("s",))
    table.write(tmp_path / "t.json")
    again = read_table(tmp_path / "t.json")
    assert again == table and again.digest() == table.digest()
    assert CalibrationTable("reference", "r@1", "dev set", 0.6, (), ("s",)).digest() != table.digest()


def test_the_shipped_tables_cover_the_verifier_and_the_reference():
    tables = shipped_tables()
    assert {"verifier", "reference"} <= set(tables)
    for table in tables.values():
        assert table.cells and 0 < table.base_rate < 1 and table.origin == "dev set"
        assert all(0 <= c.n_right <= c.n for c in table.cells)


def test_each_domain_keeps_its_own_base_rate():
    rows = [("incorrect", "k", "math/gsm8k", False)] * 4 + [("correct", "k", "math/competition", True)] * 6
    table = tally(rows, "verifier", "", "dev set", [])
    assert table.base_rate_of("math/gsm8k") == 0.0 and table.base_rate_of("math/competition") == 1.0
    assert table.base_rate_of("math/other") == table.base_rate == 0.6
    found = table.precision("incorrect", "k", ("math/gsm8k", "math"))
    assert found.base_rate == 0.0


def test_a_source_whose_kinds_are_where_it_votes_reads_each_kind_against_its_own_steps(tmp_path):
    """MC's failed rollouts fall on first steps (right 3 of 4 here), its wrong outcomes on last steps (right
    1 of 4): a kind's cell is read against its own steps' base rate, not the table's 0.5."""
    rows = [("incorrect", "rollouts", "math", right) for right in (True, True, True, False)]
    rows += [("incorrect", "outcome", "math", right) for right in (True, False, False, False)]
    table = tally(rows, "mc", "mc@small", "dev set", [], by_kind=True)
    assert table.base_rate == 0.5
    assert dict(table.kind_base_rates) == {"rollouts@math": 0.75, "outcome@math": 0.25}
    assert table.precision("incorrect", "rollouts", ("math",)).base_rate == 0.75
    assert table.precision("incorrect", "outcome", ("math",)).base_rate == 0.25
    assert table.precision("incorrect", "unseen", ("math",)).base_rate == 0.5  # pooled: the domain's
    table.write(tmp_path / "mc.json")
    assert read_table(tmp_path / "mc.json") == table
    plain = tally(rows, "mc", "mc@small", "dev set", [])  # without by_kind: one base rate, and no key
    assert plain.kind_base_rates == () and "kind_base_rates" not in plain.to_json()
    assert plain.precision("incorrect", "rollouts", ("math",)).base_rate == 0.5


def test_the_shipped_tables_read_back_to_the_content_they_were_written_with():
    """A table without kind base rates writes what it did before they existed: the digest a dataset
    version recorded for its consensus still names the same table."""
    import json

    from prm_factory.labels.calibration import SHIPPED

    for path in sorted(SHIPPED.glob("*.json")):
        assert read_table(path).to_json() == json.loads(path.read_text(encoding="utf-8")), path


def test_an_audit_of_mc_refines_each_kinds_base_rate_by_its_counts():
    shipped = tally(
        [("incorrect", "rollouts", "math", r) for r in (True,) * 6 + (False,) * 4],
        "mc",
        "mc@small",
        "dev set",
        [],
        by_kind=True,
    )
    audited = [("mc", "incorrect", "rollouts", "math", False)] * 10
    refined = audit_tables(audited, {"mc": shipped}, "audit.sqlite", {"mc": "mc@small"})["mc"]
    assert dict(refined.kind_base_rates) == {"rollouts@math": 0.3}  # (0.6 * 10 + 0.0 * 10) / 20


def test_expected_calibration_error_is_the_size_weighed_gap_per_bin():
    from prm_factory.labels.calibration import expected_calibration_error

    # bin 9: p 0.95, right 1 of 2 (gap 0.45, weight 2/4); bin 1: p 0.1, right 0 of 2 (gap 0.1, weight 2/4)
    pairs = [(0.95, True), (0.95, False), (0.1, False), (0.1, False)]
    assert math.isclose(expected_calibration_error(pairs), 0.5 * 0.45 + 0.5 * 0.1)
    assert math.isclose(expected_calibration_error(pairs, bins=1), abs(0.525 - 0.25))
    assert expected_calibration_error([(1.0, True)]) == 0.0  # p = 1 falls in the top bin
    assert expected_calibration_error([]) is None


def test_an_audit_of_a_per_labeler_source_leans_only_on_a_prior_of_its_own_labeler():
    """MC's tables are its policy's: an audit of another model's MC labels starts from nothing, not from
    the shipped table of the embedded model; one of the same model refines it."""
    shipped = CalibrationTable(
        "mc", "mc@small", "shipped", 0.4, (Cell("incorrect", "rollouts", "math", 10, 4),)
    )
    audited = [("mc", "incorrect", "rollouts", "math", False)] * 20
    other = audit_tables(audited, {"mc": shipped}, "audit.sqlite", {"mc": "mc@large"})["mc"]
    assert other.labeler == "mc@large" and other.cell("incorrect", "rollouts", "math").n == 20
    same = audit_tables(audited, {"mc": shipped}, "audit.sqlite", {"mc": "mc@small"})["mc"]
    assert same.labeler == "mc@small" and same.cell("incorrect", "rollouts", "math").n == 30
