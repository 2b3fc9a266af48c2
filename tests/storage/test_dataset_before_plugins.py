"""A dataset written by the code before label sources became plug-ins (tests/storage/data/dataset_ns_move,
built at 42aee51 by build_ns_move_dataset.py) reads with today's code: each source's labels come back from
the columns it wrote, today's column names answer queries, the long view lists every source's labels, and
exports and training rows choose them by name. Relabelling it and labelling into it: tests/flows/
test_relabel_before_plugins.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from prm_factory.schemas.records import Chain, Step, from_table
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.sql import query
from tests.storage_fixtures import copy_of_old_dataset


@pytest.fixture
def old(tmp_path: Path) -> Dataset:
    return copy_of_old_dataset(tmp_path)


def test_each_sources_labels_come_back_from_the_columns_it_wrote(old: Dataset) -> None:
    steps = {s.text: s for s in from_table(Step, old.tables()["steps"].to_table())}
    wrong = steps["16 - 3 = 13 eggs."]
    assert wrong.label("verifier").verdict == "correct" and wrong.label("verifier").labeler.startswith(
        "math-sympy@2.5.0+"
    )
    assert wrong.label("reference").verdict == "incorrect"
    assert wrong.label("reference").labeler.startswith("reference-align@")
    assert wrong.label("judge") is None  # the judge did not run on that chain
    assert wrong.label("mc").verdict == "unverifiable" and wrong.label("mc").value is None
    judged = steps["2 + 3 = 6"]
    assert (judged.label("judge").verdict, judged.label("judge").labeler) == ("incorrect", "critic@abc")
    assert (judged.label("mc").verdict, judged.label("mc").value) == ("incorrect", 0.0)
    assert judged.label("verifier").labeler == "math-sympy@2.5.0+oldcode"
    chains = {c.source_row_id: c for c in from_table(Chain, old.tables()["chains"].to_table())}
    assert chains["wrong"].first_errors == {"verifier": 1, "reference": 0}
    assert chains[None].first_errors == {"verifier": 0, "mc": 0, "judge": 0}


def test_todays_column_names_and_the_long_view_answer_queries(old: Dataset) -> None:
    rows = query(old, "SELECT verdict, reference_verdict, judge_verdict, hard_label FROM steps ORDER BY text")
    assert rows.num_rows == 6
    counts = query(
        old, "SELECT source, verdict, count(*) AS n FROM step_labels GROUP BY ALL ORDER BY source, verdict"
    ).to_pylist()
    assert {"source": "judge", "verdict": "incorrect", "n": 1} in counts
    assert {"source": "reference", "verdict": "incorrect", "n": 2} in counts
    assert sum(c["n"] for c in counts if c["source"] == "verifier") == 6
    assert sum(c["n"] for c in counts if c["source"] == "mc") == 6
    # a source registered today that never wrote here reads as NULL columns, not an error
    assert query(old, "SELECT count(prm_verdict) AS n FROM steps", sources=["prm"]).to_pylist() == [{"n": 0}]
    firsts = query(old, "SELECT first_error_index FROM first_errors ORDER BY 1").to_pylist()
    assert [f["first_error_index"] for f in firsts] == [0, 0, None]


def test_exports_and_training_rows_choose_the_old_labels_by_source(old: Dataset) -> None:
    from prm_factory.exports.formats import ExportOptions, export_table
    from prm_factory.training.rows import rows_from_dataset

    reference = export_table(old, "steps", None, ExportOptions(label="reference")).to_pylist()
    assert sorted(r["label"] for r in reference) == [False, False, True, True]
    judge = export_table(old, "trl", None, ExportOptions(label="judge")).to_pylist()
    assert [r["labels"] for r in judge] == [[False]]  # the judged chain's first step; the next is unlabelled
    rows = rows_from_dataset(old, None, "consensus")
    assert sorted(r.labels for r in rows) == [(False, False), (False, False), (True, True)]
