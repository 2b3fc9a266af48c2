"""Process rewards: `score_steps` latency, `score_batch` throughput and the reward server under 64 clients,
each against the factory's own `label` path on the same chains, measured in the same run.

- Chains: the GSM8K dev sets under evaluation/data (altered GSM8K, real SmolLM2 errors: GSM8K-sized
  responses), and with `--processbench` the ProcessBench `math` split (the only split this project reads),
  its steps joined into 30-step competition responses (consecutive chains' steps, the first chain's problem).
- `label`: `prm-factory label`'s flow (flows/label_run.label_external) on the same chains, wall time per
  chain (Prefect, the Delta write and the verifier alike), and the same sources called in this process with
  no worker (`RewardScorer(deadline_s=None)`): the labelling alone.
- `score_steps`: one response at a time on one worker (one core; with `--processbench` warmed for
  competition traffic, `RewardScorer(competition=True)`, as a deployment serving it would be),
  percentiles (a GSM8K-sized response is labelled on the scorer's own labelling thread, reward/scorer.py);
  `score_steps_in_worker`: the same with `in_caller=False`, every response in the worker process (the
  hop's cost); `score_batch`: batches of 64 over two workers, responses per second.
- Rounds (`--rounds`): the label baseline and the reward paths run alternately, each round on the same
  chains with the same long-lived verifier and workers, so a change in the machine's load (it is shared)
  falls on both; each round's label / reward ratio is printed, and their median. Paired: each chain
  labelled by the baseline and then scored by `score_steps`, chain after chain (the same moment's load):
  the ratio of the sums and of the medians (GSM8K-sized and, with `--processbench`, 30-step responses).
- Budgets (`--budget 1.0 ...`): the 30-step responses again with `budget_s` (reward/budget.py), with their
  percentiles and how many step verdicts moved against the run without one (only to `unverifiable` may).
- The server (`--server-seconds`, 0 skips it): `prm-factory reward serve` in a subprocess, 64 concurrent
  clients posting one response each to /get_reward for the given time; errors, percentiles, and the server's
  memory (its process and its workers) at the start and the end.

    python -m bench.bench_reward --processbench /path/to/math.json --server-seconds 30 --budget 0.7
    python -m bench.bench_reward --processbench /path/to/math.json --competition-only --verdicts v.json

Prints one JSON object. Timings depend on the machine and its load: report `uptime` beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prm_factory.labels.assemble import join_steps  # noqa: E402
from prm_factory.reward import RewardScorer, score_batch, score_steps  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "evaluation" / "data"


def percentiles(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {
        "n": len(ordered),
        "p50_s": pick(0.5),
        "p90_s": pick(0.9),
        "p99_s": pick(0.99),
        "max_s": ordered[-1],
    }


def gsm8k_rows() -> list[dict[str, Any]]:
    rows = []
    for name in ("altered_gsm8k.jsonl", "real_errors_gsm8k.jsonl"):
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            row.pop("final_answer", None)
            row["id"] = f"{name}:{row['id']}"
            rows.append(row)
    return rows


def competition_rows(path: Path, steps: int = 30) -> list[dict[str, Any]]:
    chains = json.loads(path.read_text(encoding="utf-8"))
    rows, pending, first = [], [], None
    for chain in chains:
        first = first or chain
        pending.extend(chain["steps"])
        if len(pending) >= steps:
            rows.append({"id": f"pb-{first['id']}", "problem": first["problem"], "steps": pending[:steps]})
            pending, first = [], None
    return rows


def item(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "prompt": row["problem"],
        "response": join_steps(row["steps"])[0],
        "answer": row.get("reference_answer"),
        "solution": row.get("solution"),
    }


def label_path(rows: list[dict[str, Any]], verifier: Any = None) -> dict[str, float]:
    """`prm-factory label`'s labelling of the rows, without its Prefect tasks and Delta write: the rows
    parsed and graded as external chains (flows/label_run.to_sampled), the default config's sources run in
    order (verifier, then reference) and the records built (labels.assemble.chunk_records); seconds per
    chain. Leaving the orchestration and the write out favours this baseline."""
    from prm_factory.config.run_config import RunConfig
    from prm_factory.flows.label_run import to_sampled
    from prm_factory.labels.assemble import RecordContext, chunk_records
    from prm_factory.labels.registry import configured, run_sources
    from prm_factory.labels.source import SourceSetup
    from prm_factory.schemas.external_chains import parse_external_chain

    config = RunConfig()
    own = verifier is None
    if own:
        verifier = label_verifier()
    setup = SourceSetup(config, "math", verifier, None, "bench", pipeline="label", rollouts=False)
    registry = configured(config.labels.sources)  # a run's set-up, once per chunk: not timed
    sources = [
        source
        for source in run_sources(config.labels.sources)
        if "engine" not in source.needs and (source.name == "verifier" or source.applies(setup))
    ]
    started = time.perf_counter()
    sampled = [
        to_sampled(parse_external_chain(row, n), "bench", n, verifier) for n, row in enumerate(rows, 1)
    ]
    labels: dict[str, list[Any]] = {}
    for source in sources:
        labels[source.name] = source.label(sampled, labels, setup)
    chunk_records(sampled, labels, RecordContext("bench", "external", "{}", 0, "", "", "bench"), registry)
    wall = time.perf_counter() - started
    if own:
        verifier.close()
    return {"chains": len(rows), "wall_s": wall, "s_per_chain": wall / len(rows)}


def label_verifier() -> Any:
    """The verifier `label` builds from the default config (flows/domains.py), kept across rounds."""
    from prm_factory.config.run_config import RunConfig
    from prm_factory.flows.domains import math_verifier

    verifier = math_verifier(RunConfig())
    verifier.grade(_warm_problem(), "The answer is $\\boxed{\\frac{1}{2}}$.")  # its SymPy worker starts here
    return verifier


def _warm_problem() -> Any:
    from prm_factory.schemas.records import Problem

    return Problem("warm", "bench", "math", "Half of one?", reference_answer="0.5")


def one_at_a_time(
    rows: list[dict[str, Any]], scorer: RewardScorer, budget_s: float | None = None
) -> tuple[dict[str, Any], list[Any]]:
    seconds, results = [], []
    for row in rows:
        started = time.perf_counter()
        budget = {} if budget_s is None else {"budget_s": budget_s}  # (a reward without budgets runs it too)
        results.append(score_steps(**item(row), scorer=scorer, **budget))
        seconds.append(time.perf_counter() - started)
    statuses = {s: sum(r.status == s for r in results) for s in {r.status for r in results}}
    summary = {**percentiles(seconds), "s_per_chain": statistics.fmean(seconds), "status": statuses}
    return {**summary, "latencies": seconds}, results


def step_verdicts(results: list[Any]) -> list[dict[str, Any]]:
    """Every response's status and, per step, its verdict, P(right) and each source's verdict, kind and
    reason: what `--verdicts` writes, so that two runs (before and after a change to the checks) can be
    compared verdict for verdict."""
    return [
        {
            "status": r.status,
            "outcome": r.outcome,
            "first_error": r.first_error,
            "steps": [
                {
                    "verdict": s.verdict,
                    "p_correct": s.p_correct,
                    "sources": [[x.source, x.verdict, x.kind, x.reason] for x in s.sources],
                }
                for s in r.steps
            ],
        }
        for r in results
    ]


def verdict_moves(before: list[Any], after: list[Any]) -> dict[str, int]:
    """Step verdicts that differ between a run without a budget and one with it, on the responses both
    labelled (status ok): each source's verdict moved to `unverifiable` (what a budget does), moved from it
    (a check past the verifier's per-item limit in the run without a budget, on a loaded machine), or any
    other move (a budget must make none); and consensus moves (it follows the sources left)."""
    moves = {"steps": 0, "source_to_unverifiable": 0, "source_from_unverifiable": 0, "source_other": 0}
    moves["consensus_moved"] = 0
    for one, other in zip(before, after, strict=True):
        if one.status != "ok" or other.status != "ok":
            continue
        for a, b in zip(one.steps, other.steps, strict=True):
            moves["steps"] += 1
            moves["consensus_moved"] += a.verdict != b.verdict
            theirs = {x.source: x.verdict for x in b.sources}
            for x in a.sources:
                y = theirs.get(x.source, "unverifiable")
                if x.verdict == y:
                    continue
                key = "to" if y == "unverifiable" else "from" if x.verdict == "unverifiable" else "other"
                moves[f"source_{key}_unverifiable" if key != "other" else "source_other"] += 1
    return moves


def paired(
    rows: list[dict[str, Any]], scorer: RewardScorer, verifier: Any
) -> tuple[dict[str, Any], list[Any]]:
    """Each chain labelled by the label baseline and then scored by `score_steps`, chain after chain, so
    both see the same moment of a shared machine's load: their seconds per chain (mean and median) and the
    ratios label / reward of the sums and of the medians (above 1: the reward path is faster)."""
    label_s, reward_s, results = [], [], []
    for row in rows:
        label_s.append(label_path([row], verifier)["wall_s"])
        started = time.perf_counter()
        results.append(score_steps(**item(row), scorer=scorer))
        reward_s.append(time.perf_counter() - started)
    summary = {
        "chains": len(rows),
        "label_mean_s": statistics.fmean(label_s),
        "label_median_s": statistics.median(label_s),
        "reward_mean_s": statistics.fmean(reward_s),
        "reward_median_s": statistics.median(reward_s),
        "ratio_of_sums": sum(label_s) / sum(reward_s),
        "ratio_of_medians": statistics.median(label_s) / statistics.median(reward_s),
        "reward": percentiles(reward_s),
        "status": {s: sum(r.status == s for r in results) for s in {r.status for r in results}},
    }
    return summary, results


def median_ratio(baseline: list[dict[str, Any]], measured: list[dict[str, Any]]) -> dict[str, Any]:
    """label / reward seconds per chain, per round and their median (1 = as fast; above 1: reward faster)."""
    ratios = [b["s_per_chain"] / m["s_per_chain"] for b, m in zip(baseline, measured, strict=True)]
    return {"per_round": ratios, "median": statistics.median(ratios)}


def pooled(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Percentiles over every round's latencies, and each round's seconds per chain."""
    latencies = [x for run in runs for x in run["latencies"]]
    return {**percentiles(latencies), "s_per_chain_per_round": [r["s_per_chain"] for r in runs]}


def batched(rows: list[dict[str, Any]], scorer: RewardScorer, size: int = 64) -> dict[str, float]:
    started = time.perf_counter()
    for start in range(0, len(rows), size):
        score_batch([item(row) for row in rows[start : start + size]], scorer=scorer)
    wall = time.perf_counter() - started
    return {
        "responses": len(rows),
        "wall_s": wall,
        "per_s": len(rows) / wall,
        "s_per_chain": wall / len(rows),
    }


def tree_cpu_s(pid: int | None = None) -> float:
    """CPU seconds (user + system) of this process, its reaped children and every live descendant (the
    reward workers and all SymPy workers): the work a path costs, which a shared machine's load does not
    inflate the way it inflates wall time. Clock ticks: 10 ms resolution, so rounds, not single chains."""
    tick, total, stack = os.sysconf("SC_CLK_TCK"), 0, [pid or os.getpid()]
    first = True
    while stack:
        current = stack.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
        if first:  # children this process reaped (a killed worker's time)
            total += int(fields[13]) + int(fields[14])
            first = False
        stack.extend(int(child) for child in children)
    return total / tick


def rss_mib(pid: int) -> float:
    """Resident memory of a process and its descendants, MiB."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            total += int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS")))
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except (OSError, StopIteration):
            continue
        stack.extend(int(child) for child in children)
    return total / 1024


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def clients(url: str, rows: list[dict[str, Any]], seconds: float, n: int = 64) -> dict[str, Any]:
    import httpx

    latencies: list[float] = []
    errors: list[str] = []
    stop = time.monotonic() + seconds

    async def client(index: int, http: httpx.AsyncClient) -> None:
        position = index
        while time.monotonic() < stop:
            row = rows[position % len(rows)]
            position += n
            body = {"query": [row["problem"] + item(row)["response"]], "prompts": [row["problem"]]}
            started = time.monotonic()
            try:
                answer = await http.post(url, json=body)
                if answer.status_code != 200:
                    errors.append(f"{answer.status_code}: {answer.text[:80]}")
            except httpx.HTTPError as error:
                errors.append(type(error).__name__)
            latencies.append(time.monotonic() - started)

    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    async with httpx.AsyncClient(timeout=120, limits=limits) as http:
        await asyncio.gather(*(client(i, http) for i in range(n)))
    return {
        "requests": len(latencies),
        "errors": len(errors),
        "first_errors": errors[:3],
        **percentiles(latencies),
    }


def server_run(rows: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "prm_factory.cli",
        "reward",
        "serve",
        "--port",
        str(port),
        "--queue",
        "128",
    ]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        import httpx

        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        url = f"http://127.0.0.1:{port}/get_reward"
        asyncio.run(clients(url, rows[:64], 3.0))  # warm the connections and workers
        before = rss_mib(server.pid)
        first = asyncio.run(clients(url, rows, seconds / 2))
        middle = rss_mib(server.pid)
        second = asyncio.run(clients(url, rows, seconds / 2))
        after = rss_mib(server.pid)
        return {"clients": 64, "first_half": first, "second_half": second, "rss_mib": [before, middle, after]}
    finally:
        server.terminate()
        server.wait(timeout=30)


def competition_only(args: argparse.Namespace) -> dict[str, Any]:
    """`score_steps` on the 30-step responses, one at a time on one warmed worker: percentiles, mean, the
    CPU seconds of the whole process tree, and (`--verdicts`) every step verdict."""
    competition = competition_rows(args.processbench)[: args.competition_limit]
    out: dict[str, Any] = {"cpu": os.cpu_count(), "load_start": os.getloadavg()}
    one = RewardScorer(workers=1, competition=True)  # warmed for this traffic, as a deployment of it is
    one.warm()
    before = tree_cpu_s()
    timed, results = one_at_a_time(competition, one)
    out["cpu_s"] = tree_cpu_s() - before
    one.close()
    latencies = timed.pop("latencies")
    # which responses make the tail, so two runs show whether the same ones are slow
    timed["slowest"] = sorted(enumerate(latencies), key=lambda pair: -pair[1])[:5]
    out["score_steps_competition_30"] = timed
    if args.verdicts:
        args.verdicts.write_text(json.dumps(step_verdicts(results), indent=0), encoding="utf-8")
    out["load_end"] = os.getloadavg()
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processbench", type=Path, help="ProcessBench's math.json (only the math split)")
    parser.add_argument("--server-seconds", type=float, default=30.0)
    parser.add_argument("--limit", type=int, default=400, help="GSM8K-sized chains to time (of 1,230)")
    parser.add_argument("--competition-limit", type=int, default=60, help="30-step responses to time")
    parser.add_argument("--rounds", type=int, default=3, help="alternating label / reward rounds, GSM8K")
    parser.add_argument("--budget", type=float, nargs="*", default=[], help="budget_s values to time")
    parser.add_argument(
        "--competition-only",
        action="store_true",
        help="only the 30-step responses, one at a time on one worker (no label baseline, GSM8K or server)",
    )
    parser.add_argument("--verdicts", type=Path, help="write every competition step verdict here (JSON)")
    args = parser.parse_args(argv)
    if args.competition_only:
        if not args.processbench:
            parser.error("--competition-only needs --processbench")
        print(json.dumps(competition_only(args), indent=1))
        return
    gsm8k = gsm8k_rows()[: args.limit]
    out: dict[str, Any] = {"cpu": os.cpu_count(), "load_start": os.getloadavg()}
    verifier = label_verifier()
    in_caller = RewardScorer(deadline_s=None)
    one = RewardScorer(workers=1, competition=args.processbench is not None)
    in_worker = RewardScorer(workers=1, in_caller=False)
    two = RewardScorer(workers=2)
    for scorer in (in_caller, one, in_worker, two):
        scorer.warm()
    label_runs, steps_runs, batch_runs, caller_runs, worker_runs = [], [], [], [], []
    cpu: dict[str, list[float]] = {
        "label": [],
        "in_caller": [],
        "score_steps": [],
        "score_steps_in_worker": [],
        "score_batch": [],
    }
    for _ in range(args.rounds):
        for name, runs, call in (
            ("label", label_runs, lambda: label_path(gsm8k, verifier)),
            ("in_caller", caller_runs, lambda: one_at_a_time(gsm8k, in_caller)[0]),
            ("score_steps", steps_runs, lambda: one_at_a_time(gsm8k, one)[0]),
            ("score_steps_in_worker", worker_runs, lambda: one_at_a_time(gsm8k, in_worker)[0]),
            ("score_batch", batch_runs, lambda: batched(gsm8k, two)),
        ):
            before = tree_cpu_s()
            runs.append(call())
            cpu[name].append(tree_cpu_s() - before)
    out["cpu_s_per_round"] = cpu
    out["cpu_ratio_label_over"] = {
        name: statistics.median(a / b for a, b in zip(cpu["label"], cpu[name], strict=True) if b > 0)
        for name in ("in_caller", "score_steps", "score_steps_in_worker", "score_batch")
    }
    out["label_gsm8k"] = {"s_per_chain_per_round": [r["s_per_chain"] for r in label_runs]}
    out["in_caller_gsm8k"] = pooled(caller_runs)
    out["score_steps_gsm8k"] = pooled(steps_runs)
    out["score_steps_in_worker_gsm8k"] = pooled(worker_runs)
    out["score_batch_gsm8k_2_workers"] = {
        "per_s_per_round": [r["per_s"] for r in batch_runs],
        "s_per_chain_per_round": [r["s_per_chain"] for r in batch_runs],
    }
    out["ratio_label_over_in_caller_gsm8k"] = median_ratio(label_runs, caller_runs)
    out["ratio_label_over_score_steps_gsm8k"] = median_ratio(label_runs, steps_runs)
    out["ratio_label_over_score_steps_in_worker_gsm8k"] = median_ratio(label_runs, worker_runs)
    out["ratio_label_over_score_batch_gsm8k"] = median_ratio(label_runs, batch_runs)
    out["paired_gsm8k_one_worker"] = paired(gsm8k, one, verifier)[0]
    if args.processbench:
        competition = competition_rows(args.processbench)[: args.competition_limit]
        out["paired_competition_30"], base = paired(competition, one, verifier)
        for budget in args.budget:
            timed, cut = one_at_a_time(competition, one, budget)
            timed.pop("latencies")
            moves = verdict_moves(base, cut)
            out[f"score_steps_competition_30_budget_{budget:g}"] = {**timed, "moves": moves}
    one.close()
    in_worker.close()
    two.close()
    verifier.close()
    if args.server_seconds > 0:
        out["server"] = server_run(gsm8k, args.server_seconds)
    out["load_end"] = os.getloadavg()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
