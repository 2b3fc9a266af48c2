"""A label-source plug-in built in a test, outside the product tree: a package and a `.dist-info` with an
entry point in the `prm_factory.label_sources` group, both in a temporary folder put on `sys.path`, so
`importlib.metadata` finds the distribution as it finds an installed one. Nothing is installed.

Import as `from tests.plugin_fixtures import install_plugin` (pytest runs from the repository root).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

PLUGIN_SOURCE = '''
"""A plug-in label source: `digits` calls a step that writes a number `correct` (a weak vote), one that
writes the word WRONG `incorrect` (a strong one), and says nothing of the rest."""

import json

from prm_factory.labels.source import BaseSource, Strength
from prm_factory.schemas.step_labels import StepLabel


class DigitsSource(BaseSource):
    name = "digits"
    version = "1.0"
    positive = Strength.WEAK
    negative = Strength.STRONG

    def label(self, chains, prior, setup):
        tag = self.labeler(setup)
        out = []
        for chain in chains:
            labels = []
            for span in chain.steps:
                digits = sum(ch.isdigit() for ch in span.text)
                verdict = "incorrect" if "WRONG" in span.text else ("correct" if digits else "unverifiable")
                labels.append(
                    StepLabel("digits", verdict, min(1.0, digits / 10), f"{digits} digits",
                              json.dumps({"digits": digits}), tag)
                )
            out.append(tuple(labels))
        return out


SOURCE = DigitsSource()
'''


def install_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str = PLUGIN_SOURCE) -> Path:
    """Write the plug-in package `prm_digits` and its dist-info under `tmp_path`, put them on sys.path and
    reload the registry; the monkeypatch takes them off again (and the test's teardown reloads it)."""
    from prm_factory.labels import registry

    root = tmp_path / "plugin-site"
    package = root / "prm_digits"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(code)
    info = root / "prm_digits-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: prm-digits\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[prm_factory.label_sources]\ndigits = prm_digits:SOURCE\n")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delitem(sys.modules, "prm_digits", raising=False)
    registry.reset()
    return root


def uninstall_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    """Take the plug-in off sys.path and out of the registry (a fixture's teardown)."""
    from prm_factory.labels import registry

    monkeypatch.undo()
    sys.modules.pop("prm_digits", None)
    registry.reset()
