"""The one list of label sources that every consumer reads: consensus, record assembly, relabel, exports,
training rows, stats, the report, `eval`, and the CLI's help and validation.

Built-in sources are registered below, one line each. A package adds its own through the entry-point group
`prm_factory.label_sources` (in its pyproject.toml: `[project.entry-points."prm_factory.label_sources"]`
`mysource = "mypackage.labels:SOURCE"`); the entry point names a `LabelSource` instance, or a class or
function that makes one with no arguments. A config may also name one as `package.module:attribute` in
`[labels] sources`. Its name is then a `--label` choice of `export`, `train` and `score`, a column group of
the steps table (`NAME_verdict`, ... see schemas/step_labels.py), a row group of the `step_labels` view,
and a vote in the consensus.

>>> registry().names()[:4]
('verifier', 'mc', 'reference', 'judge')
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any, TypeVar

from prm_factory.labels.source import NEEDS, ChainLabels, LabelSource
from prm_factory.schemas.step_labels import StepLabel

ENTRY_POINT_GROUP = "prm_factory.label_sources"
S = TypeVar("S")

BUILTIN: dict[str, str] = {
    "verifier": "prm_factory.labels.sources.verifier:SOURCE",
    "mc": "prm_factory.labels.sources.mc:SOURCE",
    "reference": "prm_factory.labels.sources.reference:SOURCE",
    "judge": "prm_factory.labels.sources.judge:SOURCE",
    "human": "prm_factory.audit.human_source:SOURCE",  # an audit's answers (relabel --source human)
}
"""The sources of this package, by name (a new one is one line here, or an entry point)."""

ALWAYS: tuple[str, ...] = ("verifier", "mc")
"""Sources every run uses: the verifier grades outcomes and rollouts, MC is the rollout stage."""

RESERVED: frozenset[str] = frozenset({"consensus", "hard", "soft", "combined", "labels", "first", "step"})
"""Names a source may not take: export label kinds and words the tables and views already use."""

_NAME = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")


class RegistryError(ValueError):
    """A source that cannot be registered or found (bad name, clash, failed import, wrong shape)."""


def stage_source(registry: Registry, name: str, kind: type[S]) -> S:
    """The registered source `name`, as the built-in class `kind` whose stage output it turns into labels
    (`labels_of`: `run`'s cached verify and rollouts stages, `label --rollouts`' cached rollouts): the labels
    are made by the source the registry holds, in every pipeline."""
    source = registry[name]
    if not isinstance(source, kind):
        raise RegistryError(
            f"source {name!r} is a {type(source).__name__}, not the {kind.__name__} its stage's output is for"
        )
    return source


class LabelSourceFailed(RuntimeError):
    """A source's batch call raised, or gave labels of the wrong shape: one line naming the source, the chunk
    and what happened to the rows (nothing of the failed run is committed; earlier versions stay)."""


KEPT = "nothing of this run was committed; the dataset keeps its earlier versions"


def _chunk_name(chains: Sequence[Any]) -> str:
    """A chunk by its first and last chain (an input row's own id where it has one)."""
    if not chains:
        return "an empty chunk"
    ids = [str(getattr(c, "source_row_id", None) or getattr(c, "chain_id", "?"))[:16] for c in chains]
    return f"the chunk of {len(ids)} chains {ids[0]}" + (f"..{ids[-1]}" if len(ids) > 1 else "")


def call_source(
    source: LabelSource, chains: Sequence[Any], prior: Mapping[str, Any], setup: Any
) -> list[ChainLabels | None]:
    """`source.label` with its output checked: one tuple of labels per chain, one label per step, each a
    StepLabel of this source. A plug-in's exception or wrong shape becomes `LabelSourceFailed`."""
    where = f"label source {source.name!r} on {_chunk_name(chains)}"
    try:
        labels = list(source.label(chains, prior, setup))
    except LabelSourceFailed:
        raise
    except Exception as error:  # a plug-in's own error, said in one line; the traceback goes to the log
        raise LabelSourceFailed(f"{where} raised {type(error).__name__}: {error}; {KEPT}") from error
    if len(labels) != len(chains):
        raise LabelSourceFailed(f"{where} gave labels for {len(labels)} of {len(chains)} chains; {KEPT}")
    for chain, chain_labels in zip(chains, labels, strict=True):
        if chain_labels is None:
            continue
        name = getattr(chain, "source_row_id", None) or chain.chain_id
        if not isinstance(chain_labels, tuple | list) or len(chain_labels) != len(chain.steps):
            count = (
                len(chain_labels) if isinstance(chain_labels, tuple | list) else type(chain_labels).__name__
            )
            raise LabelSourceFailed(
                f"{where} gave {count} labels for the {len(chain.steps)} steps of chain {name}; {KEPT}"
            )
        for label in chain_labels:
            if label is None:  # a step left unlabelled (no vote): the human source on unreviewed ones
                continue
            if not isinstance(label, StepLabel) or label.source != source.name:
                shown = label.source if isinstance(label, StepLabel) else type(label).__name__
                raise LabelSourceFailed(
                    f"{where} gave a label of {shown!r} on chain {name} (expected StepLabels of "
                    f"{source.name!r}); {KEPT}"
                )
    return [None if labels_ is None else tuple(labels_) for labels_ in labels]


class Registry(Mapping[str, LabelSource]):
    """Label sources by name, in registration order (built-in first)."""

    def __init__(self, sources: Sequence[LabelSource], refused: Mapping[str, str] | None = None) -> None:
        self._refused = dict(refused or {})  # plug-ins that failed to load: name -> why (said where used)
        self._sources: dict[str, LabelSource] = {}
        for source in sources:
            check_source(source)
            if source.name in self._sources:
                raise RegistryError(f"two label sources named {source.name!r}")
            self._sources[source.name] = source

    def __getitem__(self, name: str) -> LabelSource:
        try:
            return self._sources[name]
        except KeyError:
            if name in self._refused:
                raise RegistryError(self._refused[name]) from None
            raise RegistryError(f"no label source {name!r}; registered: {', '.join(self._sources)}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._sources

    def __iter__(self) -> Iterator[str]:
        return iter(self._sources)

    def __len__(self) -> int:
        return len(self._sources)

    def names(self) -> tuple[str, ...]:
        return tuple(self._sources)

    def with_sources(self, extra: Sequence[LabelSource]) -> Registry:
        """This registry plus `extra` (a config's `module:attribute` sources)."""
        return Registry([*self._sources.values(), *extra], self._refused)

    def refused(self) -> dict[str, str]:
        """Plug-ins that failed to load, with why: refused only where a command uses them."""
        return dict(self._refused)


def check_source(source: object) -> None:
    """Refuse an object that is not a usable label source, naming what is wrong."""
    if not isinstance(source, LabelSource):
        raise RegistryError(f"{source!r} is not a label source (labels.source.LabelSource)")
    name = source.name
    if not isinstance(name, str) or not _NAME.match(name) or name in RESERVED:
        raise RegistryError(
            f"label source name {name!r}: lower-case letters, digits and single underscores, not one of "
            f"{sorted(RESERVED)}"
        )
    unknown = set(source.needs) - NEEDS
    if unknown:
        raise RegistryError(f"label source {name!r} needs {sorted(unknown)}; known needs: {sorted(NEEDS)}")


def load_object(path: str) -> LabelSource:
    """A source from `package.module:attribute` (an instance, or a class / function making one)."""
    module_name, _, attribute = path.partition(":")
    if not attribute:
        raise RegistryError(f"{path!r}: expected package.module:attribute")
    try:
        target = getattr(importlib.import_module(module_name), attribute)
    except Exception as error:  # ImportError, AttributeError, or whatever the plug-in's module raises
        raise RegistryError(f"label source {path!r} cannot be loaded: {error}") from error
    return _instance(target, path)


def _instance(target: object, where: str) -> LabelSource:
    if isinstance(target, LabelSource):
        return target
    if callable(target):
        try:
            made = target()
        except Exception as error:  # a plug-in's constructor that raises names the plug-in
            raise RegistryError(f"{where} failed to make its label source: {error}") from error
        if isinstance(made, LabelSource):
            return made
    raise RegistryError(f"{where} gives no label source (an instance, or a class making one)")


def plugin_entry_points() -> list[EntryPoint]:
    """The entry points of the `prm_factory.label_sources` group, by name."""
    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda point: point.name)


def _from_entry_point(point: EntryPoint) -> LabelSource:
    try:
        target = point.load()
    except Exception as error:  # a broken plug-in names itself instead of breaking every command
        raise RegistryError(f"label source entry point {point.name!r} ({point.value}): {error}") from error
    source = _instance(target, f"entry point {point.name!r} ({point.value})")
    if source.name != point.name:
        raise RegistryError(f"entry point {point.name!r} gives a source named {source.name!r}")
    return source


def registered_names() -> tuple[str, ...]:
    """Every registered source's name without loading any (for CLI help and choices): built-in first, then
    the entry points'. A plug-in that fails to load is refused only where it is used."""
    return tuple(dict.fromkeys([*BUILTIN, *(point.name for point in plugin_entry_points())]))


@cache
def registry() -> Registry:
    """Built-in sources, then those packages register (loaded once per process)."""
    builtin = [load_object(path) for path in BUILTIN.values()]
    plugins: list[LabelSource] = []
    refused: dict[str, str] = {}
    for point in plugin_entry_points():
        try:
            source = _from_entry_point(point)
            check_source(source)
        except RegistryError as error:  # refused where it is used, not in every command
            refused[point.name] = str(error)
            continue
        if source.name in BUILTIN or source.name in {p.name for p in plugins}:
            refused[point.name] = f"entry point {point.name!r}: a label source of that name exists already"
            continue
        plugins.append(source)
    return Registry([*builtin, *plugins], refused)


def reset() -> None:
    """Forget the loaded registry (a test that installs a plug-in, or a long process after an install)."""
    registry.cache_clear()


def configured(names: Sequence[str]) -> Registry:
    """The registry with any `package.module:attribute` entries of `[labels] sources` added."""
    base = registry()
    extra = [load_object(name) for name in names if ":" in name]
    return base.with_sources([s for s in extra if s.name not in base]) if extra else base


def source_names(names: Sequence[str]) -> list[str]:
    """`[labels] sources` as registered names (a `module:attribute` entry by its source's name)."""
    return [load_object(name).name if ":" in name else name for name in names]


def run_sources(names: Sequence[str], judge_enabled: bool = False) -> list[LabelSource]:
    """The sources a run uses: the ones that always run, the configured ones, and the judge when its
    section enables it, in an order where every source comes after the sources it reads."""
    known = configured(names)
    wanted = [*ALWAYS, *source_names(names), *(("judge",) if judge_enabled else ())]
    chosen: list[LabelSource] = []
    for name in dict.fromkeys(wanted):
        chosen.append(known[name])
    return order_by_reads(chosen)


def order_by_reads(sources: Sequence[LabelSource]) -> list[LabelSource]:
    """Sources in their given order, except that one reading another's labels comes after it (a source
    reading one that is not among them reads nothing of it)."""
    names = {source.name for source in sources}
    placed: list[LabelSource] = []
    pending = list(sources)
    while pending:
        for source in pending:
            if all(
                dependency not in names or dependency in {p.name for p in placed}
                for dependency in source.reads
                if dependency != source.name  # reading itself: its stored labels, in a relabel
            ):
                placed.append(source)
                pending.remove(source)
                break
        else:
            raise RegistryError(f"label sources read each other in a cycle: {[s.name for s in pending]}")
    return placed
