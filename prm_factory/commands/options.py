"""Option declarations shared by several commands, declared once so a flag means the same everywhere.

Each is an `Annotated` alias a command uses as its parameter's type, e.g.
`agreement_only: AgreementOnlyOption = False`; the default stays at the command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

DatasetOption = Annotated[
    Path | None,
    typer.Option("--dataset", help="Dataset root (default: config.run_config.default_dataset_root())."),
]
VersionOption = Annotated[
    str | None, typer.Option("--version", help="Dataset version number or tag (default: latest).")
]
AsOfOption = Annotated[
    str | None,
    typer.Option(
        "--as-of", help="Latest version committed at or before this ISO time (e.g. 2026-11-22T10:00Z)."
    ),
]
AgreementOnlyOption = Annotated[
    bool, typer.Option("--agreement-only", help="Only steps where verifier and MC agree.")
]
SinceVersionOption = Annotated[
    str | None, typer.Option("--since-version", help="Only steps new since this version or tag.")
]
ConfigOption = Annotated[Path | None, typer.Option("--config", "-c", help="TOML run config")]
FormatOption = Annotated[str, typer.Option("--format", help="table | csv | json | parquet")]
OutputOption = Annotated[Path | None, typer.Option("--output", help="Write to this file instead of stdout.")]
