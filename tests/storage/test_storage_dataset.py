"""Dataset versions: round trip, numbering, idempotent reruns, hidden uncommitted rows."""

from __future__ import annotations

import dataclasses

import pytest

from prm_factory.schemas.records import RECORD_TYPES, from_table
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.errors import NoDatasetError, UnknownVersionError
from prm_factory.storage.layout import DATA_KINDS, KEYS, table_uri
from prm_factory.storage.write_rules import WriteRules
from tests.storage_fixtures import with_label


def _rows(dataset: Dataset, kind: str, version: int | None = None) -> list:
    table = dataset.tables(version)[kind].to_table()
    return sorted(
        from_table(RECORD_TYPES[kind], table), key=lambda r: tuple(getattr(r, k) for k in KEYS[kind])
    )


def _sorted(kind: str, records: list) -> list:
    return sorted(records, key=lambda r: tuple(getattr(r, k) for k in KEYS[kind]))


def test_round_trip_every_record_kind(tmp_path, run_factory):
    records = run_factory("a")
    dataset = Dataset(str(tmp_path / "ds"))
    version = dataset.commit_run(*records.args())
    assert version == dataset.latest_version() == 1
    assert _rows(dataset, "problems") == _sorted("problems", records.problems)
    assert _rows(dataset, "chains") == _sorted("chains", records.chains)
    assert _rows(dataset, "steps") == _sorted("steps", records.steps)
    assert _rows(dataset, "rejections") == _sorted("rejections", records.rejections)
    assert _rows(dataset, "runs") == [records.run]
    # nulls survive (a step without MC value, a chain without final answer)
    mc = [step.label("mc") for step in _rows(dataset, "steps")]
    assert any(label.value is None and label.verdict == "unverifiable" for label in mc)


def test_versions_number_runs_and_old_versions_stay_readable(tmp_path, run_factory):
    dataset = Dataset(str(tmp_path / "ds"))
    first = dataset.commit_run(*run_factory("a").args())
    second = dataset.commit_run(*run_factory("b", problem_offset=5).args())
    assert (first, second) == (1, 2)
    assert dataset.latest_version() == 2
    assert len(_rows(dataset, "steps", 1)) == 12
    assert len(_rows(dataset, "steps", 2)) == 24
    assert len(_rows(dataset, "runs", 1)) == 1
    assert len(_rows(dataset, "problems", 2)) == 4
    assert [(v.version, v.run_id) for v in dataset.versions()] == [
        (0, None),
        (1, run_factory("a").run.run_id),
        (2, run_factory("b").run.run_id),
    ]


def test_rerun_adds_no_duplicate_and_loses_nothing(tmp_path, run_factory):
    dataset = Dataset(str(tmp_path / "ds"))
    dataset.commit_run(*run_factory("a").args())
    # the rerun sees one more problem (e.g. the first attempt stopped early): only that one is new
    version = dataset.commit_run(*run_factory("a", n_problems=3).args())
    assert version == 2
    steps = _rows(dataset, "steps")
    assert len(steps) == len({s.step_id for s in steps}) == 18
    assert len(_rows(dataset, "runs")) == 1
    assert len(_rows(dataset, "rejections")) == 1
    # writing the very same records a third time changes no data table
    before = {kind: dataset.table_versions()[1][kind] for kind in DATA_KINDS}
    dataset.commit_run(*run_factory("a", n_problems=3).args())
    assert {kind: dataset.table_versions()[1][kind] for kind in DATA_KINDS} == before


def test_rows_of_a_run_killed_before_its_runs_row_stay_hidden(tmp_path, run_factory):
    from prm_factory.schemas.records import Step, to_table
    from prm_factory.storage.delta_io import merge_rows, open_or_create
    from prm_factory.storage.layout import table_schema

    dataset = Dataset(str(tmp_path / "ds"))
    dataset.commit_run(*run_factory("a").args())
    killed = run_factory("killed", problem_offset=10)
    # simulate a writer that got as far as the steps table and died
    open_or_create(table_uri(dataset.root, "steps"), table_schema("steps"), None)
    merge_rows(
        table_uri(dataset.root, "steps"),
        to_table(Step, killed.steps),
        KEYS["steps"],
        WriteRules(),
        storage_options=None,
    )
    dataset.commit_run(*run_factory("b", problem_offset=5).args())
    visible = {s.run_id for s in _rows(dataset, "steps")}
    assert killed.run.run_id not in visible
    assert len(visible) == 2
    # the killed run restarted: its rows become visible exactly once
    dataset.commit_run(*killed.args())
    steps = _rows(dataset, "steps")
    assert len(steps) == len({s.step_id for s in steps}) == 36


def test_missing_dataset_and_unknown_version_are_clear_errors(tmp_path, run_factory):
    dataset = Dataset(str(tmp_path / "nothing"))
    assert dataset.latest_version() is None
    with pytest.raises(NoDatasetError):
        dataset.tables()
    dataset.commit_run(*run_factory("a").args())
    with pytest.raises(UnknownVersionError):
        dataset.tables(7)
    with pytest.raises(UnknownVersionError):
        dataset.tables(-1)


def test_runs_row_records_the_table_versions_it_covers(tmp_path, run_factory):
    dataset = Dataset(str(tmp_path / "ds"))
    dataset.commit_run(*run_factory("a").args())
    _, recorded, run_ids = dataset.table_versions(1)
    assert run_ids == [run_factory("a").run.run_id]
    assert all(recorded[kind] == 1 for kind in DATA_KINDS)
    assert dataclasses.asdict(_rows(dataset, "runs")[0])["run_id"] == run_ids[0]


def test_another_config_takes_over_rows_a_killed_run_left(tmp_path, run_factory):
    """Chain and step keys ignore the run id, so a killed run must not keep owning (and hiding) them."""
    from prm_factory.schemas.records import Chain, Step, to_table
    from prm_factory.storage.delta_io import merge_rows, open_or_create
    from prm_factory.storage.layout import table_schema

    dataset = Dataset(str(tmp_path / "ds"))
    dataset.commit_run(*run_factory("a", problem_offset=50).args())
    killed = run_factory("killed")
    for kind, record_type, rows in (("chains", Chain, killed.chains), ("steps", Step, killed.steps)):
        open_or_create(table_uri(dataset.root, kind), table_schema(kind), None)
        merge_rows(
            table_uri(dataset.root, kind),
            to_table(record_type, rows),
            KEYS[kind],
            WriteRules(),
            storage_options=None,
        )
    other = run_factory("other-config")  # same problems, model and sample indexes: same chain and step ids
    dataset.commit_run(*other.args())
    chains = _rows(dataset, "chains")
    assert {c.chain_id for c in other.chains} <= {c.chain_id for c in chains}
    assert len(_rows(dataset, "steps")) == 24
    assert {c.run_id for c in chains if c.chain_id in {o.chain_id for o in other.chains}} == {
        other.run.run_id
    }
    # a committed owner keeps its rows: a third config sharing keys adds nothing and takes nothing
    dataset.commit_run(*run_factory("third").args())
    assert {c.run_id for c in _rows(dataset, "chains")} == {run_factory("a").run.run_id, other.run.run_id}


def test_steps_carry_their_problem_source_even_from_an_earlier_run(tmp_path, run_factory):
    from prm_factory.storage.sql import query

    dataset = Dataset(str(tmp_path / "ds"))
    dataset.commit_run(*run_factory("a", source="math").args())
    relabel = run_factory("relabel", source="math")
    relabel.problems = []  # a run that relabels stored chains passes no problems
    relabel.steps = [
        dataclasses.replace(s, step_id=s.step_id + "-v2", run_id=relabel.run.run_id) for s in relabel.steps
    ]
    dataset.commit_run(*relabel.args())
    # the relabel's rows replaced the first run's (labels follow the labeler) and still carry the source
    rows = query(dataset, "SELECT source, domain, count(*) AS n FROM steps GROUP BY ALL").to_pylist()
    assert rows == [{"source": "math", "domain": "math", "n": 12}]


def test_a_changed_labeler_replaces_step_rows_in_the_new_version_only(tmp_path, run_factory):
    """A rerun whose labeler changed (so its step ids differ) gives the new version only its own rows;
    the previous version still reads the old ones; a rerun with the same labeler changes nothing."""
    from prm_factory.storage.sql import query

    dataset = Dataset(str(tmp_path / "ds"))
    first = run_factory("a", source="math")
    v1 = dataset.commit_run(*first.args())
    relabel = run_factory("relabel", source="math")
    relabel.steps = [
        with_label(
            dataclasses.replace(s, step_id=s.step_id + "-v2", run_id=relabel.run.run_id),
            "verifier",
            labeler="sympy@9.9.9+",
        )
        for s in relabel.steps
    ]
    v2 = dataset.commit_run(*relabel.args())
    sql = "SELECT verifier_version, count(*) AS n FROM steps GROUP BY ALL"
    assert query(dataset, sql, version=v2).to_pylist() == [{"verifier_version": "9.9.9", "n": 12}]
    old = query(dataset, sql, version=v1).to_pylist()
    assert old == [{"verifier_version": "1", "n": 12}]  # first's labeler: sympy@1+
    again = run_factory("again", source="math")
    again.steps = [dataclasses.replace(s, run_id=again.run.run_id) for s in relabel.steps]
    v3 = dataset.commit_run(*again.args())
    assert query(dataset, sql, version=v3).to_pylist() == [{"verifier_version": "9.9.9", "n": 12}]
    owners = query(dataset, "SELECT DISTINCT run_id FROM steps", version=v3).to_pylist()
    assert owners == [{"run_id": relabel.run.run_id}]  # same labels: the rows were not rewritten
