"""The trained PRM as a label source (training/prm_source.py): training records the threshold it chose on
its held-out split, the source scores each step with it, the labels carry the score as their value, and it
registers through the entry-point group like a package's source (a tiny random model: the plumbing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prm_factory.config.run_config import load_config
from prm_factory.labels.assemble import SampledChain, join_steps
from prm_factory.labels.registry import registry
from prm_factory.labels.source import SourceSetup
from prm_factory.sampling.protocol import Generation
from prm_factory.schemas.records import Problem
from prm_factory.training.prm_source import PrmSource, recorded_threshold, step_labels
from prm_factory.training.rows import rows_from_dataset
from prm_factory.training.step_metrics import choose_threshold
from prm_factory.training.trainer import Provenance, TrainSettings, train
from prm_factory.verifiers.protocol import Verdict


@pytest.fixture(scope="module")
def trained(tmp_path_factory, tiny_token_classifier) -> Path:
    """A tiny PRM trained for two steps on the storage fixture's verifier labels (half held out)."""
    import torch

    from tests.storage_fixtures import committed_fixture_dataset

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("prm")
    data = committed_fixture_dataset(root / "ds", 6)
    rows = rows_from_dataset(data, None, "verifier")
    base = tiny_token_classifier(root / "base")
    settings = TrainSettings(
        base_model=base, output_dir=root / "out", separator=" ки\n", max_length=128, batch_size=2,
        max_steps=2, held_out=0.5,
    )  # fmt: skip
    train(rows, settings, Provenance(data.root, 1, "verifier"))
    return root / "out"


def setup_for(checkpoint: Path, **options: object) -> SourceSetup:
    config = load_config(
        None,
        {"labels.sources": ["prm"], "labels.options": {"prm": {"checkpoint": str(checkpoint), **options}}},
    )
    return SourceSetup(config, "math", None, pipeline="relabel")  # type: ignore[arg-type]


def test_training_records_the_threshold_it_chose_on_the_held_out_steps(trained: Path) -> None:
    record = json.loads((trained / "prm_factory.json").read_text())["threshold"]
    assert record == recorded_threshold(trained)
    assert 0.0 <= record["threshold"] <= 1.0 and record["n_steps"] > 0
    assert record["rule"] in (
        "max balanced accuracy on the held-out steps",
        "default: the held-out steps are all of one kind",
    )


def test_the_source_labels_steps_with_the_recorded_threshold_and_does_not_vote(trained: Path) -> None:
    source = registry()["prm"]
    assert isinstance(source, PrmSource)  # the entry point of pyproject.toml
    setup = setup_for(trained)
    assert source.applies(setup) and not source.applies(SourceSetup(load_config(None), "math", None))  # type: ignore[arg-type]
    text, spans = join_steps(["What is 2 + 2? 2 + 2 = 4.", "The answer is 4."])
    problem = Problem("p", "gsm8k", "math", "What is 2 + 2?", reference_answer="4")
    chain = SampledChain("c", problem, "", 0, Generation(text, 0, "stop"), spans, Verdict("correct"), None)
    [labels] = source.label([chain], {}, setup)
    threshold = recorded_threshold(trained)["threshold"]
    assert len(labels) == 2
    for label in labels:
        assert 0.0 <= label.value <= 1.0
        assert label.verdict == ("correct" if label.value >= threshold else "incorrect")
        assert json.loads(label.evidence)["threshold"] == threshold
        assert label.labeler == source.labeler(setup) and source.vote(label) is None
    assert source.identity(setup)["version"].endswith(f"t={threshold:.6g}")


def test_a_threshold_set_in_the_config_wins_and_a_vote_can_be_switched_on(trained: Path) -> None:
    source = registry()["prm"]
    setup = setup_for(trained, threshold=0.0, vote="weak")
    labels = step_labels([0.3, 0.8], 3, source.settings(setup), "prm@x")
    assert [label.verdict for label in labels] == ["correct", "correct", "unverifiable"]
    assert json.loads(labels[0].evidence)["threshold_rule"] == "set in [labels.options.prm]"
    assert source.vote(labels[0]) is not None and source.vote(labels[2]) is None


def test_the_threshold_balances_both_recalls() -> None:
    # right steps score 0.6-0.9, wrong ones 0.1-0.5: any cut in (0.5, 0.6) separates them
    choice = choose_threshold([[0.9, 0.6, 0.5], [0.7, 0.1]], [[True, True, False], [True, False]])
    assert 0.5 < choice.threshold < 0.6 and choice.balanced_accuracy == 1.0
    one_kind = choose_threshold([[0.9, 0.6]], [[True, True]])
    assert one_kind.threshold == 0.5 and one_kind.balanced_accuracy is None
