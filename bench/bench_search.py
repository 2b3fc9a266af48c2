"""Search with the factory's PRM on held-out problems: the whole loop, timed step by step.

Why a bench: the question is whether labels from this factory make a PRM that picks better answers than a
plain vote, at equal numbers of samples, and what each step of getting there costs on this machine. It runs:

1. the factory (`prm-factory run`) on training problems (synthetic problems of 1-3 steps from the train
   seed, or GSM8K train rows), line segmentation (TRL's "\\n" separator), no rollouts (the README's
   label-noise table: MC labels carry almost no signal with the embedded model);
2. `prm-factory export trl --label consensus --check-tokenizer` (the PRM's rows), and the same rows with
   every step labelled by the chain's graded outcome (`prm-factory query` of `chains.outcome`): the ORM,
   which differs from the PRM in its labels only;
3. TRL's PRM trainer (examples/train_prm_trl.py's functions) on each, one epoch, SmolLM2-135M backbone;
4. `search.evaluate.evaluate_search` on held-out problems (another synthetic seed, or GSM8K rows after
   the training rows): N chains each, majority vote, ORM and PRM best-of-N, weighted votes, PRM beam search.

    python -m bench.bench_search --out /tmp/search                       # synthetic, the README's sizes
    python -m bench.bench_search --source gsm8k --train-problems 40 --held-out 30 --out /tmp/search-gsm8k
    python -m bench.bench_search --out /tmp/search --reuse               # keep trained checkpoints

It prints the table (markdown), a JSON summary and the wall time of every step, and writes search.json (what
`prm-factory report --search search.json` shows) and search.md under --out.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repo's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "prm_factory.cli"]


def synthetic_problems(count: int, steps: Sequence[int], seed: int) -> list[Any]:
    """`count` problems, the step counts taken in turn (1, 2, 3, 1, ...), each spec from index 0."""
    from prm_factory.schemas.synthetic import SyntheticSpec, synthetic_problem

    return [
        synthetic_problem(SyntheticSpec(seed=seed, steps=steps[i % len(steps)]), i // len(steps)).problem
        for i in range(count)
    ]


def write_gsm8k_jsonl(problems: Sequence[Any], path: Path) -> None:
    """Problems as GSM8K rows (question, worked answer ending in `#### N`): what `problems.path` reads."""
    with path.open("w") as out:
        for p in problems:
            out.write(json.dumps({"question": p.text, "answer": p.reference_solution}) + "\n")


def _cli(args: Sequence[str], log: Path) -> None:
    with log.open("a") as sink:
        sink.write(f"$ prm-factory {' '.join(args)}\n")
        sink.flush()
        done = subprocess.run([*CLI, *args], cwd=REPO, stdout=sink, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        raise SystemExit(f"prm-factory {args[0]} failed (exit {done.returncode}); see {log}")


def training_data(args: argparse.Namespace, out: Path, log: Path, walls: dict[str, float]) -> Path:
    """Run the factory on the training problems and export the PRM rows; returns the parquet path."""
    dataset = out / "dataset"
    overrides = [
        "--set", f"problems.limit={args.train_problems}",
        "--set", f"sampling.n={args.train_n}",
        "--set", "rollouts.max_steps=0",
        "--set", 'segmentation.mode="line"',
    ]  # fmt: skip
    if args.source == "synthetic":
        problems_file = out / "train_problems.jsonl"
        write_gsm8k_jsonl(synthetic_problems(args.train_problems, args.steps, args.train_seed), problems_file)
        overrides += ["--problems", str(problems_file)]
    else:
        overrides += ["--set", "problems.offset=0"]
    mark = time.perf_counter()
    _cli(["run", "--config", "configs/default.toml", "--dataset", str(dataset), *overrides], log)
    walls["factory run (sample, verify, label, commit)"] = time.perf_counter() - mark

    from prm_factory.sampling.model_prep import prepare_default_model

    mark = time.perf_counter()
    export = out / "prm.parquet"
    _cli(
        ["export", "trl", "-o", str(export), "--dataset", str(dataset), "--label", "consensus"]
        + ["--check-tokenizer", str(prepare_default_model())],
        log,
    )
    _cli(
        ["query", "--dataset", str(dataset), "--format", "parquet", "--output", str(out / "outcomes.parquet")]
        + ["SELECT chain_id, outcome FROM chains"],
        log,
    )
    walls["export trl + outcomes"] = time.perf_counter() - mark
    return export


def orm_rows(prm_rows: Any, outcomes: dict[str, str]) -> Any:
    """The PRM's rows with every step labelled by its chain's graded outcome (correct or not)."""
    return prm_rows.map(
        lambda row: {"labels": [outcomes.get(row["chain_id"]) == "correct"] * len(row["labels"])}
    )


def train(
    rows: Any, output_dir: Path, args: argparse.Namespace, example: Any, model_dir: Path
) -> dict[str, float]:
    """One epoch of TRL's PRM trainer on `rows`, saved to `output_dir`; returns loss and steps."""
    model, tokenizer = example.load_model(model_dir)
    steps = math.ceil(len(rows) * args.epochs / args.batch_size)
    trainer = example.build_trainer(
        model,
        tokenizer,
        rows,
        None,
        output_dir,
        max_steps=steps,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        max_length=None,
        seed=0,
    )
    result = trainer.train()
    trainer.save_model(str(output_dir))
    tokenizer.save_pretrained(str(output_dir))
    return {"train_loss": result.training_loss, "optimizer_steps": steps}


def truncated_backbone(model_dir: Path, layers: int | None, out: Path) -> Path:
    """The checkpoint with only its first `layers` transformer layers (None: the whole model).

    Why: on a loaded 2-core machine the full 30-layer SmolLM2 trains at well over a minute per batch of 4
    and scores about 20 tokens a second, which does not fit the bench's time; the first layers of the same
    backbone keep its embeddings and tokenizer at a fraction of the compute.
    """
    if layers is None:
        return model_dir
    target = out / f"backbone-{layers}-layers"
    if not (target / "config.json").exists():
        from transformers import AutoModelForCausalLM, AutoTokenizer

        model = AutoModelForCausalLM.from_pretrained(model_dir, num_hidden_layers=layers)
        model.save_pretrained(target)
        AutoTokenizer.from_pretrained(model_dir).save_pretrained(target)
    return target


def _example() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_prm_trl", REPO / "examples" / "train_prm_trl.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["train_prm_trl"] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def held_out_problems(args: argparse.Namespace, train_ids: set[str], train_texts: set[str]) -> list[Any]:
    if args.source == "synthetic":
        candidates = synthetic_problems(args.held_out * 2, args.steps, args.held_out_seed)
    else:
        from prm_factory.schemas.gsm8k import load_gsm8k

        path = REPO.parent / "shared" / "data" / "gsm8k" / "train.jsonl"
        candidates = list(load_gsm8k(path, offset=args.held_out_offset, limit=args.held_out * 2).problems)
    fresh = [p for p in candidates if p.problem_id not in train_ids and p.text not in train_texts]
    return fresh[: args.held_out]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--source", choices=("synthetic", "gsm8k"), default="synthetic")
    p.add_argument("--steps", default="1,2,3", help="synthetic: operations per problem, taken in turn")
    p.add_argument("--train-problems", type=int, default=60)
    p.add_argument("--train-n", type=int, default=4, help="chains per training problem")
    p.add_argument("--train-seed", type=int, default=0)
    p.add_argument("--held-out", type=int, default=45, help="held-out problems")
    p.add_argument("--held-out-seed", type=int, default=1000, help="synthetic seed of the held-out problems")
    p.add_argument("--held-out-offset", type=int, default=5000, help="gsm8k: first held-out row")
    p.add_argument("--n", type=int, default=8, help="chains per held-out problem")
    p.add_argument("--beam", default="4,8", help="beam search budgets (empty: none)")
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--learning-rate", type=float, default=5e-5)
    p.add_argument(
        "--prm-layers", type=int, default=None, help="PRM/ORM backbone: the first L layers (default: all)"
    )
    p.add_argument("--reuse", action="store_true", help="reuse data and checkpoints already under --out")
    p.add_argument("--out", type=Path, required=True)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    args.steps = [int(s) for s in args.steps.split(",")]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    args.out.mkdir(parents=True, exist_ok=True)
    log = args.out / "bench.log"
    walls: dict[str, float] = {}
    started = time.perf_counter()

    export = args.out / "prm.parquet"
    if not (args.reuse and export.exists()):
        export = training_data(args, args.out, log, walls)

    from datasets import load_dataset

    from prm_factory.sampling.model_prep import prepare_default_model

    model_dir = truncated_backbone(prepare_default_model(), args.prm_layers, args.out)
    example = _example()
    prm_rows = load_dataset("parquet", data_files=str(export), split="train")
    outcomes_table = load_dataset("parquet", data_files=str(args.out / "outcomes.parquet"), split="train")
    outcomes = dict(zip(outcomes_table["chain_id"], outcomes_table["outcome"], strict=True))
    training: dict[str, Any] = {
        "rows": len(prm_rows),
        "steps": sum(len(r) for r in prm_rows["labels"]),
        "steps_positive": sum(sum(r) for r in prm_rows["labels"]),
        "chains": len(outcomes),
        "chains_correct": sum(o == "correct" for o in outcomes.values()),
    }
    for name, rows in (("prm", prm_rows), ("orm", orm_rows(prm_rows, outcomes))):
        target = args.out / name
        if args.reuse and (target / "config.json").exists():
            continue
        mark = time.perf_counter()
        training[name] = train(rows, target, args, example, model_dir)
        walls[f"train {name} ({len(rows)} rows, {args.epochs:g} epoch)"] = time.perf_counter() - mark
    print(json.dumps({"training": training}, indent=2), flush=True)

    from prm_factory.config.run_config import load_config
    from prm_factory.flows.generation_run import engine_settings
    from prm_factory.sampling.backends import drop_sampler, get_sampler
    from prm_factory.sampling.protocol import GenerationParams
    from prm_factory.search.evaluate import evaluate_search
    from prm_factory.training.step_scorer import StepScorer

    train_problems = pd_problem_keys(args.out / "dataset")
    problems = held_out_problems(args, *train_problems)
    config = load_config(REPO / "configs" / "default.toml")
    s = config.sampling
    params = GenerationParams(temperature=s.temperature, top_p=s.top_p, max_tokens=s.max_tokens)

    mark = time.perf_counter()
    prm, orm = StepScorer(args.out / "prm"), StepScorer(args.out / "orm")
    walls["load PRM and ORM"] = time.perf_counter() - mark
    mark = time.perf_counter()
    settings = engine_settings(config)
    sampler = get_sampler(settings)
    walls["engine start"] = time.perf_counter() - mark
    try:
        result = evaluate_search(
            sampler,
            problems,
            prm,
            orm,
            n=args.n,
            params=params,
            beam_budgets=[int(b) for b in args.beam.split(",") if b.strip()],
            label=f"{args.source}, {len(problems)} held-out problems",
            progress=lambda line: print(f"[{time.perf_counter() - started:6.0f} s] {line}", flush=True),
        )
    finally:
        drop_sampler(settings)
    walls.update(result.timings)
    walls["total"] = time.perf_counter() - started

    summary = {
        **result.to_dict(),
        "training": training,
        "wall_seconds": {k: round(v, 1) for k, v in walls.items()},
    }
    markdown = result.markdown()
    (args.out / "search.json").write_text(json.dumps(summary, indent=2))
    (args.out / "search.md").write_text(markdown + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}, indent=2))
    print(markdown)
    print(f"wrote {args.out / 'search.json'} and {args.out / 'search.md'}")
    return 0


def pd_problem_keys(dataset: Path) -> tuple[set[str], set[str]]:
    """Ids and texts of the problems the training dataset holds (the held-out set must avoid both)."""
    out = dataset.parent / "train_problems.parquet"
    _cli(
        ["query", "--dataset", str(dataset), "--format", "parquet", "--output", str(out)]
        + ["SELECT problem_id, text FROM problems"],
        dataset.parent / "bench.log",
    )
    import pyarrow.parquet as pq

    table = pq.read_table(out).to_pydict()
    return set(table["problem_id"]), set(table["text"])


if __name__ == "__main__":
    raise SystemExit(main())
