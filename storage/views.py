"""SQL of the derived views, kept apart from the connection code so they read as plain queries.

Both views read the base views (`problems`, `chains`, `steps`) of the connection they are created in, so they
describe whichever dataset version that connection was opened on.
"""

from __future__ import annotations

from collections.abc import Sequence

from prm_factory.schemas.step_labels import LABEL_FIELDS, columns_of


def label_stats_sql(steps_carry_problem_columns: bool = True, steps_have_reference: bool = True) -> str:
    """Per source, domain and step index: label counts of every label source (verifier, reference, MC,
    consensus), mean MC value, agreement rate of the sources.

    Source and domain come from the storage-owned copies on each step (layout.PROBLEM_COLUMNS_ON_STEPS), so
    millions of steps need no join; a dataset with steps written before those columns existed joins
    problems instead.
    """
    if steps_carry_problem_columns:
        # Group once by the few label columns (a few thousand groups), then count per label from the groups:
        # half the CPU of eleven filtered aggregates over every row.
        source, domain, rows = "source", "domain", "steps"
    else:
        source, domain = "coalesce(s.source, p.source)", "coalesce(s.domain, p.domain)"
        rows = "steps AS s LEFT JOIN problems AS p USING (problem_id)"
    # a steps table written before the reference source existed has no such column: it reads as not run
    reference = "reference_verdict" if steps_have_reference else "CAST(NULL AS VARCHAR)"
    return f"""
CREATE VIEW label_stats AS
WITH label_groups AS (
    SELECT
        {source} AS source, {domain} AS domain, step_index, verdict, {reference} AS reference_verdict,
        consensus, hard_label, labels_agree, count(*) AS n, sum(mc_value) AS mc_sum, count(mc_value) AS mc_n
    FROM {rows}
    GROUP BY ALL
)
SELECT
    source,
    domain,
    step_index,
    sum(n)::BIGINT AS n_steps,
    coalesce(sum(n) FILTER (WHERE verdict = 'correct'), 0)::BIGINT AS n_verdict_correct,
    coalesce(sum(n) FILTER (WHERE verdict = 'incorrect'), 0)::BIGINT AS n_verdict_incorrect,
    coalesce(sum(n) FILTER (WHERE verdict = 'unverifiable'), 0)::BIGINT AS n_verdict_unverifiable,
    coalesce(sum(n) FILTER (WHERE reference_verdict = 'correct'), 0)::BIGINT AS n_reference_correct,
    coalesce(sum(n) FILTER (WHERE reference_verdict = 'incorrect'), 0)::BIGINT AS n_reference_incorrect,
    coalesce(sum(n) FILTER (WHERE reference_verdict = 'unverifiable'), 0)::BIGINT AS n_reference_unverifiable,
    coalesce(sum(n) FILTER (WHERE reference_verdict IS NULL), 0)::BIGINT AS n_reference_not_run,
    coalesce(sum(n) FILTER (WHERE hard_label), 0)::BIGINT AS n_hard_positive,
    coalesce(sum(n) FILTER (WHERE NOT hard_label), 0)::BIGINT AS n_hard_negative,
    coalesce(sum(n) FILTER (WHERE hard_label IS NULL), 0)::BIGINT AS n_hard_unlabeled,
    coalesce(sum(n) FILTER (WHERE consensus = 'positive'), 0)::BIGINT AS n_consensus_positive,
    coalesce(sum(n) FILTER (WHERE consensus = 'negative'), 0)::BIGINT AS n_consensus_negative,
    coalesce(sum(n) FILTER (WHERE consensus = 'disputed'), 0)::BIGINT AS n_consensus_disputed,
    coalesce(sum(n) FILTER (WHERE consensus = 'unlabeled'), 0)::BIGINT AS n_consensus_unlabeled,
    sum(mc_sum) / nullif(sum(mc_n), 0) AS mean_mc_value,
    -- agreement is measured only where both the verifier and MC gave a label (labels_agree not null)
    coalesce(sum(n) FILTER (WHERE labels_agree IS NOT NULL), 0)::BIGINT AS n_compared,
    sum(n) FILTER (WHERE labels_agree) / sum(n) FILTER (WHERE labels_agree IS NOT NULL) AS agreement_rate
FROM label_groups
GROUP BY source, domain, step_index
"""


LABEL_STATS = label_stats_sql()


FIRST_ERRORS = """
CREATE VIEW first_errors AS
WITH first_error_steps AS (
    SELECT *
    FROM steps
    WHERE first_error
    QUALIFY row_number() OVER (PARTITION BY chain_id ORDER BY step_index) = 1
)
SELECT
    c.chain_id,
    c.problem_id,
    c.run_id,
    p.source,
    p.domain,
    c.model,
    c.outcome,
    c.n_steps,
    c.first_error_verifier,
    c.first_error_mc,
    f.step_index AS first_error_index,
    f.step_id AS first_error_step_id,
    f.text AS first_error_text,
    f.verdict AS first_error_verdict,
    f.verdict_reason AS first_error_reason,
    f.mc_value AS first_error_mc_value,
    f.consensus AS first_error_consensus
FROM chains AS c
LEFT JOIN problems AS p USING (problem_id)
LEFT JOIN first_error_steps AS f USING (chain_id)
"""
"""One row per chain with its first error step (the step flagged `first_error`); NULL index = no error."""


def step_labels_sql(sources: Sequence[str]) -> str:
    """The long view `step_labels`: one row per step and label source (source, verdict, value, reason,
    evidence, labeler, kind), read off each source's columns of `steps` (schemas/step_labels.py); a step a
    source did not label has no row of it. `problem_source` is the problem's dataset (`steps.source`)."""
    parts = []
    for source in sources:
        columns = columns_of(source)
        fields = columns.sql()
        selected = ", ".join(f"{fields[name]} AS {name}" for name in LABEL_FIELDS)
        parts.append(
            f"SELECT step_id, chain_id, problem_id, run_id, step_index, source AS problem_source, domain, "
            f"'{source}' AS source, {selected} FROM steps WHERE {fields['verdict']} IS NOT NULL"
        )
    empty = (
        "SELECT NULL::VARCHAR AS step_id, NULL::VARCHAR AS chain_id, NULL::VARCHAR AS problem_id, "
        "NULL::VARCHAR AS run_id, NULL::BIGINT AS step_index, NULL::VARCHAR AS problem_source, "
        "NULL::VARCHAR AS domain, NULL::VARCHAR AS source, NULL::VARCHAR AS verdict, NULL::DOUBLE AS value, "
        "NULL::VARCHAR AS reason, NULL::VARCHAR AS evidence, NULL::VARCHAR AS labeler, NULL::VARCHAR AS kind "
        "WHERE false"
    )
    return "CREATE VIEW step_labels AS " + ("\nUNION ALL\n".join(parts) if parts else empty)


DERIVED_VIEWS: dict[str, str] = {"label_stats": LABEL_STATS, "first_errors": FIRST_ERRORS}
"""The derived views over a dataset whose steps all carry source and domain."""
