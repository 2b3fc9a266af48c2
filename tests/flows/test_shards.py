"""Sharded runs (flows/shards.py): whole chunks per shard, the parent run id, shards of one logical run
committed into one dataset on the fake engine (tests/flows/conftest.py), and the runs columns on older
tables. The real-engine shards over a Prefect work pool are tests/e2e/test_shards.py."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from prm_factory.config.run_config import ConfigError, load_config
from prm_factory.flows.generation_run import generation_run
from prm_factory.flows.resume import chunks
from prm_factory.flows.shards import Shard, ShardRun, derived_parent_id, in_shard
from prm_factory.schemas.records import Problem, RunInfo, arrow_schema
from prm_factory.storage.dataset import Dataset
from prm_factory.storage.layout import TABLE_VERSIONS_COLUMN, table_uri
from prm_factory.storage.sql import query
from prm_factory.storage.stats import headline_stats, run_costs
from prm_factory.storage.versions import list_versions, summaries_table
from tests.storage.conftest import make_run

IDS = [f"gsm8k-{hashlib.sha256(str(i).encode()).hexdigest()[:16]}" for i in range(300)]
PROBLEMS = [Problem(problem_id=i, source="gsm8k", domain="math", text=i) for i in IDS]


# ---------------------------------------------------------------------------------------------- the slice


@pytest.mark.parametrize("count", [1, 2, 3, 5, 8])
def test_the_shards_take_whole_chunks_round_robin_disjoint_and_covering_every_problem(count: int) -> None:
    parts = chunks(PROBLEMS, 4)
    by_shard = [
        [c for i, c in enumerate(parts) if in_shard(i, Shard(index, count))] for index in range(count)
    ]
    seen = [p.problem_id for shard in by_shard for chunk in shard for p in chunk]
    assert sorted(seen) == sorted(IDS) and len(seen) == len(set(seen))
    assert max(map(len, by_shard)) - min(map(len, by_shard)) <= 1  # balanced to one chunk
    assert all(in_shard(i, None) for i in range(len(parts)))  # unsharded: every chunk


def test_a_chunk_is_the_same_batch_whatever_the_order_of_the_file() -> None:
    forward, backward = chunks(PROBLEMS, 4), chunks(PROBLEMS[::-1], 4)
    assert [[p.problem_id for p in c] for c in forward] == [[p.problem_id for p in c] for c in backward]
    assert forward != [PROBLEMS[i : i + 4] for i in range(0, 300, 4)]  # not the file's order


@pytest.mark.parametrize("text", ["2/2", "-1/2", "0/0", "1", "a/b", "1/2/3"])
def test_a_bad_shard_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(ConfigError) as error:
        Shard.parse(text)
    assert "\n" not in str(error.value)


def test_a_shard_parses_with_spaces_and_prints_back() -> None:
    assert Shard.parse(" 1 / 3 ") == Shard(1, 3) and str(Shard(0, 1)) == "0/1"


def test_the_parent_run_id_is_derived_from_the_config_and_n_or_given() -> None:
    a, b = load_config(None), load_config(None, {"sampling.n": 3})
    assert derived_parent_id(a, 2) == derived_parent_id(load_config(None), 2)
    assert derived_parent_id(a, 2) != derived_parent_id(a, 3)
    assert derived_parent_id(a, 2) != derived_parent_id(b, 2)
    assert ShardRun.of(a, None, None) is None
    assert ShardRun.of(a, "1/2", None) == ShardRun(Shard(1, 2), derived_parent_id(a, 2))
    assert ShardRun.of(a, "1/2", "fanout-7").record() == ("fanout-7", 1, 2)
    with pytest.raises(ConfigError, match="needs a shard"):
        ShardRun.of(a, None, "fanout-7")
    assert (
        ShardRun.of(a, "0/2", None).keeps_rejections() and not ShardRun.of(a, "1/2", None).keeps_rejections()
    )


# ------------------------------------------------------------------------------- shards on the fake engine


def rows(root: Path, version: int | None = None) -> dict[str, list[tuple]]:
    """Every committed row's key and labels, sorted; run ids left out (they differ by construction)."""
    ds = Dataset(str(root))
    chains = query(ds, "SELECT chain_id, problem_id, text, outcome FROM chains", version)
    steps = query(
        ds, "SELECT step_id, chain_id, step_index, verdict, mc_value, hard_label FROM steps", version
    )
    problems = query(ds, "SELECT problem_id FROM problems", version)
    return {
        "problems": sorted(tuple(r.values()) for r in problems.to_pylist()),
        "chains": sorted(tuple(r.values()) for r in chains.to_pylist()),
        "steps": sorted(tuple(r.values()) for r in steps.to_pylist()),
    }


def test_two_shards_commit_the_rows_of_one_unsharded_run_as_one_logical_run(
    prefect_server: None, fake_engine, flow_config, tmp_path: Path
) -> None:
    one_chunk_each = {"problems.limit": 4, "resume.chunk_problems": 1}
    whole = generation_run(flow_config(**one_chunk_each, **{"dataset.root": str(tmp_path / "one")}))
    assert whole.status == "succeeded", whole.error
    cfg = flow_config(**one_chunk_each, **{"dataset.root": str(tmp_path / "shards")})
    first = generation_run(cfg, "0/2")
    second = generation_run(cfg, "1/2")
    assert first.status == second.status == "succeeded"
    assert first.parent_run_id == second.parent_run_id == derived_parent_id(cfg, 2)
    assert (first.shard, second.shard) == ("0/2", "1/2")
    assert first.problems == second.problems == 2  # chunks 0, 2 and 1, 3

    assert rows(tmp_path / "shards") == rows(tmp_path / "one")
    ds = Dataset(str(tmp_path / "shards"))
    runs = query(ds, "SELECT run_id, parent_run_id, shard_index, shard_count FROM runs ORDER BY shard_index")
    assert runs["shard_index"].to_pylist() == [0, 1] and runs["shard_count"].to_pylist() == [2, 2]
    assert set(runs["parent_run_id"].to_pylist()) == {first.parent_run_id}
    # what the runs promise about drawing the same tokens again (an offline engine on this CPU)
    assert query(ds, "SELECT DISTINCT reproducibility FROM runs").to_pylist() == [
        {"reproducibility": "fixed-batch"}
    ]

    versions = summaries_table(list_versions(ds, with_counts=False)).to_pylist()
    assert [(v["logical_run"], v["shard"]) for v in versions[1:]] == [
        (first.parent_run_id, "0/2"),
        (first.parent_run_id, "1/2"),
    ]
    (cost,) = run_costs(ds)
    assert (cost["run_id"], cost["shards"], cost["status"]) == (first.parent_run_id, "2/2", "succeeded")
    assert cost["step_labels"] == first.steps + second.steps
    assert run_costs(ds, run_id=second.run_id)[0]["run_id"] == first.parent_run_id
    stats = headline_stats(ds)
    assert (stats["runs"], stats["logical_runs"]) == (2, 1)
    unsharded = run_costs(Dataset(str(tmp_path / "one")))
    assert [(c["run_id"], c["shards"], c["status"]) for c in unsharded] == [(whole.run_id, None, "succeeded")]


def test_a_failed_shard_rerun_alone_completes_the_run_without_duplicate_ids(
    prefect_server: None, fake_engine, flow_config, tmp_path: Path
) -> None:
    cfg = flow_config(**{"problems.limit": 4, "resume.chunk_problems": 1})
    assert generation_run(cfg, "0/2").status == "succeeded"
    fake_engine.fail_in, fake_engine.calls = {"rollouts"}, {}
    fake_engine.ok_calls = {"rollouts": 1}  # the shard's first chunk finishes, the second one dies
    failed = generation_run(cfg, "1/2", return_state=True).result(raise_on_failure=False).summary
    assert failed.status == "failed"
    ds = Dataset(str(tmp_path / "ds"))
    assert [(c["shards"], c["status"]) for c in run_costs(ds)] == [("1/2", "partial")]

    fake_engine.fail_in = set()
    rerun = generation_run(cfg, "1/2")
    assert rerun.status == "succeeded" and rerun.parent_run_id == failed.parent_run_id
    assert "sample" in rerun.cached_stages  # what the failed run finished is reused
    (cost,) = run_costs(ds)
    assert (cost["shards"], cost["status"]) == ("2/2", "succeeded")
    for table, key in (("chains", "chain_id"), ("steps", "step_id"), ("problems", "problem_id")):
        counted = query(ds, f"SELECT count(*) AS n, count(DISTINCT {key}) AS d FROM {table}").to_pylist()[0]
        assert counted["n"] == counted["d"] > 0
    assert query(ds, "SELECT count(DISTINCT problem_id) AS n FROM chains").to_pylist() == [{"n": 4}]


def test_skip_labeled_shards_pick_the_same_problems_after_a_sibling_committed(
    prefect_server: None, fake_engine, flow_config
) -> None:
    cfg = flow_config(**{"problems.limit": 2, "problems.skip_labeled": True})
    first = generation_run(cfg, "0/2")
    second = generation_run(cfg, "1/2")
    assert first.problems + second.problems == 2
    later = generation_run(cfg, "0/2", "another-run")  # another logical run: those two are labelled now
    assert later.problems + generation_run(cfg, "1/2", "another-run").problems == 2
    chains = query(Dataset(first.dataset_root), "SELECT count(DISTINCT problem_id) AS n FROM chains")
    assert chains.to_pylist() == [{"n": 4}]


# --------------------------------------------------------------------- the runs columns on an older table


def test_a_runs_table_from_before_the_shard_columns_grows_them_and_old_versions_still_read(
    tmp_path: Path,
) -> None:
    old_fields = [
        f
        for f in dataclasses.fields(RunInfo)
        if f.name not in ("parent_run_id", "shard_index", "shard_count", "reproducibility")
    ]
    OldRunInfo = dataclasses.make_dataclass("RunInfo", [(f.name, f.type, f) for f in old_fields], frozen=True)
    root = tmp_path / "ds"
    old_schema = arrow_schema(OldRunInfo).append(pa.field(TABLE_VERSIONS_COLUMN, pa.string(), nullable=True))
    DeltaTable.create(table_uri(str(root), "runs"), schema=old_schema)
    ds = Dataset(str(root))
    old = make_run("old")
    old_run = OldRunInfo(**{f.name: getattr(old.run, f.name) for f in old_fields})
    assert ds.commit_run(old_run, *old.args()[1:]) == 1
    assert "parent_run_id" not in DeltaTable(table_uri(str(root), "runs")).schema().to_arrow().names

    new = make_run("new", problem_offset=5)
    sharded = dataclasses.replace(
        new.run, parent_run_id="parent-1", shard_index=0, shard_count=1, reproducibility="fixed-batch"
    )
    assert ds.commit_run(sharded, *new.args()[1:]) == 2

    assert [(c["run_id"], c["shards"]) for c in run_costs(ds, 1)] == [(old.run.run_id, None)]
    assert sorted((c["run_id"], c["shards"]) for c in run_costs(ds, 2)) == sorted(
        [(old.run.run_id, None), ("parent-1", "1/1")]
    )
    summaries = list_versions(ds, with_counts=False)
    assert [(s.logical_run, s.shard) for s in summaries[1:]] == [(old.run.run_id, None), ("parent-1", "0/1")]
    assert query(ds, "SELECT count(parent_run_id) AS n FROM runs", version=1).to_pylist() == [{"n": 0}]
    promised = "SELECT reproducibility FROM runs ORDER BY started_at, run_id"
    assert query(ds, promised, version=1).to_pylist() == [{"reproducibility": None}]
    assert {r["reproducibility"] for r in query(ds, promised).to_pylist()} == {None, "fixed-batch"}


# ------------------------------------------------------------------------------ fan-out over a work pool


def test_the_fanout_deploys_by_module_path_and_submits_one_flow_run_per_shard(
    prefect_server: None, flow_config
) -> None:
    """Against the test server, no worker: the pool, the deployment and the flow runs a worker would take."""
    from prefect.client.orchestration import get_client

    from prm_factory.flows.fanout import (
        deploy_generation,
        ensure_work_pool,
        shard_states,
        shards_to_run,
        submit_shards,
    )

    assert ensure_work_pool("prm-test-pool") == "process"
    assert ensure_work_pool("prm-test-pool") == "process"  # found the second time
    deployment = deploy_generation("prm-test-pool")
    cfg = flow_config()
    submitted = submit_shards(deployment, cfg, shards_to_run(None, 2), "parent-x")
    assert [str(s.shard) for s in submitted] == ["0/2", "1/2"]
    assert set(shard_states(submitted).values()) == {"SCHEDULED"}
    with get_client(sync_client=True) as client:
        runs = [client.read_flow_run(s.flow_run_id) for s in submitted]
        found = client.read_deployment_by_name(deployment)
        for run in runs:
            client.delete_flow_run(run.id)
    assert (
        found.entrypoint == "prm_factory.flows.generation_run.generation_run"
        and found.work_pool_name == "prm-test-pool"
    )
    assert [(r.parameters["shard"], r.parameters["parent_run_id"]) for r in runs] == [
        ("0/2", "parent-x"),
        ("1/2", "parent-x"),
    ]
    assert runs[0].parameters["config"]["dataset"]["root"] == cfg.model_dump(mode="json")["dataset"]["root"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--shards", "2"], "--shards N needs --pool NAME"),
        (["--shard", "2/2"], "the index counts from 0"),
        (["--parent-run", "p"], "--parent-run needs --shard I/N"),
        (["--pool", "gpus"], "give --shards N (every shard) or --shard I/N"),
    ],
)
def test_the_run_command_refuses_a_bad_shard_request_in_one_line(
    arguments: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from prm_factory.cli import app

    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # never reached: refused before
    result = CliRunner().invoke(app, ["run", "--dataset", str(tmp_path / "ds"), *arguments])
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
