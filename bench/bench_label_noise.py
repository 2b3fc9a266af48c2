"""The label-noise table: every label source measured per step against exact truth on synthetic problems.

Why: MC labels are only as good as the rollouts behind them, and the question every user has is how many
rollouts a label needs. Synthetic problems (`schemas.synthetic`) carry the true value of every intermediate
quantity, so each step of a sampled chain has a true label (`evaluation.step_truth`). This bench draws
chains for synthetic problems with the embedded model on the project's vLLM engine, draws k_max rollouts
from every step prefix once, and then, without drawing again, replays those recorded outcomes to get the
labels each strategy (exhaustive, binary search, adaptive) would give at k = 1, 2, 4, ..., k_max, with the
tokens each actually spends. The verifier, the reference alignment and the consensus label the same steps.
Per source and k it reports precision and recall of `incorrect` against the truth, ProcessBench first-error
F1, the labelled share of steps, and rollout tokens per label.

    python -m bench.bench_label_noise --out /tmp/label-noise            # 12 problems of 1-3 steps, n=4
    python -m bench.bench_label_noise --problems 30 --steps 1,2 --n 4 --k-max 16 --out /tmp/ln

Run it from the repo root with `python -m` (`bench` is not an installed package). The replay is exact:
the first k recorded outcomes of a prefix are what a run with that k would have drawn (same engine seeds
aside), so one k_max draw prices every (strategy, k) cell.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Literal

if __package__ in (None, ""):  # run as a script: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prm_factory.evaluation.step_truth import ChainTruth, chain_truth  # noqa: E402
from prm_factory.labels.calibration import expected_calibration_error  # noqa: E402
from prm_factory.labels.consensus import domains_of, step_probability  # noqa: E402
from prm_factory.labels.metrics import first_error_scores, step_incorrect_scores  # noqa: E402
from prm_factory.labels.registry import registry  # noqa: E402
from prm_factory.rollouts import (  # noqa: E402
    AdaptiveStrategy,
    BinarySearchStrategy,
    ChainValues,
    ExhaustiveStrategy,
    RolloutItem,
    estimate_values,
)
from prm_factory.rollouts.strategies import Strategy  # noqa: E402
from prm_factory.sampling.model_prep import DEFAULT_MODEL_ID  # noqa: E402
from prm_factory.sampling.protocol import Generation, GenerationParams, Sampler  # noqa: E402
from prm_factory.schemas.records import Problem  # noqa: E402
from prm_factory.schemas.step_labels import StepLabel as SourceLabel  # noqa: E402
from prm_factory.schemas.step_labels import mc_label  # noqa: E402
from prm_factory.schemas.synthetic import SyntheticProblem, SyntheticSpec, synthetic_problem  # noqa: E402
from prm_factory.verifiers.protocol import Verdict  # noqa: E402

StepLabel = Literal["correct", "incorrect", "unlabelled"]
STRATEGY_NAMES = ("exhaustive", "binary_search", "adaptive")
SOFT_THRESHOLD = 0.5  # a soft label below this reads `incorrect` (the export's default threshold)

# ---------------------------------------------------------------------------------------------------------
# Recorded rollouts and their replay.


@dataclass(frozen=True)
class RecordedRollout:
    """One drawn rollout: its graded outcome (None: the grader could not judge it) and tokens generated."""

    correct: bool | None
    tokens: int


_MARK = "RECORDED-OUTCOME: "


class RecordedOutcomesReplay:
    """A sampler that serves recorded rollouts again, per prompt in order: a replay, never an engine.

    Each prompt's cursor starts at 0, so a strategy asking for k rollouts of a prefix gets its first k
    recorded ones, as a run with that k would have drawn them. Asking beyond the record is an error.
    """

    model_id = "replay-of-recorded-outcomes"
    seed = 0

    def __init__(self, recorded: Mapping[str, Sequence[RecordedRollout]]) -> None:
        self._recorded = recorded
        self._cursor: dict[str, int] = {}

    def render_chat(self, system: str | None, user: str) -> str:
        raise NotImplementedError("a replay only serves recorded rollouts")

    def generate(self, prompts: Sequence[str], params: GenerationParams) -> list[list[Generation]]:
        out = []
        for prompt in prompts:
            start = self._cursor.get(prompt, 0)
            rollouts = list(self._recorded.get(prompt, ()))[start : start + params.n]
            if len(rollouts) < params.n:
                raise RuntimeError(f"replay exhausted: {params.n} rollouts asked after {start} of a prefix")
            self._cursor[prompt] = start + params.n
            out.append([Generation(f"{_MARK}{r.correct}", r.tokens, "stop") for r in rollouts])
        return out


def replayed_grade(problem: Problem, text: str) -> Verdict:
    """The grade recorded for a replayed rollout (the text ends with its recorded outcome)."""
    recorded = text.rsplit(_MARK, 1)[-1] if _MARK in text else ""
    label = {"True": "correct", "False": "incorrect", "None": "timeout"}.get(recorded, "unparsed")
    return Verdict(label, "replayed")


def make_strategy_at(name: str, k: int, max_steps: int | None = None) -> Strategy:
    """The strategy as a run with `rollouts.k = k` would build it (adaptive: first 2 draws, 2 per round)."""
    if name == "exhaustive":
        return ExhaustiveStrategy(rollouts_per_probe=k, max_steps=max_steps)
    if name == "binary_search":
        return BinarySearchStrategy(rollouts_per_probe=k, max_steps=max_steps)
    if name == "adaptive":
        return AdaptiveStrategy(
            rollouts_per_probe=k, first_draws=min(2, k), draws_per_round=2, max_steps=max_steps
        )
    raise ValueError(f"unknown strategy {name!r}; known: {STRATEGY_NAMES}")


def replay(
    items: Sequence[RolloutItem],
    recorded: Mapping[str, Sequence[RecordedRollout]],
    strategy: Strategy,
    params: GenerationParams,
) -> list[ChainValues]:
    """What `strategy` gives on the recorded rollouts, through the real rollout driver (costs included)."""
    return estimate_values(items, strategy, RecordedOutcomesReplay(recorded), replayed_grade, params)


# ---------------------------------------------------------------------------------------------------------
# Labels per source.


@dataclass(frozen=True)
class LabelledChain:
    """One sampled chain with its steps, graded outcome, true labels and the non-MC sources' verdicts."""

    item: RolloutItem
    steps: tuple[str, ...]
    outcome: str
    truth: ChainTruth
    verifier: tuple[str, ...]  # correct | incorrect | unverifiable
    reference: tuple[str, ...]
    verifier_kinds: tuple[str | None, ...] = ()  # the reading kind of each verdict (empty: none named)
    mc_labeler: str = f"mc@{DEFAULT_MODEL_ID}"  # the policy its rollouts were drawn from (MC tables are its)


def verdict_labels(verdicts: Sequence[str]) -> list[StepLabel]:
    return [v if v in ("correct", "incorrect") else "unlabelled" for v in verdicts]  # type: ignore[misc]


def mc_labels(values: ChainValues, kind: Literal["hard", "soft"]) -> list[StepLabel]:
    """Hard: False is `incorrect`; soft: below SOFT_THRESHOLD is `incorrect`; no value is `unlabelled`."""
    labels: list[StepLabel] = []
    for step in values.steps:
        if kind == "hard":
            value = step.hard_label
        else:
            value = None if step.soft_label is None else step.soft_label >= SOFT_THRESHOLD
        labels.append("unlabelled" if value is None else "correct" if value else "incorrect")
    return labels


def consensus_steps(
    chain: LabelledChain,
    hard: Sequence[bool | None] | None,
    value_sources: Sequence[str] | None = None,
) -> list[tuple[StepLabel, float | None]]:
    """`labels.consensus` per step, as `label` computes it (the shipped tables, each verdict's reading kind,
    the problem's domains): negative is `incorrect`, positive `correct`, disputed / unlabeled `unlabelled`;
    with each step's `p_correct` (None: no source voted)."""
    hard = hard if hard is not None else [None] * len(chain.steps)
    origins = value_sources if value_sources is not None else ["none"] * len(chain.steps)
    kinds = chain.verifier_kinds or (None,) * len(chain.steps)
    problem = chain.item.problem
    domains = domains_of(problem.domain, problem.source, problem.text)
    out: list[tuple[StepLabel, float | None]] = []
    sources = registry()
    for verdict, kind, reference, hard_label, origin in zip(
        chain.verifier, kinds, chain.reference, hard, origins, strict=True
    ):
        labels = [
            SourceLabel("verifier", verdict, kind=kind),
            mc_label(hard_label, None, {"value_source": origin}, chain.mc_labeler),
            SourceLabel("reference", reference),
        ]
        label, _, p = step_probability(labels, sources, domains=domains)
        step: StepLabel = (
            "incorrect" if label == "negative" else "correct" if label == "positive" else "unlabelled"
        )
        out.append((step, p))
    return out


def consensus_labels(chain: LabelledChain, hard: Sequence[bool | None] | None) -> list[StepLabel]:
    """The consensus labels of `consensus_steps`."""
    return [label for label, _ in consensus_steps(chain, hard)]


def step_rows(chains: Sequence[LabelledChain], mc: Sequence[ChainValues] | None = None) -> list[dict]:
    """Every step with its truth, the sources' verdicts and the consensus without MC (`p_correct`), for a
    reliability table of the probability (`--out`: label_noise_steps.jsonl). With `mc` (each chain's
    values, in order: the exhaustive strategy at k_max), also MC's hard label, where its value came from
    (`rollouts`, the chain's own `outcome`, `none`) and the consensus with it (`p_correct_mc`), so MC's
    part in the calibration can be read without drawing the rollouts again."""
    out = []
    for position, chain in enumerate(chains):
        kinds = chain.verifier_kinds or (None,) * len(chain.steps)
        mc_steps: list[dict] = []  # MC's part of each step, where its values were given
        if mc is not None:
            hard = [s.hard_label for s in mc[position].steps]
            sources = [s.value_source for s in mc[position].steps]
            mc_steps = [
                {
                    "mc": h,
                    "mc_source": o,
                    "mc_labeler": chain.mc_labeler,
                    "consensus_mc": c,
                    "p_correct_mc": p,
                }
                for h, o, (c, p) in zip(hard, sources, consensus_steps(chain, hard, sources), strict=True)
            ]
        for index, (label, p) in enumerate(consensus_steps(chain, None)):
            row = {
                "chain": chain.item.chain_id,
                "step": index,
                "truth": chain.truth.labels[index],
                "verifier": chain.verifier[index],
                "kind": kinds[index],
                "reference": chain.reference[index],
                "consensus": label,
                "p_correct": p,
                "text": chain.steps[index],
            }
            out.append(row | mc_steps[index] if mc_steps else row)
    return out


def calibration_error(
    chains: Sequence[LabelledChain], probabilities: Sequence[Sequence[float | None]]
) -> tuple[float | None, int]:
    """ECE of `p_correct` against the exact truth (labels.calibration.expected_calibration_error, ten
    bins) over the steps some source voted on, and how many steps that is."""
    pairs = [
        (p, truth == "correct")
        for chain, ps in zip(chains, probabilities, strict=True)
        for truth, p in zip(chain.truth.labels, ps, strict=True)
        if p is not None
    ]
    return expected_calibration_error(pairs), len(pairs)


def predicted_first_error(labels: Sequence[StepLabel], *, unlabelled_blocks: bool) -> int:
    """First `incorrect` step, -1 when none. For MC an unlabelled step before it means the first error
    cannot be located (`rollouts.first_error_mc`): then -1, the claim "no error found"."""
    for index, label in enumerate(labels):
        if label == "incorrect":
            return index
        if label == "unlabelled" and unlabelled_blocks:
            return -1
    return -1


# ---------------------------------------------------------------------------------------------------------
# The table.


@dataclass(frozen=True)
class NoiseRow:
    source: str  # mc-hard | mc-soft | consensus | verifier | reference | consensus (no MC)
    strategy: str  # "" for sources without rollouts
    k: int  # 0 for sources without rollouts
    precision: float  # of `incorrect`, against the truth
    recall: float
    first_error_f1: float
    labelled_share: float
    tokens: int  # rollout tokens the strategy spent at this k (all chains)
    tokens_per_label: float | None  # tokens / labelled steps (None: nothing labelled)
    flagged: int  # steps labelled `incorrect`
    inner_precision: float = 0.0  # the same over steps before the last (MC's last step is the chain outcome)
    inner_recall: float = 0.0
    first_error_exact: float = 0.0  # share of erroneous chains whose first error is found exactly
    first_error_correct_chains: float = 0.0  # share of error-free chains predicted error-free
    ece: float | None = None  # consensus rows: expected calibration error of p_correct against the truth
    ece_steps: int = 0  # the steps it is measured on (those some source voted on)


def score(
    source: str,
    strategy: str,
    k: int,
    chains: Sequence[LabelledChain],
    predicted: Sequence[Sequence[StepLabel]],
    tokens: int,
    *,
    unlabelled_blocks: bool,
) -> NoiseRow:
    pr = step_incorrect_scores([c.truth.labels for c in chains], predicted)
    inner = step_incorrect_scores([c.truth.labels[:-1] for c in chains], [p[:-1] for p in predicted])
    fe = first_error_scores(
        [c.truth.first_error for c in chains],
        [predicted_first_error(p, unlabelled_blocks=unlabelled_blocks) for p in predicted],
    )
    steps = sum(len(p) for p in predicted)
    labelled = sum(label != "unlabelled" for p in predicted for label in p)
    return NoiseRow(
        source,
        strategy,
        k,
        pr.precision,
        pr.recall,
        fe.f1,
        labelled / steps if steps else 0.0,
        tokens,
        tokens / labelled if labelled else None,
        sum(label == "incorrect" for p in predicted for label in p),
        inner.precision,
        inner.recall,
        fe.accuracy_erroneous,
        fe.accuracy_correct,
    )


def _consensus_row(
    strategy: str,
    k: int,
    chains: Sequence[LabelledChain],
    steps: Sequence[Sequence[tuple[StepLabel, float | None]]],
    tokens: int,
) -> NoiseRow:
    """The consensus scored like a source, with the ECE of its `p_correct`."""
    labels = [[label for label, _ in chain] for chain in steps]
    row = score(
        "consensus" if strategy else "consensus (no MC)",
        strategy,
        k,
        chains,
        labels,
        tokens,
        unlabelled_blocks=False,
    )
    ece, n = calibration_error(chains, [[p for _, p in chain] for chain in steps])
    return replace(row, ece=ece, ece_steps=n)


def against_single_sources(rows: Sequence[NoiseRow]) -> list[tuple[NoiseRow, NoiseRow | None]]:
    """Each consensus row beside the best single source it combined: the most precise `incorrect` among
    the verifier, the reference and (with MC) MC's hard labels at the same strategy and k; a source that
    flags nothing has no precision and is passed over (None: none flagged)."""
    by_key = {(r.source, r.strategy, r.k): r for r in rows}
    out = []
    for row in rows:
        if not row.source.startswith("consensus"):
            continue
        singles = [by_key.get(("verifier", "", 0)), by_key.get(("reference", "", 0))]
        if row.strategy:
            singles.append(by_key.get(("mc-hard", row.strategy, row.k)))
        flagged = [r for r in singles if r is not None and r.flagged]
        out.append((row, max(flagged, key=lambda r: r.precision) if flagged else None))
    return out


def noise_table(
    chains: Sequence[LabelledChain],
    recorded: Mapping[str, Sequence[RecordedRollout]],
    ks: Sequence[int],
    params: GenerationParams,
    strategies: Sequence[str] = STRATEGY_NAMES,
    max_steps: int | None = None,
) -> list[NoiseRow]:
    """Rows for the sources without rollouts, then mc-hard, mc-soft and consensus per strategy and k."""
    rows = [
        score(
            "verifier",
            "",
            0,
            chains,
            [verdict_labels(c.verifier) for c in chains],
            0,
            unlabelled_blocks=False,
        ),
        score(
            "reference",
            "",
            0,
            chains,
            [verdict_labels(c.reference) for c in chains],
            0,
            unlabelled_blocks=False,
        ),
        _consensus_row("", 0, chains, [consensus_steps(c, None) for c in chains], 0),
    ]
    items = [c.item for c in chains]
    for name in strategies:
        for k in ks:
            values = replay(items, recorded, make_strategy_at(name, k, max_steps), params)
            tokens = sum(v.tokens for v in values)
            hard = [mc_labels(v, "hard") for v in values]
            soft = [mc_labels(v, "soft") for v in values]
            agreed = [
                consensus_steps(c, [s.hard_label for s in v.steps], [s.value_source for s in v.steps])
                for c, v in zip(chains, values, strict=True)
            ]
            rows.append(score("mc-hard", name, k, chains, hard, tokens, unlabelled_blocks=True))
            rows.append(score("mc-soft", name, k, chains, soft, tokens, unlabelled_blocks=True))
            rows.append(_consensus_row(name, k, chains, agreed, tokens))
    return rows


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _cell(row: NoiseRow, *, inner: bool = False) -> str:
    cells = [f"{_pct(row.precision)} / {_pct(row.recall)}"]
    if inner:
        cells.append(f"{_pct(row.inner_precision)} / {_pct(row.inner_recall)}")
    cells += [_pct(row.first_error_f1), _pct(row.labelled_share)]
    return " | ".join(cells)


def render_markdown(rows: Sequence[NoiseRow]) -> str:
    """Two tables: the sources without rollouts, then one line per (strategy, k) with hard, soft and
    consensus side by side. P / R of `incorrect` over all steps (and over the steps before the last, whose
    MC label is the chain's own outcome), first-error F1, labelled share: all in %."""
    lines = [
        "| source | P / R of `incorrect` | P / R, steps before the last | first-error F1 | labelled % |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {r.source} | {_cell(r, inner=True)} |" for r in rows if not r.strategy]
    lines += [
        "",
        "| strategy | k | tokens / hard label | MC hard: P / R | P / R before last | FE-F1 | labelled %"
        " | MC soft (< 0.5): P / R | FE-F1 | labelled % | consensus: P / R | FE-F1 | labelled % |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    by_key = {(r.source, r.strategy, r.k): r for r in rows}
    for strategy, k in dict.fromkeys((r.strategy, r.k) for r in rows if r.strategy):
        hard, soft, agreed = (by_key[s, strategy, k] for s in ("mc-hard", "mc-soft", "consensus"))
        per_label = "-" if hard.tokens_per_label is None else f"{hard.tokens_per_label:.0f}"
        cells = [_cell(hard, inner=True), _cell(soft), _cell(agreed)]
        lines.append(f"| {strategy} | {k} | {per_label} | {' | '.join(cells)} |")
    lines += [
        "",
        "| consensus | k | `negative` precision (flagged) | best single source: precision (flagged)"
        " | at least as precise | ECE of p_correct (steps) |",
        "|---|---|---|---|---|---|",
    ]
    for row, best in against_single_sources(rows):
        name = row.strategy or "no MC"
        single = "-" if best is None else f"{best.source} {_pct(best.precision)} ({best.flagged})"
        holds = "-" if best is None or not row.flagged else "yes" if row.precision >= best.precision else "no"
        ece = "-" if row.ece is None else f"{row.ece:.3f} ({row.ece_steps})"
        lines.append(
            f"| {name} | {row.k} | {_pct(row.precision)} ({row.flagged}) | {single} | {holds} | {ece} |"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------
# The run on the engine.


def synthetic_problems(count: int, steps: Sequence[int], seed: int) -> list[SyntheticProblem]:
    """`count` problems, the step counts taken in turn (1, 2, 3, 1, 2, 3, ...), each spec from index 0."""
    return [
        synthetic_problem(SyntheticSpec(seed=seed, steps=steps[i % len(steps)]), i // len(steps))
        for i in range(count)
    ]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default="configs/synthetic.toml", help="engine, sampling and rollout settings")
    p.add_argument("--problems", type=int, default=12)
    p.add_argument("--steps", default="1,2,3", help="operations per problem, taken in turn")
    p.add_argument("--seed", type=int, default=0, help="synthetic problem seed")
    p.add_argument("--n", type=int, default=4, help="chains per problem")
    p.add_argument("--k-max", type=int, default=16, help="rollouts drawn from every prefix (a power of 2)")
    p.add_argument("--max-prefixes", type=int, default=None, help="probe at most this many prefixes a chain")
    p.add_argument("--compile", action="store_true", help="torch.compile the engine (default: eager)")
    p.add_argument("--out", type=Path, default=None, help="folder for label_noise.json and label_noise.md")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from prm_factory.config.run_config import load_config
    from prm_factory.flows.generation_run import engine_settings
    from prm_factory.labels.reference import reference_step_labels
    from prm_factory.sampling.backends import drop_sampler, get_sampler
    from prm_factory.sampling.chains import draw_chains
    from prm_factory.sampling.model_prep import resolve_model
    from prm_factory.sampling.prompts import MATH_SYSTEM_PROMPT, math_user_prompt
    from prm_factory.sampling.segment import segment
    from prm_factory.verifiers.math import MathVerifier, MathVerifierConfig
    from prm_factory.verifiers.protocol import outcome_value

    ks = [k for k in (1, 2, 4, 8, 16, 32, 64) if k <= args.k_max]
    config = load_config(args.config)
    walls: dict[str, float] = {}
    problems = synthetic_problems(args.problems, [int(s) for s in args.steps.split(",")], args.seed)
    by_id = {p.problem.problem_id: p for p in problems}
    _, policy = resolve_model(config.model.path)
    verifier = MathVerifier(MathVerifierConfig(timeout_s=config.verifier.timeout_seconds))

    started = time.perf_counter()
    settings = replace(engine_settings(config), enforce_eager=not args.compile)
    sampler: Sampler = get_sampler(settings)
    walls["engine start"] = time.perf_counter() - started

    started = time.perf_counter()
    s = config.sampling
    chain_params = GenerationParams(
        n=args.n, temperature=s.temperature, top_p=s.top_p, max_tokens=s.max_tokens
    )
    drawn = draw_chains(
        sampler, [p.problem for p in problems], chain_params, MATH_SYSTEM_PROMPT, math_user_prompt
    )
    walls["sampling"] = time.perf_counter() - started

    started = time.perf_counter()
    chains: list[LabelledChain] = []
    for d in drawn:
        spans = segment(d.generation.text, config.segmentation.mode)
        if not spans:
            continue
        texts = tuple(span.text for span in spans)
        outcome = verifier.grade(d.problem, d.generation.text).label
        checked = verifier.check_steps(d.problem, texts)
        item = RolloutItem(
            f"{d.problem.problem_id}/{d.sample_index}",
            d.problem,
            d.prompt,
            d.generation.text,
            tuple(span.end for span in spans),
            outcome_value(outcome),
        )
        chains.append(
            LabelledChain(
                item,
                texts,
                outcome,
                chain_truth(by_id[d.problem.problem_id], texts, outcome),
                tuple(v.label for v in checked),
                tuple(v.label for v in reference_step_labels(d.problem, texts, outcome)),
                tuple(v.kind for v in checked),
                f"mc@{policy}",
            )
        )
    walls["segment, grade, truth, verifier, reference"] = time.perf_counter() - started

    started = time.perf_counter()
    r = config.rollouts
    rollout_params = GenerationParams(temperature=r.temperature, top_p=r.top_p, max_tokens=r.max_tokens)
    prefixes: dict[str, tuple[Problem, str]] = {}  # rollout prompt -> problem and graded-text prefix
    for c in chains:
        n_probe = max(0, c.item.n_steps - 1)
        if args.max_prefixes is not None:
            n_probe = min(n_probe, args.max_prefixes)
        for step in range(n_probe):
            prefixes.setdefault(c.item.rollout_prompt(step), (c.item.problem, c.item.prefix(step) + "\n"))
    prompts = list(prefixes)
    print(f"drawing {args.k_max} rollouts from each of {len(prompts)} distinct prefixes", flush=True)
    generations = sampler.generate(prompts, replace(rollout_params, n=args.k_max)) if prompts else []
    drop_sampler(settings)
    walls["rollouts (k_max from every prefix)"] = time.perf_counter() - started

    started = time.perf_counter()
    recorded: dict[str, list[RecordedRollout]] = {}
    for prompt, gens in zip(prompts, generations, strict=True):
        problem, head = prefixes[prompt]
        verdicts = verifier.grade_many(problem, [head + g.text for g in gens])
        recorded[prompt] = [
            RecordedRollout(outcome_value(v.label), g.n_tokens) for v, g in zip(verdicts, gens, strict=True)
        ]
    walls["grading rollouts"] = time.perf_counter() - started

    started = time.perf_counter()
    rows = noise_table(chains, recorded, ks, rollout_params, max_steps=args.max_prefixes)
    walls["replay and scoring"] = time.perf_counter() - started
    verifier.close()

    n_steps = sum(len(c.steps) for c in chains)
    wrong = sum(label == "incorrect" for c in chains for label in c.truth.labels)
    outcomes = [o.correct for rs in recorded.values() for o in rs]
    summary = {
        "problems": len(problems),
        "steps_per_problem": args.steps,
        "n": args.n,
        "k_max": args.k_max,
        "chains": len(chains),
        "chains_correct": sum(c.outcome == "correct" for c in chains),
        "chains_without_error": sum(c.truth.first_error == -1 for c in chains),
        "steps": n_steps,
        "steps_incorrect": wrong,
        "prefixes": len(prompts),
        "rollouts": len(outcomes),
        "rollouts_correct": sum(o is True for o in outcomes),
        "rollout_tokens": sum(r.tokens for rs in recorded.values() for r in rs),
        "wall_seconds": {name: round(seconds, 1) for name, seconds in walls.items()},
    }
    markdown = render_markdown(rows)
    print(json.dumps(summary, indent=2))
    print(markdown)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "label_noise.json").write_text(
            json.dumps({"summary": summary, "rows": [asdict(row) for row in rows]}, indent=2)
        )
        (args.out / "label_noise.md").write_text(markdown + "\n")
        exhaustive = replay(
            [c.item for c in chains],
            recorded,
            make_strategy_at("exhaustive", ks[-1], args.max_prefixes),
            rollout_params,
        )
        steps = "".join(json.dumps(row) + "\n" for row in step_rows(chains, exhaustive))
        (args.out / "label_noise_steps.jsonl").write_text(steps)
        print(f"wrote {args.out / 'label_noise.json'} and {args.out / 'label_noise.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
