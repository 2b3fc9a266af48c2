"""The audit's intervals cover the truth: a small, deterministic run of bench/bench_audit_coverage.py.

Synthetic chains with an exact label per step (evaluation.step_truth), the real claim checker and consensus, a
simulated MC source; each seed draws a stratified sample, a perfect reviewer answers it from the truth, and
every source's precision and recall (and first-error agreement) get an interval. The bench runs 200 seeds;
this runs 12 fixed ones on a smaller population (a fixed seed set: the result is the same on every run).
"""

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_audit_coverage.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_audit_coverage", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_audit_coverage"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def population(bench):
    return bench.build_population(400)


def test_the_population_has_errors_of_every_kind(bench, population):
    truth = bench.true_figures(population, ("verifier", "mc", "consensus"))
    # the claim checker never accuses a right step here, and misses the right-arithmetic mistakes
    assert truth["verifier"]["precision_incorrect"] == 1.0
    assert 0.1 < truth["verifier"]["recall_incorrect"] < 0.6
    assert 0.3 < truth["mc"]["precision_incorrect"] < 0.95
    wrong = sum(label == "incorrect" for label in population.truth.values())
    assert 0.15 < wrong / len(population.truth) < 0.5


def test_intervals_cover_the_true_figures(bench, population):
    held = bench.coverage(population, range(12), size=150, replicates=400)
    assert len(held) == 15  # 3 sources x 5 figures, each estimated on every seed
    covered = sum(a for a, _, _ in held.values())
    given = sum(b for _, b, _ in held.values())
    assert given == 12 * 15
    assert covered / given >= 0.9, held
    assert min(a / b for a, b, _ in held.values()) >= 0.75, held
