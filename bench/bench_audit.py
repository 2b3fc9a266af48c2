"""How fast does the review page answer? A 100,000-step dataset, a sample drawn from it, and a reviewer who
answers step after step over real HTTP.

Why: a reviewer presses a key a few hundred times an hour; a page that lags behind the keyboard gets used
less, and answers given in a hurry are worse. The target is under 100 ms per step at the 95th percentile.
Per step the bench times what the browser does: GET the reviewer's next step (the page), POST the answer
(committed to the audit file with fsync before the reply). The baseline is the natural design without the
audit file's copy of the chains: reading the step's chain and problem from the dataset version with DuckDB
on each request.

    python -m bench.bench_audit                          # 100,000 steps, a sample of 1,000, 300 answers
    python -m bench.bench_audit --steps 20000 --answers 100

Prints the dataset build and draw times, p50 / p95 / max per step of the page and of the baseline, and the
ratios p95 / 100 ms and baseline p95 / page p95.
"""

from __future__ import annotations

import argparse
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402

from prm_factory.audit.create import create_audit  # noqa: E402
from prm_factory.audit.sample import SampleDesign  # noqa: E402
from prm_factory.labels.consensus import step_consensus  # noqa: E402
from prm_factory.labels.registry import registry  # noqa: E402
from prm_factory.schemas.ids import content_id  # noqa: E402
from prm_factory.schemas.records import Chain, Problem, RunInfo, Step  # noqa: E402
from prm_factory.schemas.step_labels import StepLabel, mc_label  # noqa: E402
from prm_factory.storage.dataset import Dataset  # noqa: E402
from prm_factory.storage.sql import connect  # noqa: E402

STEPS_PER_CHAIN = 5
CHAINS_PER_PROBLEM = 4
TARGET_SECONDS = 0.100


def build_dataset(root: Path, n_steps: int, seed: int = 0) -> Dataset:
    """One run of GSM8K-like chains with every vote pattern, `n_steps` steps in all."""
    rng = random.Random(seed)
    run_id = content_id("run", "bench-audit")
    n_chains = n_steps // STEPS_PER_CHAIN
    problems, chains, steps = [], [], []
    for c in range(n_chains):
        if c % CHAINS_PER_PROBLEM == 0:
            text = f"Problem {c // CHAINS_PER_PROBLEM}: Ana has {c % 97} apples and buys {c % 13} more. " * 3
            problem = Problem(
                content_id("bench", text),
                "gsm8k",
                "math",
                text,
                reference_answer=str(c),
                reference_solution="Step one.\nStep two.\n#### 1",
            )
            problems.append(problem)
        chain_id = content_id("bench-chain", c)
        texts = [
            f"Step {s}: {c} + {s} = {c + s}, so she now has {c + s} apples. " * 2
            for s in range(STEPS_PER_CHAIN)
        ]
        for s, step_text in enumerate(texts):
            verdict = rng.choices(("correct", "incorrect", "unverifiable"), (0.7, 0.1, 0.2))[0]
            hard = rng.choices((True, False, None), (0.6, 0.3, 0.1))[0]
            evidence = {
                "value_source": "rollouts",
                "n_rollouts": 4,
                "n_correct": 4 if hard else 0,
                "tokens": 10,
            }
            labels = (
                StepLabel("verifier", verdict, reason="checked", labeler="sympy@1+"),
                mc_label(
                    hard, None if hard is None else float(hard), {**evidence, "seconds": 0.1}, "mc@bench"
                ),
            )
            label, agree = step_consensus(labels, registry())
            steps.append(
                Step(
                    step_id=content_id("bench-step", chain_id, s),
                    chain_id=chain_id,
                    problem_id=problem.problem_id,
                    run_id=run_id,
                    step_index=s,
                    text=step_text,
                    char_start=0,
                    char_end=len(step_text),
                    consensus=label,
                    labels_agree=agree,
                    first_error=False,
                    model="bench-model",
                    label_config_hash="bench",
                    labels=labels,
                )
            )
        chains.append(
            Chain(
                chain_id=chain_id,
                problem_id=problem.problem_id,
                run_id=run_id,
                model="bench-model",
                sampling="{}",
                seed=0,
                sample_index=c % CHAINS_PER_PROBLEM,
                prompt=problem.text,
                text="\n".join(texts),
                n_tokens=100,
                finish_reason="stop",
                final_answer="1",
                outcome="incorrect",
                outcome_reason="mismatch",
                outcome_evidence="{}",
                n_steps=STEPS_PER_CHAIN,
            )
        )
    run = RunInfo(
        run_id=run_id,
        started_at="2026-01-01T00:00:00Z",
        ended_at="2026-01-01T01:00:00Z",
        status="succeeded",
        error="",
        config="{}",
        config_hash="bench",
        git_commit="bench",
        package_versions="{}",
        model="bench-model",
        model_weights_hash="-",
        verifier_versions="{}",
        counts="{}",
        stage_seconds="{}",
        n_problems=len(problems),
        n_chains=len(chains),
        n_steps=len(steps),
        n_rejected=0,
        chain_accuracy=0.0,
        rollout_tokens=0,
    )
    dataset = Dataset(str(root))
    dataset.commit_run(run, problems, chains, steps, [])
    return dataset


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _quantiles(seconds: Sequence[float]) -> tuple[float, float, float]:
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95, ordered[-1]


def _server_seconds(response: httpx.Response) -> float:
    """The server's own time for a response (its `Server-Timing: app;dur=MS` header)."""
    return float(response.headers["server-timing"].split("dur=", 1)[1]) / 1000


def page_timings(audit: Path, answers: int) -> tuple[list[float], list[float]]:
    """Seconds per step (GET the next step, POST its answer) against `prm-factory audit serve` over HTTP:
    as the client sees them, and as the server spent them (Server-Timing)."""
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "prm_factory.cli", "audit", "serve", str(audit), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            for _ in range(300):
                try:
                    client.get("/static/review.css")
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            timings, server_side = [], []
            for number in range(answers + 5):  # the first five warm the server up and are not counted
                started = time.perf_counter()
                page = client.get("/review/bench")
                page.raise_for_status()
                marker = 'data-item-id="'
                item_id = int(page.text.split(marker, 1)[1].split('"', 1)[0])
                answer = client.post(
                    "/api/answer",
                    json={
                        "reviewer": "bench",
                        "item_id": item_id,
                        "answer": ("correct", "incorrect")[number % 2],
                    },
                )
                answer.raise_for_status()
                if number >= 5:
                    timings.append(time.perf_counter() - started)
                    server_side.append(_server_seconds(page) + _server_seconds(answer))
            return timings, server_side
    finally:
        server.terminate()
        server.wait(timeout=10)


def baseline_timings(dataset: Dataset, chain_ids: Sequence[str]) -> list[float]:
    """Seconds per step to read the step's chain, problem and steps from the dataset version (DuckDB)."""
    connection = connect(dataset)
    timings = []
    try:
        for chain_id in chain_ids:
            started = time.perf_counter()
            connection.execute(
                "SELECT c.text, p.text, p.reference_solution FROM chains c "
                "JOIN problems p USING (problem_id) WHERE c.chain_id = ?",
                [chain_id],
            ).fetchall()
            connection.execute(
                "SELECT step_index, text FROM steps WHERE chain_id = ? ORDER BY step_index", [chain_id]
            ).fetchall()
            timings.append(time.perf_counter() - started)
    finally:
        connection.close()
    return timings


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--size", type=int, default=1000, help="steps drawn into the audit")
    parser.add_argument("--answers", type=int, default=300, help="steps answered (timed)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        started = time.perf_counter()
        dataset = build_dataset(root / "ds", args.steps)
        print(f"dataset: {args.steps:,} steps written in {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        store = create_audit(dataset, root / "audit", SampleDesign(size=args.size, seed=0, double_share=0.0))
        print(
            f"sample: {len(store.items())} steps in {len(store.strata())} strata drawn in "
            f"{time.perf_counter() - started:.1f} s"
        )
        chain_ids = [item.chain_id for item in store.items()[: args.answers]]
        store.close()
        page, server_side = page_timings(root / "audit", args.answers)
        base = baseline_timings(dataset, chain_ids)
    p50, p95, worst = _quantiles(page)
    b50, b95, bworst = _quantiles(base)
    s50, s95, sworst = _quantiles(server_side)
    print(
        f"page per step (GET next + POST answer, {len(page)} steps): p50 {1000 * p50:.1f} ms, "
        f"p95 {1000 * p95:.1f} ms, max {1000 * worst:.1f} ms"
    )
    print(
        f"  of which in the server (Server-Timing): p50 {1000 * s50:.1f} ms, p95 {1000 * s95:.1f} ms, "
        f"max {1000 * sworst:.1f} ms"
    )
    print(
        f"baseline (the chain read from the dataset per request, no page): p50 {1000 * b50:.1f} ms, "
        f"p95 {1000 * b95:.1f} ms, max {1000 * bworst:.1f} ms"
    )
    print(f"ratio page p95 / 100 ms target: {p95 / TARGET_SECONDS:.2f}")
    print(f"ratio baseline p95 / page p95: {b95 / p95:.2f}")


if __name__ == "__main__":
    main()
