"""The one identity of a label source (labels/source.py `source_identity`): its own identity, with a digest
of its effective options where the config sets any."""

from __future__ import annotations

from prm_factory.config.run_config import RunConfig
from prm_factory.labels.source import BaseSource, SourceSetup, source_identity


class Lengthy(BaseSource):
    name = "lengthy"
    version = "1.0"


def setup_with(options: dict) -> SourceSetup:
    config = RunConfig.model_validate({"labels": {"options": options}})
    return SourceSetup(config, "math", verifier=None)  # type: ignore[arg-type]


def test_without_options_the_identity_is_the_sources_own():
    source = Lengthy()
    assert source_identity(source, setup_with({})) == source.identity(setup_with({}))


def test_changed_options_change_the_identity_and_the_labeler():
    source = Lengthy()
    a, b = setup_with({"lengthy": {"limit": 300}}), setup_with({"lengthy": {"limit": 400}})
    assert source_identity(source, a)["version"].startswith("1.0+options.")
    assert source_identity(source, a) != source_identity(source, b)
    assert source.labeler(a) != source.labeler(b)
    assert source_identity(source, a) == source_identity(source, setup_with({"lengthy": {"limit": 300}}))


def test_another_sources_options_leave_it_alone():
    assert source_identity(Lengthy(), setup_with({"other": {"x": 1}})) == source_identity(
        Lengthy(), setup_with({})
    )


def test_a_source_whose_identity_covers_its_options_is_taken_as_it_is():
    class Covered(Lengthy):
        identity_covers_options = True

    setup = setup_with({"lengthy": {"audit": "a.sqlite"}})
    assert source_identity(Covered(), setup) == Covered().identity(setup)
