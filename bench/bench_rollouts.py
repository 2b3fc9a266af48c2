"""Rollouts spent to find the first error: cheaper strategies against exhaustive Math-Shepherd estimation.

For the same chains, each candidate strategy (binary search, adaptive) is run next to `exhaustive`, and the
bench prints two ratios per candidate:

- rollouts: the candidate's rollouts drawn / exhaustive's, over all chains (issue 5 target: <= 40 %);
- first-error agreement: the share of chains where both give the same `first_error_mc`, None included
  (target: >= 95 %).

Both are also given over the wrong chains alone ("(wrong)"), with the engine calls (rounds) each strategy
made. A simulation also knows the latent truth, so it adds "=truth" (share of chains whose first error
equals the latent one; compare with exhaustive's own share in the header) and "soft err" (mean |mc_value -
latent prefix value| over the steps that drew rollouts; only comparable between strategies probing the same
steps, e.g. adaptive vs exhaustive).

Draws. With `--draws common` (the default) every candidate sees the very rollouts exhaustive drew: exhaustive
runs on the sampler through a recorder, and each candidate then runs on a replay of those generations
(served in order per prefix, re-graded). The comparison then measures the search, not sampling noise, and
costs no engine time beyond exhaustive's (common random numbers). A candidate needing more rollouts from a
prefix than exhaustive drew fails loudly. With `--draws independent` each candidate draws its own
rollouts from the sampler (on the simulation: a different seed), so disagreement includes sampling noise.

Two sources of chains and rollouts:

- `--simulate PRESET` (default): SIMULATION. Synthetic chains with a latent probability per step prefix
  that a rollout from it ends correct; a simulated sampler draws outcomes from those probabilities. No
  model runs; the numbers say how the strategies behave under that outcome model, not on a real one. The
  presets and their parameters are printed with the results.
- `--engine MODULE:FUNCTION`: a real engine. FUNCTION() returns `EngineInputs(items, sampler, grade,
  params)`; the flow's sampling stage is what should build it (the default-run wiring is the lead's).

    python bench/bench_rollouts.py                               # both simulation presets, k=8
    python bench/bench_rollouts.py --simulate weak --chains 2000 --k 8 --json out.json
    python bench/bench_rollouts.py --engine mypkg.bench_inputs:build --k 8
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from prm_factory.rollouts import RolloutItem, estimate_values, make_strategy
from prm_factory.rollouts.strategies import Strategy
from prm_factory.rollouts.values import ChainValues
from prm_factory.sampling.protocol import Generation, GenerationParams, Sampler
from prm_factory.schemas.records import Problem
from prm_factory.verifiers.protocol import Verdict

# `--engine bench.engine_inputs:...` hooks import from the repo root
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROLLOUT_TARGET = 0.40
AGREEMENT_TARGET = 0.95

Grader = Callable[[Problem, str], Verdict]


@dataclass(frozen=True)
class EngineInputs:
    """What `--engine MODULE:FUNCTION` must return: chains with their prompts, and a live engine."""

    items: Sequence[RolloutItem]
    sampler: Sampler
    grade: Grader
    params: GenerationParams


# ---------------------------------------------------------------------------------------------------------
# Simulation: a synthetic outcome model, clearly not a model run.


@dataclass(frozen=True)
class OutcomeModel:
    """How synthetic chains behave. Every number here is an assumption, printed next to the results.

    A chain has `steps` uniform in [min_steps, max_steps]. It is correct with probability
    `chain_accuracy`; then every prefix reaches a correct answer with probability p ~ U(good_lo, good_hi).
    A wrong chain has a latent first error f (geometric with `early_error` as the chance of stopping at each
    step, truncated to the chain; `early_error=0` means uniform): prefixes before f have p ~ U(good_lo,
    good_hi), prefixes from f on have p = `recovery` (a lucky rollout from a dead prefix).
    """

    name: str
    description: str
    chain_accuracy: float
    min_steps: int
    max_steps: int
    good_lo: float
    good_hi: float
    early_error: float
    recovery: float
    tokens_lo: int = 60
    tokens_hi: int = 240


PRESETS = {
    "weak": OutcomeModel(
        name="weak",
        description="a weak model like the default SmolLM2-135M: ~2 % of chains correct, errors early, "
        "low prefix values",
        chain_accuracy=0.02,
        min_steps=3,
        max_steps=14,
        good_lo=0.05,
        good_hi=0.40,
        early_error=0.5,
        recovery=0.005,
    ),
    "capable": OutcomeModel(
        name="capable",
        description="a capable model (7B class on GSM8K): half the chains correct, first error anywhere, "
        "high prefix values",
        chain_accuracy=0.5,
        min_steps=3,
        max_steps=14,
        good_lo=0.30,
        good_hi=0.95,
        early_error=0.0,
        recovery=0.02,
    ),
}

_SIM_PROBLEM = Problem(problem_id="sim", source="simulation", domain="math", text="(simulated problem)")
_SIM_CORRECT = "SIMULATED-ROLLOUT: correct"
_SIM_INCORRECT = "SIMULATED-ROLLOUT: incorrect"


@dataclass(frozen=True)
class SimulatedChain:
    item: RolloutItem
    prefix_values: tuple[float, ...]  # latent success probability of each probeable prefix
    true_first_error: int | None


def simulate_chains(model: OutcomeModel, n_chains: int, seed: int) -> list[SimulatedChain]:
    rng = random.Random(seed)
    chains = []
    for c in range(n_chains):
        n_steps = rng.randint(model.min_steps, model.max_steps)
        correct = rng.random() < model.chain_accuracy
        first_error: int | None = None
        if not correct:
            first_error = 0
            if model.early_error > 0:
                while first_error < n_steps - 1 and rng.random() >= model.early_error:
                    first_error += 1
            else:
                first_error = rng.randrange(n_steps)
        values = tuple(
            rng.uniform(model.good_lo, model.good_hi)
            if first_error is None or i < first_error
            else model.recovery
            for i in range(n_steps - 1)
        )
        steps = [f"sim step {i}" for i in range(n_steps)]
        text = "\n".join(steps)
        ends = tuple(text.index(s) + len(s) for s in steps)
        item = RolloutItem(f"sim-{c}", _SIM_PROBLEM, f"<sim chain {c}>\n", text, ends, correct)
        chains.append(SimulatedChain(item, values, first_error))
    return chains


class SimulatedSampler:
    """SIMULATION stand-in for an engine: the j-th rollout from a prefix ends correct with the prefix's
    latent probability, drawn from a hash of (seed, prompt, j) so a run is reproducible."""

    model_id = "simulation"

    def __init__(self, chains: Sequence[SimulatedChain], model: OutcomeModel, seed: int) -> None:
        self.seed = seed
        self._model = model
        self._value = {ch.item.rollout_prompt(i): v for ch in chains for i, v in enumerate(ch.prefix_values)}
        self._drawn: dict[str, int] = defaultdict(int)

    def render_chat(self, system: str | None, user: str) -> str:
        return user

    def _uniform(self, prompt: str, j: int, salt: str) -> float:
        digest = hashlib.blake2b(f"{self.seed}|{salt}|{j}|{prompt}".encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big") / 2**64

    def generate(self, prompts: Sequence[str], params: GenerationParams) -> list[list[Generation]]:
        out = []
        span = self._model.tokens_hi - self._model.tokens_lo
        for prompt in prompts:
            start = self._drawn[prompt]
            self._drawn[prompt] += params.n
            gens = []
            for j in range(start, start + params.n):
                ok = self._uniform(prompt, j, "outcome") < self._value[prompt]
                tokens = self._model.tokens_lo + int(self._uniform(prompt, j, "tokens") * span)
                gens.append(Generation(_SIM_CORRECT if ok else _SIM_INCORRECT, tokens, "stop"))
            out.append(gens)
        return out


def simulated_grade(problem: Problem, text: str) -> Verdict:
    correct = text.endswith(_SIM_CORRECT)
    return Verdict("correct" if correct else "incorrect", "simulated outcome")


# ---------------------------------------------------------------------------------------------------------
# Common draws: record the baseline's generations, replay them to the candidates.


class RecordingSampler:
    """Passes calls to a real sampler and keeps every generation per prompt, in order."""

    def __init__(self, inner: Sampler) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.seed = inner.seed
        self.recorded: dict[str, list[Generation]] = defaultdict(list)

    def render_chat(self, system: str | None, user: str) -> str:
        return self.inner.render_chat(system, user)

    def generate(self, prompts: Sequence[str], params: GenerationParams) -> list[list[Generation]]:
        generations = self.inner.generate(prompts, params)
        for prompt, gens in zip(prompts, generations, strict=True):
            self.recorded[prompt].extend(gens)
        return generations


class RecordedGenerationsReplay:
    """Serves a recorded run's generations again, per prompt in order: the baseline's own rollouts, not an
    engine. Asking for more than was recorded is an error, never a silent reuse."""

    model_id = "replay-of-recorded-generations"
    seed = 0

    def __init__(self, recorded: dict[str, list[Generation]]) -> None:
        self._recorded = recorded
        self._cursor: dict[str, int] = defaultdict(int)

    def render_chat(self, system: str | None, user: str) -> str:
        raise NotImplementedError("a replay only serves recorded rollouts")

    def generate(self, prompts: Sequence[str], params: GenerationParams) -> list[list[Generation]]:
        out = []
        for prompt in prompts:
            start = self._cursor[prompt]
            gens = self._recorded.get(prompt, [])[start : start + params.n]
            if len(gens) < params.n:
                raise RuntimeError(f"replay exhausted: {params.n} rollouts asked beyond the {start} recorded")
            self._cursor[prompt] = start + params.n
            out.append(gens)
        return out


# ---------------------------------------------------------------------------------------------------------
# The comparison.


@dataclass
class StrategyRun:
    label: str
    strategy: Strategy
    values: list[ChainValues]
    engine_calls: int
    wall_seconds: float

    @property
    def rollouts(self) -> int:
        return sum(v.rollouts_drawn for v in self.values)

    @property
    def tokens(self) -> int:
        return sum(v.tokens for v in self.values)


class _CallCounter:
    def __init__(self, inner: Sampler) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.seed = inner.seed
        self.calls = 0

    def render_chat(self, system: str | None, user: str) -> str:
        return self.inner.render_chat(system, user)

    def generate(self, prompts: Sequence[str], params: GenerationParams) -> list[list[Generation]]:
        self.calls += 1
        return self.inner.generate(prompts, params)


def _run(label: str, items, strategy, sampler, grade, params) -> StrategyRun:
    counter = _CallCounter(sampler)
    started = time.perf_counter()
    values = estimate_values(items, strategy, counter, grade, params)
    return StrategyRun(label, strategy, values, counter.calls, time.perf_counter() - started)


@dataclass
class Comparison:
    label: str
    rollout_ratio: float
    rollout_ratio_wrong_chains: float | None
    agreement: float
    agreement_wrong_chains: float | None
    engine_calls: int
    tokens: int
    rollouts: int
    truth_agreement: float | None = None
    soft_error: float | None = None
    meets_targets: bool = False


@dataclass(frozen=True)
class Latent:
    """What only a simulation knows: each chain's latent first error and prefix success probabilities."""

    first_errors: Sequence[int | None]
    prefix_values: Sequence[Sequence[float]]

    def soft_error(self, values: Sequence[ChainValues]) -> float | None:
        """Mean |mc_value - latent probability| over the steps that drew rollouts."""
        errors = [
            abs(step.mc_value - latent[step.step_index])
            for chain, latent in zip(values, self.prefix_values, strict=True)
            for step in chain.steps
            if step.value_source == "rollouts" and step.mc_value is not None
        ]
        return sum(errors) / len(errors) if errors else None


def _share(pairs: list[tuple[object, object]]) -> float | None:
    return sum(a == b for a, b in pairs) / len(pairs) if pairs else None


def compare(
    items: Sequence[RolloutItem],
    baseline: StrategyRun,
    candidate: StrategyRun,
    latent: Latent | None = None,
) -> Comparison:
    wrong = [i for i, item in enumerate(items) if item.outcome_correct is not True]
    base_fe = [v.first_error_mc for v in baseline.values]
    cand_fe = [v.first_error_mc for v in candidate.values]
    base_wrong = sum(baseline.values[i].rollouts_drawn for i in wrong)
    cand_wrong = sum(candidate.values[i].rollouts_drawn for i in wrong)
    ratio = candidate.rollouts / baseline.rollouts if baseline.rollouts else float("nan")
    agreement = _share(list(zip(base_fe, cand_fe, strict=True))) or 0.0
    result = Comparison(
        label=candidate.label,
        rollout_ratio=ratio,
        rollout_ratio_wrong_chains=cand_wrong / base_wrong if base_wrong else None,
        agreement=agreement,
        agreement_wrong_chains=_share([(base_fe[i], cand_fe[i]) for i in wrong]),
        engine_calls=candidate.engine_calls,
        tokens=candidate.tokens,
        rollouts=candidate.rollouts,
        truth_agreement=_share(list(zip(cand_fe, latent.first_errors, strict=True))) if latent else None,
        soft_error=latent.soft_error(candidate.values) if latent else None,
    )
    result.meets_targets = ratio <= ROLLOUT_TARGET and agreement >= AGREEMENT_TARGET
    return result


DEFAULT_CANDIDATES: dict[str, dict] = {
    "binary_search (bisect)": {"name": "binary_search", "search": "bisect"},
    "binary_search (bisect, early stop)": {"name": "binary_search", "search": "bisect", "draws_per_round": 2},
    "binary_search (gallop)": {"name": "binary_search", "search": "gallop"},
    "binary_search (gallop, early stop)": {"name": "binary_search", "search": "gallop", "draws_per_round": 2},
    "adaptive (j=2, +2 per round, max k)": {"name": "adaptive", "first_draws": 2, "draws_per_round": 2},
}


def run_bench(
    items: Sequence[RolloutItem],
    make_sampler: Callable[[str], Sampler],
    grade: Grader,
    params: GenerationParams,
    k: int,
    draws: str,
    latent: Latent | None = None,
    candidates: dict[str, dict] | None = None,
) -> tuple[StrategyRun, list[Comparison]]:
    """Exhaustive on `make_sampler("baseline")`, then every candidate on common or independent draws."""
    recorder = RecordingSampler(make_sampler("baseline"))
    baseline = _run(
        "exhaustive", items, make_strategy("exhaustive", rollouts_per_probe=k), recorder, grade, params
    )
    results = []
    for label, spec in (candidates or DEFAULT_CANDIDATES).items():
        options = {key: value for key, value in spec.items() if key != "name"}
        options.setdefault("rollouts_per_probe", k)
        strategy = make_strategy(spec["name"], **options)
        sampler = RecordedGenerationsReplay(recorder.recorded) if draws == "common" else make_sampler(label)
        results.append(compare(items, baseline, _run(label, items, strategy, sampler, grade, params), latent))
    return baseline, results


def non_monotone_share(values: Sequence[ChainValues]) -> float:
    """Share of chains whose hard labels go bad and then good again: where a search that trusts
    monotonicity can end elsewhere than the first bad label."""

    def non_monotone(v: ChainValues) -> bool:
        hard = [s.hard_label for s in v.steps if s.hard_label is not None]
        return any(a is False and b is True for a, b in zip(hard, hard[1:], strict=False))

    return sum(map(non_monotone, values)) / len(values) if values else 0.0


def _format(baseline: StrategyRun, results: list[Comparison], show_truth: bool) -> str:
    lines = [
        f"baseline exhaustive: {baseline.rollouts} rollouts, {baseline.tokens} tokens, "
        f"{baseline.engine_calls} engine calls, {baseline.wall_seconds:.2f} s",
        f"exhaustive's hard labels go bad then good again on {non_monotone_share(baseline.values):.1%} of "
        "chains; on the others a search with common draws must agree",
        "",
        f"{'candidate':38} {'rollouts':>9} {'(wrong)':>8} {'agree':>7} {'(wrong)':>8} {'calls':>6}"
        + (f" {'=truth':>7} {'soft err':>8}" if show_truth else "")
        + "  targets (<=40 %, >=95 %)",
    ]
    for r in results:
        wrong_ratio = (
            f"{r.rollout_ratio_wrong_chains:.1%}" if r.rollout_ratio_wrong_chains is not None else "-"
        )
        wrong_agree = f"{r.agreement_wrong_chains:.1%}" if r.agreement_wrong_chains is not None else "-"
        truth = ""
        if show_truth and r.truth_agreement is not None:
            soft = f"{r.soft_error:.3f}" if r.soft_error is not None else "-"
            truth = f" {r.truth_agreement:>7.1%} {soft:>8}"
        lines.append(
            f"{r.label:38} {r.rollout_ratio:>9.1%} {wrong_ratio:>8} {r.agreement:>7.1%} {wrong_agree:>8} "
            f"{r.engine_calls:>6}{truth}  {'met' if r.meets_targets else 'NOT met'}"
        )
    return "\n".join(lines)


def _simulate(preset: OutcomeModel, args: argparse.Namespace) -> dict:
    chains = simulate_chains(preset, args.chains, args.seed)
    items = [c.item for c in chains]
    params = GenerationParams(temperature=0.7, max_tokens=preset.tokens_hi)

    def make_sampler(label: str) -> Sampler:
        # independent draws: each candidate gets its own reproducible seed, derived from its label
        salt = (
            0 if label == "baseline" else int(hashlib.blake2b(label.encode(), digest_size=4).hexdigest(), 16)
        )
        return SimulatedSampler(chains, preset, seed=args.seed + salt)

    latent = Latent([c.true_first_error for c in chains], [c.prefix_values for c in chains])
    baseline, results = run_bench(items, make_sampler, simulated_grade, params, args.k, args.draws, latent)
    base_soft = latent.soft_error(baseline.values)
    base_truth = _share(
        [(v.first_error_mc, c.true_first_error) for v, c in zip(baseline.values, chains, strict=True)]
    )
    n_steps = [item.n_steps for item in items]
    print(f"== SIMULATION (synthetic outcome model, no model runs): preset '{preset.name}'")
    print(f"   {preset.description}")
    parameters = {k: v for k, v in asdict(preset).items() if k not in ("name", "description")}
    print(f"   parameters: {json.dumps(parameters)}")
    print(
        f"   {len(items)} chains (seed {args.seed}), steps {min(n_steps)}-{max(n_steps)} "
        f"(mean {sum(n_steps) / len(n_steps):.1f}), {sum(c.true_first_error is None for c in chains)} "
        f"correct; k={args.k}; draws={args.draws}"
    )
    print(
        f"   exhaustive's first error equals the latent one on {base_truth:.1%} of chains (=truth column); "
        f"its soft labels are off the latent prefix values by {base_soft:.3f} on average (soft err column)"
    )
    print(_format(baseline, results, show_truth=True))
    print()
    return {
        "mode": "simulation",
        "preset": asdict(preset),
        "chains": len(items),
        "seed": args.seed,
        "k": args.k,
        "draws": args.draws,
        "baseline": {
            "rollouts": baseline.rollouts,
            "tokens": baseline.tokens,
            "truth_agreement": base_truth,
            "soft_error": base_soft,
        },
        "candidates": [asdict(r) for r in results],
    }


def _engine(spec: str, args: argparse.Namespace) -> dict:
    module_name, _, function_name = spec.partition(":")
    inputs: EngineInputs = getattr(importlib.import_module(module_name), function_name)()
    baseline, results = run_bench(
        inputs.items, lambda label: inputs.sampler, inputs.grade, inputs.params, args.k, args.draws
    )
    print(
        f"== ENGINE sampler: {inputs.sampler.model_id} (seed {inputs.sampler.seed}), "
        f"{len(inputs.items)} chains, k={args.k}, draws={args.draws}"
    )
    print(_format(baseline, results, show_truth=False))
    return {
        "mode": "engine",
        "model": inputs.sampler.model_id,
        "chains": len(inputs.items),
        "k": args.k,
        "draws": args.draws,
        "baseline": {
            "rollouts": baseline.rollouts,
            "tokens": baseline.tokens,
            "seconds": baseline.wall_seconds,
        },
        "candidates": [asdict(r) for r in results],
    }


def _override(preset: OutcomeModel, overrides: dict[str, str]) -> OutcomeModel:
    types = {name: type(value) for name, value in asdict(preset).items()}
    unknown = set(overrides) - set(types) - {"name", "description"}
    if unknown:
        raise SystemExit(f"unknown preset parameter(s): {sorted(unknown)}; known: {sorted(types)}")
    changed = {name: types[name](value) for name, value in overrides.items()}
    return replace(preset, name=f"{preset.name} with {overrides}", **changed)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--simulate", choices=[*PRESETS, "all"], default="all", help="synthetic outcome model"
    )
    source.add_argument("--engine", metavar="MODULE:FUNCTION", help="returns EngineInputs for a real engine")
    parser.add_argument("--chains", type=int, default=1000)
    parser.add_argument("--k", type=int, default=8, help="rollouts per probe (exhaustive: per prefix)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--draws", choices=["common", "independent"], default="common")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument(
        "--set",
        metavar="FIELD=VALUE",
        action="append",
        default=[],
        help="override a simulation preset parameter, e.g. --set recovery=0 (repeatable)",
    )
    args = parser.parse_args(argv)

    if args.engine:
        reports = [_engine(args.engine, args)]
    else:
        presets = list(PRESETS.values()) if args.simulate == "all" else [PRESETS[args.simulate]]
        overrides = dict(item.split("=", 1) for item in args.set)
        if overrides:
            presets = [_override(preset, overrides) for preset in presets]
        reports = [_simulate(preset, args) for preset in presets]
    if args.json:
        with open(args.json, "w") as f:
            json.dump(reports, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
