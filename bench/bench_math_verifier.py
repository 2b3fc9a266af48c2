"""Throughput of the math verifier beside its natural baseline, math-verify, in one run.

    .venv/bin/python bench/bench_math_verifier.py [--problems 2000] [--source PATH]
        [--math-dev PROCESSBENCH_MATH_JSON --old-checkout DIR [--math-chains 300]]

`--source` defaults to the GSM8K train split in the repository's sibling folder `../shared`.

1. Step checks per second per core on GSM8K gold steps (annotations removed): `check_steps` over every gold
   solution, single thread; "per core" divides by the process CPU time, so a busy shared machine does not
   flatter or punish the number (wall time is printed too).
2. Answer checks per second on the same (predicted, reference) pairs for both checkers:
   - GSM8K-style pairs: the gold final answer written the ways models write it (`$1,234`, `1234.00`,
     `1234 dollars`, off by one), against the reference;
   - the hand-labelled pairs of evaluation/data/answer_pairs.jsonl (LaTeX, sets, intervals, ...);
   - the MATH-style dev set evaluation/data/math_outputs_dev.jsonl: whole model outputs, extracted by our
     `extract_answer` for both checkers (so the ratio compares equivalence, not extraction).
   Ours is `answers_equivalent_many` (exact fast path, then math-verify in the bounded worker); the
   baseline is math-verify's `verify(parse(reference), parse(predicted))`, as its README uses it. Caches
   are cleared before each timed pass and every pair is distinct, so nothing is graded twice.
3. With `--math-dev` (a ProcessBench-style JSON list of chains) and `--old-checkout` (a checkout of an
   earlier commit, e.g. `git worktree add /tmp/old <commit>`): `MathVerifier.check_steps` of that checkout
   beside this one's, each in its own interpreter, on GSM8K-style model steps (evaluation/data/
   real_errors_gsm8k.jsonl, with their problems) and on MATH-style steps (the first `--math-chains` chains
   of the dev file). "Per core" here divides by the CPU time of the process and of its SymPy worker.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing it

from prm_factory.config.run_config import SHARED_GSM8K  # noqa: E402  (GSM8K in the repository's sibling ../shared)
from prm_factory.evaluation.answer_pairs import MATH_OUTPUTS, load_answer_pairs, load_math_outputs  # noqa: E402
from prm_factory.labels.metrics import precision_recall  # noqa: E402
from prm_factory.verifiers.math import answers  # noqa: E402
from prm_factory.verifiers.math.bounded import BoundedPool, PoolConfig  # noqa: E402
from prm_factory.verifiers.math.claims import check_steps  # noqa: E402

_ANNOTATION = re.compile(r"<<[^<>]*>>")


def gold_chains(source: Path, n_problems: int) -> tuple[list[list[str]], list[str]]:
    """Gold steps (one per line, annotations removed) and final answers of the first problems."""
    chains, finals = [], []
    for line in source.read_text(encoding="utf-8").splitlines()[:n_problems]:
        body, _, final = json.loads(line)["answer"].partition("####")
        chains.append([_ANNOTATION.sub("", s).strip() for s in body.splitlines() if s.strip()])
        finals.append(final.strip().replace(",", ""))
    return chains, finals


def gsm8k_pairs(finals: Sequence[str], seed: int = 0) -> list[tuple[str, str]]:
    """Distinct (predicted, reference) pairs in the forms models write, half of them wrong."""
    rng = random.Random(seed)
    pairs = []
    for reference in dict.fromkeys(finals):
        value = float(reference)
        right = [
            reference,
            f"${reference}",
            f"{value:,.2f}",
            f"{reference} dollars",
            f"\\boxed{{{reference}}}",
        ]
        wrong = [str(int(value) + rng.randint(1, 9)), f"${value * 2:g}", f"{value / 10:g}"]
        pairs.append((rng.choice(right), reference))
        pairs.append((rng.choice(wrong), reference))
    return list(dict.fromkeys(pairs))


def time_it(fn: Callable[[], object]) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def bench_steps(chains: list[list[str]]) -> None:
    n_steps = sum(len(c) for c in chains)
    check_steps(chains[0])  # warm imports and regex caches
    wall, cpu, _ = time_it(lambda: [check_steps(c) for c in chains])
    print(f"step checks: {n_steps:,} GSM8K gold steps in {len(chains):,} chains")
    print(
        f"  {n_steps / cpu:,.0f} steps/s per core (CPU time {cpu:.2f} s; wall {wall:.2f} s, "
        f"{n_steps / wall:,.0f} steps/s)   target >= 1,000"
    )


REPO = Path(__file__).resolve().parents[1]
GSM8K_STYLE_STEPS = REPO / "evaluation" / "data" / "real_errors_gsm8k.jsonl"

# Run in a child interpreter whose first path entry is the checkout under test, so two versions of the
# checker never share one process. Prints steps, wall seconds and CPU seconds (itself + its workers).
_MEASURE = """
import json, os, resource, sys, time
sys.path.insert(0, sys.argv[1])
from prm_factory.schemas.records import Problem
from prm_factory.verifiers.math.verifier import MathVerifier

def live_children():
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == os.getpid():
                cpu[entry] = (int(fields[11]) + int(fields[12])) / ticks
    return cpu

def reaped():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime

chains = json.load(open(sys.argv[2]))
verifier = MathVerifier()
problems = [Problem(str(i), "bench", "math", c["problem"]) for i, c in enumerate(chains)]
verifier.check_steps(problems[0], chains[0]["steps"])
live, dead = live_children(), reaped()
wall, cpu = time.perf_counter(), time.process_time()
for problem, chain in zip(problems, chains):
    verifier.check_steps(problem, chain["steps"])
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
now = live_children()
# a worker killed past its time limit is reaped: its CPU comes back through RUSAGE_CHILDREN
workers = sum(t - live.get(p, 0.0) for p, t in now.items()) + reaped() - dead
workers -= sum(t for p, t in live.items() if p not in now)
verifier.close()
print(json.dumps({"steps": sum(len(c["steps"]) for c in chains), "wall": wall, "cpu": cpu + workers}))
"""


def measure_checker(checkout: Path, chains: list[dict]) -> dict:
    """Steps, wall and CPU seconds of `checkout`'s `MathVerifier.check_steps` over `chains`."""
    with tempfile.NamedTemporaryFile("w", suffix=".json") as handle:
        json.dump(chains, handle)
        handle.flush()
        out = subprocess.run(
            [sys.executable, "-c", _MEASURE, str(checkout), handle.name],
            cwd=checkout,
            capture_output=True,
            text=True,
            check=True,
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_step_checkers(old_checkout: Path, math_dev: Path, math_chains: int) -> None:
    gsm8k = [json.loads(line) for line in GSM8K_STYLE_STEPS.read_text(encoding="utf-8").splitlines()]
    sets = {
        "GSM8K-style": [{"problem": r["problem"], "steps": r["steps"]} for r in gsm8k],
        "MATH-style": [
            {"problem": r["problem"], "steps": r["steps"]}
            for r in json.loads(math_dev.read_text(encoding="utf-8"))[:math_chains]
        ],
    }
    for name, chains in sets.items():
        old, new = measure_checker(old_checkout, chains), measure_checker(REPO, chains)
        print(f"step checks, {name}: {old['steps']:,} steps in {len(chains):,} chains")
        for label, result in (("old", old), ("new", new)):
            print(
                f"  {label}  {result['steps'] / result['cpu']:>8,.0f} steps/s per core "
                f"(CPU {result['cpu']:.2f} s with its worker; wall {result['wall']:.2f} s)"
            )
        ratio = (new["steps"] / new["cpu"]) / (old["steps"] / old["cpu"])
        print(f"  new / old per core: {ratio:.2f}x")


def bench_answers(
    name: str, pairs: list[tuple[str, str]], pool: BoundedPool, gold: list[bool] | None = None
) -> None:
    from math_verify import parse, verify

    def ours() -> list[str]:
        answers.plain_value.cache_clear()
        answers._symbolic_cache.clear()
        return [v.label for v in answers.answers_equivalent_many(pairs, pool=pool)]

    def baseline() -> list[bool]:
        return [verify(parse(reference), parse(predicted)) for predicted, reference in pairs]

    ours()  # start the worker once: startup is not a per-check cost
    ours_wall, ours_cpu, ours_labels = time_it(ours)
    base_wall, base_cpu, base_labels = time_it(baseline)
    ours_correct = [label == "correct" for label in ours_labels]  # type: ignore[union-attr]
    agree = sum(a == b for a, b in zip(ours_correct, base_labels, strict=True))  # type: ignore[arg-type]
    print(f"answer checks, {name}: {len(pairs):,} distinct pairs")
    print(
        f"  ours        {len(pairs) / ours_wall:>10,.0f} checks/s "
        f"(wall {ours_wall:.2f} s, parent CPU {ours_cpu:.2f} s)"
    )
    print(
        f"  math-verify {len(pairs) / base_wall:>10,.0f} checks/s "
        f"(wall {base_wall:.2f} s, CPU {base_cpu:.2f} s)"
    )
    print(
        f"  ratio ours / math-verify: {base_wall / ours_wall:.1f}x   (same verdict on {agree}/{len(pairs)})"
    )
    if gold is not None:
        for label, predicted in (("ours", ours_correct), ("math-verify", base_labels)):
            scores = precision_recall(gold, predicted)  # type: ignore[arg-type]
            print(
                f"  {label:<11} vs hand labels: precision {100 * scores.precision:.1f}  "
                f"recall {100 * scores.recall:.1f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--source", type=Path, default=SHARED_GSM8K, help="GSM8K train jsonl")
    parser.add_argument("--problems", type=int, default=2000)
    parser.add_argument("--math-dev", type=Path, help="ProcessBench-style JSON list of MATH chains")
    parser.add_argument("--old-checkout", type=Path, help="checkout of the checker to compare against")
    parser.add_argument("--math-chains", type=int, default=300, help="MATH chains to time")
    parser.add_argument("--steps-only", action="store_true", help="only the old-beside-new step timing")
    args = parser.parse_args()
    logging.getLogger("math_verify").setLevel(logging.ERROR)
    if args.math_dev and args.old_checkout:
        bench_step_checkers(args.old_checkout, args.math_dev, args.math_chains)
    if args.steps_only:
        return

    chains, finals = gold_chains(args.source, args.problems)
    bench_steps(chains)
    pool = BoundedPool(PoolConfig(workers=1))
    try:
        bench_answers("GSM8K-style", gsm8k_pairs(finals), pool)
        hand = load_answer_pairs()
        bench_answers(
            "hand-labelled (LaTeX, sets, intervals)",
            [(p.predicted, p.reference) for p in hand],
            pool,
            [p.equivalent for p in hand],
        )
        outputs = load_math_outputs(MATH_OUTPUTS)
        extracted = [answers.extract_answer(o.completion) for o in outputs]
        bench_answers(
            "MATH-style outputs (answers extracted first)",
            [(e.text if e else "", o.reference) for e, o in zip(extracted, outputs, strict=True)],
            pool,
            [o.equivalent for o in outputs],
        )
    finally:
        pool.close()


if __name__ == "__main__":
    main()
