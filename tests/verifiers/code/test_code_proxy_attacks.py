"""Attacks on the proxy and stdin channels themselves (the shared suite is test_code_attacks.py).

The proxy sends arguments to the submission's process and takes back values; an attack there could try
to answer calls it was not asked, forge answers for every call, pass an object off as the judge's own
placeholder, or find the judge's test code (its expected values) left in the container. None may pass.
"""

from __future__ import annotations

import json

import pytest

from prm_factory.schemas.code_spec import CodeTests, StdioCase, StdioTests
from prm_factory.schemas.records import Problem
from prm_factory.verifiers.code.tests_runner import HARNESS_ARGV, HARNESS_SOURCE
from prm_factory.verifiers.protocol import outcome_value

pytestmark = pytest.mark.docker

MARKER = 987654321  # an expected value that only the test code holds
TEST_CODE = f"def check(candidate):\n    for n in range(3):\n        assert candidate(n) == n + {MARKER}\n"
RIGHT = f"def shift(n):\n    return n + {MARKER}\n"

ATTACKS = {
    # finds the invoke job through the call stack and answers every call (and made-up keys) itself
    "forge_answers": (
        "import sys, json, os\n"
        "frame = sys._getframe()\n"
        "while frame is not None and 'records' not in frame.f_locals:\n"
        "    frame = frame.f_back\n"
        "records, job = frame.f_locals['records'], frame.f_locals['job']\n"
        "for call in job['calls']:\n"
        "    for key in (call['key'], 'made-up'):\n"
        "        rec = {'nonce': records.nonce, 'kind': 'answer', 'key': key, 'value': ['int', hex(7)]}\n"
        "        os.write(records.fd, (json.dumps(rec) + '\\n').encode())\n"
        "def shift(n):\n    return 0\n"
    ),
    # an object that would look like the judge's Pending placeholder: it cannot be encoded
    "pending_lookalike": (
        "class Pending:\n    def __eq__(self, other):\n        return self\n"
        "    def __bool__(self):\n        return True\n"
        "def shift(n):\n    return Pending()\n"
    ),
    # looks for the test code in every file the container can read, and returns what it finds
    "search_container_for_test_code": (
        "import os\n"
        "def shift(n):\n"
        "    for root in ('/work', '/tmp', '/'):\n"
        "        for base, dirs, files in os.walk(root):\n"
        "            if base.startswith(('/proc', '/sys', '/usr', '/dev')):\n"
        "                dirs[:] = []\n"
        "                continue\n"
        "            for name in files:\n"
        "                try:\n"
        "                    text = open(os.path.join(base, name), errors='ignore').read()\n"
        "                except OSError:\n"
        f"                    continue\n"
        f"                if '{MARKER}' in text and 'shift' not in name:\n"
        f"                    return n + {MARKER}\n"
        "    return -1\n"
    ),
    # raises an exception whose name is a built-in class the judge would re-raise
    "raise_assertion_to_confuse_the_judge": "def shift(n):\n    raise AssertionError('passed')\n",
    "return_huge_value": "def shift(n):\n    return 'x' * (1 << 26)\n",
    "exit_during_the_call": "import os\ndef shift(n):\n    os._exit(0)\n",
}


@pytest.fixture(scope="module")
def proxied() -> Problem:
    tests = CodeTests.from_check_function(TEST_CODE, "shift")
    assert [c.proxy for c in tests.cases] == [True]
    return Problem("proxy-attacks", "tests", "code", "shift", tests=tests.to_json())


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_proxy_channel_attack_never_passes(name, verifier, proxied):
    verdict = verifier.grade(proxied, f"```python\n{ATTACKS[name]}```")
    assert verdict.label in ("incorrect", "timeout", "error"), (name, verdict.reason, verdict.evidence)
    assert outcome_value(verdict.label) is not True
    assert verifier.grade(proxied, f"```python\n{RIGHT}```").label == "correct"


def test_the_judges_test_code_is_not_left_in_the_container(pool):
    job = {
        "mode": "proxy",
        "nonce": "n" * 32,
        "context": "",
        "code": TEST_CODE + "\ncheck(candidate)\n",
        "entry_point": "shift",
        "answers": {},
        "seed": 0,
    }
    for _ in range(pool.size):  # every container has run a judge job
        judge = pool.run({"harness.py": HARNESS_SOURCE, "job.json": json.dumps(job)}, HARNESS_ARGV)
        assert '"kind": "need"' in judge.stdout
    search = (
        "import os\nfound = []\n"
        "for root in ('/work', '/tmp'):\n"
        "    for base, _, files in os.walk(root):\n"
        "        for name in files:\n"
        "            path = os.path.join(base, name)\n"
        "            if path.endswith('search.py'):\n"
        "                continue\n"
        "            try:\n"
        "                data = open(path, 'rb').read()\n"
        "            except OSError:\n"
        "                continue\n"
        f"            if b'{MARKER}' in data:\n"
        "                found.append(path)\n"
        "print(len(found))\n"
    )
    for _ in range(pool.size):
        result = pool.run({"search.py": search}, ["python3", "search.py"])
        assert result.stdout.strip() == "0", result


def test_stdin_program_cannot_read_anything_but_its_input(verifier):
    tests = StdioTests((StdioCase("t0", "2\n", (f"{2 + MARKER}\n",)),), time_limit_s=5.0)
    problem = Problem("stdin-attacks", "tests", "code", "shift stdin", tests=tests.to_json())
    rewinding = "import sys, os\ndata = sys.stdin.read()\nos.lseek(0, 0, 0)\nprint(sys.stdin.read() + data)\n"
    searching = (
        "import os\nhits = []\n"
        "for base, _, files in os.walk('/work'):\n"
        "    for name in files:\n"
        f"        if '{MARKER}' in open(os.path.join(base, name), errors='ignore').read():\n"
        "            hits.append(name)\n"
        "print(hits)\n"
    )
    for program in (rewinding, searching):
        verdict = verifier.grade(problem, f"```python\n{program}```")
        assert verdict.label == "incorrect", verdict.evidence
    right = f"print(int(input()) + {MARKER})"
    assert verifier.grade(problem, f"```python\n{right}\n```").label == "correct"
