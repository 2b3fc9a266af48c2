"""What each vote weighed (reports/weights.py): the precision used per source, verdict and kind, where it
came from, and a warning for a source with no table."""

from __future__ import annotations

from prm_factory.labels.calibration import CalibrationTable, Cell
from prm_factory.labels.registry import registered_names
from prm_factory.reports.weights import weight_rows, weight_warnings, weights_used
from tests.storage_fixtures import committed_fixture_dataset

TABLE = CalibrationTable(
    "verifier", "math-sympy@2", "shipped", 0.6, (Cell("incorrect", "k", "math/gsm8k", 50, 49),)
)


def count(source, verdict="incorrect", kind="k"):
    return {
        "source": source,
        "verdict": verdict,
        "kind": kind,
        "domain": "math",
        "problem_source": "gsm8k",
        "n": 4,
    }


def test_a_measured_vote_names_its_table_and_cell():
    row = weight_rows([count("verifier")], {"verifier": TABLE})[0]
    assert row["measured"] == "49 / 50" and row["from"] == "shipped (math-sympy@2), incorrect/k@math/gsm8k"
    assert row["problems"] == "math/gsm8k" and row["labels"] == 4 and 0.95 < row["precision"] < 0.99


def test_a_source_without_a_table_is_unmeasured_and_warned_of():
    rows = weight_rows([count("verifier"), count("lengthy", "correct", "")], {"verifier": TABLE})
    assert rows[1]["from"] == "unmeasured default" and rows[1]["precision"] == 0.75
    warnings = weight_warnings(rows)
    assert len(warnings) == 1 and "lengthy" in warnings[0] and "never make a step negative" in warnings[0]


def test_a_dataset_versions_votes_are_read_from_its_labels(tmp_path):
    data = committed_fixture_dataset(tmp_path / "ds")
    rows = weights_used(data, None, registered_names())
    assert rows and {row["source"] for row in rows} <= set(registered_names())
    verifier = [row for row in rows if row["source"] == "verifier"]
    assert sum(row["labels"] for row in verifier) > 0
    assert all(row["from"].startswith("shipped, ") for row in verifier)  # no audit refined them here


def test_steps_read_together_get_the_joint_cells_rows():
    from prm_factory.labels.joint_calibration import JointCell, JointTable
    from prm_factory.reports.weights import joint_rows, joint_sql

    joint = JointTable(
        ("verifier", "reference"),
        ("v@1", "r@1"),
        "dev set",
        (JointCell(("correct", "incorrect"), "math/synthetic", 118, 4),),
        (("math/synthetic", 0.37),),
    )
    counted = [
        {
            "verdict_a": "correct",
            "verdict_b": "incorrect",
            "domain": "math",
            "problem_source": "synthetic",
            "n": 7,
        },
        {
            "verdict_a": "correct",
            "verdict_b": "incorrect",
            "domain": "math",
            "problem_source": "gsm8k",
            "n": 3,
        },
    ]
    asked = []
    rows = joint_rows(lambda sql: asked.append(sql) or counted, {joint.sources: joint})
    assert asked == [joint_sql(joint.sources)]
    assert rows == [  # the gsm8k steps had no joint cell: their votes weighed apart, in the rows above
        {
            "source": "verifier+reference",
            "verdict": "correct+incorrect",
            "kind": "(read together)",
            "problems": "math/synthetic",
            "labels": 7,
            "precision": round(5 / 120, 3),
            "measured": "4 / 118 right",
            "from": "joint table (v@1+r@1), correct+incorrect@math/synthetic",
        }
    ]


def test_the_joint_rows_read_the_tables_an_audit_refined_under_the_dataset_root(tmp_path, monkeypatch):
    """What `stats` shows is what the consensus read: a dataset's refined joint table, not the shipped one."""
    from prm_factory.labels.joint_calibration import JointCell, JointTable, joint_file
    from prm_factory.reports import weights

    data = committed_fixture_dataset(tmp_path / "ds")
    pair = ("verifier", "reference")
    refined = JointTable(
        pair,
        ("v", "r"),
        "dev set + audit 3 steps",
        (JointCell(("correct", "incorrect"), "math/gsm8k", 3, 1),),
    )
    refined.write(joint_file(tmp_path / "ds", pair))
    seen = []
    monkeypatch.setattr(weights, "joint_rows", lambda run_sql, joint: seen.append(dict(joint)) or [])
    weights_used(data, None, registered_names())
    assert seen == [{pair: refined}]


def test_labels_of_another_version_than_the_table_measured_are_warned_of():
    labelled = [
        {**count("verifier"), "labeler": "math-sympy@3"},  # a newer verifier than the table's math-sympy@2
        {**count("verifier", kind="k"), "labeler": "math-sympy@2"},
    ]
    rows = weight_rows(labelled, {"verifier": TABLE})
    assert [row["measured_labeler"] for row in rows] == ["math-sympy@2", "math-sympy@2"]
    warnings = weight_warnings(rows)
    assert len(warnings) == 1 and "math-sympy@3" in warnings[0] and "measured math-sympy@2" in warnings[0]
    assert weight_warnings(weight_rows(labelled[1:], {"verifier": TABLE})) == []


def test_a_patch_release_reads_its_minor_release_table_without_a_warning():
    table = CalibrationTable("verifier", "math-sympy@2.14.0", "shipped", 0.6, TABLE.cells)
    patch = [{**count("verifier"), "labeler": "math-sympy@2.14.1"}]
    minor = [{**count("verifier"), "labeler": "math-sympy@2.15.0"}]
    other = [{**count("verifier"), "labeler": "other-checker@2.14.0"}]
    assert weight_warnings(weight_rows(patch, {"verifier": table})) == []
    assert len(weight_warnings(weight_rows(minor, {"verifier": table}))) == 1
    assert len(weight_warnings(weight_rows(other, {"verifier": table}))) == 1


def test_an_mc_table_of_another_policy_is_not_shown_as_the_weight_used():
    """`stats` shows what the consensus used: MC votes of a policy the shipped table did not measure weigh
    the unmeasured default (and warn), its own policy's votes the table's cell by kind."""
    from prm_factory.reports.weights import per_labeler_sources

    mc = CalibrationTable("mc", "mc@small", "shipped", 0.4, (Cell("incorrect", "outcome", "math", 150, 108),))
    rows = [
        {"source": "mc", "verdict": "incorrect", "kind": "outcome", "domain": "math", "problem_source": "x"}
        | {"n": 5, "labeler": labeler}
        for labeler in ("mc@small", "mc@large")
    ]
    assert "mc" in per_labeler_sources()
    own, other = weight_rows(rows, {"mc": mc}, per_labeler_sources())
    assert own["measured"] == "108 / 150" and other["from"] == "unmeasured default"
    assert any(line.startswith("warning: mc has no calibration table") for line in weight_warnings([other]))
