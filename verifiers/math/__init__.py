"""Math verifiers: final-answer equivalence and step-claim checking, exact first, SymPy under hard limits.

`MathVerifier` and `MathVerifierConfig` are read from `verifier` on first use (PEP 562), not at import:
a SymPy worker process (`bounded`) imports this package to reach its small modules (`symbolic`,
`answer_symbolic`, `solution_sets`), and the whole claim checker behind `verifier` is not what it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prm_factory.verifiers.math.verifier import MathVerifier, MathVerifierConfig

__all__ = ["MathVerifier", "MathVerifierConfig"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from prm_factory.verifiers.math import verifier

        return getattr(verifier, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
