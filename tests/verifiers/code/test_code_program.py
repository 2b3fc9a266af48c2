"""Pure functions over code chains: blocks, the program so far, segmentation offsets."""

from __future__ import annotations

import pytest

from prm_factory.verifiers.code.program import (
    assemble_program,
    compile_error,
    defined_names,
    ends_inside_block,
    extract_code_blocks,
    segment_chain,
)

CHAIN = """First a helper that squares.
```python
def square(x):
    return x * x
```
Now the answer.

```py
def sum_of_squares(nums):
    return sum(square(n) for n in nums)
```
Shell, not python:
```bash
echo hi
```
Done."""


def test_blocks_found_in_order_with_languages_and_offsets():
    blocks = extract_code_blocks(CHAIN)
    assert [b.language for b in blocks] == ["python", "py", "bash"]
    assert all(b.closed for b in blocks)
    for block in blocks:
        assert CHAIN[block.code_start : block.code_end] == block.code
        assert CHAIN[block.start : block.start + 3] == "```"


def test_program_joins_python_blocks_only():
    program = assemble_program(CHAIN)
    assert "def square" in program and "def sum_of_squares" in program
    assert "echo hi" not in program
    assert compile_error(program) is None


def test_program_of_a_prefix_holds_only_code_written_so_far():
    cut = CHAIN.index("Now the answer")
    assert assemble_program(CHAIN, upto=cut) == "def square(x):\n    return x * x"


def test_unclosed_block_counts_up_to_the_end():
    text = "Plan.\n```python\ndef f():\n    return 1\n"
    assert ends_inside_block(text)
    assert assemble_program(text) == "def f():\n    return 1"
    assert not ends_inside_block(CHAIN)


def test_later_definition_wins_when_run():
    text = "```python\ndef f():\n    return 1\n```\nFix:\n```python\ndef f():\n    return 2\n```"
    namespace: dict = {}
    exec(assemble_program(text), namespace)
    assert namespace["f"]() == 2


@pytest.mark.parametrize("mode", ["block", "statement", "line"])
def test_segments_are_ordered_spans_of_the_text(mode):
    segments = segment_chain(CHAIN, mode)
    assert segments
    previous_end = 0
    for segment in segments:
        assert CHAIN[segment.start : segment.end] == segment.text
        assert segment.start >= previous_end
        previous_end = segment.end
    joined = "\n".join(s.text for s in segments)
    assert assemble_program(joined) == assemble_program(CHAIN)


def test_block_mode_one_step_per_code_block_plus_trailing_prose():
    kinds = [s.kind for s in segment_chain(CHAIN, "block")]
    assert kinds == ["code", "code", "code", "prose"]


def test_statement_mode_splits_top_level_statements():
    text = "Intro.\n\n```python\nimport math\n\n# helper\ndef f(x):\n    return math.sqrt(x)\n\nY = f(4)\n```"
    code_steps = [s.text for s in segment_chain(text, "statement") if s.kind == "code"]
    assert len(code_steps) == 3
    assert code_steps[0].startswith("```python\nimport math")
    assert code_steps[1].startswith("# helper\ndef f(x)")
    assert code_steps[2].endswith("```")


def test_line_mode_splits_prose_lines():
    text = "one\ntwo\n\nthree\n```python\nx = 1\n```"
    assert [s.text for s in segment_chain(text, "line")] == ["one", "two", "three", "```python\nx = 1\n```"]


def test_compile_error_and_defined_names():
    assert compile_error("def f(:\n  pass").startswith("line 1")
    assert defined_names("import os.path as p\nfrom x import y\nA = B = 1\ndef g(): pass\nclass C: pass") == {
        "p",
        "y",
        "A",
        "B",
        "g",
        "C",
    }
    assert defined_names("def (") == set()


def test_reply_that_starts_inside_a_code_block_keeps_its_code():
    text = "def f(x):\n    return x + 1\n```\n\nThis function adds one."
    blocks = extract_code_blocks(text)
    assert [(b.language, b.code, b.closed) for b in blocks] == [
        ("python", "def f(x):\n    return x + 1", True)
    ]
    assert assemble_program(text) == "def f(x):\n    return x + 1"
    # prose before an opening fence is never taken for code
    prose = "Here is the code\n```\ndef g():\n    pass\n```"
    assert [b.code for b in extract_code_blocks(prose)] == ["def g():\n    pass"]
    assert extract_code_blocks("x\n```\ny = 2\n```")[0].code == "y = 2"


@pytest.mark.parametrize(
    ("text", "language", "code", "closed"),
    [
        # the info string's first word is the language; the rest (title, line marks) is ignored
        ('Code:\n```python title="a.py" {1,2}\nx = 1\n```\n', "python", "x = 1", True),
        # a tilde fence is closed only by tildes; a backtick fence inside it is code
        ("a\n~~~python\nx = 1\n```\ny = 2\n~~~\nb", "python", "x = 1\n```\ny = 2", True),
        # a longer fence holds a shorter one (a markdown example inside a block)
        ("````markdown\n```\ninner\n```\n````\nafter", "markdown", "```\ninner\n```", True),
        # a fence with an info string never closes a block
        ("```python\nx = 1\n```python\ny = 2\n```\n", "python", "x = 1\n```python\ny = 2", True),
        # an indented fence, or one in a list item or a quote: its indentation or prefix is not code
        ("  ```python\n  def f():\n      return 1\n  ```\n", "python", "def f():\n    return 1", True),
        (
            "1. Define it:\n   ```python\n   def f():\n       return 1\n   ```\n2. Done.",
            "python",
            "def f():\n    return 1",
            True,
        ),
        ("> ```python\n> x = 1\n> ```\n", "python", "x = 1", True),
        # Windows line ends close a block too
        ("a\r\n```python\r\nx = 1\r\n```\r\nb", "python", "x = 1", True),
        # an unterminated fence runs to the end of the text
        ("Plan.\n```python\ndef f():\n    return 1\n\n", "python", "def f():\n    return 1\n\n", False),
        ("```py", "py", "", False),
    ],
)
def test_fences_are_read_as_commonmark_reads_them(text: str, language: str, code: str, closed: bool) -> None:
    (block,) = extract_code_blocks(text)
    assert (block.language, block.code, block.closed) == (language, code, closed)
    assert text[block.start : block.start + 3] in {"```", "~~~"}
    assert ends_inside_block(text) is not closed


def test_four_spaces_make_an_indented_code_block_not_a_fence() -> None:
    assert extract_code_blocks("text\n\n    ```python\n    x = 1\n    ```\n") == []


def test_statements_of_an_indented_block_keep_their_offsets_in_the_text() -> None:
    text = "1. Code:\n   ```python\n   import math\n\n   def f(x):\n       return math.sqrt(x)\n   ```\n"
    code_steps = [s for s in segment_chain(text, "statement") if s.kind == "code"]
    assert [s.text.splitlines()[-1].strip() for s in code_steps] == ["import math", "```"]
    assert all(text[s.start : s.end] == s.text for s in code_steps)
