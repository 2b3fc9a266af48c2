"""The model card of a trained PRM (training/card.py) names what its scores mean: the data and version,
the label source and filters, the head, the layout a scorer must reproduce, and the held-out figures."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from prm_factory.training.card import model_card

SETTINGS = SimpleNamespace(
    head="classes",
    soft=False,
    base_model=Path("/nonexistent/base-model"),
    separator=" ки\n",
    max_length=512,
    batch_size=4,
    gradient_accumulation=2,
    learning_rate=1e-5,
    seed=3,
    held_out=0.2,
)
PROVENANCE = SimpleNamespace(
    source="prm-datasets/default",
    dataset_version=7,
    agreement_only=True,
    since_version=None,
    label="consensus",
)


class Metrics:
    def line(self) -> str:
        return "step accuracy 0.700, AUROC 0.650"


def test_card_names_data_labels_head_layout_and_figures():
    card = model_card(SETTINGS, PROVENANCE, [(0, Metrics())], 0.41234, {"global_step": 20})
    assert card.startswith("---\nlibrary_name: transformers")
    assert "- data: `prm-datasets/default`, version 7" in card
    assert "label source: `consensus`; verifier and MC agree (--agreement-only)" in card
    assert "weights sha256 unknown" in card  # no such checkpoint: said, not guessed
    assert "two outputs (cross-entropy on hard labels)" in card
    assert "each step followed by ' ки\\n'" in card and "max length 512" in card
    assert "- mean train loss: 0.4123" in card and "20 optimiser steps, batch 4 x 2" in card
    assert "- epoch 1: step accuracy 0.700, AUROC 0.650" in card


def test_card_of_a_soft_head_without_evaluation_or_filters():
    soft = SimpleNamespace(**{**vars(SETTINGS), "head": "value", "soft": True})
    plain = SimpleNamespace(**{**vars(PROVENANCE), "dataset_version": None, "agreement_only": False})
    card = model_card(soft, plain, [], None, {"global_step": 1})
    assert "one output (binary cross-entropy on the MC value)" in card and "(soft: MC value)" in card
    assert "version" not in card.split("- data:")[1].splitlines()[0] and "agree" not in card
    assert "- not evaluated (no held-out rows)" in card and "- mean train loss: n/a" in card
