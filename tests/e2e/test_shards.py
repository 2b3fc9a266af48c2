"""One run as two shards on two Prefect workers into one dataset, one shard killed with SIGKILL
mid-rollouts and rerun alone; what the offline engine promises about drawing the same tokens again; and
engine arguments read back from an engine.

The shards and the single-process reference run all use offline engines (the reference and the killed
shard's rerun the session's, each shard's first run one of its own in its worker's process) at temperature
0.7, n = 2, k = 2: a chunk reaches its engine as one batch in one canonical order with an empty prefix cache,
and shards take whole chunks, so the runs submit the same batches and draw the same tokens on any CPU whose
kernels are deterministic for a fixed batch (sampling/reproducibility.py: `fixed-batch`). Whether a request
draws the same tokens alone or in another batch is promised only by batch-invariant kernels; the test of that
reads the engine's record.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytestmark = [pytest.mark.engine, pytest.mark.slow]

QUESTIONS = [  # one problem a chunk: two chunks for each of two shards (flows.shards.in_shard)
    ("Tom has 3 apples and buys 4 more. How many apples does he have?", "3+4=<<3+4=7>>7\n#### 7"),
    ("A box holds 6 eggs. How many eggs are in 2 boxes?", "6*2=<<6*2=12>>12\n#### 12"),
    ("Sam reads 5 pages a day for 3 days. How many pages?", "5*3=<<5*3=15>>15\n#### 15"),
    ("Ann had 10 coins and spent 4. How many are left?", "10-4=<<10-4=6>>6\n#### 6"),
]
TINY = {
    "problems.limit": 4,
    "sampling.n": 2,
    "sampling.temperature": 0.7,
    "sampling.max_tokens": 64,
    "rollouts.k": 2,
    "rollouts.temperature": 0.7,
    "rollouts.max_steps": 2,
    "rollouts.max_tokens": 32,
    "resume.chunk_problems": 1,  # a shard of two problems stages two chunks: the kill lands between them
}
POOL = "prm-e2e-shards"
DEADLINE = 900  # seconds for any one wait below


def pids_of_flow_run(flow_run_id: str) -> list[int]:
    """Processes of one flow run (its process and any it started), by the flow run id Prefect's worker puts
    in their environment."""
    wanted = f"PREFECT__FLOW_RUN_ID={flow_run_id}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if wanted in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:  # gone, or not ours to read
            continue
    return found


def kill_flow_run(flow_run_id: str) -> None:
    for pid in pids_of_flow_run(flow_run_id):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture()
def workers(prefect_server: None, tmp_path: Path) -> Iterator[list[Path]]:
    """Two process workers on one pool, each taking one flow run at a time; their output files."""
    from prefect.settings import PREFECT_API_URL

    from prm_factory.flows.fanout import ensure_work_pool

    ensure_work_pool(POOL)
    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(), "PREFECT_WORKER_QUERY_SECONDS": "2"}
    prefect = str(Path(sys.executable).with_name("prefect"))
    logs, processes = [], []
    for index in range(2):
        log = tmp_path / f"worker-{index}.log"
        command = [prefect, "worker", "start", "--pool", POOL, "--type", "process"]
        processes.append(
            subprocess.Popen(
                [*command, "--limit", "1", "--name", f"e2e-worker-{index}"],
                stdout=log.open("w"),
                stderr=subprocess.STDOUT,
                env=env,
                cwd=tmp_path,
                start_new_session=True,
            )
        )
        logs.append(log)
    try:
        yield logs
    finally:
        for process in processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        # one grace for both: a Prefect worker outlasted 60 s after SIGTERM, each (120 s of teardown)
        deadline = time.monotonic() + 10
        for process in processes:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def wait_until_gone(flow_run_id: str) -> None:
    """Until no process of the flow run is left (SIGKILLed, each is gone once its parent reaps it)."""
    deadline = time.monotonic() + 60
    while pids_of_flow_run(flow_run_id):
        assert time.monotonic() < deadline, f"a process of flow run {flow_run_id} outlived its SIGKILL"
        time.sleep(0.2)


def committed_rows(root: Path) -> dict[str, list[tuple]]:
    """Keys and labels of every committed row, sorted (run ids left out: they differ by construction)."""
    from prm_factory.storage.dataset import Dataset
    from prm_factory.storage.sql import query

    ds = Dataset(str(root))
    sqls = {
        "problems": "SELECT problem_id FROM problems",
        "chains": "SELECT chain_id, problem_id, text, outcome FROM chains",
        "steps": "SELECT step_id, chain_id, step_index, verdict, mc_value, hard_label, consensus FROM steps",
    }
    return {kind: sorted(tuple(r.values()) for r in query(ds, sql).to_pylist()) for kind, sql in sqls.items()}


def wait_for_log(logs: list[Path], *needles: str) -> str:
    """The first worker log line holding every needle (the flow runs' logs reach their worker's output)."""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        for log in logs:
            for line in log.read_text(errors="replace").splitlines():
                if all(needle in line for needle in needles):
                    return line
        time.sleep(0.2)  # the kill below must land while the shard's rollouts are still going
    raise AssertionError(f"no worker log line with {needles}")


PARAMS = {"n": 2, "temperature": 0.7, "top_p": 0.95, "max_tokens": 24}


def draws(engine, batch: list[str]) -> dict[str, list[str]]:
    """Each prompt's sampled texts, from one engine call over `batch`."""
    from prm_factory.sampling.protocol import GenerationParams

    out = engine.generate(batch, GenerationParams(**PARAMS))
    return {p: [g.text for g in gens] for p, gens in zip(batch, out, strict=True)}


def test_a_batch_draws_the_same_tokens_whenever_it_is_submitted(engine) -> None:
    """The same prompts in the same order draw the same tokens however often they are submitted and
    whatever ran on the engine before (other batches, whose prefixes were cached): what lets a shard, a rerun
    or a resumed chunk reproduce a run's chains."""
    assert engine.seed_mode == "request"
    assert engine.reproducibility.mode in ("fixed-batch", "batch-invariant")
    prompts = [engine.render_chat(None, question) for question, _ in QUESTIONS]
    first = draws(engine, prompts)
    draws(engine, prompts[::-1])  # other batches in between; what they draw is not compared
    draws(engine, [prompts[1]])
    assert draws(engine, prompts) == first
    assert any(
        a != b for a, b in first.values()
    )  # sampled, not greedy: the two samples of some prompt differ


def test_calls_in_a_batch_scope_reuse_each_others_prefixes_and_repeat_whatever_ran_before(engine) -> None:
    """A chunk's rollout rounds run in one batch scope (labels/sources/mc.py): the first call starts from an
    empty prefix cache, a later call reuses what the earlier ones computed (outside a scope it recomputes),
    and the scope's draws repeat whatever ran on the engine before it, so a run, a shard and a rerun of the
    chunk still draw the same tokens."""
    from prm_factory.sampling.protocol import batch_scope

    prompts = [engine.render_chat(None, question) for question, _ in QUESTIONS]
    # step prefixes two full KV blocks long or more (CPU blocks hold 128 tokens; the story is 231 tokens
    # after a chat prompt), continued in the second call; 471 tokens took 60 s against 45 s, idle
    story = " ".join(f"On day {day} Tom counted {day % 5 + 1} more apples." for day in range(1, 21))
    begun = [prompts[0] + story, prompts[1] + story.replace("Tom", "Ann")]
    continued = [prefix + " So in all" for prefix in begun]

    def hits(batch: list[str]) -> tuple[dict[str, list[str]], int]:
        queried, hit = engine.prefix_cache_totals()
        drawn = draws(engine, batch)
        return drawn, engine.prefix_cache_totals()[1] - hit

    def scoped() -> tuple[dict[str, list[str]], dict[str, list[str]], int, int]:
        with batch_scope(engine):
            (first, first_hits), (second, second_hits) = hits(begun), hits(continued)
        return first, second, first_hits, second_hits

    draws(engine, continued)  # cached now, but a scope starts from an empty cache
    first, second, first_hits, second_hits = scoped()
    draws(engine, prompts[::-1])  # other batches between the two scopes
    draws(engine, [prompts[3]])
    again = scoped()
    _, unscoped_hits = hits(continued)  # the same call outside a scope, after the same first call
    assert (first, second) == again[:2]
    assert second_hits > 0 and second_hits == again[3]  # the prompts' prefixes came from the first call
    assert unscoped_hits < second_hits


def test_alone_or_in_another_batch_is_the_same_only_where_the_engine_says_batch_invariant(engine) -> None:
    """A request alone, or in a batch of other shape or order, draws the same tokens only on batch-invariant
    kernels (vLLM's batch-invariant mode on GPUs). Everywhere else the engine and the runs row say
    `fixed-batch`, with the numerics the promise needs, and in this suite the draws differ: its engines
    round by the batch's shape on every machine (tests/conftest.py), which forces the non-invariant path."""
    from prm_factory.sampling.vllm_plugins import batch_noise_scale
    from prm_factory.sampling.vllm_sampler import engine_record

    prompts = [engine.render_chat(None, question) for question, _ in QUESTIONS]
    together = draws(engine, prompts)
    alone = draws(engine, [prompts[1]])
    reordered = draws(engine, [prompts[2], prompts[0]])
    same = alone[prompts[1]] == together[prompts[1]] and all(reordered[p] == together[p] for p in reordered)
    record = engine_record(engine.settings)["reproducibility"]
    assert record["mode"] == engine.reproducibility.mode
    if engine.reproducibility.mode == "batch-invariant":
        assert same
    else:
        assert record["mode"] == "fixed-batch" and "batch" in record["reason"]
        assert record["numerics"]["dtype"] == engine.host_choice.dtype
        # the suite's engines round by the batch's shape (tests/conftest.py), as AVX-512 CPUs do: what shares
        # a batch changes a request's draws here, on any machine, and the fixed-batch tests pass anyway
        assert batch_noise_scale() > 0 and not same


def test_a_seeded_request_keeps_its_draws_beside_unseeded_ones(engine) -> None:
    """vLLM's CPU sampler once dropped every seed of a batch that held an unseeded request
    (vllm-project/vllm#51226, fixed in August 2026): a seeded request's tokens must not depend on whether
    its neighbours carry seeds. Every request runs its whole length (`ignore_eos`): one batch shape."""
    from vllm import SamplingParams

    from prm_factory.sampling.vllm_sampler import submit_as_one_batch

    prompts = [engine.render_chat(None, question) for question, _ in QUESTIONS[:2]]

    def tokens(neighbour_seed: int | None) -> list[tuple[int, ...]]:
        params = [
            SamplingParams(seed=seed, temperature=0.8, max_tokens=16, ignore_eos=True)
            for seed in (42, neighbour_seed)
        ]
        with engine._lock:
            outputs = engine._call(submit_as_one_batch, engine._llm, prompts, params)
        return [tuple(output.outputs[0].token_ids) for output in outputs]

    seeded = tokens(7)
    mixed = [tokens(None) for _ in range(3)]
    assert [m[0] for m in mixed] == [seeded[0]] * 3
    assert len({m[1] for m in mixed}) > 1  # the unseeded neighbour drew freely each time


def test_two_shards_on_two_workers_equal_one_run_and_a_killed_shard_reruns_alone(
    engine, workers: list[Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Both shards start as flow runs of the deployment on the pool's two workers, each on an engine of its
    own; shard 1 is killed once its first chunk is sampled and reruns alone in this process, as
    `prm-factory run --shard 1/2 --parent-run ID` reruns it, on the session's engine beside the single run
    (a rerun on a worker paid a third engine start, a minute or more on 2 cores, after the kill). The rows
    of the shards, drawn on three engines in three processes, equal the single run's."""
    from prm_factory.config.run_config import load_config
    from prm_factory.flows.fanout import deploy_generation, submit_shards, wait_for_shards
    from prm_factory.flows.generation_run import generation_run
    from prm_factory.flows.shards import Shard, absolute_paths, derived_parent_id
    from prm_factory.storage.dataset import Dataset
    from prm_factory.storage.sql import query
    from prm_factory.storage.stats import run_costs
    from prm_factory.storage.versions import list_versions

    problems = tmp_path / "problems.jsonl"
    problems.write_text("".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a in QUESTIONS))

    def config(root: str):
        return absolute_paths(
            load_config(None, {**TINY, "problems.path": str(problems), "dataset.root": root})
        )

    cfg = config(str(tmp_path / "sharded"))
    parent = derived_parent_id(cfg, 2)
    deployment = deploy_generation(POOL)
    started = time.perf_counter()
    first = submit_shards(deployment, cfg, [Shard(0, 2), Shard(1, 2)], parent)
    # the single-process reference run goes on beside the shards, on this process's engine (the session's):
    # it submits the same batches, one chunk at a time, as the shards' engines do. The flows are called for
    # their return value, which Prefect keeps in memory: `run_generation` reads it back from the final state,
    # which a Prefect server on SQLite under load once answered without its data (MissingResult)
    here = ThreadPoolExecutor(max_workers=2, thread_name_prefix="here")
    single_run = here.submit(generation_run, config(str(tmp_path / "single")))
    try:
        with caplog.at_level(logging.INFO, logger="prefect"):
            # shard 1 is killed once its first chunk's rollouts began (its second chunk is not staged then)
            begin = wait_for_log(workers, "event=begin", "shard=1/2")
            run_id = begin.split("run_id=")[1].split()[0]
            wait_for_log(workers, f"run_id={run_id}", "stage=rollouts", "event=start")
            kill_flow_run(first[1].flow_run_id)
            wait_until_gone(first[1].flow_run_id)  # nothing of the killed run left behind
            # the killed shard alone again, at once, beside shard 0 and the single run
            rerun = here.submit(generation_run, cfg, "1/2", parent)
            killed = wait_for_shards(first[1:], poll_seconds=1, timeout_seconds=DEADLINE)
            states = wait_for_shards(first[:1], poll_seconds=2, timeout_seconds=DEADLINE)
            single, again = single_run.result(timeout=DEADLINE), rerun.result(timeout=DEADLINE)
    finally:
        here.shutdown(wait=True)
    seconds = time.perf_counter() - started
    assert single.status == "succeeded", single.error
    assert again.status == "succeeded", again.error
    assert (again.shard, again.parent_run_id) == ("1/2", parent)
    assert killed[first[1].flow_run_id] in ("CRASHED", "FAILED")
    assert states == {first[0].flow_run_id: "COMPLETED"}

    ds = Dataset(str(tmp_path / "sharded"))
    versions = list_versions(ds, with_counts=False)
    # one version per shard, in whichever order they committed; the logical run is partial after the first
    assert sorted((v.logical_run, v.shard) for v in versions[1:]) == [(parent, "0/2"), (parent, "1/2")]
    partial = run_costs(ds, version=versions[1].version)
    assert [(c["run_id"], c["shards"], c["status"]) for c in partial] == [(parent, "1/2", "partial")]

    # step ids hash the labelers' code: an edit of the tree while the test runs would show up as a row diff
    labelers = "SELECT DISTINCT verifier_versions FROM runs"
    assert query(ds, labelers).to_pylist() == query(Dataset(str(tmp_path / "single")), labelers).to_pylist()
    # the promise the rows rest on, recorded by every run: the same batches on the same numerics
    promises = {
        (row["reproducibility"], json.dumps(json.loads(row["engine"])["reproducibility"]["numerics"]))
        for root in ("sharded", "single")
        for row in query(
            Dataset(str(tmp_path / root)), "SELECT reproducibility, engine FROM runs"
        ).to_pylist()
    }
    assert len(promises) == 1 and next(iter(promises))[0] == "fixed-batch", promises
    assert committed_rows(tmp_path / "sharded") == committed_rows(tmp_path / "single")
    for table, key in (("chains", "chain_id"), ("steps", "step_id"), ("problems", "problem_id")):
        counted = query(ds, f"SELECT count(*) AS n, count(DISTINCT {key}) AS d FROM {table}").to_pylist()[0]
        assert counted["n"] == counted["d"] > 0, table
    (cost,) = run_costs(ds)
    assert (cost["run_id"], cost["shards"], cost["status"]) == (parent, "2/2", "succeeded")
    # only the rerun can find a cached stage (the other runs started on empty caches): the chunk the
    # killed shard had sampled is reused, and its other chunk is sampled now
    (flow_run,) = {
        record.flow_run_name
        for record in caplog.records
        if f"run_id={again.run_id}" in record.getMessage() and hasattr(record, "flow_run_name")
    }
    sampled = [
        record.getMessage()
        for record in caplog.records
        if getattr(record, "flow_run_name", None) == flow_run
        and getattr(record, "task_run_name", "").startswith("sample-chains")
        and "Finished in state" in record.getMessage()
    ]
    assert any("Cached" in m for m in sampled) and not all("Cached" in m for m in sampled), sampled
    print(f"a single-process run beside two shards with a kill, then the rerun: {seconds:.0f}s")


def test_engine_arguments_from_the_config_reach_the_engine_and_its_worker(engine) -> None:
    """The engine arguments the default config derives, where vLLM's own default differs, as the session's
    engine's scheduler and its worker process hold them: chunked prefill off (asked through the same engine
    argument dict as `max_num_seqs` and every pass-through argument, whose config-to-dict mapping
    tests/sampling/test_engine_args.py pins) and the dtype the host chose. Read from the engine the e2e runs
    use, instead of a start of its own (about 170 s on a 2-core machine)."""
    from prm_factory.sampling.vllm_sampler import engine_kwargs, seeding_plan

    asked = engine_kwargs(engine.settings) | seeding_plan(engine.settings, cpu=True).kwargs
    assert asked["enable_chunked_prefill"] is False
    llm = engine._llm
    config = llm.llm_engine.vllm_config
    frontend = (config.scheduler_config.enable_chunked_prefill, str(config.model_config.dtype))
    workers = llm.collective_rpc(  # the lambda travels to the worker process (see the `engine` fixture)
        lambda worker: (
            worker.vllm_config.scheduler_config.enable_chunked_prefill,
            str(worker.vllm_config.model_config.dtype),
        )
    )
    wanted = (False, f"torch.{engine.host_choice.dtype}")
    assert frontend == wanted and [tuple(w) for w in workers] == [wanted]
    # the factory started this engine, so its worker runs our vLLM plugin (only ours: vllm_plugins.py)
    plugged = llm.collective_rpc(
        lambda worker: getattr(
            __import__("vllm.v1.sample.ops.topk_topp_sampler", fromlist=["x"]).apply_top_k_top_p,
            "prm_factory",
            False,
        )
    )
    assert plugged == [True]
