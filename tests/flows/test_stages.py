"""The stage declarations (flows/stages.py): keys derived from them, chained downstream, checked for
undeclared inputs, the same in every process, and covering the product modules the stages' code imports."""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

import prm_factory.flows.resume as resume
from prm_factory.flows.stages import (
    EXTERNAL,
    GENERATION,
    KEYED_ELSEWHERE,
    Pipeline,
    Stage,
    UndeclaredInput,
    source_stage,
)
from prm_factory.schemas.records import Problem

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = {
    "schemas",
    "config",
    "sampling",
    "verifiers",
    "rollouts",
    "storage",
    "labels",
    "flows",
    "evaluation",
}


def inputs_for(pipeline: Pipeline) -> dict[str, object]:
    return {name: {"value": name} for name in sorted(pipeline.input_names())}


def problem(n: int) -> Problem:
    return Problem(problem_id=f"p{n}", source="test", domain="math", text=f"q{n}")


def fake_digest(changed: str):
    """A code digest in which only the source of module `changed` differs from the original."""

    def digest(modules: tuple[str, ...]) -> str:
        payload = json.dumps([m + ("*" if m == changed else "") for m in modules])
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    return digest


def all_keys(pipeline: Pipeline) -> dict[str, str]:
    inputs = inputs_for(pipeline)
    run = pipeline.run_keys(inputs)
    return {**run, **pipeline.chunk_keys(run, inputs, 0, [problem(1)])}


@pytest.mark.parametrize("module", sorted({m for s in GENERATION.stages for m in s.code}))
def test_a_changed_module_changes_its_stages_and_everything_downstream_only(module, monkeypatch) -> None:
    monkeypatch.setattr(resume, "code_digest", fake_digest(""))
    before = all_keys(GENERATION)
    monkeypatch.setattr(resume, "code_digest", fake_digest(module))
    after = all_keys(GENERATION)
    declares = {s.name for s in GENERATION.stages if module in s.code}
    expected = {
        s.name for s in GENERATION.stages if s.name in declares or GENERATION.upstream(s.name) & declares
    }
    assert {name for name in before if before[name] != after[name]} == expected
    assert expected  # the module is declared somewhere, so something changed


def test_a_segmentation_change_leaves_sampling_cached_and_invalidates_the_rest(monkeypatch) -> None:
    monkeypatch.setattr(resume, "code_digest", fake_digest(""))
    before = all_keys(GENERATION)
    monkeypatch.setattr(resume, "code_digest", fake_digest("prm_factory.sampling.segment"))
    after = all_keys(GENERATION)
    assert before["sample"] == after["sample"]
    assert all(before[s] != after[s] for s in ("segment", "verify", "rollouts", "rows"))
    monkeypatch.setattr(resume, "code_digest", fake_digest("prm_factory.rollouts"))
    rollouts_changed = all_keys(GENERATION)
    assert [
        before[s] == rollouts_changed[s] for s in ("sample", "segment", "verify", "rollouts", "rows")
    ] == [
        True,
        True,
        True,
        False,
        False,
    ]


def test_a_real_source_edit_changes_the_key(tmp_path, monkeypatch) -> None:
    package = tmp_path / "stagepkg_demo"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "work.py").write_text("RULE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    pipeline = Pipeline(
        (Stage("a", inputs=("x",), code=("json",)), Stage("b", consumes=("a",), code=("stagepkg_demo.work",)))
    )
    first = pipeline.run_keys({"x": 1})
    (package / "work.py").write_text("RULE = 2\n")
    resume.code_digest.cache_clear()  # digests are cached per process: a source edit is seen by the next one
    second = pipeline.run_keys({"x": 1})
    assert first["a"] == second["a"] and first["b"] != second["b"]


def test_an_input_change_reaches_only_the_stages_that_read_it_and_their_downstream() -> None:
    base = inputs_for(GENERATION)
    before = GENERATION.run_keys(base)
    after = GENERATION.run_keys({**base, "segmentation": {"value": "other"}})
    assert before["sample"] == after["sample"]
    assert all(before[s] != after[s] for s in ("segment", "verify", "rollouts"))
    rollouts_only = GENERATION.run_keys({**base, "rollouts": {"value": "k=3"}})
    assert [before[s] == rollouts_only[s] for s in ("sample", "segment", "verify", "rollouts")] == [
        True,
        True,
        True,
        False,
    ]


def test_an_undeclared_or_missing_input_fails_loudly() -> None:
    inputs = inputs_for(GENERATION)
    with pytest.raises(UndeclaredInput, match="typo"):
        GENERATION.run_keys({**inputs, "typo": 1})
    missing = {k: v for k, v in inputs.items() if k != "segmentation"}
    with pytest.raises(UndeclaredInput, match="segmentation"):
        GENERATION.run_keys(missing)
    assert GENERATION.run_keys(inputs)  # the full set is accepted


def test_a_declaration_that_consumes_an_unknown_or_later_stage_is_refused() -> None:
    with pytest.raises(ValueError, match="not declared before"):
        Pipeline((Stage("b", consumes=("a",)), Stage("a")))
    with pytest.raises(ValueError, match="twice"):
        Pipeline((Stage("a"), Stage("a")))
    with pytest.raises(ValueError, match="chunk stage"):
        Pipeline((Stage("rows", scope="chunk"), Stage("late", consumes=("rows",))))
    assert Pipeline((Stage("a"), Stage("b", consumes=("a",)))).upstream("b") == {"a"}


def test_keys_are_the_same_in_another_process() -> None:
    script = (
        "import json; from prm_factory.flows.stages import GENERATION\n"
        "from prm_factory.schemas.records import Problem\n"
        "inputs = {n: {'value': n, 'list': [3, 1]} for n in sorted(GENERATION.input_names())}\n"
        "part = [Problem(problem_id='p1', source='test', domain='math', text='q1')]\n"
        "run = GENERATION.run_keys(inputs)\n"
        "print(json.dumps({**run, **GENERATION.chunk_keys(run, inputs, 0, part)}))\n"
    )
    inputs = {n: {"value": n, "list": [3, 1]} for n in sorted(GENERATION.input_names())}
    run = GENERATION.run_keys(inputs)
    here = {**run, **GENERATION.chunk_keys(run, inputs, 0, [problem(1)])}
    for seed in ("0", "12345"):
        out = subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
        )
        assert json.loads(out.stdout) == here


def test_keys_keep_the_shape_they_had_before_the_declarations() -> None:
    """A key is `resume.stage_key` over the declared inputs and code, as before the declarations (so caches
    of unchanged stages are still found); the sample stage declares the CPU top-p plugin since 2026-11-25."""
    inputs = inputs_for(GENERATION)
    keys = GENERATION.run_keys(inputs)
    sample = resume.stage_key(
        "sample",
        {k: inputs[k] for k in ("problems", "engine", "sampling", "domain")},
        (
            "prm_factory.sampling.chains",
            "prm_factory.sampling.prompts",
            "prm_factory.sampling.vllm_sampler",
            "prm_factory.sampling.vllm_plugins",
            "prm_factory.sampling.cpu_top_p",
        ),
    )
    segment = resume.stage_key(
        "segment",
        {"from": sample, "segmentation": inputs["segmentation"], "verifier": inputs["verifier"]},
        ("prm_factory.sampling.segment", "prm_factory.labels.assemble", "prm_factory.flows.domains"),
    )
    assert (keys["sample"], keys["segment"]) == (sample, segment)
    external = inputs_for(EXTERNAL)
    assert EXTERNAL.run_keys(external)["rollouts"] == resume.stage_key("rollouts", external, ("rollouts",))


def product_imports(module: str) -> set[str]:
    """Product modules that `module`'s files import (module level and inside functions)."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    origin = Path(spec.origin)
    files = sorted(origin.parent.rglob("*.py")) if origin.name == "__init__.py" else [origin]
    found: set[str] = set()
    for file in files:
        for node in ast.walk(ast.parse(file.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
    return {name for name in found if name.split(".")[:2] in [["prm_factory", p] for p in PRODUCT]}


def covered(name: str, prefixes: set[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def uncovered(pipeline: Pipeline) -> dict[str, list[str]]:
    """Per stage: product imports of its declared code that it, its upstream and KEYED_ELSEWHERE miss."""
    gaps = {}
    for stage in pipeline.stages:
        keyed = set(stage.code).union(*(pipeline[u].code for u in pipeline.upstream(stage.name)))
        keyed |= set(KEYED_ELSEWHERE)
        imported = set().union(*(product_imports(m) for m in stage.code))
        missing = sorted(name for name in imported if not covered(name, keyed))
        if missing:
            gaps[stage.name] = missing
    return gaps


def test_every_declared_module_exists() -> None:
    for pipeline in (GENERATION, EXTERNAL):
        for stage in pipeline.stages:
            for module in stage.code:
                assert importlib.util.find_spec(module) is not None, (stage.name, module)
    for module in KEYED_ELSEWHERE:
        assert importlib.util.find_spec(module) is not None, module


def test_what_a_stages_code_imports_is_in_its_key() -> None:
    assert uncovered(GENERATION) == {}
    assert uncovered(EXTERNAL) == {}


def test_the_coverage_check_finds_a_module_left_off() -> None:
    # labels.assemble imports sampling.segment and rollouts.*; declared alone, those are not keyed
    lonely = Pipeline((Stage("segment", code=("prm_factory.labels.assemble",)),))
    gaps = uncovered(lonely)["segment"]
    assert "prm_factory.sampling.segment" in gaps and "prm_factory.sampling.chains" in gaps


def test_every_stage_reads_only_what_the_loop_gives_or_an_earlier_stage_writes() -> None:
    """The loop wires stages by the names they declare (issue 48): a read nothing provides fails here, not
    half-way through a chunk."""
    from prm_factory.flows.generation_run import CHUNK_GIVEN

    given = (*CHUNK_GIVEN, "done", "expected", "directory", "chains", "steps", "tally")
    assert GENERATION.unwired(given) == []
    assert EXTERNAL.unwired(("settings", "sampled", "config", "verifier", "run_id")) == []
    assert GENERATION.unwired(tuple(n for n in given if n != "params")) == ["sample.params"]
    assert all(stage.task is not None for stage in (*GENERATION.stages, *EXTERNAL.stages))
    assert source_stage("reference", frozenset()).writes == "reference"
