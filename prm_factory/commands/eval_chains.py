"""`prm-factory eval` on chain sets: per split and label source, then averaged over the splits
(evaluation.processbench does the scoring; this module reads the options, prints and writes the figures)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from prm_factory.console import fail, print_whole

if TYPE_CHECKING:
    from prm_factory.evaluation.processbench import Split, SplitReport
    from prm_factory.schemas.rejected import RejectedRow
    from prm_factory.training.step_scorer import ChainScorer

_SHOWN_REJECTIONS = 20


@dataclass(frozen=True)
class ChainOptions:
    """The options of `eval` that apply to chain sets only."""

    solutions: Path | None = None
    limit: int | None = None
    spread: bool = False
    json_out: Path | None = None
    prm: Path | None = None
    config: Path | None = None  # the run config whose [labels] sources and options the plug-ins read


def eval_chains(console: Console, path: Path, options: ChainOptions) -> None:
    """Read the splits, score every label source (and a PRM) against gold, print and write the figures."""
    splits = _read_splits(console, path, options)
    gold = [c for s in splits for c in s.chains if c.first_error_label is not None or c.step_labels]
    if not gold:
        fail(f"{path}: no chain carries gold labels (ProcessBench `label` or PRM800K ratings)")
    scorer = None
    if options.prm is not None:
        if not options.prm.is_dir():
            fail(f"PRM checkpoint not found: {options.prm}")
        from prm_factory.commands.search import scorer_of

        scorer = scorer_of(options.prm)
    from prm_factory.config.run_config import ConfigError, load_config
    from prm_factory.labels.registry import KEPT, LabelSourceFailed, RegistryError

    try:
        config = load_config(options.config) if options.config is not None else None
        reports = _score_splits(splits, scorer, config)
    except (ConfigError, RegistryError) as err:  # a bad config, or a plug-in it names that cannot load
        fail(str(err))
    except LabelSourceFailed as err:
        fail(str(err).replace(f"; {KEPT}", ""), 1)  # eval commits nothing
    for report in reports:
        _print_split(console, report)
    if len(reports) > 1:
        _print_average(console, reports)
    if options.json_out is not None:
        from prm_factory.evaluation.processbench import report_json

        figures_json = report_json(str(path), reports)
        figures_json["solutions"] = str(options.solutions) if options.solutions else None
        figures_json["limit"] = options.limit
        figures_json["spread"] = options.spread
        options.json_out.write_text(json.dumps(figures_json, indent=2) + "\n", encoding="utf-8")
        console.print(f"figures written to {options.json_out}", soft_wrap=True)


def _read_splits(console: Console, path: Path, options: ChainOptions) -> list[Split]:
    """The splits of `path` (--limit / --spread applied, --solutions attached); rejected rows printed."""
    from prm_factory.evaluation.processbench import group_splits
    from prm_factory.schemas.external_chains import read_external_chains
    from prm_factory.schemas.reference_solutions import attach_reference_solutions, read_reference_solutions

    try:
        chains, rejected = read_external_chains(path)
    except (OSError, ValueError) as err:
        fail(str(err))
    splits = group_splits(chains, rejected, options.limit, options.spread)
    bad_solutions: list[RejectedRow] = []
    if options.solutions is not None:
        table, bad_solutions = read_reference_solutions(options.solutions)
        splits = [replace(s, chains=tuple(attach_reference_solutions(s.chains, table))) for s in splits]
    shown = [r for s in splits for r in s.rejected] + bad_solutions
    for row in shown[:_SHOWN_REJECTIONS]:
        console.print(f"  rejected {_where(row)}, field {row.field}: {row.reason}", soft_wrap=True)
    if len(shown) > _SHOWN_REJECTIONS:
        console.print(f"  ... and {len(shown) - _SHOWN_REJECTIONS} more rejected rows (all in --json)")
    return splits


def _where(row: RejectedRow) -> str:
    """`file item N` in a JSON list, `file line N` otherwise (and for a list that cannot be parsed)."""
    text_level = row.reason.startswith(("invalid JSON", "not valid UTF-8"))
    return f"{row.file} {'item' if row.file.endswith('.json') and not text_level else 'line'} {row.line}"


def _score_splits(splits: list[Split], scorer: ChainScorer | None, config: Any = None) -> list[SplitReport]:
    """Every split labelled by the verifiers (and scored by the PRM where one is given)."""
    from prm_factory.evaluation.processbench import evaluate_split
    from prm_factory.verifiers.math import MathVerifier

    verifier = MathVerifier()
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
            reports.append(evaluate_split(split, verifier, done, scores, config))
    return reports


def _print_split(console: Console, report: SplitReport) -> None:
    """One split's table (a row per label source) and its counts."""
    from prm_factory.evaluation.processbench import source_figures

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
    if report.verifier_kinds:
        _print_kinds(console, report)
    n_err = sum(c.first_error_label not in (None, -1) for c in split.chains)
    n_cor = sum(c.first_error_label == -1 for c in split.chains)
    console.print(
        f"{len(split.chains)} chains: {n_err} erroneous, {n_cor} correct; "
        f"{report.n_with_solution} with a worked solution; {len(split.rejected)} rejected rows",
        soft_wrap=True,
    )


def _print_kinds(console: Console, report: SplitReport) -> None:
    """The verifier's `incorrect` per reading kind: precision with its Wilson interval and counts
    (evaluation.kind_precision)."""
    from prm_factory.evaluation.kind_precision import kind_rows

    table = Table(title=f"verifier `incorrect` by reading kind: {report.split.name}")
    for column in ("reading kind", "precision", "95 % interval", "right / flags", "wrong"):
        table.add_column(column, justify="left" if column == "reading kind" else "right")
    for row in kind_rows(report.verifier_kinds):
        table.add_row(*row)
    print_whole(console, table)


def _print_average(console: Console, reports: list[SplitReport]) -> None:
    """The mean over splits, per source; a source missing from some splits says over how many."""
    from prm_factory.evaluation.processbench import average_over_splits

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
