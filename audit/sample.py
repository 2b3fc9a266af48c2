"""Draw an audit sample from a dataset version: stratified by what the sources said, every weight recorded.

A stratum is one pattern of the raw sources' votes (`verifier=incorrect reference=- mc=correct judge=-`, and
`prm=near|correct|incorrect` when PRM scores are given), so each source's `incorrect` and `correct` steps and
the steps where sources disagree fall in strata of their own; `audit.allocation` spreads the budget over them.
Inside a stratum the steps are a simple random sample without replacement: the steps with the smallest
md5(seed, chain, step) (a hash, so the draw is the same on every machine and costs one sort in DuckDB over
millions of steps). Each drawn step records its stratum's size and draw count, so its inclusion probability
is `drawn / population`; the report weights by them (audit.estimate).

`uncertain` puts the budget first into the strata where the sources disagree or the PRM score sits within
`prm_margin` of its threshold (ActPRM spends its labels there), the rest as `stratified` does, and queues the
uncertain steps first. It is still a probability sample: the figures stay honest for the strata it covers.

The review queue is a random permutation of the drawn steps (another hash), so a half-finished audit is still
a random sample of each stratum. A `double_share` of the steps is asked of two reviewers (their agreement is
Cohen's kappa in the report).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import duckdb
import pyarrow as pa

from prm_factory.audit.allocation import allocate
from prm_factory.audit.sources import BY_NAME, VOTES, AuditedSource

Mode = Literal["stratified", "uncertain"]
PRM = "prm"
"""The name of the PRM scores' source: a step is its `correct` at or above the threshold."""


class SampleError(ValueError):
    """A design or filter that cannot be drawn (unknown source, empty population, ...)."""


@dataclass(frozen=True)
class Filters:
    """Which steps may be drawn; empty means no restriction. `labels` are `SOURCE=VALUE`: a vote
    (`correct`, `incorrect`, `none`) or a value of the source's own column (`consensus=disputed`)."""

    problem_sets: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class SampleDesign:
    size: int
    seed: int = 0
    mode: Mode = "stratified"
    double_share: float = 0.1  # of the drawn steps asked of two reviewers
    equal_share: float = 0.5  # of the budget spread evenly over the strata (audit.allocation)
    prm_threshold: float = 0.5
    prm_margin: float = 0.1
    filters: Filters = field(default_factory=Filters)

    def __post_init__(self) -> None:
        if self.size < 1:
            raise SampleError(f"sample size must be at least 1, got {self.size}")
        if not 0 <= self.double_share <= 1 or not 0 <= self.equal_share <= 1:
            raise SampleError("double_share and equal_share must lie in [0, 1]")
        if self.mode not in ("stratified", "uncertain"):
            raise SampleError(f"mode must be stratified or uncertain, got {self.mode!r}")


@dataclass(frozen=True)
class Stratum:
    key: str
    population: int  # steps of the (filtered) population in this stratum
    drawn: int
    uncertain: bool  # sources disagree, or the PRM score is near its threshold


@dataclass(frozen=True)
class DrawnItem:
    position: int  # 1-based place in the review queue
    chain_id: str
    step_index: int
    problem_id: str
    run_id: str
    problem_set: str | None
    domain: str | None
    stratum: str
    votes: dict[str, str | None]  # per audited source: correct | incorrect | None (no vote)
    first_error_of: tuple[str, ...]  # sources whose first `incorrect` in this chain is this step
    prm_score: float | None
    reviews_needed: int  # 1, or 2 for the double-reviewed share


@dataclass(frozen=True)
class DrawnSample:
    design: SampleDesign
    sources: tuple[str, ...]  # audited sources, in order (the consensus and the PRM included)
    strata: tuple[Stratum, ...]
    items: tuple[DrawnItem, ...]

    @property
    def population(self) -> int:
        return sum(stratum.population for stratum in self.strata)


def _label_filter(text: str, sources: dict[str, AuditedSource], with_prm: bool) -> tuple[str, str, str]:
    """(SQL condition, source, value) of one `SOURCE=VALUE` filter."""
    name, sep, value = text.partition("=")
    name, value = name.strip(), value.strip()
    known = [*sources, *([PRM] if with_prm else [])]
    if not sep or name not in known or not value:
        raise SampleError(f"label filter {text!r}: expected SOURCE=VALUE with SOURCE one of {known}")
    if value in VOTES:
        return f"vote_{name} = '{value}'", name, value
    if value == "none":
        return f"vote_{name} IS NULL", name, value
    if name == PRM:
        raise SampleError(f"label filter {text!r}: the PRM's values are correct, incorrect or none")
    return f"raw_{name} = $label_{name}", name, value


def population_sql(
    sources: Sequence[AuditedSource], filters: Filters, with_scores: bool
) -> tuple[str, dict[str, Any]]:
    """The SQL that builds `audit_population` (one row per drawable step: votes, first-error flags, hash
    keys) and its named parameters (`seed`, and the PRM threshold and margin when scores are given)."""
    votes = [f"{s.vote_sql} AS vote_{s.name}" for s in sources]
    raws = [f"CAST({s.columns[0]} AS VARCHAR) AS raw_{s.name}" for s in sources]
    names = [s.name for s in sources]
    if with_scores:
        votes.append(
            "CASE WHEN prm.prm_score >= $prm_threshold THEN 'correct' "
            "WHEN prm.prm_score < $prm_threshold THEN 'incorrect' END AS vote_prm"
        )
        names.append(PRM)
    first_errors = [
        f"coalesce(step_index = min(CASE WHEN vote_{n} = 'incorrect' THEN step_index END) "
        f"OVER (PARTITION BY chain_id), false) AS fe_{n}"
        for n in names
    ]
    params: dict[str, Any] = {}
    where = []
    for column, values in (
        ("problem_set", filters.problem_sets),
        ("domain", filters.domains),
        ("run_id", filters.runs),
    ):
        if values:
            where.append(f"list_contains($f_{column}, {column})")
            params[f"f_{column}"] = list(values)
    by_name = {s.name: s for s in sources}
    for text in filters.labels:
        condition, name, value = _label_filter(text, by_name, with_scores)
        where.append(condition)
        if condition.startswith("raw_"):
            params[f"label_{name}"] = value
    scores_join = "LEFT JOIN audit_prm_scores AS prm USING (chain_id, step_index)" if with_scores else ""
    prm_column = "prm.prm_score" if with_scores else "CAST(NULL AS DOUBLE)"
    # first errors are flagged before the filters, so a filter on labels cannot move a chain's first error
    sql = f"""
CREATE OR REPLACE TEMP TABLE audit_population AS
WITH voted AS (
    SELECT s.chain_id, s.step_index, s.problem_id, s.run_id,
           coalesce(s.source, p.source) AS problem_set, coalesce(s.domain, p.domain) AS domain,
           {prm_column} AS prm_score, {", ".join(votes + raws)}
    FROM steps AS s
    LEFT JOIN problems AS p USING (problem_id)
    {scores_join}
),
flagged AS (SELECT *, {", ".join(first_errors)} FROM voted)
SELECT *,
       md5($seed || '/draw/' || chain_id || '/' || step_index) AS draw_key,
       md5($seed || '/order/' || chain_id || '/' || step_index) AS order_key,
       md5($seed || '/double/' || chain_id || '/' || step_index) AS double_key
FROM flagged
{"WHERE " + " AND ".join(where) if where else ""}
"""
    return sql, params


def strata_sql(raw_sources: Sequence[str], with_scores: bool) -> str:
    """The SQL that adds each step's stratum (its raw sources' vote pattern) and uncertainty to
    `audit_population`, as `audit_strata`; `raw_sources` are the labelers that voted somewhere in it."""
    pattern = [f"'{name}=' || coalesce(vote_{name}, '-')" for name in raw_sources]
    near = "abs(prm_score - $prm_threshold) <= $prm_margin"
    if with_scores:
        pattern.append(
            f"'prm=' || CASE WHEN prm_score IS NULL THEN '-' WHEN {near} THEN 'near' ELSE vote_prm END"
        )
    said_correct = " OR ".join(f"vote_{name} = 'correct'" for name in raw_sources) or "false"
    said_incorrect = " OR ".join(f"vote_{name} = 'incorrect'" for name in raw_sources) or "false"
    uncertain = f"(coalesce({said_correct}, false) AND coalesce({said_incorrect}, false))"
    if with_scores:
        uncertain = f"({uncertain} OR coalesce({near}, false))"
    key = " || ' ' || ".join(pattern) if pattern else "'all'"
    return f"""
CREATE OR REPLACE TEMP TABLE audit_strata AS
SELECT *, {key} AS stratum, {uncertain} AS uncertain FROM audit_population
"""


def _allocation(design: SampleDesign, sizes: dict[str, int], uncertain: dict[str, bool]) -> dict[str, int]:
    if design.mode == "stratified":
        return allocate(sizes, design.size, design.equal_share)
    first = {key: n for key, n in sizes.items() if uncertain[key]}
    rest = {key: n for key, n in sizes.items() if not uncertain[key]}
    taken = allocate(first, min(design.size, sum(first.values())), design.equal_share)
    taken.update(allocate(rest, design.size - sum(taken.values()), design.equal_share))
    return {key: taken.get(key, 0) for key in sorted(sizes)}


def draw_sample(
    connection: duckdb.DuckDBPyConnection,
    design: SampleDesign,
    sources: Sequence[AuditedSource],
    prm_scores: pa.Table | None = None,
) -> DrawnSample:
    """Draw the sample from the `steps` (and `problems`) views of `connection` (storage.sql.connect).

    `prm_scores` (chain_id, step_index, prm_score) adds the PRM as an audited source and, in `uncertain`
    mode, its near-threshold steps to the uncertain strata.
    """
    with_scores = prm_scores is not None
    if with_scores:
        connection.register("audit_prm_scores", prm_scores)
    sql, params = population_sql(sources, design.filters, with_scores)
    threshold = {"prm_threshold": design.prm_threshold} if with_scores else {}
    connection.execute(sql, {**params, "seed": str(design.seed), **threshold})
    candidates = [s.name for s in sources] + ([PRM] if with_scores else [])
    voted = connection.execute(
        f"SELECT {', '.join(f'count(vote_{n})' for n in candidates)}, count(*) FROM audit_population"
    ).fetchone()
    if not voted or not voted[-1]:
        raise SampleError("no step matches the filters: nothing to draw")
    # a source that voted nowhere here (not run, or filtered away) has nothing to measure or stratify by
    names = [n for n, n_votes in zip(candidates, voted[:-1], strict=True) if n_votes]
    raw = [s.name for s in sources if not s.combined and s.name in names]
    connection.execute(strata_sql(raw, with_scores), _prm_params(design, with_scores))
    counts = connection.execute(
        "SELECT stratum, count(*), bool_or(uncertain) FROM audit_strata GROUP BY stratum ORDER BY stratum"
    ).fetchall()
    sizes = {key: int(n) for key, n, _ in counts}
    uncertain = {key: bool(flag) for key, _, flag in counts}
    taken = _allocation(design, sizes, uncertain)
    connection.register(
        "audit_allocation", pa.table({"stratum": list(taken), "n_drawn": list(taken.values())})
    )
    cursor = connection.execute(
        f"""
SELECT chain_id, step_index, problem_id, run_id, problem_set, domain, stratum, uncertain, prm_score,
       {", ".join(f"vote_{n}" for n in names)}, {", ".join(f"fe_{n}" for n in names)}, double_key
FROM (
    SELECT *, row_number() OVER (PARTITION BY stratum ORDER BY draw_key, chain_id, step_index) AS rank
    FROM audit_strata
) JOIN audit_allocation USING (stratum)
WHERE rank <= n_drawn
ORDER BY {"NOT uncertain, " if design.mode == "uncertain" else ""}order_key, chain_id, step_index
"""
    )
    rows = cursor.fetchall()
    doubles = _double_positions(rows, design.double_share)
    items = []
    for position, row in enumerate(rows, start=1):
        chain_id, step_index, problem_id, run_id, problem_set, domain, stratum, _, prm_score = row[:9]
        vote_values = row[9 : 9 + len(names)]
        fe_values = row[9 + len(names) : 9 + 2 * len(names)]
        items.append(
            DrawnItem(
                position=position,
                chain_id=chain_id,
                step_index=int(step_index),
                problem_id=problem_id,
                run_id=run_id,
                problem_set=problem_set,
                domain=domain,
                stratum=stratum,
                votes=dict(zip(names, vote_values, strict=True)),
                first_error_of=tuple(n for n, flag in zip(names, fe_values, strict=True) if flag),
                prm_score=prm_score,
                reviews_needed=2 if position - 1 in doubles else 1,
            )
        )
    strata = tuple(Stratum(key, sizes[key], taken[key], uncertain[key]) for key in sorted(sizes))
    return DrawnSample(design, tuple(names), strata, tuple(items))


def _prm_params(design: SampleDesign, with_scores: bool) -> dict[str, float]:
    return {"prm_threshold": design.prm_threshold, "prm_margin": design.prm_margin} if with_scores else {}


def _double_positions(rows: list[tuple], share: float) -> set[int]:
    """Indices of the round(share * n) rows with the smallest double-review hash (the last column)."""
    wanted = round(share * len(rows))
    ranked = sorted(range(len(rows)), key=lambda i: rows[i][-1])
    return set(ranked[:wanted])


def sources_for(step_columns: Sequence[str], names: Sequence[str] | None = None) -> tuple[AuditedSource, ...]:
    """The audited sources: `names` (each must exist in the steps table), or every one the table has."""
    from prm_factory.audit.sources import present_sources

    present = present_sources(step_columns)
    if names is None:
        return present
    unknown = [n for n in names if n not in BY_NAME]
    missing = [n for n in names if n in BY_NAME and BY_NAME[n] not in present]
    if unknown or missing:
        raise SampleError(f"unknown sources {unknown}, or not in this dataset {missing}")
    return tuple(BY_NAME[n] for n in names)
