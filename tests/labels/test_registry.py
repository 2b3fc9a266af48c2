"""The label-source registry (labels/registry.py): built-in sources in order, a package's source through
the entry-point group, a config's `module:attribute`, and refusals that name what is wrong."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from prm_factory.labels import registry as reg
from prm_factory.labels.registry import (
    Registry,
    RegistryError,
    configured,
    load_object,
    order_by_reads,
    registered_names,
    registry,
    run_sources,
)
from prm_factory.labels.source import BaseSource, LabelSource
from tests.plugin_fixtures import install_plugin, uninstall_plugin


@pytest.fixture
def plugin(tmp_path, monkeypatch) -> Iterator[None]:
    install_plugin(tmp_path, monkeypatch)
    yield
    uninstall_plugin(monkeypatch)


def test_the_built_in_sources_come_first_in_their_order() -> None:
    assert registry().names()[:4] == ("verifier", "mc", "reference", "judge")
    assert all(isinstance(source, LabelSource) for source in registry().values())


def test_a_package_registers_a_source_through_the_entry_point_group(plugin) -> None:
    assert "digits" in registered_names()  # named without being loaded
    source = registry()["digits"]
    assert source.name == "digits" and source.vote  # loaded from the entry point
    assert registry().names().index("digits") > registry().names().index("judge")


def test_a_config_names_a_source_by_module_and_attribute(plugin) -> None:
    reg.reset()
    source = load_object("prm_digits:SOURCE")
    assert source.name == "digits"
    assert "digits" in configured(["prm_digits:SOURCE"])


class Named(BaseSource):
    def __init__(self, name: str, reads: tuple[str, ...] = ()) -> None:
        self.name, self.reads = name, reads


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (Named("Bad Name"), "lower-case"),
        (Named("consensus"), "lower-case"),  # an export kind
        (object(), "not a label source"),
    ],
)
def test_a_source_that_cannot_be_registered_is_refused_with_the_reason(source, message) -> None:
    with pytest.raises(RegistryError, match=message):
        Registry([source])  # type: ignore[list-item]


def test_two_sources_of_one_name_and_an_unknown_name_are_refused() -> None:
    with pytest.raises(RegistryError, match="two label sources"):
        Registry([Named("a"), Named("a")])
    with pytest.raises(RegistryError, match="no label source 'b'; registered: a"):
        Registry([Named("a")])["b"]
    with pytest.raises(RegistryError, match="cannot be loaded"):
        load_object("prm_factory.labels.nosuchmodule:SOURCE")


def test_a_source_comes_after_the_sources_it_reads() -> None:
    a, b, c = Named("a", reads=("c",)), Named("b"), Named("c", reads=("b",))
    assert [s.name for s in order_by_reads([a, b, c])] == ["b", "c", "a"]
    with pytest.raises(RegistryError, match="cycle"):
        order_by_reads([Named("x", reads=("y",)), Named("y", reads=("x",))])


def test_a_run_uses_the_verifier_mc_and_the_configured_sources_the_judge_when_enabled() -> None:
    assert [s.name for s in run_sources(["reference"])] == ["verifier", "mc", "reference"]
    assert [s.name for s in run_sources([], judge_enabled=True)] == ["verifier", "mc", "judge"]
    # the judge reads the reference's labels: it runs after it whatever the config's order
    assert [s.name for s in run_sources(["judge", "reference"])] == ["verifier", "mc", "reference", "judge"]
