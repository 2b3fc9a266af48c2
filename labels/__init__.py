"""Step labels built from a chain, its problem and the problem's reference: the label sources (the
reference alignment needs no policy model), their consensus, and the records they go into.

Layering: `labels` may import schemas, verifiers and rollouts, never flows or the CLI.
"""

from prm_factory.labels.reference import REFERENCE_LABELER, REFERENCE_VERSION, reference_step_labels

__all__ = ["REFERENCE_LABELER", "REFERENCE_VERSION", "reference_step_labels"]
