"""Calibration tables from labelled dev sets: `prm-factory eval --calibrate OUT SET...`.

Each set is a ProcessBench-shape file whose chains mark their first wrong step (`label`, -1: every step
right); a step before it is right, the marked one wrong, later ones unknown (ProcessBench marks only the
first), so only steps up to the first error are counted. The model-free sources (the verifier, the
reference alignment) label every chain as `prm-factory label` would, and each label is counted in its
source's table (labels/calibration.py) under its verdict, reading kind and two domains: `math` and
`math/<where>`, where a set says what its problems are (`gsm8k`: grade-school word problems,
`competition`: MATH / olympiad problems), since a kind's precision depends on it.

Only dev sets belong here: a table measured on a held-out split would be tuned on what it is judged by.
`--rows` keeps every counted label as a JSON line (chain, step, source, verdict, kind, truth), so the
consensus figures can be computed again from them without labelling the chains again.

`--adjudication FILE` (the model-written sets' hand readings of the verifier's flags on steps the gold calls
right, evaluation/model_written.py) counts against the adjudicated reading instead of the gold: a step read
as a `real slip` is wrong, so it becomes its chain's first error (a flag there is a right flag, and the
steps after it have no known truth); a `misreading` leaves the gold as it is. Sets without a file count
against their gold; the truth of every set is then "the gold, corrected where a hand reading found it wrong".

    python -m prm_factory.evaluation.calibrate --out labels/calibration_tables \
        evaluation/data/real_errors_gsm8k.jsonl:gsm8k PATH/processbench/math.json:competition

`--apart STEPS:WHERE` adds cells of a domain of its own (`math/<WHERE>`) to existing tables (`--base`, by
default the shipped ones), counted there only, never in the pooled `math` cells: for problems whose truth
is of another kind than the dev sets'. The label-noise bench's synthetic problems are the case
(`python -m bench.bench_label_noise --out DIR` writes `label_noise_steps.jsonl`: every step with its exact
truth and both sources' verdicts): their truth calls a step wrong when a value it states is not one of the
problem's, so a verifier `correct` (the arithmetic holds) is right far less often there than on the GSM8K
dev set, and counting those steps in the pooled cells would move every other domain's figures.

    python -m prm_factory.evaluation.calibrate --out labels/calibration_tables \
        --apart DIR/label_noise_steps.jsonl:synthetic

`--mc STEPS:WHERE` writes MC's table (`mc.json`) from the bench's MC columns (the exhaustive strategy at the
bench's k, one policy): MC's precision is its policy's (a model that fails from right prefixes makes its
`incorrect` weak), so the table names that policy and weighs only its labels (labels.consensus), by kind
(`rollouts`, `inferred`, the chain's own `outcome` on the last step), in `math/<WHERE>` only.

    python -m prm_factory.evaluation.calibrate --out labels/calibration_tables \
        --mc DIR/label_noise_steps.jsonl:synthetic --notes "k=1, exhaustive, ..."
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from prm_factory.evaluation.processbench import chain_outcome, chain_problem
from prm_factory.evaluation.real_errors import SHARED_GSM8K_TRAIN, load_samples
from prm_factory.labels.calibration import CalibrationTable, read_table, shipped_tables, tally
from prm_factory.labels.joint_calibration import (
    SHIPPED_JOINT,
    JointTable,
    read_joint_table,
    tally_joint,
)
from prm_factory.labels.reference import reference_step_labels
from prm_factory.schemas.external_chains import ExternalChain, read_external_chains
from prm_factory.schemas.reference_solutions import (
    ReferenceSolution,
    attach_reference_solutions,
    read_reference_solutions,
)
from prm_factory.schemas.step_labels import mc_label
from prm_factory.verifiers.identity import labeler_identity
from prm_factory.verifiers.protocol import Verdict, Verifier

CALIBRATED = ("verifier", "reference")
"""The sources a dev set calibrates: those that need no engine and are built in."""


@dataclass(frozen=True)
class MeasuredLabel:
    """One source's label of one step whose truth is known."""

    chain_id: str
    step_index: int
    source: str
    verdict: str
    kind: str | None
    where: str
    right: bool


def read_set(path: Path, gsm8k_source: Path | None = SHARED_GSM8K_TRAIN) -> list[ExternalChain]:
    """The chains of a labelled set that mark a first error; GSM8K rows without a worked solution take it
    from the GSM8K source by id (evaluation.real_errors.load_samples), as `eval` does."""
    if path.suffix == ".jsonl" and "gsm8k" in path.name:
        return [
            ExternalChain(
                s.id,
                s.problem,
                s.steps,
                first_error_label=s.label,
                reference_answer=s.reference_answer,
                reference_solution=s.solution,
            )
            for s in load_samples(path, gsm8k_source)
        ]
    chains, _ = read_external_chains(path)
    return [c for c in chains if c.first_error_label is not None]


def truth(first_error: int, n_steps: int) -> list[bool | None]:
    """Per step: right (before the first error), wrong (the first error), unknown (after it).

    >>> truth(1, 3), truth(-1, 2)
    ([True, False, None], [True, True])
    """
    return [None if first_error >= 0 and i > first_error else i != first_error for i in range(n_steps)]


def read_adjudication(path: Path) -> dict[str, int]:
    """Per chain id, the earliest step an adjudication file reads as a `real slip` (JSON lines
    `{"id", "step", "read", ...}`; `misreading` rows change nothing)."""
    slips: dict[str, int] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("read") == "real slip":
            slips[row["id"]] = min(int(row["step"]), slips.get(row["id"], int(row["step"])))
    return slips


def adjudicate(measured: Iterable[MeasuredLabel], slips: Mapping[str, int]) -> list[MeasuredLabel]:
    """The labels counted against the adjudicated reading: a chain's earliest real slip (before its gold
    first error, the only steps an adjudication reads) is its first error; later steps are dropped.

    >>> rows = [MeasuredLabel("c", i, "verifier", "incorrect", None, "competition", True) for i in range(3)]
    >>> [(m.step_index, m.right) for m in adjudicate(rows, {"c": 1})]
    [(0, True), (1, False)]
    """
    out = []
    for m in measured:
        slip = slips.get(m.chain_id)
        if slip is None or m.step_index < slip:
            out.append(m)
        elif m.step_index == slip:
            out.append(replace(m, right=False))
    return out


def measure_chain(chain: ExternalChain, where: str, verifier: Verifier) -> list[MeasuredLabel]:
    """The verifier's and the reference's labels of the chain's steps whose truth is known."""
    problem = chain_problem(chain)
    checked = verifier.check_steps(problem, list(chain.steps))
    if chain.reference_solution:
        aligned = reference_step_labels(problem, chain.steps, chain_outcome(chain, problem, verifier))
    else:
        aligned = [Verdict("unverifiable")] * len(chain.steps)
    known = truth(int(chain.first_error_label or 0), len(chain.steps))
    out = []
    for index, right in enumerate(known):
        if right is None:
            continue
        for source, verdict in (("verifier", checked[index]), ("reference", aligned[index])):
            out.append(MeasuredLabel(chain.id, index, source, verdict.label, verdict.kind, where, right))
    return out


def tables_from(
    measured: Iterable[MeasuredLabel], labelers: dict[str, str], sets: Sequence[str], domain: str = "math"
) -> dict[str, CalibrationTable]:
    """One table per source, every label counted under `domain` and `domain/<where>`."""
    rows = list(measured)
    tables = {}
    for source in CALIBRATED:
        counted = [
            (m.verdict, m.kind, place, m.right)
            for m in rows
            if m.source == source
            for place in (domain, f"{domain}/{m.where}")
        ]
        table = tally(counted, source, labelers.get(source, ""), "dev set", sets)
        # each label was counted twice (pooled and by where): the base rate is the same either way
        tables[source] = table
    return tables


def _bench_rows(path: Path) -> Iterator[dict]:
    """The rows of the label-noise bench's `label_noise_steps.jsonl`."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


def bench_step_rows(path: Path, where: str) -> list[MeasuredLabel]:
    """The label-noise bench's steps (`label_noise_steps.jsonl`: chain, step, truth, verifier with its kind,
    reference) as measured labels; every step's truth is exact, so every step counts."""
    measured = []
    for row in _bench_rows(path):
        right = row["truth"] == "correct"
        for source in CALIBRATED:
            kind = row.get("kind") if source == "verifier" else None
            measured.append(MeasuredLabel(row["chain"], row["step"], source, row[source], kind, where, right))
    return measured


def bench_mc_rows(path: Path, where: str) -> tuple[list[MeasuredLabel], set[str]]:
    """MC's labels in the label-noise bench's steps (its `mc`, `mc_source` and `mc_labeler` columns: the
    exhaustive strategy at the run's k) as measured labels of kind `mc_source`, with the labelers (policies)
    they came from; a file without MC columns gives none."""
    measured, labelers = [], set()
    for row in (row for row in _bench_rows(path) if "mc" in row):
        label = mc_label(row["mc"], None, {"value_source": row["mc_source"]}, row.get("mc_labeler", ""))
        right = row["truth"] == "correct"
        measured.append(
            MeasuredLabel(row["chain"], row["step"], "mc", label.verdict, label.kind, where, right)
        )
        labelers.add(label.labeler)
    return measured, labelers


def mc_table_from(
    measured: Iterable[MeasuredLabel], labeler: str, sets: Sequence[str], domain: str = "math", note: str = ""
) -> CalibrationTable:
    """MC's table of one policy (`labeler`): its labels counted under `domain/<where>` only, as `--apart`
    counts the bench's other sources (the bench's truth is of its own kind), by verdict and kind."""
    rows = [(m.verdict, m.kind, f"{domain}/{m.where}", m.right) for m in measured if m.source == "mc"]
    return replace(tally(rows, "mc", labeler, "dev set", sets, by_kind=True), notes=note)


def with_apart_cells(
    tables: Mapping[str, CalibrationTable],
    measured: Iterable[MeasuredLabel],
    sets: Sequence[str],
    domain: str = "math",
    note: str = "",
) -> dict[str, CalibrationTable]:
    """`tables` with the cells of `measured` counted under `domain/<where>` only (module docstring): the
    pooled cells, the other domains and the table's base rate stay as they were. A domain the table already
    has is refused, not mixed."""
    rows = list(measured)
    out = dict(tables)
    for source in CALIBRATED:
        table = tables[source]
        counted = tally(
            [(m.verdict, m.kind, f"{domain}/{m.where}", m.right) for m in rows if m.source == source],
            source, table.labeler, table.origin, sets,
        )  # fmt: skip
        clash = {c.domain for c in counted.cells} & {c.domain for c in table.cells}
        if clash:
            raise ValueError(f"{source}: the table already has cells of {sorted(clash)}")
        out[source] = replace(
            table,
            cells=tuple(sorted((*table.cells, *counted.cells), key=lambda c: (c.verdict, c.kind, c.domain))),
            domain_base_rates=tuple(
                sorted({**dict(table.domain_base_rates), **dict(counted.domain_base_rates)}.items())
            ),
            sets=(*table.sets, *sets),
            notes=_noted(table.notes, note),
        )
    return out


def joint_table_from(
    measured: Iterable[MeasuredLabel],
    labelers: Mapping[str, str],
    sets: Sequence[str],
    domain: str = "math",
    pair: tuple[str, str] = CALIBRATED,
) -> JointTable:
    """The joint cells (labels/joint_calibration.py) of the steps both sources of `pair` labelled, each
    counted under `domain/<where>` only: the pair's verdicts are measured where they were read together."""
    steps: dict[tuple[str, int, str], dict[str, MeasuredLabel]] = {}
    for m in measured:
        steps.setdefault((m.chain_id, m.step_index, m.where), {})[m.source] = m
    rows = [
        (step[pair[0]].verdict, step[pair[1]].verdict, f"{domain}/{where}", step[pair[0]].right)
        for (_, _, where), step in steps.items()
        if all(source in step for source in pair)
    ]
    return tally_joint(rows, pair, (labelers.get(pair[0], ""), labelers.get(pair[1], "")), "dev set", sets)


def _noted(notes: str, note: str) -> str:
    """A table's notes with one more added (`; ` between)."""
    return f"{notes}; {note}" if note and notes else note or notes


def with_apart_joint(base: JointTable | None, apart: JointTable, note: str = "") -> JointTable:
    """`apart`'s cells added to `base` (None: none yet); a domain `base` already has is refused."""
    if base is None:
        return replace(apart, notes=note)
    clash = {c.domain for c in apart.cells} & {c.domain for c in base.cells}
    if clash:
        raise ValueError(f"{base.name}: the joint table already has cells of {sorted(clash)}")
    return replace(
        base,
        cells=tuple(sorted((*base.cells, *apart.cells), key=lambda c: (c.domain, c.verdicts))),
        domain_base_rates=tuple(
            sorted({**dict(base.domain_base_rates), **dict(apart.domain_base_rates)}.items())
        ),
        sets=(*base.sets, *apart.sets),
        notes=_noted(base.notes, note),
    )


JOINT_FILE = f"{'+'.join(CALIBRATED)}.json"
"""The joint table of the calibrated pair, in a tables folder's `joint/`."""


def source_labelers(verifier: Verifier) -> dict[str, str]:
    """The source versions measured (`name@version`, without the code digest)."""
    from prm_factory.labels.sources.reference import SOURCE as REFERENCE

    ident = labeler_identity(verifier)
    ref = REFERENCE.identity()
    return {"verifier": f"{ident['name']}@{ident['version']}", "reference": f"{ref['name']}@{ref['version']}"}


def write_rows(measured: Iterable[MeasuredLabel], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for m in measured:
            handle.write(json.dumps(m.__dict__) + "\n")


def calibrate(
    sets: Sequence[tuple[Path, str]],
    verifier: Verifier,
    rows_out: Path | None = None,
    slips: Mapping[str, int] | None = None,
    solutions: Mapping[str, ReferenceSolution] | None = None,
) -> dict[str, CalibrationTable]:
    """Label every set's chains and tabulate each calibrated source against the truth (adjudicated where
    `slips`, `read_adjudication`, says); `solutions` (by question, as `eval --solutions` reads them) gives
    the reference a worked solution where a chain has none."""
    measured: list[MeasuredLabel] = []
    for path, where in sets:
        chains = read_set(path)
        if solutions:
            chains = attach_reference_solutions(chains, dict(solutions))
        for chain in chains:
            measured.extend(measure_chain(chain, where, verifier))
    measured = adjudicate(measured, slips or {})
    if rows_out is not None:
        write_rows(measured, rows_out)
    names = [f"{path.name}:{where}" for path, where in sets]
    return tables_from(measured, source_labelers(verifier), names)


def read_rows(path: Path) -> list[MeasuredLabel]:
    """The labels a `--rows` file kept."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [MeasuredLabel(**json.loads(line)) for line in lines if line.strip()]


def parse_set(text: str) -> tuple[Path, str]:
    """`PATH:WHERE` (WHERE: gsm8k, competition, ...)."""
    path, _, where = text.rpartition(":")
    if not path or not where:
        raise argparse.ArgumentTypeError(f"{text!r}: expected PATH:WHERE, e.g. real_errors.jsonl:gsm8k")
    return Path(path), where


def write_tables(tables: dict[str, CalibrationTable], out: Path) -> list[Path]:
    written = []
    for source, table in tables.items():
        path = out / f"{source}.json"
        table.write(path)
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="*", type=parse_set, help="PATH:WHERE of a labelled dev set")
    parser.add_argument("--out", type=Path, required=True, help="folder for <source>.json tables")
    parser.add_argument("--rows", type=Path, help="also write every counted label as JSON lines here")
    parser.add_argument(
        "--from-rows", type=Path, nargs="+", help="tabulate these --rows files instead of labelling sets"
    )
    parser.add_argument(
        "--labeler",
        action="append",
        default=[],
        help="--from-rows: SOURCE=TAG, the version the rows measured",
    )
    parser.add_argument(
        "--notes",
        default="",
        help="--from-rows: a note kept in every table; --apart: one added to it; --mc: the MC table's",
    )
    parser.add_argument(
        "--adjudication",
        type=Path,
        action="append",
        default=[],
        help="hand readings of flags ({id, step, read}): a `real slip` is a wrong step (module docstring)",
    )
    parser.add_argument(
        "--apart",
        type=parse_set,
        action="append",
        default=[],
        help="STEPS:WHERE, the label-noise bench's steps, counted in math/WHERE only (module docstring)",
    )
    parser.add_argument("--base", type=Path, help="--apart: the tables to add to (default: the shipped ones)")
    parser.add_argument(
        "--mc",
        type=parse_set,
        action="append",
        default=[],
        help="STEPS:WHERE, the label-noise bench's steps: MC's table of their policy, in math/WHERE only",
    )
    parser.add_argument(
        "--solutions",
        type=Path,
        help="worked solutions by question (as `eval --solutions`), for the reference where a chain has none",
    )
    args = parser.parse_args(argv)
    slips = {k: v for path in args.adjudication for k, v in read_adjudication(path).items()}
    if args.mc:
        mc_rows = [bench_mc_rows(path, where) for path, where in args.mc]
        policies = {labeler for _, labelers in mc_rows for labeler in labelers}
        if len(policies) != 1:  # MC's table is its policy's
            raise SystemExit(f"--mc: MC labels of {len(policies)} policies {sorted(policies)}; give one")
        names = [f"{path.name} ({where}, counted apart)" for path, where in args.mc]
        measured = [m for rows, _ in mc_rows for m in rows]
        for path in write_tables(
            {"mc": mc_table_from(measured, policies.pop(), names, note=args.notes)}, args.out
        ):
            print(path)
        return 0
    if args.apart:
        base = {s: read_table(args.base / f"{s}.json") for s in CALIBRATED} if args.base else shipped_tables()
        joint_path = (args.base / SHIPPED_JOINT.name if args.base else SHIPPED_JOINT) / JOINT_FILE
        base_joint = read_joint_table(joint_path) if joint_path.is_file() else None
        measured = [m for path, where in args.apart for m in bench_step_rows(path, where)]
        names = [f"{path.name} ({where}, counted apart)" for path, where in args.apart]
        for path in write_tables(with_apart_cells(base, measured, names, note=args.notes), args.out):
            print(path)
        labelers = {s: base[s].labeler for s in CALIBRATED}
        joint = with_apart_joint(base_joint, joint_table_from(measured, labelers, names), args.notes)
        out = args.out / SHIPPED_JOINT.name / JOINT_FILE
        joint.write(out)
        print(out)
        return 0
    from prm_factory.verifiers.math.verifier import MathVerifier

    if args.from_rows:
        measured = adjudicate([m for path in args.from_rows for m in read_rows(path)], slips)
        if args.rows is not None:
            write_rows(measured, args.rows)
        names = [path.name for path in args.from_rows]
        labelers = source_labelers(MathVerifier()) | dict(item.split("=", 1) for item in args.labeler)
        tables = {
            source: replace(table, notes=args.notes)
            for source, table in tables_from(measured, labelers, names).items()
        }
        for path in write_tables(tables, args.out):
            print(path)
        return 0

    verifier = MathVerifier()
    try:
        solutions = read_reference_solutions(args.solutions)[0] if args.solutions else None
        tables = calibrate(args.sets, verifier, args.rows, slips, solutions)
    finally:
        close = getattr(verifier, "close", None)
        if callable(close):
            close()
    for path in write_tables(tables, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
