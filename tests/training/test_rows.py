"""Which chains and labels `prm-factory train` reads: the exports' selection, the label sources, the split."""

from __future__ import annotations

import pytest

from prm_factory.training.rows import (
    RowsError,
    TrainRow,
    export_kind,
    group_steps,
    is_held_out,
    rows_from_dataset,
    rows_from_export,
    split_by_problem,
)


def test_export_kind_maps_training_sources_onto_export_kinds() -> None:
    assert export_kind("mc", soft=False) == "hard"
    assert export_kind("mc", soft=True) == "soft"
    assert export_kind("verifier", soft=False) == "verifier"
    with pytest.raises(RowsError, match="--label mc"):
        export_kind("consensus", soft=True)
    with pytest.raises(RowsError, match="unknown label source"):
        export_kind("hard", soft=False)


def _by_chain(rows: list[TrainRow]) -> dict[tuple[str, int], TrainRow]:
    """Rows keyed by (problem text, number of steps): the fixture's chains differ in their labels only."""
    return {(row.prompt, row.labels.count(False)): row for row in rows}


def test_verifier_rows_hold_every_step_with_the_stored_verdicts(committed_dataset) -> None:
    rows = rows_from_dataset(committed_dataset(2), None, "verifier")
    assert len(rows) == 4
    labels = sorted(row.labels for row in rows)
    # each problem: one chain right throughout, one wrong from step 1 on (tests/storage/conftest.py)
    assert labels == [(True, False, False)] * 2 + [(True, True, True)] * 2
    assert all(row.steps == ("step 0", "step 1", "step 2") and row.values is None for row in rows)
    assert {row.prompt for row in rows} == {"What is 0 + 0?", "What is 1 + 1?"}


def test_mc_rows_end_before_a_step_without_rollouts_and_soft_rows_carry_values(committed_dataset) -> None:
    data = committed_dataset(2)
    hard = rows_from_dataset(data, None, "mc")
    # the right chain's last step has no MC value: its row stops after two steps
    assert sorted(len(row.steps) for row in hard) == [2, 2, 3, 3]
    soft = rows_from_dataset(data, None, "mc", soft=True)
    assert sorted(row.values for row in soft) == [(0.75, 0.0, 0.0)] * 2 + [(0.75, 0.75)] * 2
    assert all(row.labels == tuple(v > 0 for v in row.values) for row in soft)


def test_agreement_only_and_since_version_filter_as_the_exports_do(committed_dataset) -> None:
    data = committed_dataset(2)
    agreed = rows_from_dataset(data, None, "consensus", agreement_only=True)
    assert sorted(len(row.steps) for row in agreed) == [2, 2, 3, 3]  # labels_agree is null without MC
    latest = data.resolve_version(None)
    assert rows_from_dataset(data, None, "consensus", since_version=latest) == []


def test_a_source_the_exports_lack_is_refused_by_name(committed_dataset) -> None:
    with pytest.raises(RowsError, match="'debate'"):
        rows_from_dataset(committed_dataset(2), None, "debate")


def test_judge_labels_are_a_source_like_the_others(committed_dataset) -> None:
    """The fixture's chains were never judged: their judge-labelled training set is empty, not an error."""
    assert rows_from_dataset(committed_dataset(2), None, "judge") == []


def test_group_steps_keeps_chains_apart_and_skips_soft_steps_without_a_hard_label() -> None:
    def step(chain: str, text: str, label: object, positive: object, hard: object = None) -> dict:
        return {
            "chain_id": chain,
            "problem_id": "p",
            "problem_text": "Q",
            "text": f" {text} ",
            "label": label,
            "positive": positive,
            "hard_label": hard,
        }

    rows = group_steps([step("a", "s0", True, True), step("b", "t0", False, False)], soft=False)
    assert [(r.chain_id, r.steps, r.labels) for r in rows] == [
        ("a", ("s0",), (True,)),
        ("b", ("t0",), (False,)),
    ]
    soft = group_steps([step("a", "s0", 0.5, None, True), step("a", "s1", 0.25, None, None)], soft=True)
    assert [(r.steps, r.values, r.labels) for r in soft] == [(("s0",), (0.5,), (True,))]
    assert group_steps([step("a", "s0", 0.5, None, None)], soft=True) == []


def test_rows_from_an_export_file_read_what_export_trl_wrote(committed_dataset, tmp_path) -> None:
    from prm_factory.exports.formats import ExportOptions, export_table, write_export

    data = committed_dataset(2)
    table = export_table(data, "trl", None, ExportOptions(label="verifier"))
    for suffix in (".parquet", ".jsonl"):
        path = tmp_path / f"trl{suffix}"
        write_export(table, path)
        rows = rows_from_export(path)
        direct = rows_from_dataset(data, None, "verifier")
        key = lambda r: r.chain_id  # noqa: E731
        assert sorted(rows, key=key) == sorted(direct, key=key)
    (tmp_path / "bad.jsonl").write_text('{"prompt": "Q", "completions": ["a"]}\n')
    with pytest.raises(RowsError, match="lacks"):
        rows_from_export(tmp_path / "bad.jsonl")
    with pytest.raises(RowsError, match="expected a .parquet"):
        rows_from_export(tmp_path / "rows.csv")


def test_held_out_split_is_stable_and_keeps_a_problem_on_one_side() -> None:
    ids = [f"problem-{i}" for i in range(400)]
    held = [is_held_out(i, 0.25) for i in ids]
    assert held == [is_held_out(i, 0.25) for i in ids]  # no randomness
    assert 60 < sum(held) < 140  # about a quarter
    assert not any(is_held_out(i, 0.0) for i in ids) and all(is_held_out(i, 1.0) for i in ids)
    rows = [TrainRow(f"c{k}", ids[k // 3], "Q", ("s",), (True,)) for k in range(60)]
    train, held_rows = split_by_problem(rows, 0.25)
    assert len(train) + len(held_rows) == 60
    assert not {r.problem_id for r in train} & {r.problem_id for r in held_rows}
