"""The search-evaluation section of the page: `prm-factory report --search FILE` adds its table and plot."""

from __future__ import annotations

import base64
import json

from typer.testing import CliRunner

from prm_factory.commands.report import register
from prm_factory.reports.dataset_report import collect, render_html, search_table


def _row(method: str, n: int, accuracy: float, delta: float | None) -> dict:
    return {
        "method": method,
        "n": n,
        "accuracy": accuracy,
        "ci_low": accuracy - 0.1,
        "ci_high": accuracy + 0.1,
        "vs_majority": delta,
        "vs_majority_low": None if delta is None else delta - 0.05,
        "vs_majority_high": None if delta is None else delta + 0.05,
        "policy_tokens": 100.0 * n,
        "scorer_tokens": 0.0 if method == "majority vote" else 80.0 * n,
    }


SEARCH = {
    "label": "synthetic, 2 held-out problems",
    "problems": 2,
    "n": 2,
    "beam_budgets": [2],
    "chain_accuracy": 0.25,
    "timings": {},
    "rows": [
        _row("majority vote", 1, 0.25, None),
        _row("majority vote", 2, 0.25, None),
        _row("prm best-of-n (min)", 1, 0.25, 0.0),
        _row("prm best-of-n (min)", 2, 0.5, 0.25),
        _row("prm beam search", 2, 0.5, 0.25),
    ],
}


def test_search_table_has_one_row_per_method_and_the_largest_n_compared() -> None:
    table = search_table(SEARCH["rows"])
    assert [line["method"] for line in table] == ["majority vote", "prm best-of-n (min)", "prm beam search"]
    best = table[1]
    assert best["N = 1"] == "25.0 [15.0, 35.0]" and best["N = 2"] == "50.0 [40.0, 60.0]"
    assert best["Δ vs majority, N = 2"] == "+25.0 [+20.0, +30.0]"
    assert best["RM tokens / problem"] == 160 and table[0]["Δ vs majority, N = 2"] == ""
    assert table[2]["N = 1"] == ""  # beam search ran at N = 2 only


def test_page_shows_the_search_section_only_when_given(report_dataset) -> None:
    data = collect(report_dataset, version=2, n_samples=0)
    assert "Search with the trained PRM" not in render_html(data)
    page = render_html(data, search=SEARCH)
    assert "Search with the trained PRM" in page and "synthetic, 2 held-out problems" in page
    assert "+25.0 [+20.0, +30.0]" in page
    uri = page.split('alt="search accuracy by N"')[0].rsplit('src="', 1)[1].split('"')[0]
    svg = base64.b64decode(uri.removeprefix("data:image/svg+xml;base64,")).decode()
    assert svg.startswith("<?xml") and "<svg" in svg


def test_report_command_reads_the_search_json(command_app, report_dataset, tmp_path) -> None:
    results = tmp_path / "search.json"
    results.write_text(json.dumps(SEARCH))
    output = tmp_path / "page.html"
    result = CliRunner().invoke(
        command_app(register),
        ["report", "--dataset", report_dataset.root, "-o", str(output), "--search", str(results)],
    )
    assert result.exit_code == 0, result.output
    assert "prm beam search" in output.read_text(encoding="utf-8")
