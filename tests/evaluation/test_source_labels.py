"""`prm-factory eval` scores every registered label source that needs no engine (evaluation/source_labels.py):
a plug-in source is scored beside the verifier and the reference; without one, the sources are today's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from prm_factory.evaluation.processbench import Split, evaluate_split, label_sources, source_figures
from prm_factory.evaluation.real_errors import ReferenceSample, label_chains
from prm_factory.evaluation.source_labels import eval_setup, other_sources
from prm_factory.schemas.external_chains import ExternalChain
from prm_factory.verifiers.protocol import Verdict
from tests.plugin_fixtures import install_plugin, uninstall_plugin


class Marked:
    """A stand-in verifier: a step is `incorrect` when its text says WRONG, else `correct`."""

    name, version = "marked", "0"

    def check_steps(self, problem, steps):
        return [Verdict("incorrect" if "WRONG" in s else "correct", "marked") for s in steps]

    def grade(self, problem, text):
        return Verdict("incorrect")


@pytest.fixture
def plugin(tmp_path, monkeypatch) -> Iterator[None]:
    install_plugin(tmp_path, monkeypatch)
    yield
    uninstall_plugin(monkeypatch)


CHAINS = (
    ExternalChain("a", "p", ("1 + 1 = 2", "WRONG again", "so 3"), first_error_label=1),
    ExternalChain("b", "p", ("2 + 2 = 4", "done"), first_error_label=-1),
)


def test_without_a_plugin_eval_scores_todays_sources_only() -> None:
    assert other_sources(eval_setup(Marked())) == []  # mc and judge need an engine, prm a checkpoint
    assert list(label_sources(CHAINS, Marked())) == ["verifier"]


def test_a_plugin_source_is_scored_beside_the_verifier(plugin) -> None:
    labelled = label_sources(CHAINS, Marked())
    assert list(labelled) == ["verifier", "digits"]
    assert labelled["digits"] == [["correct", "incorrect", "correct"], ["correct", "unverifiable"]]
    report = evaluate_split(Split("s", ("s.json",), CHAINS, ()), Marked())
    assert source_figures(report.sources["digits"]).f1 == 1.0
    sample = ReferenceSample("r", "p", ("3 + 4 = 7", "WRONG"), 1, "7", "7", None, "gsm8k")
    assert label_chains([sample], Marked())["digits"] == [["correct", "incorrect"]]
