"""Joint calibration cells (labels/joint_calibration.py): a pair of verdicts read where it was measured."""

import pytest

from prm_factory.labels.joint_calibration import (
    JointTable,
    read_joint_table,
    shipped_joint_tables,
    tally_joint,
)

PAIR = ("verifier", "reference")


def _table():
    rows = [
        *[("correct", "incorrect", "math/synthetic", False)] * 8,
        ("correct", "incorrect", "math/synthetic", True),
        ("unverifiable", "unverifiable", "math/synthetic", True),  # base rate only
        ("incorrect", "correct", "math/other", False),
    ]
    return tally_joint(rows, PAIR, ("v@1", "r@1"), "dev set", ["bench"])


def test_a_pair_is_counted_per_domain_and_both_abstaining_only_in_the_base_rate():
    table = _table()
    cells = {(c.verdicts, c.domain): (c.n, c.n_right) for c in table.cells}
    assert cells == {
        (("correct", "incorrect"), "math/synthetic"): (9, 1),
        (("incorrect", "correct"), "math/other"): (1, 0),
    }
    assert dict(table.domain_base_rates) == {"math/synthetic": pytest.approx(0.2), "math/other": 0.0}


def test_the_first_domain_with_cells_answers_and_an_unseen_pair_there_is_none():
    table = _table()
    found = table.probability(("correct", "incorrect"), ("math/synthetic", "math/other", "math"))
    assert (
        found is not None and found.value == pytest.approx(2 / 11) and found.base_rate == pytest.approx(0.2)
    )
    assert found.cell == "correct+incorrect@math/synthetic" and (found.n, found.n_right) == (9, 1)
    # math/synthetic has cells but never saw this pair: no answer, not math/other's
    assert table.probability(("incorrect", "correct"), ("math/synthetic", "math/other")) is None
    assert table.probability(("incorrect", "correct"), ("math/gsm8k", "math/other")).n == 1
    assert table.probability(("correct", "incorrect"), ("math/gsm8k", "math")) is None
    assert table.probability(("unverifiable", "unverifiable"), ("math/synthetic",)) is None


def test_a_table_survives_its_file_and_its_digest_follows_its_counts(tmp_path):
    table = _table()
    table.write(tmp_path / "joint.json")
    again = read_joint_table(tmp_path / "joint.json")
    assert again == table and again.digest() == table.digest()
    fewer = JointTable(table.sources, table.labelers, table.origin, table.cells[:1], table.domain_base_rates)
    assert fewer.digest() != table.digest() and table.name == "verifier+reference"


def test_the_shipped_joint_table_was_measured_on_synthetic_problems_only():
    shipped = shipped_joint_tables()[PAIR]
    assert {c.domain for c in shipped.cells} == {"math/synthetic"}
    assert all(0 <= c.n_right <= c.n for c in shipped.cells) and sum(c.n for c in shipped.cells) > 500


def test_an_audit_refines_the_joint_cells_only_where_they_were_measured(tmp_path):
    from prm_factory.labels.joint_calibration import joint_file, load_joint_tables, refine_joint

    table = _table()
    synthetic = ("math/synthetic", "math/gsm8k", "math")
    reviewed = [
        ("correct", "incorrect", synthetic, True),  # a measured pair: added to its cell
        ("incorrect", "incorrect", synthetic, False),  # a pair the domain had not seen: a new cell
        ("correct", "incorrect", ("math/gsm8k", "math"), True),  # no joint cells there: left to the product
        ("unverifiable", "unverifiable", synthetic, True),  # no vote at all
    ]
    refined = refine_joint(table, reviewed, "audit-1")
    cells = {(c.verdicts, c.domain): (c.n, c.n_right) for c in refined.cells}
    assert cells[("correct", "incorrect"), "math/synthetic"] == (10, 2)
    assert cells[("incorrect", "incorrect"), "math/synthetic"] == (1, 0)
    assert {c.domain for c in refined.cells} == {"math/synthetic", "math/other"}
    assert refined.origin == "dev set + audit 2 steps" and refined.sets == ("bench", "audit-1")
    assert refine_joint(table, reviewed[2:], "audit-2") is None
    # written under the dataset root, it is read over the shipped table of the same pair
    refined.write(joint_file(tmp_path, PAIR))
    assert load_joint_tables(tmp_path)[PAIR] == refined
    assert load_joint_tables(None)[PAIR] == shipped_joint_tables()[PAIR]
