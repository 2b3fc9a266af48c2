"""`prm-factory audit ...`: sample, status, report and labels through the CLI."""

import json

from typer.testing import CliRunner

from prm_factory.commands import audit as audit_commands
from tests.audit.conftest import build_dataset


def test_sample_report_and_labels(tmp_path, command_app):
    app = command_app(audit_commands.register)
    runner = CliRunner()
    dataset = build_dataset(tmp_path / "ds")
    folder = tmp_path / "audit"
    sampled = runner.invoke(
        app,
        [
            "audit",
            "sample",
            str(folder),
            "--dataset",
            dataset.root,
            "--size",
            "12",
            "--double",
            "0.25",
            "--seed",
            "5",
        ],
    )
    assert sampled.exit_code == 0, sampled.output
    assert "12 steps of 38" in sampled.output and "3 asked of two reviewers" in sampled.output
    again = runner.invoke(app, ["audit", "sample", str(folder), "--dataset", dataset.root])
    assert again.exit_code == 2 and "never overwritten" in again.output
    from prm_factory.audit.store import AuditStore

    store = AuditStore.open(folder)
    store.record_answer(1, "ana", "incorrect")
    store.record_answer(2, "ana", "correct", note="fine")
    status = runner.invoke(app, ["audit", "status", str(folder)])
    assert "ana: 2 answered, 10 open" in status.output
    reported = runner.invoke(
        app,
        [
            "audit",
            "report",
            str(folder),
            "-o",
            str(tmp_path / "r.html"),
            "--json",
            str(tmp_path / "r.json"),
            "--replicates",
            "100",
        ],
    )
    assert reported.exit_code == 0, reported.output
    assert "precision of incorrect" in reported.output and (tmp_path / "r.html").exists()
    labelled = runner.invoke(app, ["audit", "labels", str(folder), "-o", str(tmp_path / "h.jsonl")])
    assert labelled.exit_code == 0 and "2 human step labels" in labelled.output
    rows = [json.loads(line) for line in (tmp_path / "h.jsonl").read_text().splitlines()]
    assert {row["verdict"] for row in rows} == {"incorrect", "correct"} and rows[0]["dataset_version"] == 1


def test_wrong_calls_fail_with_one_line(tmp_path, command_app):
    app = command_app(audit_commands.register)
    runner = CliRunner()
    missing = runner.invoke(app, ["audit", "report", str(tmp_path / "nothing")])
    assert missing.exit_code == 1 and "no audit" in missing.output
    dataset = build_dataset(tmp_path / "ds")
    bad = runner.invoke(
        app, ["audit", "sample", str(tmp_path / "a"), "--dataset", dataset.root, "--label", "x=1"]
    )
    assert bad.exit_code == 2 and "SOURCE=VALUE" in bad.output
    no_data = runner.invoke(
        app, ["audit", "sample", str(tmp_path / "b"), "--dataset", str(tmp_path / "none")]
    )
    assert no_data.exit_code == 1 and "no dataset" in no_data.output


def test_export_and_import_through_the_cli(tmp_path, command_app):
    from pathlib import Path

    from tests.audit.conftest import build_audit

    app = command_app(audit_commands.register)
    runner = CliRunner()
    build_audit(tmp_path, size=6, seed=2)  # the audit the files in tests/audit/data belong to
    folder = tmp_path / "audit"
    out = runner.invoke(
        app, ["audit", "export", str(folder), "--tool", "argilla", "-o", str(tmp_path / "rg")]
    )
    assert out.exit_code == 0 and (tmp_path / "rg" / ".argilla" / "settings.json").exists()
    data = Path(__file__).resolve().parents[2] / "audit" / "data"
    imported = runner.invoke(
        app,
        ["audit", "import", str(folder), "--tool", "label-studio", str(data / "label-studio-export.json")],
    )
    assert imported.exit_code == 0 and "4 answers added, 0 already there, from 2 reviewers" in imported.output
    unknown = runner.invoke(
        app, ["audit", "export", str(folder), "--tool", "prodigy", "-o", str(tmp_path / "p")]
    )
    assert unknown.exit_code == 2 and "unknown tool" in unknown.output


def test_a_damaged_audit_file_is_one_line_for_every_command(tmp_path, command_app):
    app = command_app(audit_commands.register)
    runner = CliRunner()
    for kind, content in (
        ("empty", b""),
        ("text", b"not an audit\n"),
        ("half", b"SQLite format 3\x00" + b"\0" * 84),
    ):
        folder = tmp_path / kind
        folder.mkdir()
        (folder / "audit.sqlite").write_bytes(content)
        for call in (
            ["status", str(folder)],
            ["report", str(folder), "-o", str(tmp_path / "r.html")],
            ["serve", str(folder)],
            ["labels", str(folder), "-o", str(tmp_path / "h.jsonl")],
        ):
            result = runner.invoke(app, ["audit", *call])
            assert result.exit_code == 1, (kind, call, result.output)
            assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)
            assert "audit.sqlite" in result.output and len(result.output.strip().splitlines()) <= 3


def test_an_empty_token_is_refused_before_serving(tmp_path, command_app):
    from tests.audit.conftest import build_audit

    app = command_app(audit_commands.register)
    build_audit(tmp_path, size=6, seed=2)
    result = CliRunner().invoke(
        app, ["audit", "serve", str(tmp_path / "audit"), "--host", "0.0.0.0", "--token", ""]
    )
    assert result.exit_code == 2 and "empty" in result.output


def test_import_of_the_other_tools_file_says_so(tmp_path, command_app):
    from pathlib import Path

    from tests.audit.conftest import build_audit

    app = command_app(audit_commands.register)
    build_audit(tmp_path, size=6, seed=2)
    data = Path(__file__).resolve().parents[2] / "audit" / "data"
    result = CliRunner().invoke(
        app,
        [
            "audit",
            "import",
            str(tmp_path / "audit"),
            "--tool",
            "argilla",
            str(data / "label-studio-export.json"),
        ],
    )
    assert result.exit_code == 1 and "use --tool label-studio" in result.output
