"""The rollout bench runs in simulation mode and reports what it claims (a smoke test, not a benchmark)."""

import importlib.util
import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_rollouts.py"


def _load_bench():
    spec = importlib.util.spec_from_file_location("bench_rollouts", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_rollouts"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_simulation_mode_reports_ratios(tmp_path, capsys):
    bench = _load_bench()
    out = tmp_path / "bench.json"
    assert bench.main(["--simulate", "weak", "--chains", "60", "--k", "4", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "SIMULATION" in printed
    (report,) = json.loads(out.read_text())
    assert report["mode"] == "simulation"
    assert report["baseline"]["rollouts"] > 0
    for candidate in report["candidates"]:
        assert 0 < candidate["rollout_ratio"] <= 1
        assert 0 <= candidate["agreement"] <= 1


def test_common_draws_replay_the_baseline_rollouts():
    bench = _load_bench()
    chains = bench.simulate_chains(bench.PRESETS["capable"], 40, seed=1)
    items = [c.item for c in chains]
    baseline, results = bench.run_bench(
        items,
        lambda label: bench.SimulatedSampler(chains, bench.PRESETS["capable"], seed=1),
        bench.simulated_grade,
        bench.GenerationParams(),
        k=4,
        draws="common",
        candidates={"bisect": {"name": "binary_search", "search": "bisect"}},
    )
    # a search can only disagree where exhaustive's own hard labels are not monotone
    (result,) = results
    assert result.agreement >= 1 - bench.non_monotone_share(baseline.values)


def test_engine_mode_takes_inputs_from_a_named_function(tmp_path, monkeypatch, capsys):
    """The --engine plumbing, fed here by the simulation (the real engine is wired by the flow)."""
    (tmp_path / "sim_engine_inputs.py").write_text(
        "import bench_rollouts as b\n"
        "def build():\n"
        "    chains = b.simulate_chains(b.PRESETS['weak'], 30, seed=2)\n"
        "    sampler = b.SimulatedSampler(chains, b.PRESETS['weak'], seed=2)\n"
        "    items = [c.item for c in chains]\n"
        "    return b.EngineInputs(items, sampler, b.simulated_grade, b.GenerationParams())\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    bench = _load_bench()
    out = tmp_path / "engine.json"
    assert bench.main(["--engine", "sim_engine_inputs:build", "--k", "4", "--json", str(out)]) == 0
    assert "== ENGINE sampler: simulation" in capsys.readouterr().out
    (report,) = json.loads(out.read_text())
    assert report["mode"] == "engine" and report["chains"] == 30
