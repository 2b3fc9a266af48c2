"""`prm-factory label` (chains from elsewhere) and `prm-factory eval` (label quality against gold)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from prm_factory.console import print_whole

if TYPE_CHECKING:
    from config.run_config import RunConfig
    from schemas.rejected import RejectedRow


def _fail(message: str) -> NoReturn:
    Console(stderr=True).print(f"[red]error:[/red] {message}", soft_wrap=True)
    raise typer.Exit(2)


class EvalKind(StrEnum):
    """Which eval set a file is; `auto` tells it from the input (`_detect_kind`)."""

    auto = "auto"
    chains = "chains"  # ProcessBench / PRM800K-shape chains with gold first errors or step ratings
    answer_pairs = "answer-pairs"  # {predicted, reference, equivalent}
    math_outputs = "math-outputs"  # {completion, reference, equivalent}
    claim_steps = "claim-steps"  # {step, has_false_claim, claims}


_KIND_KEYS = (
    (EvalKind.claim_steps, {"step", "has_false_claim"}),
    (EvalKind.math_outputs, {"completion", "reference", "equivalent"}),
    (EvalKind.answer_pairs, {"predicted", "reference", "equivalent"}),
    (EvalKind.chains, {"steps"}),
    (EvalKind.chains, {"question", "label"}),
)
_SNIFFED_LINES = 100


def _first_object(path: Path) -> dict | None:
    """The first JSON object of a file: a `.json` list's first item, else the first of its first lines that
    parses as one (a broken first line is the loader's to report, not a reason to misread the file)."""
    if path.suffix == ".json":
        try:
            rows = json.loads(path.read_bytes().decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            rows = None  # perhaps one object per line under a .json name: read it line by line
        else:
            rows = rows if isinstance(rows, list) else [rows]
            return next((row for row in rows if isinstance(row, dict)), None)
    with path.open("rb") as handle:
        for _, raw in zip(range(_SNIFFED_LINES), handle, strict=False):
            try:
                row = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                continue
            if isinstance(row, dict):
                return row
    return None


def _detect_kind(path: Path) -> EvalKind:
    """The eval set a path holds: a folder is chain splits, a file is told by its first row's fields."""
    if path.is_dir():
        return EvalKind.chains
    row = _first_object(path)
    keys = set(row or {})
    for kind, needed in _KIND_KEYS:
        if needed <= keys:
            return kind
    found = f"its first row has the fields {', '.join(sorted(keys))}" if row else "no row is a JSON object"
    kinds = "|".join(k.value for k in EvalKind if k is not EvalKind.auto)
    _fail(f"{path}: cannot tell which eval set this is ({found}); name it with --kind {kinds}")


def _labelling_config(config: Path | None, dataset: Path | None) -> RunConfig:
    """The config of a `label` / `relabel` call, after the verifiers' preflight (one line per problem)."""
    from config.run_config import ConfigError, load_config
    from flows.preflight import labeler_problems

    try:
        cfg = load_config(config, {"dataset.root": str(dataset)} if dataset else None)
    except ConfigError as err:
        _fail(str(err))
    for line in labeler_problems(cfg):
        _fail(line)
    return cfg


def register(app: typer.Typer) -> None:
    console = Console()

    @app.command()
    def label(
        input_path: Annotated[
            Path,
            typer.Argument(
                metavar="INPUT", help="ProcessBench / PRM800K jsonl, json list, or a folder of split files"
            ),
        ],
        dataset: Annotated[Path | None, typer.Option(help="dataset root")] = None,
        config: Annotated[Path | None, typer.Option("--config", "-c", help="TOML run config")] = None,
        rollouts: Annotated[
            bool,
            typer.Option(
                "--rollouts", help="continue every step prefix with the configured policy (MC labels)"
            ),
        ] = False,
        solutions: Annotated[
            Path | None,
            typer.Option(
                "--solutions",
                help="GSM8K / MATH-style jsonl of worked solutions, matched by question text, for chains "
                "that carry none (the reference label source needs them)",
            ),
        ] = None,
    ) -> None:
        """Label chains produced outside the factory and commit them as a dataset version: verifier
        verdicts, reference alignment where a worked solution is given (or found by --solutions),
        outcome graded against the reference answer, and with --rollouts Monte Carlo values from the
        configured policy."""
        if not input_path.exists():
            _fail(f"input not found: {input_path}")
        if solutions is not None and not solutions.is_file():
            _fail(f"solutions file not found: {solutions}")
        cfg = _labelling_config(config, dataset)
        from flows.label_run import label_external

        summary = label_external(
            str(input_path), cfg, rollouts=rollouts, solutions=str(solutions) if solutions else None
        )
        verdicts: dict[str, int] = {}
        references: dict[str, int] = {}
        outcomes: dict[str, int] = {}
        for step in summary.steps:
            verdicts[step.verdict] = verdicts.get(step.verdict, 0) + 1
            ref = step.reference_verdict or "not run"
            references[ref] = references.get(ref, 0) + 1
        for chain in summary.chains:
            outcomes[chain.outcome] = outcomes.get(chain.outcome, 0) + 1
        console.print(f"dataset: {summary.dataset_root}  (version {summary.version})")
        console.print(f"chains {len(summary.chains)}, outcomes {outcomes}")
        console.print(f"steps {len(summary.steps)}, verifier {verdicts}, reference {references}")
        if rollouts:
            probed = sum(1 for s in summary.steps if s.value_source == "rollouts")
            console.print(f"MC values on {probed} probed steps")
        for r in summary.rejected:
            console.print(f"  rejected {r.file}:{r.line}: {r.reason}")

    @app.command()
    def relabel(
        dataset: Annotated[Path | None, typer.Option(help="dataset root")] = None,
        version: Annotated[
            int | None, typer.Option(help="dataset version to relabel (default: latest)")
        ] = None,
        config: Annotated[Path | None, typer.Option("--config", "-c", help="TOML run config")] = None,
    ) -> None:
        """Recompute the verifier and reference labels of a dataset version with the current verifiers and
        commit them as a new version (no sampling, no rollouts: MC values are kept as drawn). Chains whose
        labels already carry the current verifier version and code are left as they are."""
        cfg = _labelling_config(config, dataset)
        from flows.relabel_run import relabel_dataset
        from storage.errors import NoDatasetError, UnknownVersionError

        try:
            summary = relabel_dataset(cfg, version)
        except (NoDatasetError, UnknownVersionError) as err:
            _fail(str(err))
        if summary.version is None:
            console.print(
                f"{summary.dataset_root}: version {summary.from_version} already carries the current labels "
                f"({summary.unchanged} chains); nothing committed"
            )
            return
        console.print(
            f"dataset: {summary.dataset_root}  version {summary.from_version} -> {summary.version}  "
            f"({len(summary.chains)} chains and {len(summary.steps)} steps relabelled, "
            f"{summary.unchanged} already current)"
        )

    @app.command("eval")
    def evaluate(
        input_path: Annotated[
            Path,
            typer.Argument(
                metavar="INPUT", help="eval set: a .jsonl file, a .json list, or a folder of split files"
            ),
        ],
        kind: Annotated[
            EvalKind, typer.Option("--kind", help="which eval set INPUT is (auto: told by its fields)")
        ] = EvalKind.auto,
        solutions: Annotated[
            Path | None,
            typer.Option(
                "--solutions",
                help="chains: GSM8K / MATH-style jsonl of worked solutions, matched by question text as "
                "`label --solutions` does, for the reference label source",
            ),
        ] = None,
        limit: Annotated[
            int | None, typer.Option("--limit", min=1, help="chains: only the first N rows of each split")
        ] = None,
        spread: Annotated[
            bool,
            typer.Option(
                "--spread",
                help="chains: with --limit, N rows evenly spaced over each split instead of the first N "
                "(ProcessBench lists a split's erroneous chains first)",
            ),
        ] = False,
        json_out: Annotated[
            Path | None, typer.Option("--json", help="chains: also write the figures as JSON to this file")
        ] = None,
        prm: Annotated[
            Path | None,
            typer.Option(
                "--prm",
                help="chains: also score a trained PRM checkpoint (prm-factory train, TRL) as source `prm`",
            ),
        ] = None,
    ) -> None:
        """Score the labels against gold: chains with a ProcessBench first error or PRM800K ratings (per
        split, averaged over splits, and per label source: first-error F1 with both accuracies, correct
        chains flagged, precision/recall of `incorrect`); answer pairs and math outputs
        (precision/recall of final-answer `correct`); claim steps (false claims missed, true steps
        flagged). ProcessBench's files are read as they ship: a split's JSON list or a folder of them."""
        if not input_path.exists():
            _fail(f"input not found: {input_path}")
        if solutions is not None and not solutions.is_file():
            _fail(f"solutions file not found: {solutions}")
        if kind is EvalKind.auto:
            kind = _detect_kind(input_path)
        if kind is not EvalKind.chains:
            if input_path.is_dir():
                _fail(f"{input_path} is a folder: only chain splits (--kind chains) are read from a folder")
            options = (
                ("--solutions", solutions),
                ("--limit", limit),
                ("--spread", spread),
                ("--json", json_out),
                ("--prm", prm),
            )
            given = [name for name, value in options if value]
            if given:
                _fail(f"{', '.join(given)} apply to chain sets only; {input_path} is read as {kind.value}")
        if kind is EvalKind.chains:
            _eval_chains(console, input_path, solutions, limit, spread, json_out, prm)
        elif kind is EvalKind.claim_steps:
            _eval_claim_steps(console, input_path)
        elif kind is EvalKind.math_outputs:
            _eval_math_outputs(console, input_path)
        else:
            _eval_answer_pairs(console, input_path)


def _quality_table(path: Path) -> Table:
    table = Table(title=f"label quality: {path.name}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    return table


def _eval_claim_steps(console: Console, path: Path) -> None:
    from evaluation.claim_steps import default_judge, evaluate_claim_steps, load_claim_steps

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
    from evaluation.answer_pairs import evaluate_math_outputs, load_math_outputs

    table = _quality_table(path)
    outputs = load_math_outputs(path)
    scores, _, disagreements = evaluate_math_outputs(outputs)
    table.add_row("final answer `correct` precision", f"{100 * scores.precision:.2f}")
    table.add_row("final answer `correct` recall", f"{100 * scores.recall:.2f}")
    table.add_row("outputs / disagreements", f"{len(outputs)} / {len(disagreements)}")
    print_whole(console, table)


def _eval_answer_pairs(console: Console, path: Path) -> None:
    from evaluation.answer_pairs import evaluate_answer_pairs, load_answer_pairs

    table = _quality_table(path)
    report = evaluate_answer_pairs(load_answer_pairs(path))
    s = report.scores
    table.add_row("final answer `correct` precision", f"{100 * s.precision:.2f}")
    table.add_row("final answer `correct` recall", f"{100 * s.recall:.2f}")
    table.add_row("pairs / disagreements", f"{len(report.labels)} / {len(report.disagreements)}")
    print_whole(console, table)


_SHOWN_REJECTIONS = 20


def _where(row: RejectedRow) -> str:
    """`file item N` in a JSON list, `file line N` otherwise (and for a list that cannot be parsed)."""
    text_level = row.reason.startswith(("invalid JSON", "not valid UTF-8"))
    return f"{row.file} {'item' if row.file.endswith('.json') and not text_level else 'line'} {row.line}"


def _eval_chains(
    console: Console,
    path: Path,
    solutions: Path | None,
    limit: int | None,
    spread: bool,
    json_out: Path | None,
    prm: Path | None = None,
) -> None:
    """Per split and label source, then averaged over the splits (`evaluation.processbench`)."""
    from evaluation.processbench import (
        average_over_splits,
        evaluate_split,
        group_splits,
        report_json,
        source_figures,
    )
    from schemas.external_chains import read_external_chains
    from schemas.reference_solutions import attach_reference_solutions, read_reference_solutions
    from verifiers.math import MathVerifier

    try:
        chains, rejected = read_external_chains(path)
    except (OSError, ValueError) as err:
        _fail(str(err))
    splits = group_splits(chains, rejected, limit, spread)
    bad_solutions: list[RejectedRow] = []
    if solutions is not None:
        table, bad_solutions = read_reference_solutions(solutions)
        splits = [replace(s, chains=tuple(attach_reference_solutions(s.chains, table))) for s in splits]
    shown = [r for s in splits for r in s.rejected] + bad_solutions
    for row in shown[:_SHOWN_REJECTIONS]:
        console.print(f"  rejected {_where(row)}, field {row.field}: {row.reason}", soft_wrap=True)
    if len(shown) > _SHOWN_REJECTIONS:
        console.print(f"  ... and {len(shown) - _SHOWN_REJECTIONS} more rejected rows (all in --json)")
    gold = [c for s in splits for c in s.chains if c.first_error_label is not None or c.step_labels]
    if not gold:
        _fail(f"{path}: no chain carries gold labels (ProcessBench `label` or PRM800K ratings)")
    verifier = MathVerifier()
    scorer = None
    if prm is not None:
        if not prm.is_dir():
            _fail(f"PRM checkpoint not found: {prm}")
        from prm_factory.commands.search import scorer_of

        scorer = scorer_of(prm)
    reports = []
    with _chain_progress(sum(len(s.chains) for s in splits)) as done:
        for split in splits:
            scores = None
            if scorer is not None:
                scored = scorer.score([(c.problem, list(c.steps)) for c in split.chains])
                # steps past the checkpoint's max length get no score: unverifiable, never a verdict
                scores = [
                    [*got.scores, *[None] * (len(c.steps) - len(got.scores))]
                    for got, c in zip(scored, split.chains, strict=True)
                ]
            reports.append(evaluate_split(split, verifier, done, scores))
    for report in reports:
        split = report.split
        names = ", ".join(Path(f).name for f in split.files)
        table = _figures_table(f"label quality: {split.name} ({names})")
        for name, scores in report.sources.items():
            fe, steps = scores.first_error, scores.steps
            figures = source_figures(scores)
            flagged = f"{fe.n_correct_flagged} / {fe.n_correct} " if fe is not None and fe.n_correct else ""
            flags = steps.true_positive + steps.false_positive if steps is not None else 0
            table.add_row(
                name,
                _pct(figures.f1),
                _pct(figures.accuracy_erroneous),
                _pct(figures.accuracy_correct),
                f"{flagged}({_pct(figures.correct_flagged)} %)" if flagged else "n/a",
                f"{_pct(figures.incorrect_precision)} ({steps.true_positive} / {flags})" if steps else "n/a",
                _pct(figures.incorrect_recall),
            )
        print_whole(console, table)
        n_err = sum(c.first_error_label not in (None, -1) for c in split.chains)
        n_cor = sum(c.first_error_label == -1 for c in split.chains)
        console.print(
            f"{len(split.chains)} chains: {n_err} erroneous, {n_cor} correct; "
            f"{report.n_with_solution} with a worked solution; {len(split.rejected)} rejected rows",
            soft_wrap=True,
        )
    if len(reports) > 1:
        table = _figures_table(f"average over {len(reports)} splits")
        for name, figures in average_over_splits(reports).items():
            table.add_row(
                name if figures.n_splits == len(reports) else f"{name} ({figures.n_splits} splits)",
                _pct(figures.f1),
                _pct(figures.accuracy_erroneous),
                _pct(figures.accuracy_correct),
                _pct(figures.correct_flagged),
                _pct(figures.incorrect_precision),
                _pct(figures.incorrect_recall),
            )
        print_whole(console, table)
    if json_out is not None:
        figures_json = report_json(str(path), reports)
        figures_json["solutions"] = str(solutions) if solutions else None
        figures_json["limit"] = limit
        figures_json["spread"] = spread
        json_out.write_text(json.dumps(figures_json, indent=2) + "\n", encoding="utf-8")
        console.print(f"figures written to {json_out}", soft_wrap=True)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def _figures_table(title: str) -> Table:
    table = Table(title=title)
    for column in (
        "source",
        "first-error F1",
        "acc. erroneous",
        "acc. correct",
        "correct chains flagged",
        "`incorrect` precision",
        "`incorrect` recall",
    ):
        table.add_column(column, justify="left" if column == "source" else "right")
    return table


@contextmanager
def _chain_progress(total: int) -> Iterator[Callable[[int], None]]:
    """A bar on stderr while the chains are labelled (minutes on a full split); gone when done."""
    from rich.progress import Progress

    console = Console(stderr=True)
    if not console.is_terminal:  # a pipe or a log file gets the figures only
        yield lambda n: None
        return
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("labelling chains", total=total)
        yield lambda n: progress.advance(task, n)
