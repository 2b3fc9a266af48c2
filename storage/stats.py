"""Headline numbers of one dataset version: what `prm-factory stats` prints.

One SQL pass per table over the version's views, so the numbers agree with what `query` returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prm_factory.storage.dataset import Dataset
from prm_factory.storage.sql import connect

HEADLINE_SQL: dict[str, str] = {
    "counts": """
        SELECT
            (SELECT count(*) FROM runs) AS runs,
            (SELECT count(DISTINCT coalesce(parent_run_id, run_id)) FROM runs) AS logical_runs,
            (SELECT count(*) FROM problems) AS problems,
            (SELECT count(*) FROM chains) AS chains,
            (SELECT count(*) FROM steps) AS steps,
            (SELECT count(*) FROM rejections) AS rejections
    """,
    "chains": """
        SELECT
            avg(CASE WHEN outcome = 'correct' THEN 1.0 ELSE 0.0 END) AS chain_accuracy,
            count(*) FILTER (WHERE outcome = 'unparsed') AS chains_unparsed,
            avg(n_steps) AS mean_steps_per_chain,
            count(*) FILTER (WHERE first_error_verifier IS NOT NULL) AS chains_with_verifier_error,
            count(*) FILTER (WHERE first_error_mc IS NOT NULL) AS chains_with_mc_error
        FROM chains
    """,
    "steps": """
        SELECT
            count(*) FILTER (WHERE verdict = 'correct') AS verdict_correct,
            count(*) FILTER (WHERE verdict = 'incorrect') AS verdict_incorrect,
            count(*) FILTER (WHERE verdict = 'unverifiable') AS verdict_unverifiable,
            count(*) FILTER (WHERE hard_label) AS hard_positive,
            count(*) FILTER (WHERE NOT hard_label) AS hard_negative,
            count(*) FILTER (WHERE consensus = 'disputed') AS consensus_disputed,
            avg(mc_value) AS mean_mc_value,
            avg(CASE WHEN labels_agree THEN 1.0 WHEN NOT labels_agree THEN 0.0 END) AS agreement_rate,
            sum(rollout_tokens)::BIGINT AS rollout_tokens,
            sum(rollout_seconds) AS rollout_seconds
        FROM steps
    """,
}


SOURCE_COUNTS_SQL = """
    SELECT source,
           count(*) FILTER (WHERE verdict = 'correct') AS correct,
           count(*) FILTER (WHERE verdict = 'incorrect') AS incorrect
    FROM step_labels
    WHERE source NOT IN ('verifier', 'mc')
    GROUP BY source
    ORDER BY source
"""
"""Label counts of the sources beyond the verifier's and MC's (the steps query above counts those)."""


def headline_stats(
    dataset: Dataset, version: int | None = None, sources: Sequence[str] = ()
) -> dict[str, Any]:
    """Counts, chain accuracy, label mix, agreement and cost of a version, as one flat dict; each other label
    source with labels in the version adds `<source>_correct` and `<source>_incorrect` (`sources`: label
    sources the views show even where the dataset has none, storage.sql.connect)."""
    resolved = dataset.resolve_version(version)
    connection = connect(dataset, resolved, sources)
    try:
        stats: dict[str, Any] = {"version": resolved}
        for sql in HEADLINE_SQL.values():
            relation = connection.execute(sql)
            names = [column[0] for column in relation.description]
            stats.update(zip(names, relation.fetchone(), strict=True))
        for source, correct, incorrect in connection.execute(SOURCE_COUNTS_SQL).fetchall():
            stats[f"{source}_correct"], stats[f"{source}_incorrect"] = correct, incorrect
    finally:
        connection.close()
    return stats


RUN_COST_SQL = """
    WITH per_run AS (
        SELECT
            coalesce(r.parent_run_id, r.run_id) AS run_id,
            CASE
                WHEN max(r.shard_count) IS NULL THEN any_value(r.status)
                WHEN count(DISTINCT r.shard_index) FILTER (WHERE r.status = 'succeeded') = max(r.shard_count)
                    THEN 'succeeded'
                WHEN count(*) FILTER (WHERE r.status = 'succeeded') > 0 THEN 'partial'
                ELSE 'failed'
            END AS status,
            CASE WHEN max(r.shard_count) IS NOT NULL THEN
                (count(DISTINCT r.shard_index) FILTER (WHERE r.status = 'succeeded'))::VARCHAR
                || '/' || max(r.shard_count)::VARCHAR
            END AS shards,
            string_agg(DISTINCT r.model, ',') AS model,
            date_diff(
                'second', min(r.started_at::TIMESTAMPTZ), max(r.ended_at::TIMESTAMPTZ)
            ) AS wall_seconds,
            count(s.step_id) AS step_labels,
            count(s.step_id) FILTER (WHERE s.value_source = 'rollouts') AS rollout_labels,
            coalesce(sum(s.n_rollouts), 0)::BIGINT AS rollouts,
            coalesce(sum(s.rollout_tokens), 0)::BIGINT AS rollout_tokens,
            coalesce(sum(s.rollout_seconds), 0.0) AS rollout_seconds
        FROM runs r LEFT JOIN steps s USING (run_id)
        WHERE $run_id IS NULL OR r.run_id = $run_id OR r.parent_run_id = $run_id
        GROUP BY 1
    )
    SELECT
        *,
        round(step_labels * 3600.0 / nullif(wall_seconds, 0), 1) AS labels_per_hour,
        round(rollout_tokens / nullif(rollout_labels, 0), 1) AS tokens_per_rollout_label,
        round(rollout_seconds / nullif(rollout_labels, 0), 3) AS engine_seconds_per_rollout_label
    FROM per_run
    ORDER BY run_id
"""


def run_costs(
    dataset: Dataset, version: int | None = None, run_id: str | None = None
) -> list[dict[str, Any]]:
    """Cost per run of a version: wall time, labels per hour, rollouts and tokens per rollout label.

    The shards of a sharded run (flows/shards.py) are one row under their parent run id: wall time from the
    first shard's start to the last one's end, `shards` = succeeded shards / N, status `succeeded` once
    every shard has a succeeded run, `partial` before; `run_id` may name the parent or one shard.

    Steps count for the run that first committed them (see storage.dataset), and `rollouts` counts each
    label's rollouts, so a prefix shared by several chains of a problem counts once per chain here.
    """
    connection = connect(dataset, dataset.resolve_version(version))
    try:
        return connection.sql(RUN_COST_SQL, params={"run_id": run_id}).to_arrow_table().to_pylist()
    finally:
        connection.close()
