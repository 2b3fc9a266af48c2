"""Line coverage of the whole suite, and the comparison of two measurements (issue 44: a faster suite must
not cover less).

The suite runs on pytest-xdist workers and starts many Python processes of its own (the CLI, Prefect flow
runs and workers, verifier workers, engines), so the measurement needs pytest-cov for the workers and
coverage.py's subprocess patch for the rest. Neither is in requirements.lock (the suite does not need them);
install them into the clone's venv for a measurement:

    git clone -q . ../cov && cd ../cov && bash scripts/setup.sh
    .venv/bin/pip install coverage==7.17.3 pytest-cov==7.1.0
    python bench/suite_coverage.py config "$PWD" > .coveragerc
    CI=true .venv/bin/python -m pytest --cov --cov-config=.coveragerc --cov-report=
    .venv/bin/coverage combine --append && .venv/bin/coverage json -o coverage.json

`--append` matters: pytest-cov has already combined its workers' data into `.coverage`, and a plain
`combine` of the files that other processes left beside it replaces that data (the first whole-suite
measurement read 0 lines run that way). Then, with two such reports (say at the issue's base commit and
now):

    python bench/suite_coverage.py compare BEFORE/coverage.json AFTER/coverage.json

prints both totals (lines run of lines measured, over the product's files: tests/, bench/ and the venv
left out), the change, and each file present in both whose covered share fell.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

OMIT = (".venv/*", "tests/*", "bench/*", "*/site-packages/*")


def coveragerc(root: str) -> str:
    """The coverage.py configuration for a clone at `root` (absolute): every product file under it, each
    process of the suite writing its own data file there (`parallel`), subprocesses measured, and a
    process ended by SIGTERM (the suite stops servers and workers that way) still saving. A process that
    leaves by `os._exit` (a forked child) saves nothing (no `patch = _exit`); what matters is that the two
    measurements compared run under the same configuration.

    >>> "data_file = /c/.coverage" in coveragerc("/c")
    True
    """
    omit = "".join(f"\n    {pattern}" for pattern in OMIT)
    return (
        "[run]\nsource = .\n"
        f"omit ={omit}\n"
        "parallel = true\nsigterm = true\npatch = subprocess\n"
        f"data_file = {root}/.coverage\n"
    )


@dataclass(frozen=True)
class Total:
    covered: int
    statements: int

    @property
    def percent(self) -> float:
        return 100.0 * self.covered / self.statements if self.statements else 0.0


def totals(report: dict) -> Total:
    """Lines run and lines measured of a `coverage json` report."""
    summary = report["totals"]
    return Total(int(summary["covered_lines"]), int(summary["num_statements"]))


def fallen(before: dict, after: dict, *, tolerance: float = 0.0) -> list[tuple[str, float, float]]:
    """Files measured in both reports whose covered share fell by more than `tolerance` points:
    (path, before %, after %), largest fall first.

    >>> b = {"files": {"a.py": {"summary": {"covered_lines": 8, "num_statements": 10}}}}
    >>> a = {"files": {"a.py": {"summary": {"covered_lines": 6, "num_statements": 10}}}}
    >>> fallen(b, a)
    [('a.py', 80.0, 60.0)]
    """
    rows = []
    for path in before["files"]:
        if path not in after["files"]:
            continue
        was, now = (_share(report["files"][path]["summary"]) for report in (before, after))
        if now < was - tolerance:
            rows.append((path, was, now))
    return sorted(rows, key=lambda row: row[2] - row[1])


def _share(summary: dict) -> float:
    statements = int(summary["num_statements"])
    return 100.0 * int(summary["covered_lines"]) / statements if statements else 100.0


def compare(before: dict, after: dict) -> str:
    """The comparison as printed: both totals, the change, files only in one report, and falls."""
    old, new = totals(before), totals(after)
    lines = [
        f"before: {old.covered:,} of {old.statements:,} lines ({old.percent:.2f} %)",
        f"after:  {new.covered:,} of {new.statements:,} lines ({new.percent:.2f} %)",
        f"change: {new.percent - old.percent:+.2f} points, {new.covered - old.covered:+,} lines run",
    ]
    gone = sorted(set(before["files"]) - set(after["files"]))
    added = sorted(set(after["files"]) - set(before["files"]))
    lines.append(f"files only before: {len(gone)}; only after: {len(added)}")
    falls = fallen(before, after)
    lines.append(f"files in both whose covered share fell: {len(falls)}")
    lines += [f"  {was:6.2f} % -> {now:6.2f} %  {path}" for path, was, now in falls]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    config = commands.add_parser("config", help="print the .coveragerc for a clone")
    config.add_argument("root", type=Path, help="the clone's folder")
    both = commands.add_parser("compare", help="compare two `coverage json` reports")
    both.add_argument("before", type=Path)
    both.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "config":
        print(coveragerc(str(args.root.resolve())), end="")
    else:
        print(compare(*(json.loads(path.read_text()) for path in (args.before, args.after))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
