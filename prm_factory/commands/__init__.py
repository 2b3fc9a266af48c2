"""CLI command groups, one module per group: each is a module-level Typer `app` that `register(app)` merges
into the main one (prm_factory/cli.py); options shared by several commands are declared in `options`."""
