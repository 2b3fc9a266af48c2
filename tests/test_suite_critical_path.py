"""bench/suite_critical_path.py reads the suite's phase timings (recorded by tests/conftest.py) and names the
worker the suite waits on, its longest tests, and each xdist group's time."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "suite_critical_path", ROOT / "bench" / "suite_critical_path.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


def phase(nodeid: str, when: str, start: float, stop: float, worker: str) -> dict[str, object]:
    return {"nodeid": nodeid, "when": when, "start": start, "stop": stop, "worker": worker}


PHASES = [
    phase("tests/e2e/test_a.py::test_one@heavy", "setup", 100.0, 160.0, "gw0"),  # a session fixture's start
    phase("tests/e2e/test_a.py::test_one@heavy", "call", 160.0, 170.0, "gw0"),
    phase("tests/e2e/test_a.py::test_two@heavy", "call", 170.0, 300.0, "gw0"),
    phase("tests/unit/test_b.py::test_x", "call", 100.0, 140.0, "gw1"),
    phase("tests/unit/test_b.py::test_y", "call", 140.0, 150.0, "gw1"),
    phase("tests/unit/test_b.py::test_y", "teardown", 150.0, 151.0, "gw1"),
    phase("tests/unit/test_b.py::test_z[a@b]", "call", 151.0, 151.0, "gw1"),  # an `@` in a parameter id
]


def test_the_critical_worker_is_the_last_to_finish_and_its_tests_are_listed_longest_first(tmp_path: Path):
    module = script()
    path = tmp_path / "timings.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in PHASES))
    phases = module.read_phases(path)
    spans = {span.worker: span for span in module.worker_spans(phases)}
    assert spans["gw0"].busy == 200.0 and spans["gw0"].tests == 2 and spans["gw1"].tests == 3
    assert spans["gw1"].busy == 51.0 and spans["gw1"].last_stop == 151.0
    lines = module.report(phases)
    assert lines[0].startswith("wall (first start to last stop): 200 s; test time summed over workers: 251 s")
    assert any(line.split()[:5] == ["gw1", "3", "51", "51", "149"] for line in lines)  # its idle tail
    critical = lines.index("critical path: worker gw0, its 25 longest tests (setup + call + teardown)")
    assert lines[critical + 1 :] == [
        "   130.0 s  tests/e2e/test_a.py::test_two",
        "    70.0 s  tests/e2e/test_a.py::test_one",
    ]
    groups = module.group_seconds(phases)
    assert groups == {"heavy": (200.0, {"gw0"}), module.NO_GROUP: (51.0, {"gw1"})}


def test_two_files_print_the_wall_ratio(tmp_path: Path, capsys):
    module = script()
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    before.write_text("".join(json.dumps(p) + "\n" for p in PHASES))
    after.write_text(json.dumps(phase("tests/t.py::test_z", "call", 0.0, 50.0, "gw0")) + "\n")
    assert module.main([str(before), str(after)]) == 0
    assert "wall ratio, first / second: 4.00x (200 s / 50 s)" in capsys.readouterr().out


def test_the_suite_records_each_phase_with_its_worker(tmp_path: Path, monkeypatch):
    """The hooks of tests/conftest.py, driven as the xdist controller drives them (a report from a worker
    carries that worker's gateway), write the file the script reads."""
    import tests.conftest as suite

    path = tmp_path / "timings.jsonl"
    monkeypatch.setenv(suite.TIMINGS_ENV, str(path))
    monkeypatch.setattr(suite, "_TIMINGS", None)
    controller = SimpleNamespace(rootpath=tmp_path)
    suite.pytest_configure(controller)
    report = SimpleNamespace(
        nodeid="tests/x.py::test_y@g",
        when="call",
        start=1.0,
        stop=3.5,
        node=SimpleNamespace(gateway=SimpleNamespace(id="gw1")),
        user_properties=[("other", 1), (suite.CPU_PROPERTY, [0.75, 1.5])],  # as tests/phase_cpu.py adds it
    )
    suite.pytest_runtest_logreport(report)
    suite.pytest_unconfigure(controller)
    (recorded,) = script().read_phases(path)
    assert (recorded.worker, recorded.group, recorded.test, recorded.seconds) == (
        "gw1",
        "g",
        "tests/x.py::test_y",
        2.5,
    )
    assert (recorded.cpu, recorded.child_cpu) == (0.75, 1.5)
    suite.pytest_configure(SimpleNamespace(rootpath=tmp_path, workerinput={}))  # a worker records nothing
    suite.pytest_runtest_logreport(report)
    assert suite._TIMINGS is None


def test_a_long_parametrised_id_is_cut_in_the_report(tmp_path: Path):
    module = script()
    long_id = "tests/x.py::test_bomb[" + "is \\(" * 200 + "]"
    path = tmp_path / "timings.jsonl"
    path.write_text(json.dumps(phase(long_id, "call", 0.0, 5.0, "gw0")) + "\n")
    last = module.report(module.read_phases(path))[-1]
    assert len(last) < 200 and last.endswith(f"({len(long_id)} chars)") and long_id[:160] in last
    assert module.shortened("tests/x.py::test_short") == "tests/x.py::test_short"


def test_auto_takes_one_worker_more_than_the_cores_up_to_the_cap(monkeypatch):
    """`-n auto` (pyproject.toml): a worker beyond the cores fills the time tests wait on containers, sleeps
    and subprocesses; the cap holds on large machines."""
    import tests.conftest as suite

    counts = {}
    for cores in (1, 2, 3, 16):
        monkeypatch.setattr(suite.os, "sched_getaffinity", lambda pid, n=cores: set(range(n)))
        counts[cores] = suite.pytest_xdist_auto_num_workers(SimpleNamespace())
    assert counts == {1: 2, 2: 3, 3: 4, 16: suite.MAX_WORKERS} and suite.MAX_WORKERS == 4


def test_the_cpu_of_each_phase_is_measured_in_the_process_that_ran_it(pytester):
    """tests/phase_cpu.py in a pytest run of its own: a test that computes is charged its CPU, one that
    waits on a child process it reaps is charged the child's, and one that sleeps next to nothing."""
    pytester.makeconftest("pytest_plugins = ['tests.phase_cpu']")
    pytester.makepyfile(
        test_work="""
import subprocess, sys, time

def test_computes():
    end = time.process_time() + 0.4
    while time.process_time() < end:
        pass

def test_waits_on_a_child():
    code = "import time\\nend = time.process_time() + 0.4\\nwhile time.process_time() < end: pass"
    subprocess.run([sys.executable, "-c", code], check=True)

def test_sleeps():
    time.sleep(0.4)
"""
    )
    result = pytester.inline_run("-p", "no:cacheprovider", "-n", "0")
    calls = {
        r.nodeid.split("::")[1]: dict(r.user_properties) for r in result.getreports() if r.when == "call"
    }
    names = ("test_computes", "test_waits_on_a_child", "test_sleeps")
    own, child = zip(*(calls[name]["prm_factory_cpu_s"] for name in names), strict=True)
    assert own[0] >= 0.35 and child[0] < 0.1
    assert child[1] >= 0.35 and own[1] < 0.3
    assert own[2] < 0.1 and child[2] < 0.1
