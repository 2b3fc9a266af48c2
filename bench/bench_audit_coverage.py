"""Do the audit's intervals cover the truth? Seeded audits of synthetic chains with an exact label per step.

Why: an interval that looks narrow but misses the true precision is worse than none, and the sample is
stratified and weighted, so "95 %" is a claim to check, not to assume. This bench builds a population of
chains on synthetic problems (`schemas.synthetic`), with errors of the kinds models make (false arithmetic,
a misread operand with right arithmetic, a wrong value carried on, chatter without a claim), labels every
step exactly (`evaluation.step_truth`), labels it with the real plain-claim checker (the `verifier` source,
`verifiers.math.claims`), a simulated MC source (a hard label drawn with one chance when the prefix is
truly right and another when it is not; the last step takes the chain's own outcome, as MC does) and the
real consensus rule over the two (`labels.consensus`). Then, per seed, it draws an audit sample with
`audit.sample.draw_sample` (DuckDB over the population as the `steps` view), answers every drawn step from
the truth (a perfect reviewer), estimates each source's figures with `audit.estimate`, and counts how often
each interval holds the true figure computed on every step of the population.

    python -m bench.bench_audit_coverage                      # 200 seeds, 1,000 problems, samples of 300
    python -m bench.bench_audit_coverage --seeds 50 --size 150 --replicates 1000

Prints the coverage per source and figure, pooled, and for the plain percentile interval beside the one
the report uses (percentile widened to the Wilson interval at the effective sample size).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import duckdb  # noqa: E402
import pyarrow as pa  # noqa: E402

from prm_factory.audit.estimate import METRICS, ReviewedStep, estimate  # noqa: E402
from prm_factory.audit.sample import SampleDesign, draw_sample, sources_for  # noqa: E402
from prm_factory.evaluation.step_truth import chain_truth  # noqa: E402
from prm_factory.labels.calibration import CalibrationTable, Cell  # noqa: E402
from prm_factory.labels.consensus import Weighing, step_consensus  # noqa: E402
from prm_factory.labels.registry import registry  # noqa: E402
from prm_factory.schemas.ids import content_id  # noqa: E402
from prm_factory.schemas.step_labels import StepLabel, mc_label  # noqa: E402
from prm_factory.schemas.synthetic import SyntheticProblem, SyntheticSpec, synthetic_problem  # noqa: E402
from prm_factory.verifiers.math.claims import step_verdict, walk_steps  # noqa: E402

MISTAKES = ("right", "false_arithmetic", "wrong_operand", "chatter")
MISTAKE_WEIGHTS = (0.72, 0.1, 0.1, 0.08)
MC_RIGHT_PREFIX = 0.8  # chance a truly right prefix gets hard label True (a weak policy misses some)
MC_WRONG_PREFIX = 0.15  # chance a wrong prefix still reaches the answer (a lucky recovery)
MC_MISSING = 0.08  # steps with no MC value (past max_steps, an ungraded rollout)
SYMBOLS = {"+": "+", "-": "-", "*": "*", "/": "/"}


@dataclass(frozen=True)
class Population:
    steps: pa.Table  # the `steps` view: keys, problem columns and the sources' columns
    problems: pa.Table
    truth: dict[tuple[str, int], str]  # (chain, step) -> correct | incorrect
    first_errors: dict[str, int]  # chain -> true first error (-1: none)


def _apply(operation: str, left: int, right: int) -> int:
    return {"+": left + right, "-": left - right, "*": left * right, "/": left // right}[operation]


def synthetic_chain(problem: SyntheticProblem, rng: random.Random) -> tuple[list[str], int]:
    """A chain for the problem with seeded mistakes, and its final answer."""
    value, steps = problem.start_value, []
    for step in problem.steps:
        mistake = rng.choices(MISTAKES, MISTAKE_WEIGHTS)[0]
        right = step.right
        if mistake == "chatter":
            steps.append("Next, let me look at what happens to the amount.")
        if mistake == "wrong_operand":
            right = max(2, right + rng.choice((-2, -1, 1, 2)))
        result = _apply(step.operation, value, right)
        if mistake == "false_arithmetic":
            result = max(0, result + rng.choice((-3, -2, -1, 1, 2, 3)))
        steps.append(f"{value} {SYMBOLS[step.operation]} {right} = {result}.")
        value = result
    steps.append(f"The answer is {value}.")
    return steps, value


def verifier_votes(steps: Sequence[str]) -> list[str]:
    """The plain-claim checker's verdict per step (hard runs, if any, are not judged: unverifiable)."""
    verdicts = []
    for _, results, hard_runs, _ in walk_steps(steps):
        verdict = step_verdict(results).label
        verdicts.append("unverifiable" if hard_runs and verdict == "correct" else verdict)
    return verdicts


def build_population(n_problems: int, seed: int = 0) -> Population:
    rng = random.Random(f"audit-coverage/{seed}")
    columns: dict[str, list] = {
        k: []
        for k in (
            "chain_id",
            "step_index",
            "problem_id",
            "run_id",
            "source",
            "domain",
            "text",
            "verdict",
            "hard_label",
            "consensus",
        )
    }
    problems: dict[str, list] = {"problem_id": [], "source": [], "domain": []}
    truth, first_errors = {}, {}
    for index in range(n_problems):
        problem = synthetic_problem(SyntheticSpec(seed=seed, steps=1 + index % 4), index)
        steps, answer = synthetic_chain(problem, rng)
        outcome = "correct" if str(answer) == problem.problem.reference_answer else "incorrect"
        true = chain_truth(problem, steps, outcome)
        chain_id = content_id("audit-coverage-chain", problem.problem.problem_id, index)
        problems["problem_id"].append(problem.problem.problem_id)
        problems["source"].append("synthetic")
        problems["domain"].append("math")
        first_errors[chain_id] = true.first_error
        prefix_right = True
        for step_index, (text, label, verdict) in enumerate(
            zip(steps, true.labels, verifier_votes(steps), strict=True)
        ):
            prefix_right = prefix_right and label == "correct"
            if step_index == len(steps) - 1:
                hard: bool | None = outcome == "correct"
            elif rng.random() < MC_MISSING:
                hard = None
            else:
                hard = rng.random() < (MC_RIGHT_PREFIX if prefix_right else MC_WRONG_PREFIX)
            for key, value in (
                ("chain_id", chain_id),
                ("step_index", step_index),
                ("problem_id", problem.problem.problem_id),
                ("run_id", "run-0"),
                ("source", "synthetic"),
                ("domain", "math"),
                ("text", text),
                ("verdict", verdict),
                ("hard_label", hard),
                ("consensus", consensus(verdict, hard)),
            ):
                columns[key].append(value)
            truth[(chain_id, step_index)] = label
    return Population(pa.table(columns), pa.table(problems), truth, first_errors)


def _votes(row: dict, source: str) -> str | None:
    if source == "verifier":
        return row["verdict"] if row["verdict"] in ("correct", "incorrect") else None
    if source == "mc":
        return None if row["hard_label"] is None else ("correct" if row["hard_label"] else "incorrect")
    return {"positive": "correct", "negative": "incorrect"}.get(row["consensus"])


def consensus(verdict: str, hard: bool | None) -> str:
    """labels/consensus.py's label of a step with the verifier's verdict and MC's hard label, weighed by
    fixed tables (both sources 99 % precise), so the bench's consensus labels steps whatever the shipped
    tables measure (its subject is the audit's intervals, not the tables)."""
    labels = (StepLabel("verifier", verdict), mc_label(hard, None, {}, "mc@policy"))
    return step_consensus(labels, registry(), FIXED_WEIGHING)[0]


FIXED_WEIGHING = Weighing(
    {
        name: CalibrationTable(
            name,
            "",
            "bench",
            0.5,
            (Cell("correct", "", "math", 100, 99), Cell("incorrect", "", "math", 100, 99)),
        )
        for name in ("verifier", "mc")
    }
)


def true_figures(population: Population, sources: Sequence[str]) -> dict[str, dict[str, float | None]]:
    """Every figure of METRICS computed on every step of the population against the exact truth."""
    rows = population.steps.to_pylist()
    first_of: dict[tuple[str, str], int] = {}
    for row in rows:
        for source in sources:
            if _votes(row, source) == "incorrect":
                key = (source, row["chain_id"])
                first_of[key] = min(first_of.get(key, row["step_index"]), row["step_index"])
    figures: dict[str, dict[str, float | None]] = {}
    for source in sources:
        counts = {m: [0, 0] for m in METRICS}  # [numerator, denominator]
        for row in rows:
            vote = _votes(row, source)
            human = population.truth[(row["chain_id"], row["step_index"])]
            for label in ("incorrect", "correct"):
                if vote == label:
                    counts[f"precision_{label}"][1] += 1
                    counts[f"precision_{label}"][0] += human == label
                if human == label:
                    counts[f"recall_{label}"][1] += 1
                    counts[f"recall_{label}"][0] += vote == label
            if first_of.get((source, row["chain_id"])) == row["step_index"]:
                counts["first_error_agreement"][1] += 1
                counts["first_error_agreement"][0] += (
                    population.first_errors[row["chain_id"]] == row["step_index"]
                )
        figures[source] = {m: (num / den if den else None) for m, (num, den) in counts.items()}
    return figures


def audit_once(population: Population, seed: int, size: int, replicates: int, wilson_floor: bool = True):
    """One seeded audit answered from the truth: (sources, estimates)."""
    connection = duckdb.connect()
    connection.register("steps", population.steps)
    connection.register("problems", population.problems)
    sources = sources_for(population.steps.column_names)
    sample = draw_sample(connection, SampleDesign(size=size, seed=seed, double_share=0.0), sources)
    connection.close()
    reviewed = []
    for item in sample.items:
        human = population.truth[(item.chain_id, item.step_index)]
        first = population.first_errors[item.chain_id]
        reviewed.append(
            ReviewedStep(
                item_id=item.position,
                stratum=item.stratum,
                votes=item.votes,
                first_error_of=item.first_error_of,
                human=human,  # type: ignore[arg-type]
                human_first_error=None
                if human != "incorrect"
                else ("this" if first == item.step_index else "earlier"),
            )
        )
    populations = {s.key: s.population for s in sample.strata}
    return sample.sources, estimate(
        reviewed, populations, sample.sources, replicates=replicates, seed=seed, wilson_floor=wilson_floor
    )


def coverage(
    population: Population, seeds: Sequence[int], size: int, replicates: int, wilson_floor: bool = True
) -> dict[tuple[str, str], tuple[int, int, float]]:
    """(source, metric) -> (intervals that hold the true figure, intervals given, their mean width)."""
    truth: dict[str, dict[str, float | None]] | None = None
    held: dict[tuple[str, str], list[float]] = {}
    for seed in seeds:
        sources, result = audit_once(population, seed, size, replicates, wilson_floor)
        truth = truth or true_figures(population, sources)
        for source in sources:
            for metric in METRICS:
                true, got = truth[source][metric], result.figures[source][metric]
                if true is None or got.estimate is None:
                    continue
                cell = held.setdefault((source, metric), [0, 0, 0.0])
                cell[0] += got.low <= true <= got.high  # type: ignore[operator]
                cell[1] += 1
                cell[2] += got.high - got.low  # type: ignore[operator]
    return {key: (int(a), int(b), w / b) for key, (a, b, w) in held.items()}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problems", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--size", type=int, default=300)
    parser.add_argument("--replicates", type=int, default=2000)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    population = build_population(args.problems)
    n_wrong = sum(label == "incorrect" for label in population.truth.values())
    print(
        f"population: {args.problems} chains, {population.steps.num_rows} steps, {n_wrong} truly wrong "
        f"({time.perf_counter() - started:.1f}s)"
    )
    truth = true_figures(population, ("verifier", "mc", "consensus"))
    results = {}
    for floor in (True, False):
        started = time.perf_counter()
        results[floor] = coverage(population, range(args.seeds), args.size, args.replicates, floor)
        label = "percentile + Wilson floor" if floor else "plain percentile"
        print(f"{label}: {time.perf_counter() - started:.0f}s")
    print(f"\n{'source':10} {'figure':22} {'true':>6} {'covered, width (report)':>26} {'(plain)':>22}")
    for key in sorted(results[True]):
        source, metric = key
        a, b, w = results[True][key]
        c, d, v = results[False].get(key, (0, 0, 0.0))
        true = truth[source][metric]
        print(
            f"{source:10} {metric:22} {true:6.3f} {a:>5}/{b:<4} {a / b:6.1%} {w:6.3f}"
            f" {c:>5}/{d:<4} {c / d:6.1%} {v:6.3f}"
        )
    for floor, label in ((True, "report"), (False, "plain")):
        held = sum(a for a, _, _ in results[floor].values())
        given = sum(b for _, b, _ in results[floor].values())
        worst = min(a / b for a, b, _ in results[floor].values())
        width = sum(w * b for _, b, w in results[floor].values()) / given
        summary = f"{held}/{given} = {held / given:.1%}; worst cell {worst:.1%}; mean width {width:.3f}"
        print(f"pooled ({label}): {summary}")


if __name__ == "__main__":
    main()
