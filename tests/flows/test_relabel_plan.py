"""What a relabel decides per domain and per chunk (flows/relabel_plan.py): the sources it runs again, and a
chunk key that moves with the stored rows and with the sources' identities, so a resumed relabel reuses a
staged chunk only when both are the same."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from prm_factory.config.run_config import load_config
from prm_factory.flows.relabel_plan import chunk_key, domain_sources
from prm_factory.labels.registry import RegistryError
from prm_factory.labels.relabel import StoredChain
from tests.storage_fixtures import storage_fixtures


def _part() -> list[StoredChain]:
    records = storage_fixtures().make_run("a", n_problems=1)
    problem = records.problems[0]
    return [
        StoredChain(problem, chain, [s for s in records.steps if s.chain_id == chain.chain_id])
        for chain in records.chains
    ]


def test_the_key_moves_with_the_stored_rows_and_the_sources(tmp_path: Path) -> None:
    config = load_config(None, {"dataset.root": str(tmp_path / "ds"), "labels.sources": []})
    by_domain = {"math": domain_sources(config, "math", "run", ())}
    part = _part()
    key = chunk_key(config, 1, part, by_domain)
    assert key == chunk_key(config, 1, _part(), by_domain) and key.startswith("relabel-rows-")
    relabelled = dataclasses.replace(part[0], chain=dataclasses.replace(part[0].chain, run_id="a-later-run"))
    assert chunk_key(config, 1, [relabelled, *part[1:]], by_domain) != key
    assert chunk_key(config, 2, part, by_domain) != key
    with_reference = load_config(
        None, {"dataset.root": str(tmp_path / "ds"), "labels.sources": ["reference"]}
    )
    others = {"math": domain_sources(with_reference, "math", "run", ())}
    assert [s.name for s in others["math"][2]] == ["verifier", "reference"]
    assert chunk_key(config, 1, part, others) != key


def test_a_named_source_that_does_not_apply_is_refused(tmp_path: Path) -> None:
    config = load_config(None, {"dataset.root": str(tmp_path / "ds")})
    with pytest.raises(RegistryError, match="do not run on code chains"):
        domain_sources(config, "code", "run", ("reference",))
