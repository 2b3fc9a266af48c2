"""Pure functions over a code chain's text: code blocks, the program written so far, and steps.

A code chain is prose with fenced code blocks. The program at any point of the chain is the
concatenation of the python code written up to that point, in order, so a later definition of a
function replaces an earlier one, just as when the file is run. A block cut off by the prefix (or never
closed by the model) contributes the code written so far.

    >>> text = "Add them.\\n```python\\ndef add(a, b):\\n    return a + b\\n```\\nDone."
    >>> assemble_program(text)
    'def add(a, b):\\n    return a + b'
    >>> [s.kind for s in segment_chain(text, "block")]
    ['code', 'prose']
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from typing import Literal

from markdown_it import MarkdownIt

SegmentMode = Literal["block", "statement", "line"]

PYTHON_LANGUAGES = {"", "python", "py", "python3", "py3"}
# CommonMark block structure only (fences inside lists and quotes included); inline markup is never needed
_MARKDOWN = MarkdownIt("commonmark", {"html": False}).disable(["inline", "text_join"])
_NEWLINE = re.compile(r"\r\n?|\n")  # the line breaks markdown-it counts lines by


@dataclass(frozen=True)
class CodeBlock:
    language: str
    code: str  # the block's code as Markdown reads it: a fence's indentation, list or quote prefix removed
    start: int  # offset of the opening fence's first character
    end: int  # offset just past the closing fence, or len(text) when the block is unclosed
    code_start: int
    code_end: int
    closed: bool

    @property
    def is_python(self) -> bool:
        return self.language.lower() in PYTHON_LANGUAGES


@dataclass(frozen=True)
class Segment:
    text: str
    start: int
    end: int
    kind: Literal["prose", "code"]


def _leading_code_block(text: str, first: CodeBlock | None) -> CodeBlock | None:
    """Code written before a bare closing fence, with no opening fence: chat models often start their
    reply inside a code block ("def f(x):\n    ...\n```\nThis function ..."). The leading text counts as
    a python block only if it parses and defines something, so prose before an opening fence never does."""
    if first is None or first.language or not text[: first.start].strip():
        return None
    code = text[: first.start].rstrip("\n")
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    defines = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Assign)
    if not any(isinstance(node, defines) for node in tree.body):
        return None
    fence_line_end = _NEWLINE.search(text, first.start)
    return CodeBlock(
        "python", code, 0, fence_line_end.start() if fence_line_end else len(text), 0, len(code), True
    )


def _fenced_blocks(text: str, offset: int = 0) -> list[CodeBlock]:
    """The fenced blocks of `text[offset:]` as CommonMark (markdown-it-py) reads them, with offsets into
    `text`: ``` or ~~~, any info string, up to three spaces of indentation, inside lists and block quotes;
    a fence closes only on a fence of its own character at least as long; an unclosed block runs to the end
    of its container (the text, or the list item or quote that holds it)."""
    body = text[offset:]
    breaks = list(_NEWLINE.finditer(body))
    starts = [0] + [b.end() for b in breaks] + [len(body)]  # line i is body[starts[i]:ends[i]]
    ends = [b.start() for b in breaks] + [len(body)]
    blocks = []
    for token in _MARKDOWN.parse(body):
        if token.type != "fence" or token.map is None:
            continue
        first, last = token.map
        fence = token.markup
        closing = body[starts[last - 1] : ends[last - 1]] if last - 1 > first else ""
        closed = re.fullmatch(rf"[ \t>]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*", closing) is not None
        code_start = starts[first + 1]
        code_end = (ends[last - 2] if last - 2 > first else code_start) if closed else starts[last]
        end = ends[last - 1] if closed else code_end
        code = token.content[:-1] if closed and token.content.endswith("\n") else token.content
        language = token.info.split()[0] if token.info.strip() else ""
        start = body.index(fence, starts[first])
        blocks.append(
            CodeBlock(
                language, code, offset + start, offset + end, offset + code_start, offset + code_end, closed
            )
        )
    return blocks


def extract_code_blocks(text: str) -> list[CodeBlock]:
    """Fenced blocks in order (see `_fenced_blocks`); code before a bare first fence is a block too (see
    `_leading_code_block`)."""
    blocks = _fenced_blocks(text)
    leading = _leading_code_block(text, blocks[0] if blocks else None)
    return [leading, *_fenced_blocks(text, leading.end)] if leading else blocks


def assemble_program(text: str, upto: int | None = None) -> str:
    """The python program written in `text[:upto]`: its python blocks' code joined in order."""
    limit = len(text) if upto is None else upto
    parts = []
    for block in extract_code_blocks(text[:limit]):
        if block.is_python and block.code.strip():
            parts.append(block.code.rstrip())
    return "\n\n".join(parts)


def ends_inside_block(text: str) -> bool:
    """True when the text stops inside an unclosed code block (the step cut a block in two)."""
    blocks = extract_code_blocks(text)
    return bool(blocks) and not blocks[-1].closed


def compile_error(program: str) -> str | None:
    """The syntax error of `program` as `line N: message`, or None when it compiles."""
    try:
        compile(program, "solution.py", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    except (ValueError, MemoryError, RecursionError) as exc:  # null bytes, absurd nesting
        return f"{type(exc).__name__}: {exc}"
    return None


def defined_names(program: str) -> set[str]:
    """Top-level names a program defines (functions, classes, assignments, imports); empty if it
    does not parse."""
    try:
        module = ast.parse(program)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return set()
    names: set[str] = set()
    for node in module.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def segment_chain(text: str, mode: SegmentMode = "block") -> list[Segment]:
    """Split a code chain into steps with character offsets into `text`.

    - "block": a step ends with each code block (the prose before a block belongs to it); trailing
      prose is a last step.
    - "statement": each prose paragraph is a step; each top-level statement of a python block is a
      step (the opening fence goes with the first, the closing fence with the last; a block that does
      not parse stays whole).
    - "line": each non-blank prose line is a step; each code block is one step.
    Steps never overlap, and joining their texts with newlines gives back every fence, so
    `assemble_program("\\n".join(texts))` is the chain's program.
    """
    blocks = extract_code_blocks(text)
    segments: list[Segment] = []
    cursor = 0
    for block in blocks:
        if mode == "block":
            _add(segments, text, cursor, block.end, "code")
        else:
            _add_prose(segments, text, cursor, block.start, mode)
            if mode == "statement" and block.is_python:
                segments.extend(_statement_segments(text, block))
            else:
                _add(segments, text, block.start, block.end, "code")
        cursor = block.end
    if mode == "block":
        _add(segments, text, cursor, len(text), "prose")
    else:
        _add_prose(segments, text, cursor, len(text), mode)
    return segments


def _add(segments: list[Segment], text: str, start: int, end: int, kind: Literal["prose", "code"]) -> None:
    """Append text[start:end] with surrounding whitespace trimmed from the span; skip blank spans."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        segments.append(Segment(text[start:end], start, end, kind))


def _add_prose(segments: list[Segment], text: str, start: int, end: int, mode: SegmentMode) -> None:
    separator = re.compile(r"\n" if mode == "line" else r"\n[ \t]*\n")
    position = start
    for match in separator.finditer(text, start, end):
        _add(segments, text, position, match.start(), "prose")
        position = match.end()
    _add(segments, text, position, end, "prose")


def _statement_segments(text: str, block: CodeBlock) -> list[Segment]:
    try:
        module = ast.parse(block.code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        module = None
    if module is None or len(module.body) < 2:
        whole: list[Segment] = []
        _add(whole, text, block.start, block.end, "code")
        return whole
    # lines of the text, not of `block.code`, which lacks an indented fence's indentation
    line_offsets = [block.code_start]
    for match in _NEWLINE.finditer(text, block.code_start, block.code_end):
        line_offsets.append(match.end())
    segments: list[Segment] = []
    start = block.start  # the first statement carries the opening fence and any leading comments
    for index, node in enumerate(module.body):
        end_line = node.end_lineno or node.lineno
        is_last = index == len(module.body) - 1
        if is_last:
            end = block.end
        else:
            end = line_offsets[end_line] if end_line < len(line_offsets) else block.code_end
        _add(segments, text, start, end, "code")
        start = end
    return segments


def stdlib_imports(program: str) -> str:
    """The program's top-level imports of standard-library modules, as source ("" if it does not parse).

    MBPP's harness runs a program and its asserts in one namespace, so an assert may use a module only the
    program imported (`sys.getsizeof(...)`); the clean judge runs these imports (never the program's own
    code) before such predicates.
    """
    try:
        module = ast.parse(program)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return ""
    kept: list[ast.stmt] = []
    for node in module.body:
        if isinstance(node, ast.Import):
            names = [a for a in node.names if a.name.split(".")[0] in sys.stdlib_module_names]
            if names:
                kept.append(ast.Import(names=names))
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module.split(".")[0] in sys.stdlib_module_names:
                kept.append(node)
    # each on its own: a module the sandbox image lacks must not stop the judge
    return "\n".join(f"try:\n    {ast.unparse(n)}\nexcept ImportError:\n    pass" for n in kept)
