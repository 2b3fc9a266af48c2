"""Math verifiers: final-answer equivalence and step-claim checking, exact first, SymPy under hard limits."""

from prm_factory.verifiers.math.verifier import MathVerifier, MathVerifierConfig

__all__ = ["MathVerifier", "MathVerifierConfig"]
