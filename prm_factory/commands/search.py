"""`prm-factory search-eval`: best-of-N, weighted votes and beam search with a trained PRM, against majority
vote and an ORM, on held-out problems (search.evaluate does the work)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from prm_factory.console import fail

if TYPE_CHECKING:
    from prm_factory.config.run_config import RunConfig
    from prm_factory.schemas.records import Problem
    from prm_factory.search.evaluate import SearchEvaluation
    from prm_factory.training.step_scorer import ChainScorer

app = typer.Typer()
"""The search-eval command; prm_factory/cli.py merges it into the main app."""


def register(parent: typer.Typer) -> None:
    """Merge this group's commands into `parent` (the main app, or a test's)."""
    parent.add_typer(app)


def _ints(text: str, option: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        fail(f"{option} expects comma-separated integers, got {text!r}")
    if any(v < 1 for v in values):
        fail(f"{option} values must be at least 1, got {text!r}")
    return values


def scorer_of(checkpoint: Path) -> ChainScorer:
    """A `prm-factory train` checkpoint is read at its own layout (training.scorer), others as TRL wrote them
    (training.step_scorer)."""
    from prm_factory.training.model import METADATA
    from prm_factory.training.scorer import PrmScorer
    from prm_factory.training.step_scorer import StepScorer

    return PrmScorer(checkpoint) if (checkpoint / METADATA).is_file() else StepScorer(checkpoint)


@app.command("search-eval")
def search_eval(
    prm: Annotated[Path, typer.Option(help="PRM checkpoint from examples/train_prm_trl.py")],
    orm: Annotated[
        Path | None,
        typer.Option(help="ORM checkpoint (the same trainer on outcome labels)"),
    ] = None,
    source: Annotated[str, typer.Option(help="held-out problems: synthetic | gsm8k")] = "synthetic",
    seed: Annotated[int, typer.Option(help="synthetic: the held-out seed (not the training seed)")] = 1000,
    steps: Annotated[str, typer.Option(help="synthetic: operations per problem, taken in turn")] = "1,2,3",
    path: Annotated[Path | None, typer.Option(help="gsm8k: problems file (default: shared train)")] = None,
    offset: Annotated[int, typer.Option(min=0, help="gsm8k: first row (after the training rows)")] = 0,
    limit: Annotated[int, typer.Option(min=1, help="held-out problems")] = 30,
    n: Annotated[int, typer.Option(min=1, help="chains per problem (budgets 1, 2, 4, ... n)")] = 8,
    beam: Annotated[str, typer.Option(help="beam search budgets, e.g. 4,8 ('' for none)")] = "4,8",
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="engine and sampling settings (TOML)"),
    ] = None,
    out: Annotated[Path, typer.Option(help="JSON results (`prm-factory report --search` reads it)")] = Path(
        "search.json"
    ),
) -> None:
    """Compare search methods at equal numbers of samples, counting the reward models' compute."""
    from prm_factory.config.run_config import ConfigError, load_config

    if source not in ("synthetic", "gsm8k"):
        fail(f"--source must be synthetic or gsm8k, got {source!r}")
    for checkpoint in (prm, orm):
        if checkpoint is not None and not (checkpoint / "config.json").is_file():
            fail(f"{checkpoint}: not a saved checkpoint (no config.json)")
    budgets = _ints(beam, "--beam")
    try:
        cfg = load_config(config)
    except ConfigError as err:
        fail(str(err))
    if source == "synthetic":
        problems = _synthetic_problems(seed, _ints(steps, "--steps"), limit)
    else:
        from prm_factory.config.run_config import SHARED_GSM8K
        from prm_factory.schemas.gsm8k import load_gsm8k

        problems = load_gsm8k(path or SHARED_GSM8K, offset=offset, limit=limit).problems
    result = _search(
        cfg,
        problems,
        prm,
        orm,
        n,
        budgets,
        f"{source}, {len(problems)} held-out problems",
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result.to_dict(), indent=2))
    print(result.markdown())
    for stage, seconds in result.timings.items():
        print(f"  {stage}: {seconds:.1f} s")
    print(f"chain accuracy {100 * result.chain_accuracy:.1f} %; wrote {out}")


def _synthetic_problems(seed: int, counts: list[int], limit: int) -> list[Problem]:
    """`limit` held-out synthetic problems, their operation counts taken from `counts` in turn."""
    from prm_factory.schemas.synthetic import SyntheticSpec, synthetic_problem

    return [
        synthetic_problem(SyntheticSpec(seed=seed, steps=counts[i % len(counts)]), i // len(counts)).problem
        for i in range(limit)
    ]


def _search(
    cfg: RunConfig,
    problems: list[Problem],
    prm: Path,
    orm: Path | None,
    n: int,
    budgets: list[int],
    label: str,
) -> SearchEvaluation:
    """Run the search methods on the config's engine, started here unless one is up already."""
    from prm_factory.flows.engines import engine_settings
    from prm_factory.sampling.backends import drop_sampler, get_sampler, is_running
    from prm_factory.sampling.protocol import GenerationParams
    from prm_factory.search.evaluate import evaluate_search

    console = Console()
    s = cfg.sampling
    settings = engine_settings(cfg)
    scorers = scorer_of(prm), (scorer_of(orm) if orm is not None else None)
    owned = not is_running(settings)  # an engine already up (a test session's) stays up
    sampler = get_sampler(settings)
    try:
        return evaluate_search(
            sampler,
            problems,
            *scorers,
            n=n,
            params=GenerationParams(temperature=s.temperature, top_p=s.top_p, max_tokens=s.max_tokens),
            beam_budgets=budgets,
            label=label,
            progress=lambda line: console.print(line, highlight=False),
        )
    finally:
        if owned:
            drop_sampler(settings)
