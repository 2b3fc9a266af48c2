"""The fuzz suite's long run: the properties of tests/fuzz/surfaces.py over thousands of fresh cases.

Why: the suite's bounded run (tests/fuzz/test_fuzz.py) tries a few hundred cases, the same every time; a
failure a user can meet may sit deeper. This runs each surface for many new cases (Hypothesis's `long`
profile, no fixed seed), counts every case tried and every broken property without stopping at the first,
and prints per surface: cases, failures, the first few failures, and the seconds spent. The issue-45 target:
at least 10,000 cases in all, 0 failures (no traceback reaches a user, no half-written version).

    python -m bench.bench_fuzz                           # the default budget below, about 12,000 cases
    python -m bench.bench_fuzz --scale 0.1               # a tenth of it

The ratio printed is failures per 10,000 cases (0 is the target); there is no speed baseline.
"""

from __future__ import annotations

import argparse
import time

from hypothesis import given, settings

BUDGET = {  # cases per surface at scale 1: the cheap surfaces get the most
    "chains file": 4000,
    "problems file": 2000,
    "plug-in output": 3000,
    "audit page": 2500,
    "python api": 300,
    "cli": 250,
    "reward server": 1500,
}


def guarded(surfaces, surface: str, check):  # noqa: ANN001, ANN201 (the surfaces module and a check)
    """`check`, with an exception of the check itself counted as a failure of `surface` (the run goes on)."""

    def run(case) -> None:  # noqa: ANN001
        try:
            check(case)
        except Exception as error:
            surfaces.failed(surface, f"the check raised {type(error).__name__}: {error}")

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every surface's case budget")
    parser.add_argument("--surface", action="append", choices=sorted(BUDGET), help="only these (repeatable)")
    args = parser.parse_args()
    import tests.fuzz.conftest  # noqa: F401 (registers the profiles)
    from tests.fuzz import surfaces

    surfaces.COLLECT = True
    runs = {
        "chains file": (surfaces.chain_files(), lambda case: surfaces.check_chain_file(*case)),
        "problems file": (surfaces.problem_files(), surfaces.check_problem_file),
        "plug-in output": (surfaces.plugin_outputs(), lambda case: surfaces.check_plugin_output(*case)),
        "audit page": (surfaces.http_requests(), surfaces.check_http_request),
        "python api": (surfaces.api_calls(), lambda case: surfaces.check_api_call(*case)),
        "cli": (surfaces.cli_calls(), surfaces.check_cli_call),
        "reward server": (surfaces.reward_requests(), surfaces.check_reward_request),
    }
    spent: dict[str, float] = {}
    for surface, (strategy, check) in runs.items():
        if args.surface and surface not in args.surface:
            continue
        budget = max(1, int(BUDGET[surface] * args.scale))
        run = settings(settings.get_profile("long"), max_examples=budget)(
            given(strategy)(guarded(surfaces, surface, check))
        )
        started = time.perf_counter()
        run()
        spent[surface] = time.perf_counter() - started
        failures = sum(1 for name, _ in surfaces.FAILURES if name == surface)
        cases = surfaces.CASES[surface]
        print(f"{surface:15s} {cases:6d} cases  {failures:4d} failures  {spent[surface]:7.1f} s", flush=True)
    total = sum(surfaces.CASES.values())
    failures = len(surfaces.FAILURES)
    print(f"{'all':15s} {total:6d} cases  {failures:4d} failures  {sum(spent.values()):7.1f} s")
    print(f"ratio: {10000 * failures / max(total, 1):.2f} failures per 10,000 cases (target 0)")
    for surface, what in surfaces.FAILURES[:20]:
        print(f"  {surface}: {what}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
