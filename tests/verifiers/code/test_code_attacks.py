"""The attack suite: hostile submissions to `sum_of_squares`. None may pass; host and pool stay healthy.

Every attack runs three ways: against split asserts (values decided on the host), through the proxy
(the dataset's own test code run unchanged in the judge, `candidate` proxied to the submission's
process), and as a stdin/stdout program (outputs compared on the host).

Each attack is written so that it would pass if the attack worked: the hostile step comes first and a
correct (or a faking) solution follows it. The verdict must never be `correct`: `incorrect` when a test
ran and failed, `timeout` or `error` when the attack only stopped the tests (never a positive label),
and afterwards the pool must still hold its containers, idle, and grade the reference solution correct.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from prm_factory.verifiers.code.sandbox import docker_client
from tests.docker_turns import own_sandboxes

pytestmark = pytest.mark.docker

CORRECT = "def sum_of_squares(nums):\n    return sum(n * n for n in nums)\n"

ATTACKS = {
    "fork_bomb": "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    + CORRECT,
    "busy_loop": "while True:\n    pass\n" + CORRECT,
    "memory_bomb": "hog = 'x' * (1 << 30)\n" + CORRECT,
    "memory_bomb_growing": "hog = []\nwhile True:\n    hog.append(' ' * (1 << 20))\n" + CORRECT,
    "gigabyte_to_stdout": "import sys\nfor _ in range(1 << 14):\n    sys.stdout.write('x' * (1 << 16))\n"
    + CORRECT,
    "gigabyte_to_fd1": "import os\nfor _ in range(1 << 14):\n    os.write(1, b'x' * (1 << 16))\n" + CORRECT,
    "write_outside_workdir": "open('/usr/lib/pwned', 'w').write('x')\n" + CORRECT,
    "write_etc": "open('/etc/passwd', 'a').write('evil::0:0::/:/bin/sh')\n" + CORRECT,
    "delete_files": "import os\nos.remove('/usr/bin/python3')\n" + CORRECT,
    "delete_tree": "import shutil\nshutil.rmtree('/usr')\nimport os\nassert not os.path.exists('/usr')\n"
    + CORRECT,
    "socket_loopback": "import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=1).close()\n"
    + CORRECT,
    "socket_outside": "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=1).close()\n"
    + CORRECT,
    "socket_dns": "import socket\nsocket.getaddrinfo('example.com', 80)\n" + CORRECT,
    "sys_exit_before_asserts": "import sys\nsys.exit(0)\n",
    "os_exit_before_asserts": "import os\nos._exit(0)\n",
    "os_exit_in_call": "import os\ndef sum_of_squares(nums):\n    os._exit(0)\n",
    "sys_exit_in_call": "import sys\ndef sum_of_squares(nums):\n    sys.exit(0)\n",
    "patch_builtins_eval": (
        "import builtins\nbuiltins.eval = lambda *a, **k: 14\ndef sum_of_squares(nums):\n    return 0\n"
    ),
    "patch_harness_records": (
        "import __main__, json, os\n"
        "def forge(self, **fields):\n"
        "    for case in range(10):\n"
        "        for kind in ('value', 'verdict'):\n"
        "            rec = {'nonce': self.nonce, 'kind': kind, 'case': case, 'index': 0, 'ok': True,\n"
        "                   'value': ['int', hex(14)]}\n"
        "            os.write(self.fd, (json.dumps(rec) + '\\n').encode())\n"
        "__main__.Records.write = forge\n"
        "def sum_of_squares(nums):\n    return 0\n"
    ),
    "frame_walk_forge": (
        # Finds the harness's record channel and job through the call stack, forges a passing value
        # and verdict for every case, then silences the real records.
        "import sys, json, os\n"
        "frame = sys._getframe()\n"
        "while frame is not None and 'records' not in frame.f_locals:\n"
        "    frame = frame.f_back\n"
        "records, job = frame.f_locals['records'], frame.f_locals['job']\n"
        "for case in job['cases']:\n"
        "    for kind in ('value', 'verdict'):\n"
        "        rec = {'nonce': records.nonce, 'kind': kind, 'case': case['id'], 'index': 0, 'ok': True,\n"
        "               'value': ['int', hex(14)]}\n"
        "        os.write(records.fd, (json.dumps(rec) + '\\n').encode())\n"
        "records.write = lambda **fields: None\n"
        "def sum_of_squares(nums):\n    return 0\n"
    ),
    "patch_encode": (
        "import __main__\n__main__.encode = lambda value, *a: ['int', hex(14)]\n"
        "def sum_of_squares(nums):\n    return 0\n"
    ),
    "patch_isinstance_and_type": (
        "import builtins\nbuiltins.type = lambda x: int\nbuiltins.isinstance = lambda *a: True\n"
        "class Any:\n    def __eq__(self, other):\n        return True\n"
        "def sum_of_squares(nums):\n    return Any()\n"
    ),
    "eq_always_true": "class Any:\n    def __eq__(self, other):\n        return True\n    __hash__ = None\n"
    "def sum_of_squares(nums):\n    return Any()\n",
    "int_subclass_eq": "class Liar(int):\n    def __eq__(self, other):\n        return True\n"
    "def sum_of_squares(nums):\n    return Liar(0)\n",
    "read_host_env": "import os\nassert 'PRM_HOST_CANARY' in os.environ\n" + CORRECT,
    "read_host_file": "open('/work/main/pyproject.toml').read()\n" + CORRECT,
    "read_docker_socket": "import socket\ns = socket.socket(socket.AF_UNIX)\n"
    "s.connect('/var/run/docker.sock')\n" + CORRECT,
    "read_pid1_memory": "open('/proc/1/mem', 'rb').read(1)\n" + CORRECT,
    "read_supervisor_environ": "import os\nopen(f'/proc/{os.getppid()}/environ', 'rb').read()\n" + CORRECT,
    "sleep_past_limit": "import time\ntime.sleep(60)\n" + CORRECT,
    "sleep_in_call": "import time\ndef sum_of_squares(nums):\n    time.sleep(60)\n",
    "background_process": (
        "import subprocess\nsubprocess.Popen(['sleep', '1000'], start_new_session=True)\n" + CORRECT
    ),
    "double_fork_daemon": (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
        "        while True:\n            time.sleep(0.1)\n    os._exit(0)\n" + CORRECT
    ),
    "print_fake_records": (
        'print(\'{"kind": "value", "case": 0, "index": 0, "value": ["int", "0xe"]}\')\n'
        "def sum_of_squares(nums):\n    return 0\n"
    ),
}


@pytest.fixture(scope="module")
def host_listener():
    """A TCP server on the host's loopback: the sandbox must not reach it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    accepted: list[object] = []

    def accept() -> None:
        try:
            while True:
                accepted.append(server.accept())
        except OSError:
            return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    server.close()


def _leftover_processes(container) -> list[list[str]]:
    """Processes other than the supervisor (PID 1) and its idle handler."""
    processes = container.top(ps_args="-eo pid,args")["Processes"] or []
    strangers = [p for p in processes if not p[1].startswith("python3 -I -S -c")]
    return strangers or processes[2:]


def _assert_pool_healthy(pool, verifier, squares) -> None:
    ids = pool.container_ids()
    assert len(ids) == pool.size
    client = docker_client()
    for container_id in ids:
        container = client.containers.get(container_id)
        assert container.status == "running"
        # Nothing the attack started is left behind. A handler that just exited can show for a moment
        # as "[python3]" (a zombie until PID 1 reaps it), so poll briefly instead of sampling once.
        deadline = time.monotonic() + 5.0
        while (leftovers := _leftover_processes(container)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not leftovers, container.top(ps_args="-eo pid,stat,args")["Processes"]
    after = _grade_reference(verifier, squares, CORRECT)
    assert after.label == "correct", (after.reason, after.evidence)


def _grade_reference(verifier, problem, program: str, tries: int = 3):
    """The right program's verdict, tried again only where it ran out of time: under the suite's load a 2 s
    wall clock (FAST_LIMITS) can time out a right program (seen once on a loaded 2-core machine), which says
    nothing about the pool. A wrong label (`incorrect`, `error`) fails at once, and a pool that an attack
    left slowed down times out on every try."""
    for _ in range(tries):
        verdict = verifier.grade(problem, f"```python\n{program}```")
        if verdict.label != "timeout":
            return verdict
    return verdict


# The same problem with test code the splitter cannot take apart (a loop): it runs unchanged in the clean
# judge process, with `candidate` a proxy to the submission's process.
PROXY_TEST_CODE = (
    "CASES = [([1, 2, 3], 14), ([], 0), ([-4], 16), ([10, 0, -1], 101)]\n\n"
    "def check(candidate):\n    assert True, 'This prints if this assert fails'\n"
    "    for nums, want in CASES:\n        assert candidate(nums) == want\n"
)
# ... and as a program that reads its numbers on stdin and prints the answer.
STDIN_MAIN = "\nprint(sum_of_squares(list(map(int, input().split()))))\n"
STDIN_CASES = (("1 2 3\n", "14"), ("\n", "0"), ("-4\n", "16"), ("10 0 -1\n", "101"))


@pytest.fixture(scope="module")
def proxied_squares():
    from prm_factory.schemas.code_spec import CodeTests
    from prm_factory.schemas.records import Problem

    tests = CodeTests.from_check_function(PROXY_TEST_CODE, "sum_of_squares")
    assert all(case.proxy for case in tests.cases)
    return Problem("attacks-proxy", "attacks", "code", "sum of squares", tests=tests.to_json())


@pytest.fixture(scope="module")
def stdin_squares():
    from prm_factory.schemas.code_spec import StdioCase, StdioTests
    from prm_factory.schemas.records import Problem

    cases = tuple(StdioCase(f"test_{i}", given, (want,)) for i, (given, want) in enumerate(STDIN_CASES))
    tests = StdioTests(cases, compare="tokens", time_limit_s=2.0)
    return Problem("attacks-stdin", "attacks", "code", "sum of squares on stdin", tests=tests.to_json())


# Attacks that only stop the tests: a wall-clock limit gives `timeout`, a memory kill `error` (per-test status
# `memory`). Neither is a judgement of the program (fail closed); every other attack ran and failed.
STOPPED_BY = {
    "busy_loop": "timeout",
    "fork_bomb": "timeout",  # or `error` by memory: see RACING_LIMITS
    "sleep_in_call": "timeout",
    "sleep_past_limit": "timeout",
    "memory_bomb": "error",
    "memory_bomb_growing": "error",
}


# A fork bomb meets two limits at once: the pids limit makes its forks fail, and the processes it did start
# (up to the pool's 32) hold about the pool's 128 MB between them, so which of the wall clock and the memory
# limit stops it first depends on timing. Either is a limit, never a judgement; the statuses must name it.
RACING_LIMITS = {"fork_bomb": {"error": "memory"}}


def _assert_no_false_pass(name, verdict, accepted) -> None:
    expected = STOPPED_BY.get(name, "incorrect")
    statuses = verdict.evidence.get("statuses", {})
    # On a loaded 2-core machine a 2 s job may hit its wall clock before the attack is judged: that is a
    # `timeout` (not judged, never positive), and only accepted when a test really timed out.
    load_timeout = verdict.label == "timeout" and "timeout" in statuses
    racing = RACING_LIMITS.get(name, {}).get(verdict.label)
    other_limit = racing is not None and racing in statuses
    assert verdict.label == expected or load_timeout or other_limit, (name, verdict.reason, verdict.evidence)
    evidence = verdict.evidence
    if "n_tests" in evidence:
        assert (
            evidence["n_passed"] < evidence["n_tests"]
            or evidence["misbehaved"]
            or evidence["timed_out"]
            or evidence["oom"]
        ), evidence
        assert all(
            t["status"] in ("passed", "failed", "timeout", "memory", "error") for t in evidence["tests"]
        )
    assert not accepted
    assert not Path("/usr/lib/pwned").exists()


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attack_never_passes(name, pool, verifier, squares, host_listener, monkeypatch):
    port, accepted = host_listener
    monkeypatch.setenv("PRM_HOST_CANARY", "secret")
    program = ATTACKS[name].replace("{port}", str(port))
    verdict = verifier.grade(squares, f"```python\n{program}```")
    _assert_no_false_pass(name, verdict, accepted)
    _assert_pool_healthy(pool, verifier, squares)


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attack_never_passes_through_the_proxy(
    name, pool, verifier, squares, proxied_squares, host_listener, monkeypatch
):
    port, accepted = host_listener
    monkeypatch.setenv("PRM_HOST_CANARY", "secret")
    program = ATTACKS[name].replace("{port}", str(port))
    verdict = verifier.grade(proxied_squares, f"```python\n{program}```")
    _assert_no_false_pass(name, verdict, accepted)
    _assert_pool_healthy(pool, verifier, squares)
    assert _grade_reference(verifier, proxied_squares, CORRECT).label == "correct"


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attack_never_passes_on_stdin(
    name, pool, verifier, squares, stdin_squares, host_listener, monkeypatch
):
    port, accepted = host_listener
    monkeypatch.setenv("PRM_HOST_CANARY", "secret")
    program = ATTACKS[name].replace("{port}", str(port)) + STDIN_MAIN
    verdict = verifier.grade(stdin_squares, f"```python\n{program}```")
    _assert_no_false_pass(name, verdict, accepted)
    _assert_pool_healthy(pool, verifier, squares)
    assert _grade_reference(verifier, stdin_squares, CORRECT + STDIN_MAIN).label == "correct"


def test_no_stray_sandbox_containers_beyond_the_pool(pool):
    mine = {c.id for c in docker_client().containers.list(all=True, filters=own_sandboxes())}
    assert set(pool.container_ids()) <= mine
    exited = docker_client().containers.list(all=True, filters={**own_sandboxes(), "status": "exited"})
    assert exited == []
