"""What whole-batch submission costs: `submit_as_one_batch` (scheduler paused while a call's requests are
added, prefix cache emptied first: sampling/reproducibility.py) against vLLM's plain `LLM.generate`, on one
offline engine, in one run.

The workload is shaped like a chunk's rollouts under binary search: the step prefixes of `--problems` GSM8K
gold solutions, k rollouts each, submitted in `--rounds` engine calls (round r takes every `rounds`-th
prefix from r), so later calls share the problem prompts and earlier steps with the calls before them. The
plain path reuses those prefixes from the cache across calls; the whole-batch path does not (it reuses
them only within a call). Each repetition times the paths back to back, each going first in turn;
the ratio is the median over repetitions of plain seconds / whole-batch seconds (above 1: whole batches are
faster). A third path, `scoped`, is what a chunk's rollouts do now (`VLLMSampler.batch_scope`): whole
batches, the cache emptied before the first call only, so later calls reuse the earlier calls' prefixes.
Every path draws with the same per-request seeds. The prefix-cache hit rate of each path is printed.

    .venv/bin/python bench/bench_fixed_batch.py                 # a few minutes on 2 cores
    .venv/bin/python bench/bench_fixed_batch.py --problems 8 --k 4 --rounds 3 --reps 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from prm_factory.config.run_config import RunConfig
from prm_factory.flows.engines import engine_settings
from prm_factory.sampling.prompts import MATH_SYSTEM_PROMPT, math_user_prompt
from prm_factory.sampling.vllm_sampler import get_sampler, request_seed, submit_as_one_batch
from prm_factory.schemas.gsm8k import gsm8k_solution_steps, load_gsm8k

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "gsm8k" / "train.jsonl"


def rounds_of_prefixes(engine, data: Path, problems: int, offset: int, rounds: int) -> list[list[str]]:
    """The step prefixes of the gold solutions, dealt into `rounds` engine calls."""
    loaded = load_gsm8k(data, limit=offset + problems).problems[offset:]
    prefixes = []
    for problem in loaded:
        prompt = engine.render_chat(MATH_SYSTEM_PROMPT, math_user_prompt(problem.text))
        steps = gsm8k_solution_steps(problem.reference_solution or "")
        prefixes += [prompt + "\n".join(steps[: i + 1]) + "\n" for i in range(len(steps) - 1)]
    return [prefixes[r::rounds] for r in range(rounds)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="GSM8K jsonl")
    parser.add_argument("--problems", type=int, default=6, help="gold solutions")
    parser.add_argument("--offset", type=int, default=100, help="first GSM8K row")
    parser.add_argument("--k", type=int, default=4, help="rollouts per prefix")
    parser.add_argument("--max-tokens", type=int, default=48, help="max new tokens per rollout")
    parser.add_argument("--rounds", type=int, default=3, help="engine calls the prefixes are dealt into")
    parser.add_argument("--reps", type=int, default=3, help="repetitions (each times both paths)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from vllm import SamplingParams

    engine = get_sampler(engine_settings(RunConfig()))
    llm = engine._llm
    calls = rounds_of_prefixes(engine, args.data, args.problems, args.offset, args.rounds)

    def params(prompts: list[str]) -> list[SamplingParams]:
        return [
            SamplingParams(
                n=args.k, temperature=0.7, top_p=0.95, max_tokens=args.max_tokens, seed=request_seed(0, p)
            )
            for p in prompts
        ]

    paths = {
        "plain": lambda prompts, first: llm.generate(prompts, params(prompts), use_tqdm=False),
        "whole-batch": lambda prompts, first: submit_as_one_batch(llm, prompts, params(prompts)),
        "scoped": lambda prompts, first: submit_as_one_batch(
            llm, prompts, params(prompts), reset_prefix_cache=first
        ),
    }

    def run(name: str) -> tuple[float, int, float]:
        llm.reset_prefix_cache()  # each path starts from an empty cache
        queried, hit = engine.prefix_cache_totals()
        started, tokens = time.perf_counter(), 0
        for index, prompts in enumerate(calls):
            tokens += sum(len(o.token_ids) for r in paths[name](prompts, index == 0) for o in r.outputs)
        seconds = time.perf_counter() - started
        queried2, hit2 = engine.prefix_cache_totals()
        return seconds, tokens, (hit2 - hit) / max(1, queried2 - queried)

    print(
        f"{sum(map(len, calls))} prefixes x k={args.k} in {args.rounds} calls, max_tokens={args.max_tokens}; "
        f"load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    names = list(paths)
    for name in names:  # untimed warm-up of every path
        run(name)
    ratios: dict[str, list[float]] = {name: [] for name in names[1:]}
    for rep in range(args.reps):
        order = names[rep % len(names) :] + names[: rep % len(names)]  # each path goes first in turn
        timed = {name: run(name) for name in order}
        plain_s = timed["plain"][0]
        parts = []
        for name in names:
            seconds, tokens, hit_rate = timed[name]
            parts.append(f"{name} {seconds:.1f} s ({tokens / seconds:.0f} tok/s, prefix hits {hit_rate:.2f})")
            if name != "plain":
                ratios[name].append(plain_s / seconds)
        print(f"rep {rep}: " + ", ".join(parts) + f"; load {os.getloadavg()[0]:.1f}", flush=True)
    for name, values in ratios.items():
        print(f"median ratio plain / {name} seconds: {statistics.median(values):.2f}x")
    engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
