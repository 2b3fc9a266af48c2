"""Headline numbers of one dataset version: what `prm-factory stats` prints.

One SQL pass per table over the version's views, so the numbers agree with what `query` returns.
"""

from __future__ import annotations

from typing import Any

from storage.dataset import Dataset
from storage.sql import connect

HEADLINE_SQL: dict[str, str] = {
    "counts": """
        SELECT
            (SELECT count(*) FROM runs) AS runs,
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


def headline_stats(dataset: Dataset, version: int | None = None) -> dict[str, Any]:
    """Counts, chain accuracy, label mix, agreement and cost of a version, as one flat dict."""
    resolved = dataset.resolve_version(version)
    connection = connect(dataset, resolved)
    try:
        stats: dict[str, Any] = {"version": resolved}
        for sql in HEADLINE_SQL.values():
            relation = connection.execute(sql)
            names = [column[0] for column in relation.description]
            stats.update(zip(names, relation.fetchone(), strict=True))
    finally:
        connection.close()
    return stats
