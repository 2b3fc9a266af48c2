"""Code datasets as public benchmarks ship them: loaded rows, reference solutions, wrong programs, speed.

For each shipped set (data/humaneval, data/mbpp, data/apps, data/code_contests, data/livecodebench) it
prints:

- rows loaded / rows in the file, and every rejected row (file, line, field, reason);
- reference solutions graded `correct` (HumanEval's canonical solutions, MBPP's code, APPS and
  CodeContests solutions, LiveCodeBench's reference_solutions.json), and every one that is not, with why;
- plausible wrong programs (function sets: the reference with its body replaced by `return None`, its
  first comparison flipped, its first integer constant off by one; CodeContests: its
  `incorrect_solutions`): how many were graded `correct`, and how many of those are false passes, i.e.
  programs the dataset's own test code, run directly (as a plain script in the sandbox), rejects;
- throughput of the proxy path (function sets whose test code runs unchanged in the judge) and of the
  stdin path: the same grading jobs on the warm pool and with one fresh container per sandbox job.

    python bench/bench_code_datasets.py                      # everything (a few minutes on 2 cores)
    python bench/bench_code_datasets.py --sets humaneval --mutants 0 --throughput 0

Targets (issue 14): HumanEval 164/164 loaded and passing; every MBPP-sanitized and stdin reference
passes; 0 false passes; warm pool >= 8x fresh containers on both paths.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prm_factory.schemas.code_problems import load_code_problems  # noqa: E402
from prm_factory.schemas.code_spec import CodeTests, StdioTests, load_tests  # noqa: E402
from prm_factory.schemas.records import Problem  # noqa: E402
from prm_factory.verifiers.code.image import ensure_image  # noqa: E402
from prm_factory.verifiers.code.sandbox import NO_OPTIONS, JobOptions, SandboxLimits, SandboxPool, run_once  # noqa: E402
from prm_factory.verifiers.code.verifier import CodeVerifier  # noqa: E402

DATA = ROOT / "data"
SETS: dict[str, list[Path]] = {
    "humaneval": [DATA / "humaneval" / "HumanEval.jsonl"],
    "mbpp-sanitized": [DATA / "mbpp" / "sanitized-mbpp.json"],
    "mbpp": [DATA / "mbpp" / "mbpp_first50.jsonl"],
    "apps": [DATA / "apps" / "apps_slice.jsonl"],
    "code_contests": [DATA / "code_contests" / "code_contests_slice.jsonl"],
    "livecodebench": [DATA / "livecodebench" / "livecodebench_slice.jsonl"],
}
LCB_SOLUTIONS = DATA / "livecodebench" / "reference_solutions.json"


def fenced(program: str) -> str:
    return f"Here is the program.\n```python\n{program.rstrip()}\n```\n"


# ---- the file's own rows (for references and wrong programs) -----------------------------------------------
def raw_rows(path: Path) -> dict[int, dict[str, Any]]:
    """line number (item number for a JSON array) -> row, as the loaders number them."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return {i: row for i, row in enumerate(json.loads(text), start=1)}
    return {i: json.loads(line) for i, line in enumerate(text.splitlines(), start=1) if line.strip()}


def count_rows(path: Path) -> int:
    return len(raw_rows(path))


def reference_programs(problem: Problem, row: dict[str, Any]) -> list[str]:
    if "canonical_solution" in row:
        return [row["prompt"] + row["canonical_solution"]]
    if "code" in row and "test_list" in row:
        return [row["code"]]
    if "solutions" in row and isinstance(row["solutions"], str):  # APPS: a JSON string holding a list
        return list(json.loads(row["solutions"]))[:1]
    if isinstance(row.get("solutions"), dict):  # CodeContests: python 3 is language 3
        pairs = zip(row["solutions"]["language"], row["solutions"]["solution"], strict=False)
        return [code for language, code in pairs if language == 3][:1]
    if "question_id" in row:
        return [json.loads(LCB_SOLUTIONS.read_text(encoding="utf-8"))[row["question_id"]]]
    return [problem.reference_solution] if problem.reference_solution else []


def wrong_programs(row: dict[str, Any], reference: str, entry_point: str | None) -> dict[str, str]:
    """Plausible wrong programs: the dataset's own incorrect solutions, else mutants of the reference."""
    if isinstance(row.get("incorrect_solutions"), dict):
        pairs = zip(
            row["incorrect_solutions"]["language"], row["incorrect_solutions"]["solution"], strict=False
        )
        return {f"incorrect_{i}": code for i, (lang, code) in enumerate(pairs) if lang == 3}
    entry = entry_point
    # Mutate the solution only: a HumanEval prompt's helpers (encode_shift) are the dataset's, and the
    # judge runs the dataset's own copy of them, as the original test file does.
    mutants = {
        "return_none": _mutate(reference, ReturnNone(entry)),
        # a stdin program has no entry point: the whole program is the solution
        "flipped_comparison": _mutate(
            reference, InEntry(entry, FlipFirstComparison()) if entry else FlipFirstComparison()
        ),
        "off_by_one": _mutate(reference, InEntry(entry, OffByOne()) if entry else OffByOne()),
    }
    return {name: program for name, program in mutants.items() if program and program != reference}


def _entry_point(problem: Problem) -> str | None:
    tests = load_tests(problem.tests or "")
    return tests.entry_point if isinstance(tests, CodeTests) else None


def _mutate(code: str, transformer: ast.NodeTransformer) -> str | None:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    mutated = transformer.visit(tree)
    if not getattr(transformer, "changed", False):
        return None
    return ast.unparse(ast.fix_missing_locations(mutated))


class InEntry(ast.NodeTransformer):
    """Apply `inner` inside the entry-point function (or class) only."""

    def __init__(self, entry: str | None, inner: ast.NodeTransformer) -> None:
        self.entry, self.inner = entry, inner

    @property
    def changed(self) -> bool:
        return bool(getattr(self.inner, "changed", False))

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return self.inner.visit(node) if node.name == self.entry else node

    visit_ClassDef = visit_FunctionDef  # type: ignore[assignment]


class ReturnNone(ast.NodeTransformer):
    def __init__(self, entry: str | None) -> None:
        self.entry, self.changed = entry, False

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        if node.name == self.entry and not self.changed:
            node.body = [ast.Return(value=ast.Constant(value=None))]
            self.changed = True
        return node


FLIPS = {
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
}


class FlipFirstComparison(ast.NodeTransformer):
    changed = False

    def visit_Compare(self, node: ast.Compare) -> ast.Compare:
        if not self.changed and type(node.ops[0]) in FLIPS:
            node.ops[0] = FLIPS[type(node.ops[0])]()
            self.changed = True
        return self.generic_visit(node)


class OffByOne(ast.NodeTransformer):
    changed = False

    def visit_Constant(self, node: ast.Constant) -> ast.Constant:
        if not self.changed and type(node.value) is int:
            self.changed = True
            return ast.copy_location(ast.Constant(value=node.value + 1), node)
        return node


def passes_original_tests(row: dict[str, Any], program: str, pool: SandboxPool) -> bool | None:
    """The dataset's own test code run directly, as the dataset's harness would (in the sandbox)."""
    if "test" in row and "entry_point" in row:
        script = f"{row['prompt']}\n{program}\n\n{row['test']}\n\ncheck({row['entry_point']})\n"
    elif "test_list" in row:
        setup = "\n".join([*(row.get("test_imports") or []), row.get("test_setup_code") or ""])
        script = f"{program}\n\n{setup}\n" + "\n".join(row["test_list"]) + "\n"
    else:
        return None  # stdin sets: their incorrect solutions are known wrong
    result = pool.run({"main.py": script}, ["python3", "main.py"])
    if result.timed_out or result.exit_code is None:
        return None
    return result.exit_code == 0 and not result.misbehaved


# ---- one set ----------------------------------------------------------------------------------------------
@dataclass
class SetReport:
    name: str
    rows: int = 0
    loaded: int = 0
    rejected: list[str] = field(default_factory=list)
    references: int = 0
    references_correct: int = 0
    reference_failures: list[str] = field(default_factory=list)
    wrong: int = 0
    wrong_graded_correct: int = 0
    false_passes: list[str] = field(default_factory=list)
    outcomes: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def evaluate_set(
    name: str, paths: list[Path], verifier: CodeVerifier, pool: SandboxPool, mutants: bool, workers: int
) -> SetReport:
    report = SetReport(name)
    started = time.perf_counter()
    jobs: list[tuple[str, Problem, dict[str, Any], str, str]] = []
    for path in paths:
        rows = raw_rows(path)
        report.rows += len(rows)
        problems, rejected = load_code_problems(path)
        report.loaded += len(problems)
        report.rejected += [f"{r.file}:{r.line} {r.field}: {r.reason}" for r in rejected]
        for problem in problems:
            row = rows[problem.source_line or 0]
            for reference in reference_programs(problem, row):
                jobs.append(("reference", problem, row, "reference", reference))
                if mutants:
                    for label, program in wrong_programs(row, reference, _entry_point(problem)).items():
                        jobs.append(("wrong", problem, row, label, program))

    def grade(job: tuple[str, Problem, dict[str, Any], str, str]) -> tuple[Any, ...]:
        kind, problem, row, label, program = job
        verdict = verifier.grade(problem, fenced(program))
        original = None
        if kind == "wrong" and verdict.label == "correct":
            original = passes_original_tests(row, program, pool)
        return kind, problem, label, verdict, original

    with ThreadPoolExecutor(max_workers=workers) as executor:
        for kind, problem, label, verdict, original in executor.map(grade, jobs):
            report.outcomes[verdict.label] = report.outcomes.get(verdict.label, 0) + 1
            where = f"{problem.source_file}:{problem.source_line}"
            if kind == "reference":
                report.references += 1
                if verdict.label == "correct":
                    report.references_correct += 1
                else:
                    report.reference_failures.append(f"{where} {verdict.label}: {verdict.reason[:160]}")
            else:
                report.wrong += 1
                if verdict.label == "correct":
                    report.wrong_graded_correct += 1
                    if original is not True:
                        report.false_passes.append(f"{where} {label} (original tests: {original})")
    report.seconds = round(time.perf_counter() - started, 2)
    return report


# ---- throughput: warm pool vs a fresh container per sandbox job -------------------------------------------
class FreshContainers:
    """A `Runner` that creates, uses and removes one hardened container per sandbox job."""

    def __init__(self, image: str, limits: SandboxLimits) -> None:
        self.image, self.limits, self.size = image, limits, 2

    def run(self, files: dict[str, str], argv: list[str], options: JobOptions = NO_OPTIONS):  # noqa: ANN201
        return run_once(self.image, files, argv, self.limits, options=options)


def path_problems(problems: Iterable[Problem], kind: str) -> list[Problem]:
    chosen = []
    for problem in problems:
        tests = load_tests(problem.tests or "")
        if kind == "stdin" and isinstance(tests, StdioTests):
            chosen.append(problem)
        elif kind == "proxy" and isinstance(tests, CodeTests) and tests.n_proxy:
            chosen.append(problem)
    return chosen


def time_grading(runner: Any, problems: list[Problem], workers: int) -> tuple[float, int]:
    verifier = CodeVerifier(runner=runner)
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as executor:
        labels = list(
            executor.map(lambda p: verifier.grade(p, fenced(p.reference_solution or "")).label, problems)
        )
    return time.perf_counter() - started, sum(label == "correct" for label in labels)


def throughput(
    kind: str, problems: list[Problem], pool: SandboxPool, image: str, limits: SandboxLimits, workers: int
) -> dict[str, Any]:
    time_grading(pool, problems[:2], workers)  # warm caches, not counted
    warm_s, warm_ok = time_grading(pool, problems, workers)
    cold_s, cold_ok = time_grading(FreshContainers(image, limits), problems, workers)
    return {
        "path": kind,
        "problems": len(problems),
        "warm_seconds": round(warm_s, 2),
        "fresh_seconds": round(cold_s, 2),
        "warm_correct": warm_ok,
        "fresh_correct": cold_ok,
        "ratio": round(cold_s / warm_s, 1) if warm_s else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="*", default=list(SETS), choices=list(SETS))
    parser.add_argument("--mutants", type=int, default=1, help="0: skip the wrong programs")
    parser.add_argument("--throughput", type=int, default=12, help="problems per path timed (0: skip)")
    parser.add_argument("--pool-size", type=int, default=2)
    parser.add_argument(
        "--wall-seconds", type=float, default=60.0, help="per sandbox job (MBPP 123 needs ~9 s of CPU)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    image = ensure_image()
    limits = SandboxLimits(wall_seconds=args.wall_seconds)
    reports: list[SetReport] = []
    speed: list[dict[str, Any]] = []
    with SandboxPool(image, size=args.pool_size, limits=limits) as pool:
        verifier = CodeVerifier(runner=pool)
        for name in args.sets:
            reports.append(evaluate_set(name, SETS[name], verifier, pool, bool(args.mutants), args.pool_size))
        if args.throughput:
            loaded = [p for name in SETS for path in SETS[name] for p in load_code_problems(path)[0]]
            for kind in ("proxy", "stdin"):
                chosen = [p for p in path_problems(loaded, kind) if p.reference_solution][: args.throughput]
                if kind == "stdin":  # problems whose reference solution is in Problem.reference_solution
                    chosen = [p for p in chosen if p.reference_solution]
                if chosen:
                    speed.append(throughput(kind, chosen, pool, image, limits, args.pool_size))
    if args.json:
        print(json.dumps({"sets": [r.__dict__ for r in reports], "throughput": speed}, indent=1))
        return
    print(
        f"{'set':15} {'loaded':>9} {'refs ok':>9} {'wrong':>6} {'graded ok':>9} {'false pass':>10} {'s':>7}"
    )
    for r in reports:
        print(
            f"{r.name:15} {r.loaded:4d}/{r.rows:<4d} {r.references_correct:4d}/{r.references:<4d} "
            f"{r.wrong:6d} "
            f"{r.wrong_graded_correct:9d} {len(r.false_passes):10d} {r.seconds:7.1f}"
        )
    for r in reports:
        for line in r.rejected + r.reference_failures + r.false_passes:
            print(f"  {r.name}: {line}")
        print(f"  {r.name}: outcomes {r.outcomes}")
    for s in speed:
        print(
            f"throughput, {s['path']} path: {s['problems']} problems graded in {s['warm_seconds']} s "
            f"(warm pool) vs "
            f"{s['fresh_seconds']} s (fresh container per job): {s['ratio']}x   target >= 8x"
        )


if __name__ == "__main__":
    main()
