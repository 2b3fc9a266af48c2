"""search-eval reads a `prm-factory train` checkpoint at its own layout and any other one as TRL wrote it."""

from __future__ import annotations

from pathlib import Path

import pytest

from prm_factory.commands.search import scorer_of


@pytest.fixture()
def recorded(monkeypatch):
    made: list[tuple[str, Path]] = []

    def recorder(kind: str):
        return lambda checkpoint: made.append((kind, checkpoint)) or kind

    monkeypatch.setattr("prm_factory.training.scorer.PrmScorer", recorder("prm-factory"))
    monkeypatch.setattr("prm_factory.training.step_scorer.StepScorer", recorder("trl"))
    return made


def test_a_trained_checkpoint_is_scored_by_the_training_layout(tmp_path: Path, recorded) -> None:
    from prm_factory.training.model import METADATA

    (tmp_path / METADATA).write_text("{}")
    assert scorer_of(tmp_path) == "prm-factory" and recorded == [("prm-factory", tmp_path)]


def test_a_checkpoint_without_metadata_is_read_as_trl_wrote_it(tmp_path: Path, recorded) -> None:
    assert scorer_of(tmp_path) == "trl" and recorded == [("trl", tmp_path)]
