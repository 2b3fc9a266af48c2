"""`prm-factory label` (chains from elsewhere) and `prm-factory relabel` (a version with today's verifiers).

Both are as quiet as `run`: Prefect's INFO lines and the libraries' output go to a log under the dataset
root (prm_factory.progress.quiet_output), the terminal gets the counts and, on an error, the log's path.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from prm_factory.commands.options import ConfigOption
from prm_factory.console import fail
from prm_factory.labels.registry import registered_names

if TYPE_CHECKING:
    from prm_factory.config.run_config import RunConfig

app = typer.Typer()
"""The labelling commands; prm_factory/cli.py merges them into the main app."""


def register(parent: typer.Typer) -> None:
    """Merge this group's commands into `parent` (the main app, or a test's)."""
    parent.add_typer(app)


def _labelling_config(config: Path | None, dataset: Path | None) -> RunConfig:
    """The config of a `label` / `relabel` call, after the verifiers' preflight (one line per problem)."""
    from prm_factory.api import load_config
    from prm_factory.config.run_config import ConfigError
    from prm_factory.flows.preflight import labeler_problems

    try:
        cfg = load_config(config, {"dataset.root": str(dataset)} if dataset else None)
    except ConfigError as err:
        fail(str(err))
    for line in labeler_problems(cfg):
        fail(line)
    return cfg


def _print_log(console: Console, log_path: Path) -> None:
    console.print(f"log (engine and library output): {log_path}", soft_wrap=True, highlight=False)


InputArgument = Annotated[
    Path,
    typer.Argument(
        metavar="INPUT", help="ProcessBench / PRM800K jsonl, json list, or a folder of split files"
    ),
]
RolloutsOption = Annotated[
    bool,
    typer.Option("--rollouts", help="continue every step prefix with the configured policy (MC labels)"),
]
SolutionsOption = Annotated[
    Path | None,
    typer.Option(
        "--solutions",
        help="GSM8K / MATH-style jsonl of worked solutions, matched by question text, for chains "
        "that carry none (the reference label source needs them)",
    ),
]
HumanLabelsOption = Annotated[
    bool,
    typer.Option(
        "--human-labels",
        help="load the gold labels the rows carry (ProcessBench's first wrong step, PRM800K's ratings) as "
        "the `human` label source, the strongest vote of the consensus",
    ),
]
DatasetRootOption = Annotated[Path | None, typer.Option(help="dataset root")]


@app.command()
def label(
    input_path: InputArgument,
    dataset: DatasetRootOption = None,
    config: ConfigOption = None,
    rollouts: RolloutsOption = False,
    solutions: SolutionsOption = None,
    human_labels: HumanLabelsOption = False,
) -> None:
    """Label chains produced outside the factory and commit them as a dataset version: verifier
    verdicts, reference alignment where a worked solution is given (or found by --solutions),
    outcome graded against the reference answer, and with --rollouts Monte Carlo values from the
    configured policy; with --human-labels the rows' own gold labels as the `human` source."""
    if not input_path.exists():
        fail(f"input not found: {input_path}")
    if solutions is not None and not solutions.is_file():
        fail(f"solutions file not found: {solutions}")
    cfg = _labelling_config(config, dataset)
    from prm_factory.api import label as label_chains
    from prm_factory.labels.registry import LabelSourceFailed
    from prm_factory.progress import quiet_output

    with quiet_output(cfg.dataset_root()) as log_path:
        try:
            summary = label_chains(
                input_path, cfg, rollouts=rollouts, solutions=solutions, human_labels=human_labels
            )
        except LabelSourceFailed as err:  # a plug-in's failure: one line, its traceback in the log
            fail(f"{err} (log: {log_path})", 1)
    console = Console()
    tally = summary.tally
    console.print(f"dataset: {summary.dataset_root}  (version {summary.version})")
    console.print(f"chains {tally.chains}, outcomes {dict(tally.outcomes)}")
    counts = tally.source_verdicts(skip=() if rollouts else ("mc",))
    console.print(
        f"steps {tally.steps}, " + ", ".join(f"{source} {verdicts}" for source, verdicts in counts.items())
    )
    if rollouts:
        console.print(f"MC values on {tally.probed_steps} probed steps")
    if summary.reused_chunks:
        console.print(f"{summary.reused_chunks} chunks reused from an interrupted run of the same input")
    for r in summary.rejected:
        console.print(f"  rejected {r.file}:{r.line}: {r.reason}")
    _print_log(console, log_path)


SourceOption = Annotated[
    list[str] | None,
    typer.Option(
        "--source",
        help="run only this label source again (repeatable): "
        + " | ".join(registered_names())
        + "; one that needs an engine starts the config's",
    ),
]


@app.command()
def relabel(
    dataset: DatasetRootOption = None,
    version: Annotated[int | None, typer.Option(help="dataset version to relabel (default: latest)")] = None,
    config: ConfigOption = None,
    source: SourceOption = None,
    calibrate_from_audit: Annotated[
        Path | None,
        typer.Option(
            help="An audit (audit.sqlite or its folder) whose answers refine the calibration tables the "
            "consensus weighs; every chain's consensus is computed again with them."
        ),
    ] = None,
) -> None:
    """Recompute the labels of a dataset version with the current label sources and commit them as a new
    version, with consensus and first errors recomputed. By default every configured source that needs no
    engine runs again (verifier, reference, plug-ins); MC values and the judge's verdicts are kept as
    drawn. Chains whose labels already carry the current labelers are left as they are."""
    cfg = _labelling_config(config, dataset)
    names = list(source or ())
    unknown = [name for name in names if name not in registered_names() and ":" not in name]
    if unknown:
        fail(f"no label source {', '.join(unknown)}; registered: {', '.join(registered_names())}")
    from prm_factory.api import open_dataset
    from prm_factory.api import relabel as relabel_version
    from prm_factory.config.run_config import ConfigError
    from prm_factory.labels.registry import RegistryError
    from prm_factory.progress import quiet_output
    from prm_factory.storage.errors import NoDatasetError, UnknownVersionError

    try:  # before Prefect starts, and before the log would make a folder where no dataset is
        open_dataset(cfg.dataset_root()).resolve_version(version)
        with quiet_output(cfg.dataset_root()) as log_path:
            summary = relabel_version(
                cfg, version=version, sources=names, calibrate_from_audit=calibrate_from_audit
            )
    except (NoDatasetError, UnknownVersionError, RegistryError, ConfigError) as err:
        fail(str(err))
    console = Console()
    if summary.version is None:
        console.print(
            f"{summary.dataset_root}: version {summary.from_version} already carries the current labels "
            f"({summary.unchanged} chains); nothing committed"
        )
    else:
        console.print(
            f"dataset: {summary.dataset_root}  version {summary.from_version} -> {summary.version}  "
            f"({summary.tally.chains} chains and {summary.tally.steps} steps relabelled by "
            f"{', '.join(summary.sources)}, {summary.unchanged} already current)"
        )
    _print_log(console, log_path)
