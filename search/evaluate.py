"""The search evaluation on held-out problems: sample N chains, grade them, score them with the PRM and the
ORM, run the PRM beam search at the same budgets, and tabulate every method (search.methods).

Why one function: `prm-factory search-eval` and `bench/bench_search.py` must measure the same thing; the
CLI only resolves options and the engine, the bench adds data generation and training around it.

Chains are split into steps exactly as the training export was (`line` segmentation, the PRM trainer's
"\\n" separator), graded by the math verifier against the problem's reference, and voted on by their
final answer read the way the grader reads it (`verifiers.math.final_answer.extract_answer`), with equal
numbers as one answer (`12`, `12.0` and `$12` vote together).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from prm_factory.sampling.chains import draw_chains
from prm_factory.sampling.prompts import MATH_SYSTEM_PROMPT, math_user_prompt
from prm_factory.sampling.protocol import GenerationParams, Sampler
from prm_factory.sampling.segment import segment
from prm_factory.schemas.records import Problem
from prm_factory.search.beam_search import beam_search
from prm_factory.search.methods import (
    Candidate,
    SearchRow,
    render_markdown,
    rows_as_dicts,
    search_rows,
    single_pick_rows,
    standard_methods,
)
from prm_factory.training.step_scorer import ChainScorer
from prm_factory.verifiers.math import MathVerifier
from prm_factory.verifiers.math.answers import AnswerTooLarge, normalize_answer, plain_value
from prm_factory.verifiers.math.final_answer import extract_answer
from prm_factory.verifiers.protocol import Verdict


def vote_key(text: str, *, last_number_fallback: bool = True) -> str | None:
    """The final answer as a vote key: its exact value where it reads as numbers, else its compact text.

    >>> vote_key("so 3 * 4 = 12.\\nThe answer is 12.0"), vote_key("The answer is $12"), vote_key("no idea")
    ('12', '12', None)
    """
    found = extract_answer(text, last_number_fallback=last_number_fallback)
    if found is None:
        return None
    normalized = normalize_answer(found.text)
    try:
        value = plain_value(normalized)
    except AnswerTooLarge:
        value = None
    if value is not None:
        return ",".join(str(v) for v in value)
    return "".join(normalized.split()) or None


@dataclass(frozen=True)
class SearchEvaluation:
    """The table and what produced it; `to_dict` is the JSON `prm-factory report --search` reads."""

    rows: list[SearchRow]
    problems: int
    n: int
    beam_budgets: tuple[int, ...]
    chain_accuracy: float  # share of all sampled chains graded correct
    timings: dict[str, float] = field(default_factory=dict)
    label: str = ""

    def markdown(self) -> str:
        return render_markdown(self.rows)

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "problems": self.problems,
            "n": self.n,
            "beam_budgets": list(self.beam_budgets),
            "chain_accuracy": self.chain_accuracy,
            "timings": {k: round(v, 1) for k, v in self.timings.items()},
            "rows": rows_as_dicts(self.rows),
        }


def _steps(text: str) -> list[str]:
    return [span.text for span in segment(text, "line")]


def _graded(verifier: MathVerifier, problem: Problem, texts: Sequence[str]) -> list[Verdict]:
    return verifier.grade_many(problem, list(texts)) if texts else []


def budgets_up_to(n: int) -> list[int]:
    """1, 2, 4, ... up to n (n itself included).

    >>> budgets_up_to(8), budgets_up_to(6)
    ([1, 2, 4, 8], [1, 2, 4, 6])
    """
    out, b = [], 1
    while b < n:
        out.append(b)
        b *= 2
    return [*out, n]


def evaluate_search(
    sampler: Sampler,
    problems: Sequence[Problem],
    prm: ChainScorer,
    orm: ChainScorer | None,
    *,
    n: int,
    params: GenerationParams,
    beam_budgets: Sequence[int] = (),
    expansions: int = 4,
    max_steps: int = 12,
    verifier: MathVerifier | None = None,
    label: str = "",
    progress: Callable[[str], None] = lambda _: None,
) -> SearchEvaluation:
    """Every method of `search.methods` at budgets 1, 2, 4, ..., n, plus PRM beam search at each of
    `beam_budgets`, on `problems`; wall time of each stage in `timings`."""
    own_verifier = verifier is None
    verifier = verifier or MathVerifier()
    timings: dict[str, float] = {}
    try:
        mark = time.perf_counter()
        prompts = [sampler.render_chat(MATH_SYSTEM_PROMPT, math_user_prompt(p.text)) for p in problems]
        drawn = draw_chains(sampler, problems, replace(params, n=n), MATH_SYSTEM_PROMPT, math_user_prompt)
        timings[f"sample {n} chains x {len(problems)} problems"] = time.perf_counter() - mark
        progress(f"sampled {len(drawn)} chains")

        mark = time.perf_counter()
        per_problem = [[d for d in drawn if d.problem.problem_id == p.problem_id] for p in problems]
        verdicts = [
            _graded(verifier, p, [d.generation.text for d in ds])
            for p, ds in zip(problems, per_problem, strict=True)
        ]
        timings["grade"] = time.perf_counter() - mark

        scores: dict[str, list[Any]] = {}
        for name, scorer in (("prm", prm), ("orm", orm)):
            if scorer is None:
                continue
            mark = time.perf_counter()
            scores[name] = scorer.score([(d.problem.text, _steps(d.generation.text)) for d in drawn])
            timings[f"score {len(drawn)} chains ({name})"] = time.perf_counter() - mark
            progress(f"scored with the {name}")

        candidates: list[list[Candidate]] = []
        flat = 0
        for ds, vs in zip(per_problem, verdicts, strict=True):
            row = []
            for d, v in zip(ds, vs, strict=True):
                row.append(
                    Candidate(
                        vote_key(d.generation.text),
                        v.label == "correct",
                        d.generation.n_tokens,
                        {name: s[flat].scores for name, s in scores.items()},
                        {name: s[flat].tokens for name, s in scores.items()},
                    )
                )
                flat += 1
            candidates.append(row)

        methods = standard_methods()
        if orm is None:
            methods = {k: m for k, m in methods.items() if "orm" not in m.scorers}
        rows = search_rows(candidates, budgets_up_to(n), methods)

        picks: dict[int, list[Candidate]] = {}
        for budget in beam_budgets:
            mark = time.perf_counter()
            found = beam_search(
                sampler,
                prm.score,
                [p.text for p in problems],
                prompts,
                budget,
                params,
                expansions=expansions,
                max_steps=max_steps,
            )
            timings[f"beam search N = {budget}"] = time.perf_counter() - mark
            progress(f"beam search at N = {budget} done")
            graded = [_graded(verifier, p, [b.text])[0] for p, b in zip(problems, found, strict=True)]
            picks[budget] = [
                Candidate(
                    vote_key(b.text), v.label == "correct", b.policy_tokens, {}, {"prm": b.scorer_tokens}
                )
                for b, v in zip(found, graded, strict=True)
            ]
        if picks:
            rows += single_pick_rows("prm beam search", picks, candidates)

        all_verdicts = [v for vs in verdicts for v in vs]
        accuracy = (
            sum(v.label == "correct" for v in all_verdicts) / len(all_verdicts) if all_verdicts else 0.0
        )
        return SearchEvaluation(rows, len(problems), n, tuple(beam_budgets), accuracy, timings, label)
    finally:
        if own_verifier:
            verifier.close()
