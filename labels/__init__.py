"""Step labels built from a chain, its problem and the problem's reference: the label sources (the
reference alignment needs no policy model), their consensus, and the records they go into.

Layering: `labels` may import schemas, verifiers and rollouts, never flows or the CLI.

The reference labeler's names are read from `reference` on first use (PEP 562), not at import: the
registry and the CLI's help import this package, and the step checker behind `reference` is not what
they run (`prm-factory query` need not load it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prm_factory.labels.reference import REFERENCE_LABELER, REFERENCE_VERSION, reference_step_labels

__all__ = ["REFERENCE_LABELER", "REFERENCE_VERSION", "reference_step_labels"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from prm_factory.labels import reference

        return getattr(reference, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
