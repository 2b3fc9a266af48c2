"""The factory from Python: the functions `prm_factory` exports (its `__all__`), and what the CLI calls.

Everything else in the package (`prm_factory.flows`, `prm_factory.storage`, ...) is internal: its names and
signatures change between releases without notice. These functions keep theirs, and each raises a
`ConfigError` or a `StorageError` (both exported) with a one-line message for bad input, never a bare
traceback from deep inside.

>>> import prm_factory as pf                                                             # doctest: +SKIP
>>> config = pf.load_config("run.toml", {"rollouts.k": 8})                               # doctest: +SKIP
>>> summary = pf.run(config)                                                             # doctest: +SKIP
>>> pf.query(summary.dataset_root, "SELECT consensus, count(*) FROM steps GROUP BY 1")   # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

    from prm_factory.config.run_config import RunConfig
    from prm_factory.exports.formats import ExportFormat
    from prm_factory.flows.label_run import LabelSummary
    from prm_factory.flows.relabel_run import RelabelSummary
    from prm_factory.flows.run_summary import RunSummary
    from prm_factory.storage.dataset import Dataset, VersionInfo
    from prm_factory.training.feed import FeedKind, RowDataset, StepFeed
    from prm_factory.training.scorer import ScoredFile, ScoredRows
    from prm_factory.training.step_scorer import StepScores
    from prm_factory.training.trainer import TrainResult

PathLike = str | Path


def load_config(path: PathLike | None = None, overrides: Mapping[str, object] | None = None) -> RunConfig:
    """The run config of a TOML file (None: the defaults), then `PRM_FACTORY_<SECTION>__<FIELD>` variables,
    then `overrides` as dotted keys (`{"rollouts.k": 8}`), later winning. Raises `ConfigError`.

    >>> load_config(None, {"rollouts.k": 8}).rollouts.k
    8
    """
    from prm_factory.config.run_config import load_config as load

    return load(path, dict(overrides) if overrides else None)


@contextmanager
def _runtime_defaults() -> Iterator[None]:
    """The process-wide defaults the CLI sets (no telemetry, offline hub, quiet vLLM: config/runtime.py), for
    the length of one call: what the caller's process had before is put back after it."""
    from prm_factory.config.runtime import RUNTIME_DEFAULTS

    added = [key for key in RUNTIME_DEFAULTS if key not in os.environ]
    for key in added:
        os.environ[key] = RUNTIME_DEFAULTS[key]
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


def _preflight(problems: Sequence[str]) -> None:
    """Every problem the preflight found, in one `ConfigError` (one line each), before anything starts."""
    from prm_factory.config.run_config import ConfigError

    if problems:
        raise ConfigError("\n".join(problems))


def run(config: RunConfig, *, shard: str | None = None, parent_run: str | None = None) -> RunSummary:
    """Sample chains, label every step and commit a new dataset version; the summary names the version,
    its counts and the run's status (`"failed"` runs return too: read `status` and `error`).

    `shard="I/N"` runs one hash slice of the problems as a shard of the logical run `parent_run`.

    >>> summary = run(load_config("run.toml"))                                           # doctest: +SKIP
    >>> summary.status, summary.version                                                 # doctest: +SKIP
    ('succeeded', 3)
    """
    from prm_factory.flows.generation_run import run_generation
    from prm_factory.flows.preflight import config_problems

    if shard is not None:
        from prm_factory.flows.shards import Shard, absolute_paths

        Shard.parse(shard)
        config = absolute_paths(config)  # every shard, here or on a worker, runs (and hashes) the same config
    _preflight(config_problems(config))
    with _runtime_defaults():
        return run_generation(config, shard, parent_run)


def label(
    chains: PathLike,
    config: RunConfig,
    *,
    rollouts: bool = False,
    solutions: PathLike | None = None,
    human_labels: bool = False,
) -> LabelSummary:
    """Label chains written elsewhere (ProcessBench / PRM800K jsonl, a json list, or a folder of split files)
    with the config's sources and commit them as a dataset version. `rollouts` adds Monte Carlo values from
    the configured policy; `solutions` (GSM8K / MATH-style jsonl) supplies worked solutions by question text
    for the reference source; `human_labels` loads the gold labels the rows carry (ProcessBench's first wrong
    step, PRM800K's ratings) as the `human` source. Rows that do not parse are in `summary.rejected` with
    file, line and reason.

    >>> summary = label("chains.jsonl", load_config(None, {"dataset.root": "ds"}))       # doctest: +SKIP
    >>> len(summary.steps), summary.rejected                                             # doctest: +SKIP
    (412, [])
    """
    from prm_factory.config.run_config import ConfigError
    from prm_factory.flows.label_run import label_external
    from prm_factory.flows.preflight import labeler_problems

    if not Path(chains).exists():
        raise ConfigError(f"input not found: {chains}")
    if solutions is not None and not Path(solutions).is_file():
        raise ConfigError(f"solutions file not found: {solutions}")
    if human_labels:
        config = _with_input_human_labels(config)
    _preflight(labeler_problems(config))
    solutions_path = str(solutions) if solutions is not None else None
    with _runtime_defaults():
        return label_external(str(chains), config, rollouts=rollouts, solutions=solutions_path)


def _with_input_human_labels(config: RunConfig) -> RunConfig:
    """`config` with the `human` source on, reading the rows' own labels (`label(human_labels=True)`)."""
    options = {**config.labels.options, "human": {**config.labels.options.get("human", {}), "input": True}}
    sources = [*config.labels.sources, *(() if "human" in config.labels.sources else ("human",))]
    labels = config.labels.model_copy(update={"sources": sources, "options": options})
    return config.model_copy(update={"labels": labels})


def relabel(
    config: RunConfig,
    *,
    version: int | str | None = None,
    sources: Sequence[str] | str = (),
    calibrate_from_audit: PathLike | None = None,
) -> RelabelSummary:
    """Recompute the labels of a version (None: the latest) of the config's dataset with today's label
    sources and commit them as a new version, consensus and first errors recomputed; `sources` re-runs only
    those (by registered name, e.g. `["human"]`); `calibrate_from_audit`: an audit whose answers first refine
    the calibration tables the consensus weighs; `summary.version` is None when every chain was already
    current.

    >>> relabel(load_config(None, {"dataset.root": "ds"})).version                      # doctest: +SKIP
    4
    """
    from prm_factory.config.run_config import ConfigError
    from prm_factory.flows.preflight import labeler_problems
    from prm_factory.flows.relabel_run import relabel_dataset
    from prm_factory.labels.registry import RegistryError, configured, source_names

    _preflight(labeler_problems(config))
    names = [sources] if isinstance(sources, str) else list(sources)  # "human" is one name, not five
    objects = [name for name in names if ":" in name and name not in config.labels.sources]
    if objects:  # `--source package.module:SOURCE`: run it as a config naming it would
        labels = config.labels.model_copy(update={"sources": [*config.labels.sources, *objects]})
        config = config.model_copy(update={"labels": labels})
    try:  # an unknown source before Prefect starts
        known = configured(config.labels.sources)
        names = source_names(names)
        for name in names:
            known[name]
    except RegistryError as error:
        raise ConfigError(str(error)) from None
    # NoDatasetError / UnknownVersionError before Prefect starts; a tag becomes its number
    resolved = _version(open_dataset(config.dataset_root()), version, latest=True)
    audit = None if calibrate_from_audit is None else str(calibrate_from_audit)
    try:
        with _runtime_defaults():
            return relabel_dataset(config, resolved, names, audit)
    except RegistryError as error:  # a source that does not apply to this dataset's chains
        raise ConfigError(str(error)) from None


def open_dataset(root: PathLike, storage_options: Mapping[str, str] | None = None) -> Dataset:
    """A dataset by its root (a folder, or an object-store URI with `storage_options`): `versions()`,
    `latest_version()`, `tables(version)` (pyarrow datasets of problems, chains, steps, runs, rejections).

    Raises `NoDatasetError` (a `StorageError`) where nothing was ever committed at `root`.

    >>> open_dataset("ds").latest_version()                                              # doctest: +SKIP
    3
    """
    from prm_factory.storage.dataset import Dataset
    from prm_factory.storage.errors import NoDatasetError

    dataset = Dataset(str(root), dict(storage_options) if storage_options else None)
    if not dataset.exists():
        raise NoDatasetError(f"no dataset at {root} (nothing committed there; `run` or `label` writes one)")
    return dataset


def versions(root: PathLike) -> list[VersionInfo]:
    """Every committed version of the dataset at `root`, oldest first (number, time, tag, run).

    >>> [v.version for v in versions("ds")]                                              # doctest: +SKIP
    [0, 1, 2]
    """
    return open_dataset(root).versions()


def query(
    root: PathLike | Dataset,
    sql: str,
    *,
    version: int | str | None = None,
    sources: Sequence[str] | None = None,
) -> pa.Table:
    """Run DuckDB SQL over one version (None: the latest) of a dataset, whose tables are views named
    problems, chains, steps, runs and rejections (and label_stats, first_errors); returns an Arrow table.
    `sources`: label sources whose columns the views show even where this dataset has none (default: every
    registered source, plug-ins included). Raises `StorageError`.

    >>> query("ds", "SELECT count(*) AS n FROM steps").column("n")[0].as_py()           # doctest: +SKIP
    412
    """
    from prm_factory.labels.registry import registered_names
    from prm_factory.storage.sql import query as run_sql

    shown = registered_names() if sources is None else list(sources)
    dataset = _dataset(root)
    return run_sql(dataset, sql, _version(dataset, version), shown)


def export(
    root: PathLike | Dataset,
    fmt: ExportFormat,
    *,
    version: int | str | None = None,
    output: PathLike | None = None,
    label: str = "hard",
    threshold: float | None = None,
    sources: Sequence[str] = (),
    domains: Sequence[str] = (),
    agreement_only: bool = False,
    since_version: int | None = None,
    stop_at_first_error: bool = False,
    placeholder: str | None = None,
    soft: bool = False,
) -> pa.Table:
    """The rows a trainer reads, for `fmt` one of "trl", "openrlhf", "math-shepherd", "steps", from one
    version; `label` picks the label kind ("hard", "soft" with `threshold`, "consensus", a source's name;
    `soft` with "consensus": its `p_correct` as the soft label);
    `since_version` keeps the rows of runs committed after that version; `placeholder` is the step tag of
    the openrlhf and math-shepherd formats (one token of the model). Written to `output` too when given
    (.jsonl, .parquet or .json by its suffix).

    >>> export("ds", "trl", label="consensus", output="trl.jsonl").num_rows            # doctest: +SKIP
    96
    """
    from prm_factory.exports.formats import ExportOptions, export_table, write_export

    dataset = _dataset(root)
    options = ExportOptions(
        label=label,  # type: ignore[arg-type]  # checked by export_table
        threshold=threshold,
        sources=tuple(sources),
        domains=tuple(domains),
        agreement_only=agreement_only,
        since_version=since_version,
        stop_at_first_error=stop_at_first_error,
        soft=soft,
        **({} if placeholder is None else {"placeholder": placeholder}),
    )
    table = export_table(dataset, fmt, _version(dataset, version), options)
    if output is not None:
        write_export(table, Path(output))
    return table


def feed(
    root: PathLike | Dataset,
    kind: FeedKind = "steps",
    *,
    version: int | str | None = None,
    columns: Sequence[str] | None = None,
    batch_size: int = 8192,
    follow: bool = False,
    **options: Any,
) -> StepFeed:
    """A torch `IterableDataset` over one table of a version, streamed in batches (dicts of tensors and
    lists), sharded over `torch.distributed` ranks and DataLoader workers; `follow=True` keeps streaming the
    rows of versions committed later (fresh labels for a running job). Other options: see `StepFeed`.

    >>> from torch.utils.data import DataLoader                                          # doctest: +SKIP
    >>> for batch in DataLoader(feed("ds", columns=["consensus"]), batch_size=None):     # doctest: +SKIP
    ...     break
    """
    from prm_factory.training.feed import StepFeed

    dataset = _dataset(root)
    return StepFeed(dataset, kind, _version(dataset, version), columns, batch_size, follow=follow, **options)


def training_rows(
    root: PathLike | Dataset,
    label: str = "consensus",
    *,
    version: int | str | None = None,
    soft: bool = False,
    agreement_only: bool = False,
    since_version: int | None = None,
) -> RowDataset:
    """The rows `prm-factory train` learns from, as a torch `IterableDataset` of `TrainRow`s (prompt, steps,
    one label per step, MC values), read a partition of problems at a time (never the whole version);
    `label` is "consensus" or a source's name, `soft` keeps MC values (with label "mc"), `agreement_only`
    keeps steps whose sources agree. DataLoader workers split the partitions.

    >>> rows = training_rows("ds", "consensus", agreement_only=True)                   # doctest: +SKIP
    >>> next(iter(rows)).labels                                                        # doctest: +SKIP
    (True, True, False)
    """
    from prm_factory.training.chain_source import DatasetRows
    from prm_factory.training.feed import RowDataset

    source = DatasetRows(
        _dataset(root), version, label, soft=soft, agreement_only=agreement_only, since_version=since_version
    )
    return RowDataset(source)


def train(
    output_dir: PathLike,
    *,
    dataset: PathLike | Dataset | None = None,
    version: int | str | None = None,
    export_file: PathLike | None = None,
    label: str = "consensus",
    soft: bool = False,
    agreement_only: bool = False,
    since_version: int | str | None = None,
    base_model: PathLike | None = None,
    resume: bool = False,
    progress: Callable[[str], object] | None = None,
    console: Any | None = None,
    **settings: Any,
) -> TrainResult:
    """Train a PRM (transformers + accelerate; hard labels: cross-entropy, `soft` with `label="mc"`: BCE on
    the MC values) on a dataset version's step labels, streamed a partition at a time (never held whole), or
    on an `export trl` file (`export_file`, read as it is); the checkpoint, its model card and
    `prm_factory.json` (where the rows came from) go to `output_dir`. `dataset` defaults to the default
    dataset root; `base_model` to the embedded SmolLM2-135M-Instruct; `resume` continues from the latest
    checkpoint in `output_dir`. `settings` are the trainer's: `epochs`, `max_steps`, `batch_size`,
    `gradient_accumulation`, `learning_rate`, `weight_decay`, `held_out`, `seed`, `max_length`, `separator`,
    `save_every`, `keep_checkpoints`, `eval_batch_size` (training/trainer.py `TrainSettings`). `progress`
    receives one line per evaluation and checkpoint, `console` (a rich Console) shows a progress bar.
    Raises `ConfigError` (a wrong call, no rows to train on, a checkpoint of other rows) or `StorageError`.

    >>> result = train("prm-out", dataset="ds", label="consensus", max_steps=50)          # doctest: +SKIP
    >>> result.global_step, result.output_dir                                            # doctest: +SKIP
    (50, PosixPath('prm-out'))
    """
    import dataclasses

    from prm_factory.config.run_config import ConfigError
    from prm_factory.training.layout import DEFAULT_SEPARATOR
    from prm_factory.training.rows import RowsError
    from prm_factory.training.stream import TrainingError
    from prm_factory.training.trainer import TrainSettings
    from prm_factory.training.trainer import train as train_prm

    fixed = {"base_model", "output_dir", "soft"}
    known = {field.name for field in dataclasses.fields(TrainSettings)} - fixed
    unknown = sorted(set(settings) - known)
    if unknown:
        raise ConfigError(f"unknown training settings {unknown}; known: {sorted(known)}")
    if export_file is not None and (dataset is not None or version is not None or soft or agreement_only):
        raise ConfigError(
            "export_file is read as it is: dataset, version, soft and agreement_only apply to a dataset"
        )
    if export_file is not None and since_version is not None:
        raise ConfigError("export_file is read as it is: since_version applies to a dataset")
    options = {"separator": DEFAULT_SEPARATOR, **settings}
    prm_settings = TrainSettings(
        base_model=Path(base_model) if base_model is not None else _default_model(),
        output_dir=Path(output_dir),
        soft=soft,
        **options,
    )
    rows: Any = None
    try:
        if export_file is not None:
            rows, provenance = _export_rows(Path(export_file), label)
        else:
            rows, provenance = _dataset_rows(dataset, version, label, soft, agreement_only, since_version)
        return train_prm(rows, prm_settings, provenance, resume=resume, progress=progress, console=console)
    except (RowsError, TrainingError) as err:  # the rows are read while training: these come from there too
        raise ConfigError(str(err)) from err
    finally:
        if hasattr(rows, "close"):  # a dataset's row source holds a DuckDB connection over the version
            rows.close()


def _default_model() -> Path:
    from prm_factory.sampling.model_prep import prepare_default_model

    return prepare_default_model()


def _export_rows(path: Path, label: str) -> tuple[Any, Any]:
    """The rows of an `export trl` file, held in memory (the file is read whole), and their provenance."""
    from prm_factory.config.run_config import ConfigError
    from prm_factory.training.rows import rows_from_export
    from prm_factory.training.trainer import Provenance

    try:
        rows = rows_from_export(path)
    except OSError as err:
        raise ConfigError(f"cannot read {path}: {err}") from err
    if not rows:
        raise ConfigError("no rows with labels of that source: nothing to train on")
    return rows, Provenance(str(path), None, f"export file ({label} as given at export)")


def _dataset_rows(
    dataset: PathLike | Dataset | None,
    version: int | str | None,
    label: str,
    soft: bool,
    agreement_only: bool,
    since_version: int | str | None,
) -> tuple[Any, Any]:
    """A dataset version's rows as a row source the trainer streams a partition at a time
    (training/chain_source.py), and their provenance."""
    from prm_factory.training.chain_source import DatasetRows
    from prm_factory.training.trainer import Provenance

    store, resolved, since = _resolved(dataset, version, since_version)
    rows = DatasetRows(store, resolved, label, soft=soft, agreement_only=agreement_only, since_version=since)
    return rows, Provenance(store.root, resolved, label, agreement_only, since)


def score(
    checkpoint: PathLike, chains: Sequence[tuple[str, Sequence[str]]], *, batch_size: int = 8
) -> list[StepScores]:
    """Step scores of a PRM checkpoint (from `prm-factory train`, or TRL's PRMTrainer) for `(prompt, steps)`
    pairs: P(step right) per step, at the positions training labelled, on a GPU when there is one; steps
    cut by the checkpoint's max length get no score.

    >>> score("prm-out", [("What is 2+3?", ["2+3 = 5", "The answer is 5."])])[0].scores # doctest: +SKIP
    [0.93, 0.97]
    """
    from prm_factory.training.scorer import PrmScorer

    return PrmScorer(Path(checkpoint), batch_size=batch_size).score(chains)


def score_file(
    checkpoint: PathLike,
    file: PathLike,
    *,
    threshold: float = 0.5,
    step_separator: str | None = None,
    max_length: int | None = None,
    batch_size: int = 8,
) -> ScoredFile:
    """Score every step of every chain of a chain file (ProcessBench / PRM800K-shape JSON Lines or JSON list,
    or a folder of them) with a PRM checkpoint; `first_error` holds first-error F1 where the file carries
    gold first errors. A step is called wrong below `threshold` P(right). Raises `ConfigError` for a path
    that is no checkpoint or no file.

    >>> scored = score_file("prm-out", "processbench/math.json")                            # doctest: +SKIP
    >>> scored.first_error.f1, len(scored.chains)                                          # doctest: +SKIP
    (0.41, 1000)
    """
    from prm_factory.config.run_config import ConfigError
    from prm_factory.training.scorer import score_file as score_chain_file

    if not Path(file).exists():
        raise ConfigError(f"{file}: no such file or folder")
    scorer = _scorer(_checkpoint(checkpoint), step_separator, max_length, batch_size)
    return score_chain_file(scorer, Path(file), threshold)


def score_dataset(
    checkpoint: PathLike,
    dataset: PathLike | Dataset | None = None,
    *,
    version: int | str | None = None,
    label: str = "consensus",
    agreement_only: bool = False,
    since_version: int | str | None = None,
    held_out_only: bool = False,
    threshold: float = 0.5,
    step_separator: str | None = None,
    max_length: int | None = None,
    batch_size: int = 8,
) -> ScoredRows:
    """Score a dataset version's chains (the rows training would read for `label`) against their stored
    labels: step AUROC, accuracy and first-error F1 in `metrics`; `held_out_only` keeps the problems the
    checkpoint held out in training. `dataset` defaults to the default dataset root. Raises `ConfigError`
    (no checkpoint, no rows of that source, a checkpoint without a held-out record) or `StorageError`.

    >>> scored = score_dataset("prm-out", "ds", label="consensus", held_out_only=True)     # doctest: +SKIP
    >>> scored.metrics.auroc                                                               # doctest: +SKIP
    0.83
    """
    from prm_factory.config.run_config import ConfigError
    from prm_factory.storage.errors import StorageError
    from prm_factory.training.rows import RowsError, rows_from_dataset
    from prm_factory.training.scorer import held_out_rows, score_rows

    path = _checkpoint(checkpoint)  # before any rows are read
    try:
        store, resolved, since = _resolved(dataset, version, since_version)
        rows = rows_from_dataset(store, resolved, label, agreement_only=agreement_only, since_version=since)
    except RowsError as err:
        raise ConfigError(str(err)) from err
    except OSError as err:
        raise StorageError(str(err)) from err
    if held_out_only:
        try:
            rows = held_out_rows(path, rows)
        except ValueError as err:
            raise ConfigError(str(err)) from err
    if not rows:
        raise ConfigError("no chains with labels of that source to score")
    return score_rows(_scorer(path, step_separator, max_length, batch_size), rows, threshold)


def _checkpoint(checkpoint: PathLike) -> Path:
    """The checkpoint's folder, or a `ConfigError` where it holds no saved model."""
    from prm_factory.config.run_config import ConfigError

    if not (Path(checkpoint) / "config.json").is_file():
        raise ConfigError(f"{checkpoint}: not a saved checkpoint (no config.json)")
    return Path(checkpoint)


def _scorer(checkpoint: Path, separator: str | None, max_length: int | None, batch_size: int) -> Any:
    """The scorer of a checkpoint `_checkpoint` has checked."""
    from prm_factory.training.scorer import PrmScorer

    return PrmScorer(checkpoint, separator=separator, max_length=max_length, batch_size=batch_size)


def _resolved(
    dataset: PathLike | Dataset | None, version: int | str | None, since_version: int | str | None
) -> tuple[Dataset, int, int | None]:
    """The dataset (None: the default root) with `version` and `since_version` (numbers or tags) resolved to
    version numbers: the one resolver of `train` and `score_dataset` (so of the CLI's `train` and `score`
    too)."""
    from prm_factory.config.run_config import default_dataset_root
    from prm_factory.storage.versions import resolve

    store = _dataset(dataset if dataset is not None else default_dataset_root())
    return store, resolve(store, version), None if since_version is None else resolve(store, since_version)


def _version(dataset: Dataset, version: int | str | None, latest: bool = False) -> int | None:
    """A version number, tag or None as the storage layer takes it: a tag by its number (`StorageError` for
    one that names nothing); None stays None (the latest) unless `latest` asks for its number."""
    from prm_factory.storage.versions import resolve

    if version is None and not latest:
        return None
    if isinstance(version, str):
        return resolve(dataset, version)
    return dataset.resolve_version(version)  # a number (or a wrong type: UnknownVersionError)


def _dataset(root: PathLike | Dataset) -> Dataset:
    from prm_factory.storage.dataset import Dataset

    return root if isinstance(root, Dataset) else open_dataset(root)
