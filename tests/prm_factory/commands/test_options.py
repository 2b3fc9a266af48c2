"""Options shared by several commands are declared once (prm_factory/commands/options.py), so a flag's
help and name cannot drift apart between, say, `export` and `train`."""

from __future__ import annotations

from collections import defaultdict
from typing import Annotated

import click
import typer
from typer.main import get_command

from prm_factory.cli import app
from prm_factory.commands import options

SHARED = ("--dataset", "--version", "--as-of", "--agreement-only", "--since-version")


def helps_by_flag(group: click.Group) -> dict[str, set[str]]:
    """Every distinct help text each option flag has across the group's commands (one level of groups)."""
    found: dict[str, set[str]] = defaultdict(set)
    for command in group.commands.values():
        for sub in command.commands.values() if isinstance(command, click.Group) else [command]:
            for param in sub.params:
                for flag in getattr(param, "opts", []):
                    found[flag].add(param.help or "")
    return found


def test_export_takes_its_shared_options_from_the_aliases() -> None:
    export = get_command(app).commands["export"]
    by_name = {p.name: p for p in export.params}
    for name, alias in (
        ("agreement_only", options.AgreementOnlyOption),
        ("since_version", options.SinceVersionOption),
        ("as_of", options.AsOfOption),
    ):
        declared = alias.__metadata__[0]
        assert by_name[name].help == declared.help
        assert by_name[name].opts == ["--" + name.replace("_", "-")]


def test_helps_by_flag_tells_two_declarations_apart() -> None:
    """The check below can fail: two commands with differently worded --agreement-only are caught."""
    drift = typer.Typer()

    @drift.command()
    def one(agreement_only: options.AgreementOnlyOption = False) -> None: ...

    @drift.command()
    def two(
        agreement_only: Annotated[bool, typer.Option("--agreement-only", help="Agreeing steps.")] = False,
    ) -> None: ...

    assert len(helps_by_flag(get_command(drift))["--agreement-only"]) == 2


def test_the_dataset_commands_word_the_shared_options_alike() -> None:
    helps = helps_by_flag(get_command(app))
    dataset_commands = {"query", "versions", "tag", "stats", "export", "compact", "report"}
    group = get_command(app)
    for flag in ("--version", "--as-of"):
        texts = {
            p.help
            for name in dataset_commands
            for p in group.commands[name].params
            if flag in getattr(p, "opts", [])
        }
        assert len(texts) == 1, (flag, texts)
    for flag in ("--agreement-only", "--since-version"):  # export and train (once train takes the alias)
        assert len(helps[flag]) == 1, (flag, helps[flag])
