"""Calibration tables: how often each source's verdict of each reading kind was right, measured.

A source's vote weighs what its table says it is worth, not a strength written into the source. A table
belongs to one source (measured on one version of it: `labeler`) and holds one cell per verdict, reading kind
and domain: the number of labels measured and how many of them agreed with the truth (a `correct` on a
right step, an `incorrect` on a wrong one), with a Wilson 95 % interval. A domain is `math`, or where a
kind's precision depends on the problems, `math/<problem source>` (`math/gsm8k`, `math/competition`): a
cell there is read first. `base_rate` is the share of right steps among the steps measured, the prior the
precisions were measured under (labels.consensus turns a precision into a likelihood ratio with it).

A source whose kinds say *where* it votes rather than what it read (MC: a value from rollouts, drawn on the
early prefixes; the chain's outcome, on the last step) measures each kind against its own steps: first
steps are right more often than last ones, so one base rate for all would read a vote's place as evidence.
Its table keeps a base rate per kind and domain (`kind_base_rates`, written by `tally(by_kind=True)`), and a
cell of that kind is read against it; a table without them reads every kind against its domain's.

Tables ship with the package (`calibration_tables/<source>.json`, written by `prm-factory eval --calibrate`
from labelled dev sets) and are refined by a user's audit answers (`relabel --calibrate-from-audit`), each
table saying where it came from (`origin`: shipped, dev set, audit N steps).

Precision of a cell, as the consensus reads it, is the mean of a Beta posterior: a kind measured few times
leans on its verdict's pooled precision (a Beta prior of strength `SHRINK` centred there), and the pooled
precision on a uniform prior. So 19 / 25 reads 0.76 and 0 / 0 reads its verdict's pooled precision.

>>> cell = Cell("incorrect", "closed_arithmetic", "math", 25, 19)
>>> round(cell.share, 2), [round(x, 2) for x in cell.interval()]
(0.76, [0.57, 0.89])
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from functools import cache
from pathlib import Path

SHIPPED = Path(__file__).parent / "calibration_tables"
"""The tables that ship with this package, one JSON file per source."""

SHRINK = 4.0
"""Strength (pseudo-counts) of the prior a kind's precision leans on: its verdict's pooled precision."""

Z95 = 1.959963984540054


def wilson(n_right: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion (0, 1 without counts).

    >>> [round(x, 3) for x in wilson(493, 495)]
    [0.985, 0.999]
    """
    if n <= 0:
        return 0.0, 1.0
    share = n_right / n
    centre = share + z * z / (2 * n)
    spread = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    denominator = 1 + z * z / n
    return max(0.0, (centre - spread) / denominator), min(1.0, (centre + spread) / denominator)


def content_digest(data: Mapping) -> str:
    """A short digest of a table's JSON content: it keys the consensus that read the table."""
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:12]


def write_json(path: Path, data: Mapping) -> None:
    """A table's JSON content to `path`, in the one layout every shipped table has."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class Cell:
    """One verdict of one reading kind in one domain: `n` labels measured, `n_right` agreed with the truth."""

    verdict: str  # correct | incorrect
    kind: str  # the reading kind ("" where the source names none, "*" for the verdict pooled)
    domain: str  # math, or math/<problem source>
    n: int
    n_right: int

    @property
    def share(self) -> float:
        return self.n_right / self.n if self.n else float("nan")

    def interval(self) -> tuple[float, float]:
        return wilson(self.n_right, self.n)

    def plus(self, n: int, n_right: int) -> Cell:
        return replace(self, n=self.n + n, n_right=self.n_right + n_right)


@dataclass(frozen=True)
class Precision:
    """What the consensus uses for one label: the precision, its counts and where it came from."""

    value: float
    n: int
    n_right: int
    origin: str  # "shipped (...)", "dev set", "audit 200 steps", or "unmeasured default"
    base_rate: float
    cell: str  # which cell answered: "incorrect/closed_arithmetic@math/gsm8k", "pooled", "none"


@dataclass(frozen=True)
class CalibrationTable:
    """A source's measured precision per verdict, reading kind and domain (module docstring)."""

    source: str
    labeler: str  # the source version measured (`math-sympy@2.7.1`)
    origin: str  # shipped | dev set | audit N steps (with the shipped table as its prior)
    base_rate: float  # share of right steps among those measured
    cells: tuple[Cell, ...]
    sets: tuple[str, ...] = ()  # the labelled sets measured
    notes: str = ""
    domain_base_rates: tuple[tuple[str, float], ...] = ()  # the base rate of each domain's steps
    kind_base_rates: tuple[tuple[str, float], ...] = ()  # "kind@domain" -> its steps' base rate (by_kind)

    def measured(self, labeler: str) -> bool:
        """Did this table measure `labeler`'s labels? A table that names no labeler measured any. Only the
        sources whose tables are per labeler (MC: its policy) ask (labels.source.tables_per_labeler)."""
        return not self.labeler or self.labeler == labeler

    def base_rate_of(self, domain: str, kind: str | None = None) -> float:
        """The share of right steps where `domain`'s cells (of `kind`, where the table measured each kind's
        own) were measured; the domain's, then the table's own, where it has no finer one."""
        if kind is not None and self.kind_base_rates:
            found = dict(self.kind_base_rates).get(f"{kind}@{domain}")
            if found is not None:
                return found
        return dict(self.domain_base_rates).get(domain, self.base_rate)

    def digest(self) -> str:
        """A short digest of the table's content: it keys the consensus that used it."""
        return content_digest(self.to_json())

    def to_json(self) -> dict:
        data = asdict(self)
        data["cells"] = [asdict(c) for c in self.cells]
        data["sets"] = list(self.sets)
        data["domain_base_rates"] = dict(self.domain_base_rates)
        if self.kind_base_rates:
            data["kind_base_rates"] = dict(self.kind_base_rates)
        else:  # a table without them keeps the content (and digest) it had before they existed
            del data["kind_base_rates"]
        return data

    @classmethod
    def from_json(cls, data: Mapping) -> CalibrationTable:
        cells = tuple(Cell(**c) for c in data["cells"])
        return cls(
            data["source"],
            data.get("labeler", ""),
            data.get("origin", ""),
            float(data["base_rate"]),
            cells,
            tuple(data.get("sets", ())),
            data.get("notes", ""),
            tuple(sorted(dict(data.get("domain_base_rates", {})).items())),
            tuple(sorted(dict(data.get("kind_base_rates", {})).items())),
        )

    def write(self, path: Path) -> None:
        write_json(path, self.to_json())

    def cell(self, verdict: str, kind: str, domain: str) -> Cell | None:
        return next((c for c in self.cells if (c.verdict, c.kind, c.domain) == (verdict, kind, domain)), None)

    def pooled(self, verdict: str, domain: str) -> Cell | None:
        """The verdict's cells summed over every kind of `domain` (its own cells only, not a subdomain's)."""
        cells = [c for c in self.cells if c.verdict == verdict and c.domain == domain]
        if not cells:
            return None
        return Cell(verdict, "*", domain, sum(c.n for c in cells), sum(c.n_right for c in cells))

    def precision(self, verdict: str, kind: str | None, domains: Sequence[str]) -> Precision | None:
        """The precision of a `verdict` of `kind`, read in the first of `domains` (most specific first)
        whose cells measured that verdict; None where none did."""
        for domain in domains:
            pooled = self.pooled(verdict, domain)
            if pooled is None or pooled.n == 0:
                continue
            prior = (pooled.n_right + 1) / (pooled.n + 2)
            base = self.base_rate_of(domain)
            found = self.cell(verdict, kind or "", domain)
            if found is None or found.n == 0:
                return Precision(prior, pooled.n, pooled.n_right, self.origin, base, f"{verdict}/*@{domain}")
            value = (found.n_right + SHRINK * prior) / (found.n + SHRINK)
            name = f"{verdict}/{kind or '-'}@{domain}"
            return Precision(
                value, found.n, found.n_right, self.origin, self.base_rate_of(domain, kind or ""), name
            )
        return None


def tally(
    rows: Iterable[tuple[str, str | None, str, bool]],
    source: str,
    labeler: str,
    origin: str,
    sets: Sequence[str],
    by_kind: bool = False,
) -> CalibrationTable:
    """A table from measured labels: (verdict, kind, domain, step is right) per label of a step whose truth
    is known. `unverifiable` labels count toward the base rate only (they cast no vote). `by_kind`: also the
    base rate of each kind's steps in each domain (module docstring: a source whose kinds say where it
    votes)."""
    counts: dict[tuple[str, str, str], list[int]] = {}
    steps = right = 0
    by_domain: dict[str, list[int]] = {}
    kind_steps: dict[str, list[int]] = {}
    for verdict, kind, domain, is_right in rows:
        steps += 1
        right += int(is_right)
        tallied = [by_domain.setdefault(domain, [0, 0])]
        if by_kind:
            tallied.append(kind_steps.setdefault(f"{kind or ''}@{domain}", [0, 0]))
        for seen in tallied:
            seen[0] += 1
            seen[1] += int(is_right)
        if verdict not in ("correct", "incorrect"):
            continue
        agreed = is_right if verdict == "correct" else not is_right
        cell = counts.setdefault((verdict, kind or "", domain), [0, 0])
        cell[0] += 1
        cell[1] += int(agreed)
    cells = tuple(Cell(v, k, d, n, r) for (v, k, d), (n, r) in sorted(counts.items()))
    bases = tuple((d, r / n) for d, (n, r) in sorted(by_domain.items()))
    base = right / steps if steps else 0.5
    kinds = tuple((key, r / n) for key, (n, r) in sorted(kind_steps.items()))
    return CalibrationTable(source, labeler, origin, base, cells, tuple(sets), "", bases, kinds)


def _cell_domain(cell: Cell) -> str:
    return cell.domain


def _cell_kind(cell: Cell) -> str:
    return f"{cell.kind}@{cell.domain}"  # the key of `kind_base_rates`


def _merged_rates(
    table: CalibrationTable,
    answers: CalibrationTable,
    earlier: Iterable[tuple[str, float]],
    audited: Iterable[tuple[str, float]],
    key_of: Callable[[Cell], str],
) -> dict[str, float]:
    """`earlier` base rates with each of `audited` merged in, weighed by the counts of the cells of its key
    (`key_of`) in `table` and in `answers`."""
    rates = dict(earlier)
    for key, rate in audited:
        before = sum(c.n for c in table.cells if key_of(c) == key)
        now = sum(c.n for c in answers.cells if key_of(c) == key)
        prior = rates.get(key, rate)
        rates[key] = (prior * before + rate * now) / (before + now) if before + now else rate
    return rates


def refine(table: CalibrationTable | None, answers: CalibrationTable) -> CalibrationTable:
    """A table with a user's audited counts added to the shipped (or earlier) one, cell by cell: the shipped
    table is the prior, the audit's answers the evidence. Its origin names the audit's size."""
    if table is None:
        return answers
    merged = {(c.verdict, c.kind, c.domain): c for c in table.cells}
    for c in answers.cells:
        key = (c.verdict, c.kind, c.domain)
        merged[key] = merged[key].plus(c.n, c.n_right) if key in merged else c
    audited = sum(c.n for c in answers.cells)
    measured = sum(c.n for c in table.cells) or 1
    base = (table.base_rate * measured + answers.base_rate * audited) / (measured + audited)
    # a domain (or kind in a domain) the audit measured: its base rate, weighed by the cells' counts
    bases = _merged_rates(table, answers, table.domain_base_rates, answers.domain_base_rates, _cell_domain)
    kinds = _merged_rates(table, answers, table.kind_base_rates, answers.kind_base_rates, _cell_kind)
    return CalibrationTable(
        table.source,
        table.labeler,
        f"{table.origin} + audit {audited} steps",
        base,
        tuple(sorted(merged.values(), key=lambda c: (c.verdict, c.kind, c.domain))),
        (*table.sets, *answers.sets),
        table.notes,
        tuple(sorted(bases.items())),
        tuple(sorted(kinds.items())),
    )


def audited_rows(
    labels: Iterable[tuple[str, str, str | None, str, bool]],
) -> dict[str, list[tuple[str, str | None, str, bool]]]:
    """Per source, the (verdict, kind, domain, right) rows of `tally` from audited steps: each automatic
    label (source, verdict, kind, domain) of a step a reviewer judged, with the reviewer's truth. A label is
    counted under its domain and, where that is `math/<where>`, under `math` too."""
    rows: dict[str, list[tuple[str, str | None, str, bool]]] = {}
    for source, verdict, kind, domain, right in labels:
        places = [domain] if "/" not in domain else [domain, domain.split("/", 1)[0]]
        rows.setdefault(source, []).extend((verdict, kind, place, right) for place in places)
    return rows


def audit_tables(
    labels: Iterable[tuple[str, str, str | None, str, bool]],
    prior: Mapping[str, CalibrationTable],
    audit_name: str,
    per_labeler: Mapping[str, str] | None = None,
) -> dict[str, CalibrationTable]:
    """The tables refined by an audit: each source's audited counts (`audited_rows`) added to its table in
    `prior` (the shipped one), or a table of the audit alone for a source that had none. `per_labeler`:
    the audited labeler of each source whose tables weigh only their own labeler's labels (MC: its policy);
    its prior counts only where it measured that labeler, and the table names it."""
    tables = {}
    for source, rows in audited_rows(labels).items():
        earlier = prior.get(source)
        labeler = earlier.labeler if earlier is not None else ""
        if per_labeler and source in per_labeler:
            labeler = per_labeler[source]
            if earlier is not None and not earlier.measured(labeler):
                earlier = None  # measured on another policy: nothing to lean on
        # MC's kinds are where it votes: its audit counts each kind's base rate, as its dev-set table did
        by_kind = bool(per_labeler and source in per_labeler) or bool(earlier and earlier.kind_base_rates)
        answers = tally(rows, source, labeler, "audit", (audit_name,), by_kind)
        tables[source] = refine(earlier, answers)
    return tables


def read_table(path: Path) -> CalibrationTable:
    return CalibrationTable.from_json(json.loads(path.read_text(encoding="utf-8")))


@cache
def shipped_tables() -> dict[str, CalibrationTable]:
    """The tables shipped with the package, by source."""
    if not SHIPPED.is_dir():
        return {}
    tables = [read_table(path) for path in sorted(SHIPPED.glob("*.json"))]
    return {table.source: table for table in tables}


def expected_calibration_error(pairs: Iterable[tuple[float, bool]], bins: int = 10) -> float | None:
    """Expected calibration error of probabilities that a step is right: (p, step is right) pairs put in
    `bins` equal-width bins of p, and the gap between each bin's mean p and its share of right steps,
    weighed by the bin's size. None without a pair.

    >>> round(expected_calibration_error([(0.9, True)] * 9 + [(0.9, False)]), 9)
    0.0
    >>> round(expected_calibration_error([(0.95, True), (0.95, False), (0.05, False)]), 4)
    0.3167
    """
    grouped: dict[int, list[tuple[float, bool]]] = {}
    for p, right in pairs:
        grouped.setdefault(min(int(p * bins), bins - 1), []).append((p, right))
    total = sum(len(b) for b in grouped.values())
    if not total:
        return None
    return sum(
        len(b) / total * abs(sum(p for p, _ in b) / len(b) - sum(r for _, r in b) / len(b))
        for b in grouped.values()
    )


DATASET_TABLES = "calibration"
"""The folder of a dataset root where `relabel --calibrate-from-audit` writes its refined tables."""


def dataset_tables(root: Path) -> dict[str, CalibrationTable]:
    """The tables a dataset's audits refined (`<root>/calibration/<source>.json`), by source."""
    folder = root / DATASET_TABLES
    if not folder.is_dir():
        return {}
    return {t.source: t for t in (read_table(path) for path in sorted(folder.glob("*.json")))}


def load_tables(
    paths: Mapping[str, str] | None = None, root: Path | None = None
) -> dict[str, CalibrationTable]:
    """The shipped tables, `paths` (source -> a table file, `[labels.consensus] tables`) over them, then
    those a dataset's audits refined (`root`) over both: an audit's table was built on the others as its
    prior, so it is the most informed."""
    tables = dict(shipped_tables())
    for source, path in (paths or {}).items():
        table = read_table(Path(path).expanduser())
        if table.source != source:
            raise ValueError(f"{path}: a table of {table.source!r}, given for {source!r}")
        tables[source] = table
    if root is not None:
        tables.update(dataset_tables(root))
    return tables
