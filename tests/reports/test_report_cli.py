"""`prm-factory report` through Typer's runner on a fresh app, as the dataset commands are tested."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from prm_factory.commands.report import register
from prm_factory.storage.versions import set_tag


@pytest.fixture
def app(command_app) -> typer.Typer:
    return command_app(register)


def run(app: typer.Typer, *args: str):
    return CliRunner().invoke(app, list(args))


def test_report_of_an_old_version_by_tag(app, report_dataset, tmp_path):
    set_tag(report_dataset, "first-run", 1, force=True)
    output = tmp_path / "out" / "first.html"
    result = run(app, "report", "--dataset", report_dataset.root, "--version", "first-run", "-o", str(output))
    assert result.exit_code == 0, result.output
    assert "version 1 (8 chains, 24 steps, 6 samples)" in result.output
    assert "version 1</h1>" in output.read_text(encoding="utf-8")


def test_report_defaults_to_latest_in_the_current_folder(app, report_dataset, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run(app, "report", "--dataset", report_dataset.root, "--samples", "2")
    assert result.exit_code == 0, result.output
    assert "Sample chains (2)" in (tmp_path / "report-v2.html").read_text(encoding="utf-8")


def test_unknown_version_is_one_error_line(app, report_dataset, tmp_path):
    output = tmp_path / "never.html"
    result = run(app, "report", "--dataset", report_dataset.root, "--version", "99", "-o", str(output))
    assert result.exit_code == 1
    assert "error:" in result.output and "version 99 does not exist" in result.output
    assert not output.exists()


def test_missing_dataset_is_one_error_line(app, tmp_path):
    result = run(app, "report", "--dataset", str(tmp_path / "nothing"), "-o", str(tmp_path / "x.html"))
    assert result.exit_code == 1 and "no dataset at" in result.output


def test_report_with_an_audit_section(app, report_dataset, tmp_path):
    from prm_factory.audit.create import create_audit
    from prm_factory.audit.sample import SampleDesign

    store = create_audit(report_dataset, tmp_path / "audit", SampleDesign(size=10, seed=1))
    for item in store.items()[:6]:
        store.record_answer(
            item.item_id, "ana", "incorrect" if item.votes.get("verifier") else "correct", note="<i>n</i>"
        )
    output = tmp_path / "with-audit.html"
    result = run(
        app,
        "report",
        "--dataset",
        report_dataset.root,
        "-o",
        str(output),
        "--audit",
        str(tmp_path / "audit"),
        "--audit-page-url",
        "http://audits.example:9/",
    )
    assert result.exit_code == 0, result.output
    page = output.read_text(encoding="utf-8")
    assert "Label audit: how often each source is right" in page and "precision of incorrect" in page
    assert 'href="http://audits.example:9/item/' in page and "&lt;i&gt;n&lt;/i&gt;" in page
    missing = run(
        app, "report", "--dataset", report_dataset.root, "-o", str(output), "--audit", str(tmp_path)
    )
    assert missing.exit_code == 1 and "no audit" in missing.output
