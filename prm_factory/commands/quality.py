"""`prm-factory eval`: label quality against gold, on the eval set `--kind` names or its declared shape
(prm_factory.commands.eval_kinds); chain sets are scored in prm_factory.commands.eval_chains."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from prm_factory.commands.eval_chains import ChainOptions, eval_chains
from prm_factory.commands.eval_kinds import EvalKind, UnknownShape, kind_of
from prm_factory.commands.options import ConfigOption
from prm_factory.console import fail, print_whole

app = typer.Typer()
"""The eval command; prm_factory/cli.py merges it into the main app."""


def register(parent: typer.Typer) -> None:
    """Merge this group's commands into `parent` (the main app, or a test's)."""
    parent.add_typer(app)


InputArgument = Annotated[
    Path,
    typer.Argument(metavar="INPUT", help="eval set: a .jsonl file, a .json list, or a folder of split files"),
]
KindOption = Annotated[
    EvalKind,
    typer.Option(
        "--kind",
        help="which eval set INPUT is (auto: by its declared shape, the fields its rows carry; a folder is "
        "chain splits)",
    ),
]
SolutionsOption = Annotated[
    Path | None,
    typer.Option(
        "--solutions",
        help="chains: GSM8K / MATH-style jsonl of worked solutions, matched by question text as "
        "`label --solutions` does, for the reference label source",
    ),
]
LimitOption = Annotated[
    int | None, typer.Option("--limit", min=1, help="chains: only the first N rows of each split")
]
SpreadOption = Annotated[
    bool,
    typer.Option(
        "--spread",
        help="chains: with --limit, N rows evenly spaced over each split instead of the first N "
        "(ProcessBench lists a split's erroneous chains first)",
    ),
]
JsonOption = Annotated[
    Path | None, typer.Option("--json", help="chains: also write the figures as JSON to this file")
]
PrmOption = Annotated[
    Path | None,
    typer.Option(
        "--prm", help="chains: also score a trained PRM checkpoint (prm-factory train, TRL) as source `prm`"
    ),
]


CalibrateOption = Annotated[
    Path | None,
    typer.Option(
        "--calibrate",
        help="write calibration tables (<source>.json, labels/calibration.py) measured on INPUT, a dev set "
        "of chains with marked first errors, into this folder; python -m prm_factory.evaluation.calibrate "
        "combines several sets",
    ),
]
WhereOption = Annotated[
    str | None,
    typer.Option("--where", help="--calibrate: what INPUT's problems are (gsm8k, competition, ...)"),
]


@app.command("eval")
def evaluate(
    input_path: InputArgument,
    kind: KindOption = EvalKind.auto,
    solutions: SolutionsOption = None,
    limit: LimitOption = None,
    spread: SpreadOption = False,
    json_out: JsonOption = None,
    prm: PrmOption = None,
    calibrate: CalibrateOption = None,
    where: WhereOption = None,
    config: ConfigOption = None,
) -> None:
    """Score the labels against gold: chains with a ProcessBench first error or PRM800K ratings (per
    split, averaged over splits, and per label source: first-error F1 with both accuracies, correct
    chains flagged, precision/recall of `incorrect`); answer pairs and math outputs
    (precision/recall of final-answer `correct`); claim steps (false claims missed, true steps
    flagged). ProcessBench's files are read as they ship: a split's JSON list or a folder of them."""
    if not input_path.exists():
        fail(f"input not found: {input_path}")
    if calibrate is not None:
        from prm_factory.evaluation.calibrate import main as calibrate_main

        calibrate_main([f"{input_path}:{where or input_path.stem}", "--out", str(calibrate)])
        return
    if solutions is not None and not solutions.is_file():
        fail(f"solutions file not found: {solutions}")
    if kind is EvalKind.auto:
        try:
            kind = kind_of(input_path)
        except UnknownShape as err:
            fail(str(err))
    if config is not None and not config.is_file():
        fail(f"config not found: {config}")
    options = ChainOptions(solutions, limit, spread, json_out, prm, config)
    if kind is not EvalKind.chains:
        _refuse_chain_options(input_path, kind, options)
    console = Console()
    if kind is EvalKind.chains:
        eval_chains(console, input_path, options)
    elif kind is EvalKind.claim_steps:
        _eval_claim_steps(console, input_path)
    elif kind is EvalKind.math_outputs:
        _eval_math_outputs(console, input_path)
    else:
        _eval_answer_pairs(console, input_path)


def _refuse_chain_options(path: Path, kind: EvalKind, options: ChainOptions) -> None:
    """A folder, or an option of chain sets, given for another eval set is an error (exit 2)."""
    if path.is_dir():
        fail(f"{path} is a folder: only chain splits (--kind chains) are read from a folder")
    given = [
        name
        for name, value in (
            ("--solutions", options.solutions),
            ("--limit", options.limit),
            ("--spread", options.spread),
            ("--json", options.json_out),
            ("--prm", options.prm),
            ("--config", options.config),
        )
        if value
    ]
    if given:
        fail(f"{', '.join(given)} apply to chain sets only; {path} is read as {kind.value}")


def _quality_table(path: Path) -> Table:
    table = Table(title=f"label quality: {path.name}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    return table


def _eval_claim_steps(console: Console, path: Path) -> None:
    from prm_factory.evaluation.claim_steps import default_judge, evaluate_claim_steps, load_claim_steps

    table = _quality_table(path)
    judge, close = default_judge()
    try:
        report = evaluate_claim_steps(load_claim_steps(path), judge)
    finally:
        close()
    table.add_row("false-claim steps labelled `correct`", f"{len(report.false_accepted)} / {report.n_false}")
    table.add_row(
        "true steps labelled `incorrect`",
        f"{len(report.true_rejected)} / {report.n_true} ({100 * float(report.true_rejected_rate):.1f} %)",
    )
    for cls, name in (("false", "false-claim"), ("true", "all-true")):
        counts = report.distribution.get("ALL", {}).get(cls, {})
        mix = ", ".join(
            f"{label} {counts.get(label, 0)}" for label in ("correct", "incorrect", "unverifiable")
        )
        table.add_row(f"{name} steps: verdicts", mix)
    print_whole(console, table)
    for line in report.misses():
        console.print(f"[red]target missed:[/red] {line}")


def _eval_math_outputs(console: Console, path: Path) -> None:
    from prm_factory.evaluation.answer_pairs import evaluate_math_outputs, load_math_outputs

    table = _quality_table(path)
    outputs = load_math_outputs(path)
    scores, _, disagreements = evaluate_math_outputs(outputs)
    table.add_row("final answer `correct` precision", f"{100 * scores.precision:.2f}")
    table.add_row("final answer `correct` recall", f"{100 * scores.recall:.2f}")
    table.add_row("outputs / disagreements", f"{len(outputs)} / {len(disagreements)}")
    print_whole(console, table)


def _eval_answer_pairs(console: Console, path: Path) -> None:
    from prm_factory.evaluation.answer_pairs import evaluate_answer_pairs, load_answer_pairs

    table = _quality_table(path)
    report = evaluate_answer_pairs(load_answer_pairs(path))
    s = report.scores
    table.add_row("final answer `correct` precision", f"{100 * s.precision:.2f}")
    table.add_row("final answer `correct` recall", f"{100 * s.recall:.2f}")
    table.add_row("pairs / disagreements", f"{len(report.labels)} / {len(report.disagreements)}")
    print_whole(console, table)
