"""The model card (README.md) of a trained PRM: what it was trained on, with which labels, and how it scored.

A PRM's scores mean what its labels meant, so the card names the dataset (root and version, or the export
file), the label source and filters, the base model with its weights hash, the code commit, the layout a
scorer must reproduce (separator, max length, head), and the held-out figures with their baseline.
"""

from __future__ import annotations

from typing import Any

from prm_factory.config.provenance import git_commit, package_versions


def _weights(base: Any) -> str:
    from prm_factory.sampling.model_prep import ModelPrepError, weights_hash

    try:
        return weights_hash(base)
    except (ModelPrepError, OSError):
        return "unknown"


def model_card(
    settings: Any, provenance: Any, evaluations: list, train_loss: float | None, state: dict
) -> str:
    """Markdown with Hugging Face front matter; `settings` / `provenance` are training.trainer's records."""
    head = (
        "two outputs (cross-entropy on hard labels), P(right) = softmax[..., 1]"
        if settings.head == "classes"
        else "one output (binary cross-entropy on the MC value), P(right) = sigmoid(output)"
    )
    version = "" if provenance.dataset_version is None else f", version {provenance.dataset_version}"
    filters = []
    if provenance.agreement_only:
        filters.append("verifier and MC agree (--agreement-only)")
    if provenance.since_version is not None:
        filters.append(f"steps new since version {provenance.since_version}")
    packages = package_versions()
    lines = [
        "---",
        "library_name: transformers",
        "pipeline_tag: token-classification",
        "tags: [process-reward-model, prm, prm-factory]",
        "---",
        "",
        "# Process reward model (prm-factory)",
        "",
        f"- data: `{provenance.source}`{version}",
        f"- label source: `{provenance.label}`{' (soft: MC value)' if settings.soft else ''}"
        + (f"; {'; '.join(filters)}" if filters else ""),
        f"- base model: `{settings.base_model}` (weights sha256 {_weights(settings.base_model)})",
        f"- head: {head}",
        f"- layout: each step followed by {settings.separator!r}, its label on the separator's last token; "
        f"max length {settings.max_length}",
        f"- training: {state['global_step']} optimiser steps, batch {settings.batch_size} x "
        f"{settings.gradient_accumulation}, lr {settings.learning_rate}, seed {settings.seed}, "
        f"held-out share of problems {settings.held_out} (sha256 of problem_id)",
        f"- mean train loss: {'n/a' if train_loss is None else f'{train_loss:.4f}'}",
        f"- code: prm-factory commit {git_commit()}; transformers {packages.get('transformers', '?')}, "
        f"torch {packages.get('torch', '?')}",
        "",
        "## Held-out problems",
        "",
    ]
    if evaluations:
        lines += [f"- epoch {epoch + 1}: {metrics.line()}" for epoch, metrics in evaluations]
    else:
        lines.append("- not evaluated (no held-out rows)")
    lines += [
        "",
        "## Use",
        "",
        "```bash",
        "prm-factory score THIS_FOLDER chains.jsonl   # ProcessBench-shape; first-error F1 with gold labels",
        "```",
        "",
    ]
    return "\n".join(lines)
