"""`prm-factory label` (chains from elsewhere) and `prm-factory eval` (label quality against gold)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from prm_factory.console import print_whole

if TYPE_CHECKING:
    from config.run_config import RunConfig


def _fail(message: str) -> None:
    Console(stderr=True).print(f"[red]error:[/red] {message}", soft_wrap=True)
    raise typer.Exit(2)


def _first_row(path: Path) -> dict:
    """The first JSON object of a jsonl file ({} when it is not one): it tells which eval set a file is."""
    with path.open("rb") as handle:
        for raw in handle:
            if raw.strip():
                try:
                    row = json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError):
                    return {}
                return row if isinstance(row, dict) else {}
    return {}


def _is_answer_pairs(path: Path) -> bool:
    return {"predicted", "reference", "equivalent"} <= set(_first_row(path))


def _is_reference_chains(path: Path) -> bool:
    """ProcessBench-shape chains that carry a worked solution or reference answer: scored per label source."""
    row = _first_row(path)
    return {"steps", "label"} <= set(row) and bool({"solution", "reference_answer", "answer"} & set(row))


def _is_math_outputs(path: Path) -> bool:
    return {"completion", "reference", "equivalent"} <= set(_first_row(path))


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
            Path, typer.Argument(metavar="INPUT", help="ProcessBench / PRM800K jsonl or json")
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
        if not input_path.is_file():
            _fail(f"input file not found: {input_path}")
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
        input_path: Annotated[Path, typer.Argument(metavar="PREDICTIONS-OR-INPUT")],
    ) -> None:
        """Score the verifiers against gold labels: chains with ProcessBench `label` / PRM800K ratings
        (first-error F1, per-step precision/recall of `incorrect`), or answer pairs
        (`predicted, reference, equivalent`: precision/recall of final-answer `correct`)."""
        if not input_path.is_file():
            _fail(f"input file not found: {input_path}")
        table = Table(title=f"label quality: {input_path.name}")
        table.add_column("metric")
        table.add_column("value", justify="right")
        if {"step", "has_false_claim"} <= set(_first_row(input_path)):
            from evaluation.claim_steps import default_judge, evaluate_claim_steps, load_claim_steps

            judge, close = default_judge()
            try:
                report = evaluate_claim_steps(load_claim_steps(input_path), judge)
            finally:
                close()
            table.add_row(
                "false-claim steps labelled `correct`", f"{len(report.false_accepted)} / {report.n_false}"
            )
            table.add_row(
                "true steps labelled `incorrect`",
                f"{len(report.true_rejected)} / {report.n_true} "
                f"({100 * float(report.true_rejected_rate):.1f} %)",
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
            return
        if _is_reference_chains(input_path):
            from evaluation.real_errors import LABEL_SOURCES, evaluate_real_errors, load_samples
            from verifiers.math import MathVerifier

            samples = load_samples(input_path)
            overall, _ = evaluate_real_errors(samples, MathVerifier())
            table = Table(title=f"label quality per source: {input_path.name}")
            for column in ("source", "first-error F1", "acc. erroneous", "acc. correct", "step P", "step R"):
                table.add_column(column, justify="left" if column == "source" else "right")
            for name in LABEL_SOURCES:
                fe, st = overall[name].first_error, overall[name].steps
                table.add_row(
                    name,
                    f"{100 * fe.f1:.1f}" if fe.n_erroneous and fe.n_correct else "n/a",
                    f"{100 * fe.accuracy_erroneous:.1f}" if fe.n_erroneous else "n/a",
                    f"{100 * fe.accuracy_correct:.1f}" if fe.n_correct else "n/a",
                    f"{100 * st.precision:.1f}",
                    f"{100 * st.recall:.1f}",
                )
            n_err = sum(s.label != -1 for s in samples)
            print_whole(console, table)
            console.print(f"{len(samples)} chains: {n_err} erroneous, {len(samples) - n_err} correct")
            return
        if _is_math_outputs(input_path):
            from evaluation.answer_pairs import evaluate_math_outputs, load_math_outputs

            outputs = load_math_outputs(input_path)
            scores, _, disagreements = evaluate_math_outputs(outputs)
            table.add_row("final answer `correct` precision", f"{100 * scores.precision:.2f}")
            table.add_row("final answer `correct` recall", f"{100 * scores.recall:.2f}")
            table.add_row("outputs / disagreements", f"{len(outputs)} / {len(disagreements)}")
            print_whole(console, table)
            return
        if _is_answer_pairs(input_path):
            from evaluation.answer_pairs import evaluate_answer_pairs, load_answer_pairs

            report = evaluate_answer_pairs(load_answer_pairs(input_path))
            s = report.scores
            table.add_row("final answer `correct` precision", f"{100 * s.precision:.2f}")
            table.add_row("final answer `correct` recall", f"{100 * s.recall:.2f}")
            table.add_row("pairs / disagreements", f"{len(report.labels)} / {len(report.disagreements)}")
            print_whole(console, table)
            return
        from evaluation.external import evaluate_external
        from schemas.external_chains import read_external_chains
        from schemas.records import Problem
        from verifiers.math import MathVerifier

        chains, rejected = read_external_chains(input_path)
        for r in rejected:
            console.print(f"  rejected {r.file}:{r.line}: {r.reason}")
        verifier = MathVerifier()
        predicted = [
            [
                v.label
                for v in verifier.check_steps(Problem(c.id, "external", "math", c.problem), list(c.steps))
            ]
            for c in chains
        ]
        report = evaluate_external(chains, predicted)
        if report.first_error is None and report.steps is None:
            _fail(f"{input_path}: no chain carries gold labels (ProcessBench `label` or PRM800K ratings)")
        if report.first_error is not None:
            fe = report.first_error
            table.add_row("first-error F1 (ProcessBench)", f"{100 * fe.f1:.2f}")
            table.add_row("accuracy on erroneous chains", f"{100 * fe.accuracy_erroneous:.2f}")
            table.add_row("accuracy on correct chains", f"{100 * fe.accuracy_correct:.2f}")
        if report.steps is not None:
            table.add_row("step `incorrect` precision", f"{100 * report.steps.precision:.2f}")
            table.add_row("step `incorrect` recall", f"{100 * report.steps.recall:.2f}")
        table.add_row("chains / rejected rows", f"{report.n_chains} / {len(rejected)}")
        print_whole(console, table)
