"""Joint calibration cells: how often a step was right given two sources' verdicts together, measured.

The consensus (labels/consensus.py) multiplies each source's measured likelihood ratio, which holds only
where the sources err independently given the truth. Where they do not, the product misstates exactly the
steps both read: on the label-noise bench's synthetic problems a misread value makes the verifier's
arithmetic hold and the reference's quantity wrong together, so a `correct` + `incorrect` pair there is
not the sum of two independent pieces of evidence. A joint cell measures the pair directly: of the `n`
steps where source A said `verdict_a` and source B `verdict_b` (either may be `unverifiable`, not both),
`n_right` were right. The consensus uses the cell instead of the two votes wherever the step's domain has
joint cells, and the product everywhere else.

A table belongs to one ordered pair of sources and ships as `calibration_tables/joint/<a>+<b>.json`. A
user's audit refines it (`refine_joint`) only in the domains it was measured in, written under the dataset
root (`calibration/joint/`): a few hundred reviewed steps spread over nine pairs of verdicts are too few to
open joint cells where none were measured, so elsewhere the product of the refined per-source tables stands.

>>> table = tally_joint([("correct", "incorrect", "math/synthetic", False)] * 9, ("verifier", "reference"))
>>> found = table.probability(("correct", "incorrect"), ("math/synthetic", "math"))
>>> round(found.value, 3), found.n, found.cell
(0.091, 9, 'correct+incorrect@math/synthetic')
>>> table.probability(("correct", "incorrect"), ("math/gsm8k", "math")) is None  # not measured there
True
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from functools import cache
from pathlib import Path

from prm_factory.labels.calibration import DATASET_TABLES, SHIPPED, Precision, content_digest, write_json

SHIPPED_JOINT = SHIPPED / "joint"
"""The joint tables that ship with the package, one JSON file per pair of sources."""

ABSTAIN = "unverifiable"


@dataclass(frozen=True)
class JointCell:
    """One pair of verdicts in one domain: `n` steps measured, `n_right` of them right."""

    verdicts: tuple[str, str]
    domain: str
    n: int
    n_right: int


@dataclass(frozen=True)
class JointTable:
    """The measured share of right steps per pair of two sources' verdicts (module docstring)."""

    sources: tuple[str, str]
    labelers: tuple[str, str]  # the source versions measured
    origin: str
    cells: tuple[JointCell, ...]
    domain_base_rates: tuple[tuple[str, float], ...] = ()  # share of right steps among each domain's
    sets: tuple[str, ...] = ()
    notes: str = ""

    @property
    def name(self) -> str:
        return "+".join(self.sources)

    def digest(self) -> str:
        """A short digest of the table's content: it keys the consensus that used it."""
        return content_digest(self.to_json())

    def to_json(self) -> dict:
        return {
            "sources": list(self.sources),
            "labelers": list(self.labelers),
            "origin": self.origin,
            "cells": [asdict(c) | {"verdicts": list(c.verdicts)} for c in self.cells],
            "domain_base_rates": dict(self.domain_base_rates),
            "sets": list(self.sets),
            "notes": self.notes,
        }

    @classmethod
    def from_json(cls, data: Mapping) -> JointTable:
        cells = tuple(
            JointCell((c["verdicts"][0], c["verdicts"][1]), c["domain"], int(c["n"]), int(c["n_right"]))
            for c in data["cells"]
        )
        a, b = data["sources"]
        la, lb = data.get("labelers", ("", ""))
        return cls(
            (a, b),
            (la, lb),
            data.get("origin", ""),
            cells,
            tuple(sorted(dict(data.get("domain_base_rates", {})).items())),
            tuple(data.get("sets", ())),
            data.get("notes", ""),
        )

    def write(self, path: Path) -> None:
        write_json(path, self.to_json())

    def probability(self, verdicts: tuple[str, str], domains: Sequence[str]) -> Precision | None:
        """P(right) of a step the two sources labelled `verdicts`, read in the first of `domains` (most
        specific first) that has joint cells: the cell's share on a uniform prior ((r + 1) / (n + 2)).
        None where no domain has cells, or the first that has them never saw this pair (the product of the
        two votes then stands), or both sources abstained."""
        if verdicts == (ABSTAIN, ABSTAIN):
            return None
        for domain in domains:
            cells = [c for c in self.cells if c.domain == domain]
            if not cells:
                continue
            found = next((c for c in cells if c.verdicts == verdicts), None)
            if found is None or found.n == 0:
                return None
            base = dict(self.domain_base_rates).get(domain, 0.5)
            value = (found.n_right + 1) / (found.n + 2)
            name = f"{'+'.join(verdicts)}@{domain}"
            return Precision(value, found.n, found.n_right, self.origin, base, name)
        return None


def tally_joint(
    rows: Iterable[tuple[str, str, str, bool]],
    sources: tuple[str, str],
    labelers: tuple[str, str] = ("", ""),
    origin: str = "dev set",
    sets: Sequence[str] = (),
) -> JointTable:
    """A joint table from measured steps: (verdict of A, verdict of B, domain, step is right) per step. A
    step both sources abstained on counts toward its domain's base rate only."""
    counts: dict[tuple[tuple[str, str], str], list[int]] = {}
    by_domain: dict[str, list[int]] = {}
    for verdict_a, verdict_b, domain, right in rows:
        seen = by_domain.setdefault(domain, [0, 0])
        seen[0] += 1
        seen[1] += int(right)
        if (verdict_a, verdict_b) == (ABSTAIN, ABSTAIN):
            continue
        cell = counts.setdefault(((verdict_a, verdict_b), domain), [0, 0])
        cell[0] += 1
        cell[1] += int(right)
    cells = tuple(JointCell(v, d, n, r) for (v, d), (n, r) in sorted(counts.items()))
    bases = tuple((d, r / n) for d, (n, r) in sorted(by_domain.items()))
    return JointTable(sources, labelers, origin, cells, bases, tuple(sets))


def read_joint_table(path: Path) -> JointTable:
    return JointTable.from_json(json.loads(path.read_text(encoding="utf-8")))


@cache
def shipped_joint_tables() -> dict[tuple[str, str], JointTable]:
    """The joint tables shipped with the package, by their pair of sources."""
    if not SHIPPED_JOINT.is_dir():
        return {}
    tables = [read_joint_table(path) for path in sorted(SHIPPED_JOINT.glob("*.json"))]
    return {table.sources: table for table in tables}


def refine_joint(
    table: JointTable, rows: Iterable[tuple[str, str, Sequence[str], bool]], audit: str
) -> JointTable | None:
    """`table` with an audit's reviewed steps ((verdict of A, verdict of B, the step's domains most specific
    first, right) each) added cell by cell, each in the first of its domains the table has cells in, as the
    consensus reads it, and nowhere else (module docstring); None when no reviewed step fell there."""
    measured = {c.domain for c in table.cells}
    counts = {(c.verdicts, c.domain): [c.n, c.n_right] for c in table.cells}
    added = 0
    for verdict_a, verdict_b, domains, right in rows:
        domain = next((d for d in domains if d in measured), None)
        if domain is None or (verdict_a, verdict_b) == (ABSTAIN, ABSTAIN):
            continue
        cell = counts.setdefault(((verdict_a, verdict_b), domain), [0, 0])
        cell[0] += 1
        cell[1] += int(right)
        added += 1
    if not added:
        return None
    ordered = sorted(counts.items(), key=lambda item: (item[0][1], item[0][0]))
    cells = tuple(JointCell(v, d, n, r) for (v, d), (n, r) in ordered)
    return replace(
        table, origin=f"{table.origin} + audit {added} steps", cells=cells, sets=(*table.sets, audit)
    )


def joint_file(root: Path, pair: tuple[str, str]) -> Path:
    """Where a dataset's audit writes its refined joint table of `pair`."""
    return root / DATASET_TABLES / SHIPPED_JOINT.name / f"{'+'.join(pair)}.json"


def load_joint_tables(root: Path | None = None) -> dict[tuple[str, str], JointTable]:
    """The shipped joint tables, and over them those a dataset's audits refined (`root`)."""
    tables = dict(shipped_joint_tables())
    folder = None if root is None else root / DATASET_TABLES / SHIPPED_JOINT.name
    if folder is not None and folder.is_dir():
        tables.update({t.sources: t for t in map(read_joint_table, sorted(folder.glob("*.json")))})
    return tables
