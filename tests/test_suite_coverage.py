"""bench/suite_coverage.py writes the coverage.py configuration a suite measurement runs under and compares
two `coverage json` reports: totals, the change, and the files whose covered share fell."""

from __future__ import annotations

import configparser
import doctest
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("suite_coverage", ROOT / "bench" / "suite_coverage.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


def report(files: dict[str, tuple[int, int]]) -> dict:
    """A `coverage json` report's shape: per file and in total, lines run and lines measured."""
    return {
        "files": {
            path: {"summary": {"covered_lines": run, "num_statements": measured}}
            for path, (run, measured) in files.items()
        },
        "totals": {
            "covered_lines": sum(run for run, _ in files.values()),
            "num_statements": sum(measured for _, measured in files.values()),
        },
    }


def test_the_config_measures_the_product_in_every_process_and_leaves_tests_out():
    parsed = configparser.ConfigParser()
    parsed.read_string(script().coveragerc("/clone"))
    run = parsed["run"]
    assert run["source"] == "." and run["data_file"] == "/clone/.coverage"
    assert run.getboolean("parallel") and run.getboolean("sigterm")
    assert run["patch"].strip() == "subprocess"  # the configuration both measurements ran
    omitted = run["omit"].split()
    assert {"tests/*", "bench/*", ".venv/*"} <= set(omitted)


def test_compare_gives_totals_the_change_and_each_fall():
    before = report({"a.py": (8, 10), "b.py": (5, 10), "old.py": (1, 4)})
    after = report({"a.py": (9, 10), "b.py": (4, 10), "new.py": (3, 3)})
    text = script().compare(before, after)
    assert "before: 14 of 24 lines (58.33 %)" in text
    assert "after:  16 of 23 lines (69.57 %)" in text
    assert "change: +11.23 points, +2 lines run" in text
    assert "files only before: 1; only after: 1" in text
    assert "files in both whose covered share fell: 1" in text
    assert "50.00 % ->  40.00 %  b.py" in text and "a.py" not in text.split("fell: 1")[1]


def test_the_command_reads_two_reports(tmp_path: Path, capsys):
    paths = []
    for name, files in (("before", {"a.py": (1, 2)}), ("after", {"a.py": (2, 2)})):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(report(files)))
        paths.append(str(path))
    assert script().main(["compare", *paths]) == 0
    out = capsys.readouterr().out
    assert "change: +50.00 points, +1 lines run" in out and "fell: 0" in out


def test_docstring_examples_hold():
    failures, tried = doctest.testmod(script())
    assert tried >= 3 and failures == 0
