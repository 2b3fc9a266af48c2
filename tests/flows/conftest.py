"""A fake engine for flow tests: the real flow, stages and storage, with generation replaced by a script.

The flow reaches the engine only through `get_sampler(settings)`; patching that in flows.tasks (and the model
lookup in flows.plan) runs every other stage for real in seconds, so resume, selection and artifacts are
tested without starting vLLM.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from prm_factory.config.run_config import RunConfig, load_config
from prm_factory.sampling.protocol import Generation, GenerationParams
from prm_factory.sampling.vllm_sampler import EngineSettings

QUESTIONS = [
    ("Tom has 3 apples and buys 4 more. How many apples does he have?", "3+4=<<3+4=7>>7\n#### 7", "7"),
    ("A box holds 6 eggs. How many eggs are in 2 boxes?", "6*2=<<6*2=12>>12\n#### 12", "12"),
    ("Sam reads 5 pages a day for 3 days. How many pages?", "5*3=<<5*3=15>>15\n#### 15", "15"),
    ("Ann had 10 coins and spent 4. How many are left?", "10-4=<<10-4=6>>6\n#### 6", "6"),
]


@dataclass
class FakeSampler:
    """Answers every chain prompt with two arithmetic steps and every rollout with the right answer."""

    model_id: str = "fake-model"
    seed: int = 0
    generate_calls: int = 0
    prompts_seen: list[str] = field(default_factory=list)

    def render_chat(self, system: str | None, user: str) -> str:
        return f"<system>{system}</system><user>{user}</user><assistant>"

    def generate(self, prompts: Sequence[str], params: GenerationParams) -> list[list[Generation]]:
        self.generate_calls += 1
        self.prompts_seen.extend(prompts)
        out = []
        for prompt in prompts:
            answer = next((a for q, _, a in QUESTIONS if q in prompt), "0")
            if prompt.endswith("<assistant>"):  # a fresh chain
                text = f"Step 1: We compute the result.\nStep 2: The answer is {answer}."
            else:  # a rollout from a step prefix
                text = f"\nThe answer is {answer}."
            out.append([Generation(text, 12, "stop") for _ in range(params.n)])
        return out


@dataclass
class FakeEngine:
    sampler: FakeSampler
    starts: int = 0
    fail_in: set[str] = field(default_factory=set)  # stages whose engine call raises (a crash)
    ok_calls: dict[str, int] = field(default_factory=dict)  # calls of a failing stage that succeed first
    calls: dict[str, int] = field(default_factory=dict)

    def call(self, stage: str, message: str) -> None:
        """Count a call of `stage`; raise (the engine crashed) when the stage is set to fail now."""
        self.calls[stage] = self.calls.get(stage, 0) + 1
        if stage in self.fail_in and self.calls[stage] > self.ok_calls.get(stage, 0):
            raise RuntimeError(message)


@pytest.fixture()
def host_reads_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each run's plan reads the host (sampling/cpu_host.detect_host) and, while the load average reads busy,
    as it does all through the suite, samples /proc/stat for 0.3 s and walks this process's tree: about 0.6 s
    a run. It only picks a real engine's thread binding (in no stage's key, flows/plan.py); a fake-engine run
    reads the host idle at once."""
    from prm_factory.sampling import cpu_host

    monkeypatch.setattr(cpu_host, "busy_cores", lambda *args, **kwargs: 0.0)


@pytest.fixture()
def fake_engine(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_retry_delays: None, host_reads_idle: None
) -> FakeEngine:
    import prm_factory.flows.plan as plan
    import prm_factory.flows.tasks as gen
    import prm_factory.rollouts as rollouts
    import prm_factory.sampling.backends as backends

    engine = FakeEngine(FakeSampler())
    checkpoint = tmp_path / "fake-checkpoint"
    checkpoint.mkdir()

    def settings(config: RunConfig) -> EngineSettings:
        return EngineSettings(checkpoint=str(checkpoint), model_id="fake-model", seed=config.model.seed)

    def get_sampler(_settings: EngineSettings) -> FakeSampler:
        engine.starts += 1
        return engine.sampler

    real_draw, real_estimate = gen.draw_chains, rollouts.estimate_values

    def draw_chains(*args, **kwargs):
        engine.call("sample", "engine died while sampling")
        return real_draw(*args, **kwargs)

    def estimate_values(*args, **kwargs):
        engine.call("rollouts", "engine died during rollouts")
        return real_estimate(*args, **kwargs)

    monkeypatch.setattr(plan, "engine_settings", settings)
    monkeypatch.setattr(plan, "weights_hash", lambda _path: "f" * 64)
    monkeypatch.setattr(gen, "get_sampler", get_sampler)
    monkeypatch.setattr(gen, "drop_sampler", lambda _settings: None)
    monkeypatch.setattr(gen, "draw_chains", draw_chains)
    monkeypatch.setattr(rollouts, "estimate_values", estimate_values)  # what the mc source calls
    # label sources with an engine (the judge) reach it through sampling.backends
    monkeypatch.setattr(backends, "get_sampler", get_sampler)
    monkeypatch.setattr(backends, "drop_sampler", lambda _settings: None)
    # the engine tasks retry with delays; a test of failure wants the failure at once (the other tasks keep
    # their retries without the waits: `no_retry_delays`). The task objects themselves change: the pipelines
    # (flows/stages.py) hold them since import, not the module's names
    for name in ("start_engine_task", "sample_task", "rollouts_task"):
        monkeypatch.setattr(getattr(gen, name), "retries", 0)
    return engine


@pytest.fixture()
def questions() -> list[tuple[str, str, str]]:
    """The problems of `gsm8k_file`, in file order: (question, answer field, final answer)."""
    return list(QUESTIONS)


@pytest.fixture()
def gsm8k_file(tmp_path: Path) -> Path:
    path = tmp_path / "problems.jsonl"
    path.write_text("".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a, _ in QUESTIONS))
    return path


@pytest.fixture()
def flow_config(tmp_path: Path, gsm8k_file: Path):
    """A tiny config over the fake engine: 2 problems, n=2, k=2, dataset under tmp_path."""

    def make(**overrides: object) -> RunConfig:
        base = {
            "dataset.root": str(tmp_path / "ds"),
            "problems.path": str(gsm8k_file),
            "problems.limit": 2,
            "sampling.n": 2,
            "rollouts.k": 2,
            "rollouts.max_steps": 2,
        }
        return load_config(None, {**base, **overrides})

    return make
