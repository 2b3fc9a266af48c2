"""`prm-factory train` and `prm-factory score` on a tiny random model: options, messages, files written."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prm_factory.commands.train import register


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory, tiny_token_classifier) -> Path:
    return tiny_token_classifier(tmp_path_factory.mktemp("tiny"))


def _chains_file(path: Path) -> Path:
    rows = [
        {"id": "a", "problem": "What is 2 + 2?", "steps": ["2 + 2 = 4.", "The answer is 4."], "label": -1},
        {"id": "b", "problem": "What is 3 * 3?", "steps": ["3 * 3 = 6.", "The answer is 6."], "label": 0},
        {"id": "c", "problem": "What is 1 + 1?", "steps": ["1 + 1 = 2 ки\nso 2"], "label": -1},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_train_then_score_through_the_cli(
    tiny_base, committed_dataset, command_app, tmp_path, monkeypatch
) -> None:
    monkeypatch.setitem(sys.modules, "trl", None)  # neither command may need TRL: importing it fails here
    data = committed_dataset(6)
    app = command_app(register)
    out = tmp_path / "prm"
    args = ["train", "-o", str(out), "--dataset", data.root, "--label", "verifier", "--model", str(tiny_base)]
    args += [
        "--max-steps",
        "2",
        "--batch-size",
        "2",
        "--held-out",
        "0.5",
        "--max-length",
        "128",
        "--threads",
        "1",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "held out" in result.output and "step 2: mean train loss" in result.output
    assert (out / "config.json").is_file() and (out / "README.md").is_file()

    chains = _chains_file(tmp_path / "chains.jsonl")
    scored = CliRunner().invoke(app, ["score", str(out), str(chains), "-o", str(tmp_path / "scores.jsonl")])
    assert scored.exit_code == 0, scored.output
    assert "3 chains scored" in scored.output and "1 read off their step ends" in scored.output
    assert "first-error F1" in scored.output
    records = [json.loads(line) for line in (tmp_path / "scores.jsonl").read_text().splitlines()]
    assert [len(r["scores"]) for r in records] == [2, 2, 1]
    assert all(0.0 <= s <= 1.0 for r in records for s in r["scores"])
    assert [r["gold_first_error"] for r in records] == [-1, 0, -1]


def test_train_refuses_what_it_cannot_do(tiny_base, committed_dataset, command_app, tmp_path) -> None:
    data = committed_dataset(2)
    app = command_app(register)
    base = ["train", "-o", str(tmp_path / "x"), "--dataset", data.root, "--model", str(tiny_base)]
    soft = CliRunner().invoke(app, [*base, "--label", "verifier", "--soft"])
    assert soft.exit_code == 1 and "--label mc" in soft.output
    nothing = CliRunner().invoke(app, [*base, "--held-out", "1.0"])
    assert nothing.exit_code == 1 and "no training rows" in nothing.output
    missing = CliRunner().invoke(app, ["score", str(tmp_path / "none"), str(tmp_path)])
    assert missing.exit_code == 2 and "not a saved checkpoint" in missing.output


@pytest.fixture(scope="module")
def tiny_prm(tmp_path_factory, tiny_base) -> Path:
    """The tiny model as `prm-factory train` leaves it: its layout and held-out share recorded."""
    import shutil

    from prm_factory.training.model import HeadSpec

    folder = tmp_path_factory.mktemp("prm") / "prm"
    shutil.copytree(tiny_base, folder)
    HeadSpec("classes", " ки\n", 128).save(folder, {"training": {"held_out": 0.5}})
    return folder


def test_score_a_dataset_version_against_its_stored_labels(
    tiny_prm, committed_dataset, command_app, tmp_path
) -> None:
    import pyarrow.parquet as pq

    from prm_factory.training.rows import is_held_out, rows_from_dataset

    data = committed_dataset(6)
    app = command_app(register)
    out = tmp_path / "scores.parquet"
    args = ["score", str(tiny_prm), "--dataset", data.root, "--label", "verifier", "-o", str(out)]
    result = CliRunner().invoke(app, [*args, "--version", "1", "--threads", "1"])
    assert result.exit_code == 0, result.output
    rows = rows_from_dataset(data, 1, "verifier")
    assert f"{len(rows)} chains of {data.root} scored against their verifier labels" in result.output
    assert "step AUROC" in result.output and "first-error F1" in result.output
    table = pq.read_table(out).to_pylist()
    assert [r["id"] for r in table] == [row.chain_id for row in rows]
    assert [r["labels"] for r in table] == [list(row.labels) for row in rows]
    assert all(len(r["scores"]) == len(r["labels"]) for r in table)

    held = CliRunner().invoke(app, [*args, "--held-out-only", "-o", str(tmp_path / "held.jsonl")])
    assert held.exit_code == 0, held.output
    records = [json.loads(line) for line in (tmp_path / "held.jsonl").read_text().splitlines()]
    expected = [row.chain_id for row in rows if is_held_out(row.problem_id, 0.5)]
    assert 0 < len(records) < len(rows) and [r["id"] for r in records] == expected


def test_score_dataset_scores_sit_where_training_put_the_labels(tiny_prm, committed_dataset) -> None:
    from prm_factory.training.layout import prepare
    from prm_factory.training.model import score_examples
    from prm_factory.training.rows import rows_from_dataset
    from prm_factory.training.scorer import PrmScorer, score_rows

    rows = rows_from_dataset(committed_dataset(4), None, "verifier")
    scorer = PrmScorer(tiny_prm)
    scored = score_rows(scorer, rows)
    examples, skipped = prepare(rows, scorer.tokenizer, " ки\n", 128)
    assert not skipped and scored.n_misaligned == 0
    expected = score_examples(scorer.model, examples, "classes", scorer.tokenizer.pad_token_id, 8)
    assert [list(c.scores) for c in scored.chains] == [list(s) for s in expected]
    assert scored.metrics is not None and scored.metrics.n_steps == sum(len(r.steps) for r in rows)


def test_score_takes_a_file_or_a_dataset(tiny_prm, committed_dataset, command_app, tmp_path) -> None:
    app = command_app(register)
    data = committed_dataset(2)
    chains = _chains_file(tmp_path / "chains.jsonl")
    both = CliRunner().invoke(app, ["score", str(tiny_prm), str(chains), "--dataset", data.root])
    assert both.exit_code == 2 and "one of them" in both.output
    neither = CliRunner().invoke(app, ["score", str(tiny_prm)])
    assert neither.exit_code == 2 and "one of them" in neither.output
    version = CliRunner().invoke(app, ["score", str(tiny_prm), str(chains), "--version", "1"])
    assert version.exit_code == 2 and "apply to --dataset" in version.output
    unknown = CliRunner().invoke(app, ["score", str(tiny_prm), "--dataset", data.root, "--label", "oracle"])
    assert unknown.exit_code == 1 and "unknown label source" in unknown.output


def test_score_from_python_is_what_the_cli_prints(tiny_prm, committed_dataset, tmp_path) -> None:
    """`prm_factory.score_file` / `score_dataset` are what `prm-factory score` calls: the same chains, the
    same figures; a wrong path is a `ConfigError` with the path in it, never a traceback from below."""
    import prm_factory as pf
    from prm_factory.training.rows import rows_from_dataset

    data = committed_dataset(6)
    scored = pf.score_dataset(tiny_prm, data.root, version=1, label="verifier", batch_size=4)
    assert [c.id for c in scored.chains] == [row.chain_id for row in rows_from_dataset(data, 1, "verifier")]
    assert scored.metrics is not None and scored.metrics.n_chains == len(scored.chains) - scored.n_misaligned
    held = pf.score_dataset(tiny_prm, data.root, version=1, label="verifier", held_out_only=True)
    assert 0 < len(held.chains) < len(scored.chains)

    from_file = pf.score_file(tiny_prm, _chains_file(tmp_path / "chains.jsonl"))
    assert [c.id for c in from_file.chains] == ["a", "b", "c"] and from_file.first_error is not None
    with pytest.raises(pf.ConfigError, match="no such file"):
        pf.score_file(tiny_prm, tmp_path / "none.jsonl")
    with pytest.raises(pf.ConfigError, match="not a saved checkpoint"):
        pf.score_dataset(tmp_path, data.root)
    with pytest.raises(pf.ConfigError, match="unknown label source"):
        pf.score_dataset(tiny_prm, data.root, label="oracle")
