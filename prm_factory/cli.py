"""`prm-factory`: the command line. Every command group is a module-level Typer app in prm_factory/commands/
(COMMAND_MODULES), merged here; each command parses its options and calls the Python API (prm_factory.api)."""

from __future__ import annotations

import importlib
import sys

import typer

from prm_factory import teardown
from prm_factory.config.runtime import apply_runtime_defaults

apply_runtime_defaults()

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Step-labeled training data for PRMs.")

COMMAND_MODULES = (
    "prm_factory.commands.run",
    "prm_factory.commands.dataset",  # query, versions, tag, stats, export, compact
    "prm_factory.commands.report",
    "prm_factory.commands.label",  # label, relabel
    "prm_factory.commands.quality",  # eval
    "prm_factory.commands.serve",
    "prm_factory.commands.search",  # search-eval
    "prm_factory.commands.train",  # train, score
    "prm_factory.commands.model",  # the `model` group: prepare, warm
    "prm_factory.commands.sandbox",  # the `sandbox` group: build, cleanup
    "prm_factory.commands.audit",  # the `audit` group: sample, serve, report, status, labels, export, import
    "prm_factory.commands.reward",  # the `reward` group: serve (process rewards for RL trainers)
)


def _register_commands() -> None:
    """Commands live in one module per group, each a module-level Typer app that `register(app)` merges in."""
    for module in COMMAND_MODULES:
        importlib.import_module(module).register(app)


_register_commands()


def main() -> None:  # pragma: no cover - console script entry
    teardown.install()  # before the heavy libraries' exit handlers, so it runs after them
    sys.exit(app())


if __name__ == "__main__":
    main()
