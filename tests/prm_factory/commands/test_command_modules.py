"""Each command group is a module-level Typer app in prm_factory/commands/; the main app holds the same
commands, in the same groups, as before the split (issue 26)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
import typer
from typer.main import get_command

from prm_factory.cli import COMMAND_MODULES, app

COMMANDS = Path(__file__).resolve().parents[3] / "prm_factory" / "commands"
ROOT_COMMANDS = {
    "run",
    "query",
    "versions",
    "tag",
    "stats",
    "export",
    "compact",
    "report",
    "label",
    "relabel",
    "eval",
    "serve",
    "search-eval",
    "train",
    "score",
}
MAX_FUNCTION_LINES = 100
"""The longest a function of a command module may be (issue 36: no 245-line closure)."""
GROUPS = {
    "model": {"prepare", "warm"},
    "sandbox": {"build", "cleanup"},
    "audit": {"sample", "serve", "report", "status", "labels", "export", "import"},
    "reward": {"serve"},  # issue 49
}


def nested_functions(source: str) -> list[str]:
    """Names of functions defined inside another function (a command built in a closure)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found += [
                f"{node.name}.{inner.name}"
                for inner in ast.walk(node)
                if inner is not node and isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef)
            ]
    return found


def test_the_main_app_keeps_every_command_and_group() -> None:
    group = get_command(app)
    assert set(group.commands) == ROOT_COMMANDS | set(GROUPS)
    for name, subcommands in GROUPS.items():
        assert set(group.commands[name].commands) == subcommands


def test_nested_functions_finds_a_register_closure_so_the_next_test_can_fail() -> None:
    closure = "def register(app):\n    @app.command()\n    def label():\n        pass\n"
    assert nested_functions(closure) == ["register.label"]
    assert nested_functions("def register(parent):\n    parent.add_typer(app)\n") == []


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_a_command_module_is_a_module_level_app_without_closures(module: str) -> None:
    loaded = importlib.import_module(module)
    assert isinstance(loaded.app, typer.Typer)
    source = (COMMANDS / f"{module.rsplit('.', 1)[1]}.py").read_text()
    assert [name for name in nested_functions(source) if name.startswith("register")] == []
    assert [c.callback.__name__ for c in loaded.app.registered_commands]  # commands at module level


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """Functions (nested ones too) longer than `limit` lines, from the `def` line to the last (decorators not
    counted)."""
    return [
        f"{node.name}: {node.end_lineno - node.lineno + 1} lines"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > limit
    ]


def test_long_functions_finds_one_over_the_limit_so_the_next_test_can_fail() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    assert long_functions(f"def command():\n{body}") == [f"command: {MAX_FUNCTION_LINES + 1} lines"]
    assert long_functions(f"def command():\n{body}", MAX_FUNCTION_LINES + 1) == []


@pytest.mark.parametrize("path", sorted(COMMANDS.glob("*.py")), ids=lambda path: path.name)
def test_no_command_function_is_over_100_lines(path: Path) -> None:
    assert long_functions(path.read_text()) == []


def test_register_merges_a_group_into_a_fresh_app(command_app) -> None:
    from prm_factory.commands import label, quality, sandbox

    merged = get_command(command_app(lambda a: (label.register(a), quality.register(a), sandbox.register(a))))
    assert set(merged.commands) == {"label", "relabel", "eval", "sandbox"}
