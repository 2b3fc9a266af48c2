"""Greppable stage lines, progress sinks, preflight lines, and the run artifact's markdown."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from prm_factory.config.run_config import load_config
from prm_factory.flows.artifacts import RunReport, artifact_key, render_markdown
from prm_factory.flows.observe import StageEvents, event_line, progress_sink
from prm_factory.flows.preflight import config_problems
from prm_factory.labels.tally import RunTally
from prm_factory.schemas.records import Chain, Step
from prm_factory.schemas.step_labels import StepLabel, mc_label


def test_event_lines_are_key_value_pairs_an_operator_can_grep() -> None:
    line = event_line("abc", "rollouts", "done", seconds="1.50", cached=True, error="Boom: it broke")
    assert (
        line == 'prm-run run_id=abc stage=rollouts event=done seconds=1.50 cached=true error="Boom: it broke"'
    )


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple] = []

    def started(self, stage: str) -> None:
        self.events.append(("started", stage))

    def advanced(self, stage: str, done: int, total: int) -> None:
        self.events.append(("advanced", stage, done, total))

    def finished(self, stage: str, seconds: float, cached: bool) -> None:
        self.events.append(("finished", stage, cached))


def test_stage_events_reach_the_log_and_registered_sinks_only_while_registered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    events = StageEvents("r1", logging.getLogger("test-stage-events"))
    recorder = Recorder()
    with caplog.at_level(logging.INFO), progress_sink(recorder):
        events.started("sample")
        events.advanced("sample", 1, 2)
        events.finished("sample", 0.5, cached=True)
    events.started("after")  # no longer registered
    assert recorder.events == [
        ("started", "sample"),
        ("advanced", "sample", 1, 2),
        ("finished", "sample", True),
    ]
    assert "prm-run run_id=r1 stage=sample event=done seconds=0.50 cached=true" in caplog.text


def test_preflight_gives_one_line_per_problem(tmp_path: Path) -> None:
    checkpoint = tmp_path / "ckpt"
    checkpoint.mkdir()
    cfg = load_config(None, {"problems.path": str(tmp_path / "none.jsonl"), "model.path": str(checkpoint)})
    assert config_problems(cfg) == [
        f"problem file not found: {tmp_path / 'none.jsonl'} (set problems.path or --problems)",
        f"model.path {checkpoint} is not a Hugging Face checkpoint (no config.json)",
    ]
    (checkpoint / "config.json").write_text("{}")
    (tmp_path / "none.jsonl").write_text("")
    assert config_problems(cfg) == []


def _step(index: int, consensus: str, verdict: str, tokens: int) -> Step:
    evidence = {"value_source": "none", "tokens": tokens}
    labels = (StepLabel("verifier", verdict, labeler="v@1+"), mc_label(None, None, evidence, "mc@m"))
    return Step(f"s{index}", "c1", "p1", "r", index, "t", 0, 1, consensus, None, False, "m", "h", labels)


def test_the_artifact_markdown_counts_labels_and_cost() -> None:
    chain = Chain("c1", "p1", "r", "m", "{}", 0, 0, "", "", 30, "stop", "7", "correct", "", "{}", 3)
    steps = [
        _step(0, "positive", "correct", 10),
        _step(1, "negative", "incorrect", 20),
        _step(2, "unlabeled", "unverifiable", 0),
    ]
    text = render_markdown(
        RunReport(
            "run1",
            "cfg",
            "succeeded",
            "",
            "/data",
            7,
            1,
            2,
            RunTally.of([chain], steps),
            {"sample": 1.0, "write": 0.5},
        )
    )
    assert "# PRM run `run1`: succeeded" in text and "version **7**" in text
    assert "| positive | 1 | 0 | 0 | 1 |" in text and "| negative | 0 | 1 | 0 | 1 |" in text
    assert "| unlabeled | 0 | 0 | 1 | 1 |" in text
    assert "| 30 | 30 | 1.5 | 30.0 |" in text  # 30 sampled + 30 rollout tokens over 2 labeled steps
    assert artifact_key("Nightly GSM8K (v2)") == "prm-run-nightly-gsm8k-v2"
