"""`start_container` leaves no half-made container, also when the engine goes away between create and start.

No Docker here: a named stand-in client records the calls. The real engine's side (a restart in the middle
of pool work) is tests/verifiers/code/test_engine_restart.py.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import docker.errors
import pytest
import requests

from prm_factory.verifiers.code.sandbox import container as container_module
from prm_factory.verifiers.code.sandbox import pool as pool_module
from prm_factory.verifiers.code.sandbox.container import (
    UnremovedContainers,
    remove_or_remember,
    remove_unremoved,
    start_container,
)

ENGINE_GONE = requests.exceptions.ConnectionError("('Connection aborted.', FileNotFoundError(2))")


@dataclass
class StandInApi:
    """`client.api`: `remove_container` raises the queued failures first, then succeeds; every call kept."""

    remove_failures: list[BaseException] = field(default_factory=list)
    remove_calls: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    existing: set[str] = field(default_factory=set)

    def remove_container(self, container: str, force: bool = False) -> None:
        assert force
        self.remove_calls.append(container)
        if self.remove_failures:
            raise self.remove_failures.pop(0)
        if container not in self.existing:
            raise docker.errors.NotFound(f"No such container: {container}")
        self.existing.discard(container)
        self.removed.append(container)


@dataclass
class StandInContainer:
    id: str
    start_error: BaseException | None
    started: bool = False

    def start(self) -> None:
        if self.start_error is not None:
            raise self.start_error
        self.started = True


@dataclass
class StandInContainers:
    """`client.containers`: `create` makes the next container of the plan (its start error, or None)."""

    api: StandInApi
    start_errors: list[BaseException | None] = field(default_factory=list)
    create_error: BaseException | None = None
    created: list[dict[str, Any]] = field(default_factory=list)

    def create(self, **kwargs: Any) -> StandInContainer:
        self.created.append(kwargs)
        if self.create_error is not None:
            error, self.create_error = self.create_error, None
            raise error
        container_id = f"{len(self.created):064x}"
        self.api.existing.add(container_id)
        return StandInContainer(container_id, self.start_errors.pop(0) if self.start_errors else None)


class StandInClient:
    def __init__(self) -> None:
        self.api = StandInApi()
        self.containers = StandInContainers(self.api)


@pytest.fixture(autouse=True)
def unremoved(monkeypatch: pytest.MonkeyPatch) -> Iterator[UnremovedContainers]:
    """A fresh registry per test: the process-wide one may hold what another test's engine stop left."""
    fresh = UnremovedContainers()
    monkeypatch.setattr(container_module, "UNREMOVED", fresh)
    monkeypatch.setattr(pool_module, "UNREMOVED", fresh)
    yield fresh


KWARGS = {"image": "sandbox:test", "command": ["true"], "detach": True}


@pytest.fixture
def sandbox_log(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> pytest.LogCaptureFixture:
    """caplog seeing the container module's records whatever logging setup earlier tests left (a disabled or
    non-propagating logger read empty in the full suite)."""
    logger = logging.getLogger(container_module.__name__)
    monkeypatch.setattr(logger, "disabled", False)
    monkeypatch.setattr(logger, "propagate", True)
    caplog.set_level(logging.DEBUG, logger=container_module.__name__)
    return caplog


def test_a_start_that_loses_the_engine_is_removed_once_the_engine_answers(unremoved, sandbox_log):
    caplog = sandbox_log
    client = StandInClient()
    client.containers.start_errors = [ENGINE_GONE, None]
    client.api.remove_failures = [ENGINE_GONE]  # the removal right after the failed start cannot reach it
    with pytest.raises(requests.exceptions.ConnectionError):
        start_container(client, KWARGS)  # type: ignore[arg-type]
    half_made = f"{1:064x}"
    assert client.api.remove_calls == [half_made]
    assert unremoved.snapshot() == [half_made]
    assert "not removed yet" in caplog.text

    second = start_container(client, KWARGS)  # type: ignore[arg-type]  # the engine answers again
    assert second.started
    assert client.api.removed == [half_made]
    assert unremoved.snapshot() == []
    assert "1 of 1 gone now" in caplog.text
    assert "detach" not in client.containers.created[0]


def test_a_failed_start_the_engine_can_still_remove_is_removed_at_once(unremoved):
    client = StandInClient()
    client.containers.start_errors = [docker.errors.APIError("500 Server Error: cannot start")]
    with pytest.raises(docker.errors.APIError):
        start_container(client, KWARGS)  # type: ignore[arg-type]
    assert client.api.removed == [f"{1:064x}"]
    assert unremoved.snapshot() == []


def test_a_started_container_is_neither_removed_nor_remembered(unremoved):
    client = StandInClient()
    started = start_container(client, KWARGS)  # type: ignore[arg-type]
    assert started.started and client.api.remove_calls == [] and unremoved.snapshot() == []


def test_a_create_whose_reply_was_lost_is_remembered_by_its_name(unremoved):
    client = StandInClient()
    client.containers.create_error = ENGINE_GONE
    with pytest.raises(requests.exceptions.ConnectionError):
        start_container(client, KWARGS)  # type: ignore[arg-type]
    name = client.containers.created[0]["name"]
    assert name.startswith("prm-sandbox-") and unremoved.snapshot() == [name]
    start_container(client, KWARGS)  # type: ignore[arg-type]
    assert client.api.remove_calls == [name]  # not there (NotFound): gone is what we wanted
    assert unremoved.snapshot() == []
    assert client.containers.created[1]["name"] != name  # every container its own name


def test_a_create_the_engine_refused_remembers_nothing(unremoved):
    client = StandInClient()
    client.containers.create_error = docker.errors.ImageNotFound("No such image: sandbox:test")
    with pytest.raises(docker.errors.ImageNotFound):
        start_container(client, KWARGS)  # type: ignore[arg-type]
    assert unremoved.snapshot() == []


def test_a_removal_the_engine_refuses_on_purpose_is_not_retried(unremoved):
    api = StandInApi(existing={"abc"})
    response = requests.Response()
    response.status_code = 409
    api.remove_failures = [docker.errors.APIError("removal already in progress", response=response)]
    assert not remove_or_remember(api, "abc")  # type: ignore[arg-type]
    assert unremoved.snapshot() == []
    api.remove_failures = [docker.errors.APIError("500 daemon is shutting down")]  # no response: server side
    assert not remove_or_remember(api, "abc")  # type: ignore[arg-type]
    assert unremoved.snapshot() == ["abc"]


def test_a_removal_failing_again_stays_remembered(unremoved):
    api = StandInApi(existing={"abc"})
    unremoved.add("abc")
    api.remove_failures = [ENGINE_GONE]
    assert remove_unremoved(api) == 0  # type: ignore[arg-type]
    assert unremoved.snapshot() == ["abc"]
    assert remove_unremoved(api) == 1  # type: ignore[arg-type]
    assert unremoved.snapshot() == [] and api.removed == ["abc"]
    assert remove_unremoved(api) == 0  # type: ignore[arg-type]  # nothing left: no call
    assert api.remove_calls == ["abc", "abc"]


def test_pool_close_removes_what_the_engine_left(unremoved):
    pool = pool_module.SandboxPool("sandbox:test", size=1)
    client = StandInClient()
    client.api.existing.add("left-by-a-restart")
    unremoved.add("left-by-a-restart")
    pool._client = client  # type: ignore[assignment]  # a started pool whose slots are all gone
    pool.close()
    assert client.api.removed == ["left-by-a-restart"] and unremoved.snapshot() == []
