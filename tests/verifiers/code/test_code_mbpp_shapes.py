"""MBPP tasks on the code verifier: modules the program imported, references that pass (the asserts'
parsing is tested in tests/schemas/test_code_mbpp_asserts.py)."""

from __future__ import annotations

import pytest

from prm_factory.schemas.code_spec import CodeTests
from prm_factory.schemas.records import Problem
from prm_factory.verifiers.code.program import stdlib_imports

REGEX_ASSERTS = ['assert check_str("annie")', 'assert not check_str("dawood")']


def test_only_standard_library_imports_reach_the_judge():
    program = "import sys, numpy\nfrom os import path\nfrom . import x\nimport evil_local\nprint(1)\n"
    imports = stdlib_imports(program)
    assert "import sys" in imports and "from os import path" in imports
    assert "numpy" not in imports and "evil_local" not in imports and "print" not in imports
    assert stdlib_imports("def broken(:") == ""
    exec(stdlib_imports("import sys\nimport this_module_does_not_exist_anywhere_x\n"), {})


@pytest.mark.docker
def test_mbpp_regex_and_sys_tasks_pass_with_their_references(verifier):
    regex = CodeTests.from_asserts(REGEX_ASSERTS, "check_str")
    reference = "import re\ndef check_str(s):\n    return re.search('^[aeiou]', s)\n"
    problem = Problem("mbpp-regex", "t", "code", "x", tests=regex.to_json())
    assert verifier.grade(problem, f"```python\n{reference}```").label == "correct"
    wrong = "import re\ndef check_str(s):\n    return re.search('^[a-z]', s)\n"
    assert verifier.grade(problem, f"```python\n{wrong}```").label == "incorrect"
    sizes = CodeTests.from_asserts(["assert tuple_size((1, 2)) == sys.getsizeof((1, 2))"], "tuple_size")
    problem = Problem("mbpp-sys", "t", "code", "x", tests=sizes.to_json())
    reference = "import sys\ndef tuple_size(t):\n    return sys.getsizeof(t)\n"
    assert verifier.grade(problem, f"```python\n{reference}```").label == "correct"
    off = "import sys\ndef tuple_size(t):\n    return sys.getsizeof(t) + 1\n"
    assert verifier.grade(problem, f"```python\n{off}```").label == "incorrect"
