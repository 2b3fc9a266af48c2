"""The sandbox against the real engine: isolation properties, fresh work dirs, replacement, cleanup."""

from __future__ import annotations

import json
import os
import threading

import docker
import pytest

from prm_factory.verifiers.code.sandbox import (
    LABEL,
    SandboxLimits,
    SandboxPool,
    cleanup_leftovers,
    container_kwargs,
    docker_client,
    run_once,
    start_container,
)
from tests.docker_turns import own_sandboxes

pytestmark = pytest.mark.docker

PROBE = r"""
import json, os, socket
facts = {"uid": os.getuid(), "gid": os.getgid(), "cwd": os.getcwd(), "env": dict(os.environ)}
with open("/proc/self/status") as f:
    status = dict(line.split(":", 1) for line in f if ":" in line)
facts["cap_eff"] = status["CapEff"].strip()
facts["no_new_privs"] = status["NoNewPrivs"].strip()
with open("/proc/net/dev") as f:
    facts["interfaces"] = sorted(line.split(":")[0].strip() for line in f.readlines()[2:])
try:
    open("/etc/owned", "w")
    facts["root_writable"] = True
except OSError:
    facts["root_writable"] = False
facts["host_repo_visible"] = os.path.exists("/work/main/pyproject.toml")
with open("/proc/mounts") as f:
    facts["mounts"] = [line.split()[1] for line in f]
print(json.dumps(facts))
"""


def test_job_runs_unprivileged_offline_and_read_only(pool):
    os.environ["PRM_HOST_CANARY"] = "do-not-leak"
    try:
        result = pool.run({"probe.py": PROBE}, ["python3", "probe.py"])
    finally:
        del os.environ["PRM_HOST_CANARY"]
    assert result.ok, result
    facts = json.loads(result.stdout)
    assert facts["uid"] == 10001 and facts["gid"] == 10001
    assert facts["cap_eff"] == "0000000000000000"
    assert facts["no_new_privs"] == "1"
    assert facts["interfaces"] == ["lo"]
    assert facts["root_writable"] is False
    assert facts["host_repo_visible"] is False
    assert facts["cwd"].startswith("/work/job-")
    assert "PRM_HOST_CANARY" not in facts["env"] and "do-not-leak" not in result.stdout
    assert set(facts["env"]) <= {
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONUNBUFFERED",
    }


def test_engine_side_limits_on_every_pool_container(pool):
    client = docker_client()
    for container_id in pool.container_ids():
        attrs = client.api.inspect_container(container_id)
        host = attrs["HostConfig"]
        assert host["NetworkMode"] == "none"
        assert host["ReadonlyRootfs"] is True
        assert host["Memory"] == host["MemorySwap"] == 128 * 1024 * 1024
        assert host["PidsLimit"] == 32 and host["NanoCpus"] == 1_000_000_000
        assert host["CapDrop"] == ["ALL"] and "no-new-privileges" in host["SecurityOpt"]
        assert not host["Binds"] and not attrs["Mounts"] and not host["Privileged"]
        assert attrs["Config"]["User"] == "10001:10001"
        assert attrs["Config"]["Labels"][LABEL] == "1"


def test_each_job_gets_a_fresh_work_dir(pool):
    first = pool.run(
        {"a.py": "open('left.txt', 'w').write('x'); open('/tmp/t', 'w').write('y')"}, ["python3", "a.py"]
    )
    assert first.ok, first
    for _ in range(2):  # whichever container serves it
        second = pool.run(
            {"b.py": "import os; print(sorted(os.listdir('.')), os.path.exists('/tmp/t'))"},
            ["python3", "b.py"],
        )
        assert second.stdout.strip() == "['b.py'] False"


def test_exit_codes_signals_and_plain_commands(pool):
    assert pool.run({"m.py": "raise SystemExit(3)"}, ["python3", "m.py"]).exit_code == 3
    crashed = pool.run({"m.py": "raise ValueError('boom')"}, ["python3", "m.py"])
    assert crashed.exit_code == 1 and "ValueError: boom" in crashed.stderr
    killed = pool.run(
        {"m.py": "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"}, ["python3", "m.py"]
    )
    assert killed.signal == 11 and killed.exit_code is None
    echoed = pool.run({}, ["sh", "-c", "echo hi; echo err >&2"])
    assert (echoed.exit_code, echoed.stdout, echoed.stderr) == (0, "hi\n", "err\n")


def test_timeout_replaces_the_container_and_pool_recovers(pool):
    before = set(pool.container_ids())
    result = pool.run({"m.py": "while True: pass"}, ["python3", "m.py"])
    assert result.timed_out and result.container_replaced and not result.ok
    after = set(pool.container_ids())
    assert len(after) == pool.size and after != before
    assert pool.run({"m.py": "print('ok')"}, ["python3", "m.py"]).stdout == "ok\n"


def test_output_is_capped(pool):
    result = pool.run(
        {"m.py": "import sys\nfor _ in range(100000): sys.stdout.write('x' * 65536)"}, ["python3", "m.py"]
    )
    assert result.output_truncated and result.misbehaved
    assert len(result.stdout) <= 1 << 20


def test_concurrent_jobs_from_threads(pool):
    results: list[str] = []
    lock = threading.Lock()

    def work(i: int) -> None:
        out = pool.run({"m.py": f"print({i} * {i})"}, ["python3", "m.py"]).stdout.strip()
        with lock:
            results.append(out)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results, key=int) == [str(i * i) for i in range(6)]


def test_run_once_uses_a_fresh_container_and_removes_it(sandbox_image):
    client = docker_client()
    before = {c.id for c in client.containers.list(all=True, filters=own_sandboxes())}
    result = run_once(sandbox_image, {"m.py": "print(7)"}, ["python3", "m.py"], SandboxLimits(wall_seconds=5))
    assert result.stdout == "7\n"
    after = {c.id for c in client.containers.list(all=True, filters=own_sandboxes())}
    assert after == before


def test_pool_close_removes_containers_and_leftovers_are_cleaned(sandbox_image):
    client = docker_client()
    with SandboxPool(sandbox_image, size=1, limits=SandboxLimits(wall_seconds=5)) as small:
        ids = small.container_ids()
        assert len(ids) == 1
    with pytest.raises(docker.errors.NotFound):
        client.containers.get(ids[0])
    # A container left by a crashed run (its owner pid is gone) is removed by the next run.
    kwargs = container_kwargs(sandbox_image, SandboxLimits(), ["sleep", "600"])
    kwargs["labels"] = {**kwargs["labels"], "prm-factory.sandbox.owner": "nowhere:999999999"}
    orphan = start_container(client, kwargs)
    assert cleanup_leftovers(client) >= 1
    with pytest.raises(docker.errors.NotFound):
        client.containers.get(orphan.id)


@pytest.mark.parametrize("dispatch", ["server", "exec"])
def test_both_dispatch_modes_isolate_and_recover(sandbox_image, dispatch):
    limits = SandboxLimits(wall_seconds=2, memory_mb=128, pids=32, tmpfs_mb=16)
    with SandboxPool(sandbox_image, size=1, limits=limits, dispatch=dispatch) as single:
        assert single.run({"m.py": "import os; print(os.getuid())"}, ["python3", "m.py"]).stdout == "10001\n"
        killer = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"
        killed = single.run({"m.py": killer}, ["python3", "m.py"])
        assert killed.misbehaved and killed.container_replaced
        slow = single.run({"m.py": "import time; time.sleep(30)"}, ["python3", "m.py"])
        assert slow.timed_out and slow.container_replaced
        assert single.run({"m.py": "print('still fine')"}, ["python3", "m.py"]).stdout == "still fine\n"


def test_pid1_survives_signals_from_the_job(pool):
    job = (
        "import os, signal\n"
        "for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT):\n    os.kill(1, sig)\n"
        "print('ok')"
    )
    before = set(pool.container_ids())
    result = pool.run({"m.py": job}, ["python3", "m.py"])
    assert result.ok and result.stdout == "ok\n"
    assert set(pool.container_ids()) == before
