"""Session-wide fixtures: runtime defaults, one Prefect test server, one `vllm serve` of the embedded model,
control of the Docker engine."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

import pytest

from prm_factory.config.runtime import apply_runtime_defaults
from prm_factory.sampling.vllm_plugins import BATCH_NOISE_ENV
from tests.docker_turns import DOCKER_TURNS
from tests.phase_cpu import CPU_PROPERTY

pytest_plugins = ["tests.phase_cpu", "pytester"]  # pytester: tests/test_suite_critical_path.py

if TYPE_CHECKING:
    from prm_factory.sampling.vllm_sampler import EngineSettings, VLLMSampler
    from prm_factory.sampling.vllm_server import VLLMServer

apply_runtime_defaults()
T = TypeVar("T")
# The suite's engines share the machine with the suite's own work (pytest, Prefect's server, Docker, verifier
# workers), where binding every core to the engine was measured 3x slower than vLLM's own binding; setting
# vLLM's own default value marks the binding as chosen, so `model.cpu_threads = "auto"` leaves it alone
# (sampling.cpu_host.choose_thread_env), also in the CLI runs the tests start.
os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "auto")
# Every engine the suite starts (the session's offline engine, its `vllm serve`, the engines of CLI runs and
# Prefect workers) rounds its logits by the batch's shape, as bf16/AMX and AVX-512 CPUs and GPUs without
# batch-invariant kernels do (sampling/vllm_plugins.py, BATCH_NOISE_ENV): so on any machine, an AVX2 one
# included, a test that compares draws passes only if what it compares is what the design guarantees.
os.environ.setdefault(BATCH_NOISE_ENV, "0.3")


@pytest.fixture
def command_app():
    """Builds a fresh Typer app in group mode, as the real CLI, holding one command module's commands."""
    import typer

    def make(register: Callable[[typer.Typer], None]) -> typer.Typer:
        application = typer.Typer()

        @application.callback()
        def main() -> None:
            """Group mode, as in the real CLI."""

        register(application)
        return application

    return make


@pytest.fixture(scope="session")
def prefect_server() -> Iterator[None]:
    """A temporary Prefect server and database for the whole session (flows run against it).

    `prefect.main` is imported here, before any test body runs: its lazy import (the first `from prefect
    import flow`, e.g. a module of flows/) configures Prefect's logging, and that replaces the root logger's
    handlers (a second configuration too: Prefect's incremental update fails and falls back to a full one),
    which inside a test drops pytest's log capture (`caplog`) mid-test. The two-shard test, which reads
    flow-run records from `caplog`, then passed in the suite, after another test had imported it, and failed
    when run alone."""
    import prefect.main  # noqa: F401  (configures Prefect's logging once, here)
    from prefect.testing.utilities import prefect_test_harness

    # The server's event persister and task-run recorder write every event and task run to its database:
    # most of what a test server computes (10 flows of 10 tasks: 3.9 CPU-s with them, 1.7 without, the
    # servers of a suite run about 110 CPU-s on a 2-core machine), and nothing here reads events or task
    # runs back from the API. Flow runs, deployments, work pools and schedules are kept.
    for service in ("EVENT_PERSISTER", "TASK_RUN_RECORDER"):
        os.environ.setdefault(f"PREFECT_SERVER_SERVICES_{service}_ENABLED", "false")
    with prefect_test_harness(server_startup_timeout=None):
        yield


@pytest.fixture()
def no_retry_delays(monkeypatch: pytest.MonkeyPatch) -> None:
    """The flow's tasks keep their retries but wait no time between them: a test of a run that fails after
    every retry (a dead fleet, say) then costs the tries, not the `[5, 20]` s waits meant for an outage."""
    from prefect import Task

    import prm_factory.flows.tasks as tasks

    # on the task objects themselves: the stages (flows/stages.py) hold them, not their names
    for value in list(vars(tasks).values()):
        if isinstance(value, Task) and value.retries:
            monkeypatch.setattr(value, "retry_delay_seconds", 0)


SERVED_MODEL_NAME = "smollm2-test"
_LAST_SERVER_USER = pytest.StashKey[str | None]()
_SERVER_PREFETCH_AT = pytest.StashKey[str | None]()
_ENGINE_PREFETCH_AT = pytest.StashKey[str | None]()
_LAST_ENGINE_USER = pytest.StashKey[str | None]()
# The tests on an engine (marked `engine`, or asking for the `engine` or `served_model` fixture) run after
# every other test, and the session's two engines start in the background while the tests before them run:
# a start (100-250 s on a loaded 2-core machine) is mostly one core importing vLLM, which then overlaps the
# unit tests' one core instead of adding to the suite's time. The offline engine begins when the test this
# many places before its first user begins, the server (its first user comes a little later) likewise; at
# the time of writing 700 places were about 250 s of tests, 400 about 150 s.
_ENGINE_PREFETCH_LEAD = 700
_SERVER_PREFETCH_LEAD = 400
ENGINE_FIXTURES = {"engine", "served_model"}
# The suite runs on pytest-xdist workers (`-n auto --dist loadgroup` in pyproject.toml): serially it kept
# one of a 2-core machine's cores idle most of the time (27 min of CPU in 29 min of wall). The tests on the
# session's offline engine form one group that a single worker runs in order; the tests on the Docker engine
# and those on the session's `vllm serve` form a second group that another worker runs beside it, the
# server starting in the background while its Docker tests (mostly waiting on containers) run. One group for
# all of them was the suite's critical path: 28 of its 35 minutes on one worker while the other idled. Tests
# on the offline engine and Docker (code runs) go with the engine. A test that restarts dockerd, on either
# side, waits for its exclusive turn on the machine's Docker engine, which every test on Docker (and each
# warm sandbox pool) holds shared (tests/docker_turns.py). The other tests spread over every worker, each
# group's worker taking its share once its group ends.
ENGINE_GROUP = "offline-engine"
SIDE_GROUP = "docker-and-server"
DOCKER_FIXTURES = {"sandbox_image", "dockerd"}
# Each worker holds its own interpreter, torch and, for flow tests, a Prefect server; past four workers
# the short tests left to spread gain nothing more. One worker more than the cores: with one per core a
# 2-core AVX-512 machine sat 14.5 % idle (`vmstat`; tests waiting on containers, sleeps, timeouts and
# subprocesses), and a third worker fills it: clean runs 571-633 s with two workers, 514 and 519 s with
# three (2026-12-01, docs/development.md).
MAX_WORKERS = 4
EXTRA_WORKERS = 1


def _on_an_engine(item: pytest.Item) -> bool:
    return item.get_closest_marker("engine") is not None or bool(
        ENGINE_FIXTURES & set(getattr(item, "fixturenames", ()))
    )


def _on_docker(item: pytest.Item) -> bool:
    return item.get_closest_marker("docker") is not None or bool(
        DOCKER_FIXTURES & set(getattr(item, "fixturenames", ()))
    )


def _group(item: pytest.Item) -> str | None:
    """The xdist group a test runs in, if any: the offline engine's, or the Docker and server one."""
    fixtures = set(getattr(item, "fixturenames", ()))
    if "served_model" in fixtures and "engine" not in fixtures:
        return SIDE_GROUP
    if _on_an_engine(item):
        return ENGINE_GROUP
    return SIDE_GROUP if _on_docker(item) else None


# Each test phase's start, stop and worker, written where bench/suite_critical_path.py reads them: pytest's
# own `--durations` names neither the worker nor the group, so it cannot show which worker the suite waits on.
# Recorded by the process that hears every report: xdist's controller, or pytest itself in a serial run.
TIMINGS_ENV = "PRM_TEST_TIMINGS"
_TIMINGS: list[dict[str, object]] | None = None


def timings_path(config: pytest.Config) -> Path:
    """Where the session's phase timings go: `$PRM_TEST_TIMINGS`, else beside pytest's cache."""
    default = config.rootpath / ".pytest_cache" / "prm-factory-timings.jsonl"
    return Path(os.environ.get(TIMINGS_ENV) or default)


def pytest_configure(config: pytest.Config) -> None:
    global _TIMINGS
    _TIMINGS = None if hasattr(config, "workerinput") else []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _TIMINGS is None:
        return
    gateway = getattr(getattr(report, "node", None), "gateway", None)  # xdist: the worker that ran it
    worker = getattr(gateway, "id", None) or "main"
    phase = {"nodeid": report.nodeid, "when": report.when, "start": report.start, "stop": report.stop}
    cpu = dict(report.user_properties).get(CPU_PROPERTY)  # tests/phase_cpu.py
    _TIMINGS.append(phase | {"worker": worker} | ({"cpu": cpu[0], "child_cpu": cpu[1]} if cpu else {}))


def pytest_unconfigure(config: pytest.Config) -> None:
    if _TIMINGS:
        path = timings_path(config)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(record) + "\n" for record in _TIMINGS))


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker per core this process may use and `EXTRA_WORKERS` more, at most `MAX_WORKERS`."""
    return max(1, min(MAX_WORKERS, len(os.sched_getaffinity(0)) + EXTRA_WORKERS))


def pytest_itemcollected(item: pytest.Item) -> None:
    # before xdist's own collection hook, which names each item's group in its node id
    if group := _group(item):
        item.add_marker(pytest.mark.xdist_group(group))


@dataclass(frozen=True)
class ServedModel:
    """The session's `vllm serve` of the embedded checkpoint, and the `model` name clients send."""

    server: VLLMServer
    checkpoint: str
    name: str = SERVED_MODEL_NAME


@pytest.hookimpl(trylast=True)  # after `-k` / `-m` deselection
def pytest_collection_modifyitems(session: pytest.Session, items: list[pytest.Item]) -> None:
    if hasattr(session.config, "workerinput"):  # an xdist worker: engine group, side group, the rest
        grouped = [item for item in items if _group(item)]
        if session.config.getvalue("loadgroup") and any(
            not item.nodeid.endswith(f"@{_group(item)}") for item in grouped
        ):
            # xdist names the group in the node id; where it cannot, the group would spread over the workers
            # and a dockerd restart would cut the sandbox tests beside it
            raise pytest.UsageError(
                "pytest-xdist did not group the engine and Docker tests (pytest-dev/pytest-xdist#1386 with "
                "pytest 9.2): install the pytest pyproject.toml asks for, or run serially with `-n 0`"
            )
        engine_group = [item for item in grouped if _group(item) == ENGINE_GROUP]
        side = [item for item in grouped if _group(item) == SIDE_GROUP]
        servers = [item for item in side if "served_model" in getattr(item, "fixturenames", ())]
        side = [item for item in side if item not in servers] + servers  # Docker first, the server after
        # the dockerd restarts first of all: they take the engine exclusively, which costs nothing while the
        # engine group's worker waits for its engine to start, and 1-2 minutes of waiting for that worker's
        # code runs to give their turns back once they are under way
        side = sorted(side, key=lambda item: "dockerd" not in getattr(item, "fixturenames", ()))
        # and in the engine group last: its restart holds the engine for a whole code run (about a minute),
        # which the Docker group's worker, done with Docker by then, no longer waits for
        engine_group = sorted(engine_group, key=lambda item: "dockerd" in getattr(item, "fixturenames", ()))
        # each group's first test opens the work queue, so the first two workers take one group each at the
        # very start; each group's engine starts in the background with the group's first test
        items[:] = engine_group + side + [item for item in items if not _group(item)]
        offline = [item for item in engine_group if "engine" in getattr(item, "fixturenames", ())]
        session.stash[_ENGINE_PREFETCH_AT] = engine_group[0].nodeid if offline else None
        session.stash[_LAST_ENGINE_USER] = offline[-1].nodeid if offline else None
        session.stash[_SERVER_PREFETCH_AT] = side[0].nodeid if servers else None
        session.stash[_LAST_SERVER_USER] = servers[-1].nodeid if servers else None
        return
    items[:] = [item for item in items if not _on_an_engine(item)] + [i for i in items if _on_an_engine(i)]

    def prefetch_at(fixture: str, lead: int) -> tuple[str | None, str | None]:
        users = [i for i, item in enumerate(items) if fixture in getattr(item, "fixturenames", ())]
        if not users:
            return None, None
        return items[max(0, users[0] - lead)].nodeid, items[users[-1]].nodeid

    session.stash[_SERVER_PREFETCH_AT], session.stash[_LAST_SERVER_USER] = prefetch_at(
        "served_model", _SERVER_PREFETCH_LEAD
    )
    session.stash[_ENGINE_PREFETCH_AT], session.stash[_LAST_ENGINE_USER] = prefetch_at(
        "engine", _ENGINE_PREFETCH_LEAD
    )


# Lets `collective_rpc` carry a test's lambda to the offline engine's worker process (an engine-argument
# readback in tests/e2e/test_shards.py). Set for the engine's whole life: its core then sends every utility
# result with type information, which the frontend refuses to read once the variable is gone.
INSECURE_SERIALIZATION = "VLLM_ALLOW_INSECURE_SERIALIZATION"


class _BackgroundSlot(Generic[T]):
    """One of the session's engines, started in a background thread ahead of its first user: `begin` starts
    it (a no-op while it is up or starting, or after a failed start, which is not retried by every later
    test), `ready` waits for it, `stop` ends it, also in the middle of its start. Subclasses say how."""

    what = "engine"  # for the failure message

    def __init__(self) -> None:
        self.value: T | None = None
        self.start_error: str | None = None
        self.starting: threading.Thread | None = None

    def _up(self) -> bool:
        return self.value is not None

    def _prepare(self) -> Callable[[], T]:
        """Settle what the start needs (in the caller's thread); return the blocking start itself."""
        raise NotImplementedError

    def _interrupt(self) -> None:
        """Cut a start under way short, where that can be done (stop() then waits for its thread)."""

    def _release(self) -> None:
        """End what started (value set) and undo what `_prepare` changed."""

    def begin(self) -> None:
        if self.start_error or self.starting is not None or self._up():
            return
        start = self._prepare()

        def run() -> None:
            try:
                self.value = start()
            except Exception as error:
                self.start_error = f"{type(error).__name__}: {error}"

        self.starting = threading.Thread(target=run, name=f"{self.what}-start", daemon=True)
        self.starting.start()

    def ready(self) -> T:
        """The running thing: waits for a start under way, starts one when there is none."""
        self.begin()
        if self.starting is not None:
            self.starting.join()
            self.starting = None
        if self.start_error or self.value is None:
            pytest.fail(f"the session's {self.what} did not start: {self.start_error}")
        return self.value

    def stop(self) -> None:
        if self.starting is not None:
            self._interrupt()
            self.starting.join(timeout=600)
            self.starting = None
        self._release()
        self.value = None


class _EngineSlot(_BackgroundSlot["VLLMSampler"]):
    """The session's offline engine (the default config's, in this process): `engine` in
    tests/e2e/conftest.py waits on it; dropped at the session's end."""

    what = "offline engine"

    def __init__(self) -> None:
        super().__init__()
        self.settings: EngineSettings | None = None
        self.previous_env: str | None = None

    def _prepare(self) -> Callable[[], VLLMSampler]:
        from prm_factory.config.run_config import RunConfig
        from prm_factory.flows.engines import engine_settings
        from prm_factory.sampling.vllm_sampler import get_sampler

        settings = self.settings = engine_settings(RunConfig())
        self.previous_env = os.environ.get(INSECURE_SERIALIZATION)
        os.environ[INSECURE_SERIALIZATION] = "1"
        return lambda: get_sampler(settings)

    def _release(self) -> None:
        if self.settings is None:
            return
        if self.value is not None:
            from prm_factory.sampling.vllm_sampler import drop_sampler

            drop_sampler(self.settings)
        if self.previous_env is None:
            os.environ.pop(INSECURE_SERIALIZATION, None)
        else:
            os.environ[INSECURE_SERIALIZATION] = self.previous_env
        self.settings = None


class _ServerSlot(_BackgroundSlot["VLLMServer"]):
    """The session's `vllm serve` of the embedded checkpoint; started again when a test killed it."""

    what = "vllm server"

    def __init__(self) -> None:
        super().__init__()
        self.checkpoint = ""
        self.launching: VLLMServer | None = None  # the server whose start is under way

    def _up(self) -> bool:
        return self.value is not None and self.value.is_running()

    def _prepare(self) -> Callable[[], VLLMServer]:
        from prm_factory.sampling.model_prep import prepare_default_model
        from prm_factory.sampling.vllm_server import DEFAULT_STARTUP_TIMEOUT_S, VLLMServer

        self._release()  # a server a test killed
        self.value = None
        self.checkpoint = str(prepare_default_model())
        # chunked prefill off: the CPU build then takes per-request seeds (model.request_seeds)
        server = self.launching = VLLMServer(
            self.checkpoint,
            served_model_name=SERVED_MODEL_NAME,
            enforce_eager=True,
            engine_args={"enable_chunked_prefill": False},
        )
        if os.environ.get("PYTEST_XDIST_WORKER"):
            # vLLM's own binding ("auto") puts every engine's OpenMP threads on the first core; the server
            # runs on the Docker group's worker while the offline engine computes on the other worker, so it
            # takes the last core instead of halving the engine's
            last = str(max(os.sched_getaffinity(0)))
            bound = {"VLLM_CPU_OMP_THREADS_BIND": last, "VLLM_CPU_NUM_OF_RESERVED_CPU": "0"}
            env = {**server.host_choice.env, **bound}
            server.host_choice = dataclasses.replace(server.host_choice, env=env)
        # twice the product's limit: beside another test worker on 2 cores, a start once ran past 300 s
        return lambda: server.start(timeout_s=2 * DEFAULT_STARTUP_TIMEOUT_S)

    def _interrupt(self) -> None:
        if self.launching is not None:  # stop() kills the process group; the start thread then ends
            self.launching.stop()

    def _release(self) -> None:
        for server in (self.value, self.launching):
            if server is not None:
                server.stop()
        self.launching = None


ENGINE_SLOT = _EngineSlot()


@pytest.fixture(scope="session")
def _engine_slot() -> Iterator[_EngineSlot]:
    """The session's offline engine slot (`engine` of tests/e2e/conftest.py waits on it)."""
    try:
        yield ENGINE_SLOT
    finally:
        ENGINE_SLOT.stop()


_SERVER_SLOT = _ServerSlot()


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.nodeid == item.session.stash.get(_ENGINE_PREFETCH_AT, None):
        ENGINE_SLOT.begin()
    if item.nodeid == item.session.stash.get(_SERVER_PREFETCH_AT, None):
        _SERVER_SLOT.begin()


@pytest.hookimpl(trylast=True)  # after the item's own and its module's fixtures are torn down
def pytest_runtest_teardown(item: pytest.Item) -> None:
    # the offline engine stops after its last user, as the server does: the engine group now runs first on
    # its worker, and an engine left up would hold its memory and its variables in this process (the
    # sampler puts them back on close) through the unit tests that worker takes next
    if item.nodeid == item.session.stash.get(_LAST_ENGINE_USER, None):
        ENGINE_SLOT.stop()


def pytest_sessionfinish(session: pytest.Session) -> None:
    _SERVER_SLOT.stop()  # also when the prefetched server's users never ran
    ENGINE_SLOT.stop()


@pytest.fixture(scope="session")
def _vllm_server_slot() -> Iterator[_ServerSlot]:
    """Holds the session's one server (`vllm serve` takes a minute or more to start on CPU); stopped at the
    end."""
    try:
        yield _SERVER_SLOT
    finally:
        _SERVER_SLOT.stop()


@pytest.fixture
def served_model(request: pytest.FixtureRequest, _vllm_server_slot: _ServerSlot) -> Iterator[ServedModel]:
    """One `vllm serve` (eager, seeded) shared by every test that asks for it: started in the background
    some tests before its first user, started again if a test killed it, and stopped after the last test
    that uses it, so it does not idle beside later engines."""
    slot = _vllm_server_slot
    server = slot.ready()
    yield ServedModel(server, slot.checkpoint)
    if request.node.nodeid == request.session.stash.get(_LAST_SERVER_USER, None):
        slot.stop()


class DockerdControl:
    """Stops and restarts the local Docker engine, for the tests of behaviour across an engine restart.

    Only an engine started by scripts/start_dockerd.sh (pid file, this machine's root) is touched; the
    start always runs again in the fixture's teardown so later tests find the engine answering.
    """

    PID_FILE = Path("/var/run/docker.pid")
    START = Path(__file__).resolve().parents[1] / "scripts" / "start_dockerd.sh"

    def stop(self, timeout_s: float = 60.0) -> None:
        pid = int(self.PID_FILE.read_text().strip())
        os.kill(pid, signal.SIGTERM)  # dockerd stops its containers, then exits
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.2)
        raise TimeoutError(f"dockerd (pid {pid}) still running {timeout_s:.0f} s after SIGTERM")

    def start(self) -> None:
        subprocess.run(["bash", str(self.START)], check=True, capture_output=True, text=True, timeout=120)

    @staticmethod
    def unstarted_sandboxes() -> list[str]:
        """Ids of this process's sandbox containers that were created and never started.

        A create that dockerd still answered as it went down, whose start then failed on the closed
        connection, used to outlive the suite (`docker ps -a`: one `Created` container per restart test):
        `cleanup_leftovers` spares a live owner's containers. `start_container` now removes it, or
        remembers it and removes it once the engine answers; the fixture checks that none is left."""
        import socket

        import docker

        from prm_factory.verifiers.code.sandbox.container import OWNER_LABEL

        owner = f"{OWNER_LABEL}={socket.gethostname()}:{os.getpid()}"
        client = docker.from_env(timeout=60)
        try:
            return [
                entry["Id"]
                for entry in client.api.containers(all=True, filters={"label": owner, "status": "created"})
            ]
        finally:
            client.close()

    @staticmethod
    def remove(container_ids: list[str]) -> None:
        import docker

        client = docker.from_env(timeout=60)
        try:
            for container_id in container_ids:
                client.api.remove_container(container_id, force=True)
        finally:
            client.close()


@pytest.fixture(autouse=True)
def _docker_turn(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test on Docker holds a shared turn on the machine's engine (tests/docker_turns.py); one that restarts
    it takes the turn exclusively in `dockerd`."""
    if not _on_docker(request.node) or "dockerd" in request.fixturenames:
        yield
        return
    with DOCKER_TURNS.shared():
        yield


@pytest.fixture()
def dockerd() -> Iterator[DockerdControl]:
    """Control of the Docker engine; skips where this session may not restart it. After the test the engine
    is started again, and the test fails if its stop left a sandbox container half-made (created, never
    started) that the product neither removed nor remembered to remove (such a one is removed here)."""
    if os.environ.get("PRM_TEST_NO_DOCKERD_RESTART"):
        pytest.skip("PRM_TEST_NO_DOCKERD_RESTART is set: engine restart tests are off")
    if os.geteuid() != 0 or not DockerdControl.PID_FILE.is_file():
        pytest.skip("needs root and a dockerd started by scripts/start_dockerd.sh (pid file)")
    control = DockerdControl()
    with DOCKER_TURNS.exclusive():  # no sandbox in use anywhere on the machine while the engine is down
        try:
            yield control
        finally:
            control.start()
    # What the product would remove on its next create, now that the engine answers again.
    from prm_factory.verifiers.code.sandbox.container import docker_client, remove_unremoved

    client = docker_client()
    try:
        remove_unremoved(client.api)
    finally:
        client.close()
    if left := control.unstarted_sandboxes():
        control.remove(left)  # later tests find a clean engine either way
        pytest.fail(f"{len(left)} sandbox container(s) left created, never started, by a dockerd restart")


@pytest.fixture(scope="session")
def tiny_token_classifier() -> Callable[..., Path]:
    """Build a tiny random Llama token classifier with the embedded model's tokenizer, saved in a folder.

    A stand-in for a trained PRM / ORM checkpoint where a test checks the plumbing around it (layout,
    scoring, the search command), not what a model learnt.
    """

    def build(folder: Path, *, seed: int = 0, num_labels: int = 2) -> Path:
        import torch
        from transformers import AutoTokenizer, LlamaConfig, LlamaForTokenClassification

        from prm_factory.sampling.model_prep import prepare_default_model

        tokenizer = AutoTokenizer.from_pretrained(prepare_default_model())
        torch.manual_seed(seed)
        config = LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_labels=num_labels,
            pad_token_id=tokenizer.eos_token_id,
        )
        LlamaForTokenClassification(config).save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        return folder

    return build
