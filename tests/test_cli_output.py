"""What `prm-factory run` keeps off the terminal, tables that are never cut when not on a terminal, and a
usage error as one line."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import typer
from rich.console import Console
from rich.table import Table

from prm_factory.console import fail, print_whole
from prm_factory.progress import logged_events, run_log_path


def wide_table() -> Table:
    table = Table()
    for name in ("version", "committed_at", "run_id", "status", "config_hash", "model", "rejections", "tags"):
        table.add_column(name)
    table.add_row("1", "2026-11-23 08:00:00", "59f560252e2e", "succeeded", "929096426037", "toy", "1", "")
    return table


def test_a_table_printed_to_a_file_keeps_its_natural_width() -> None:
    sink = io.StringIO()
    console = Console(file=sink, width=80)
    print_whole(console, wide_table())
    header = next(line for line in sink.getvalue().splitlines() if "version" in line)
    assert "rejections" in header.split() and "status" in header.split()
    assert "…" not in sink.getvalue()
    assert console.width == 80  # the console's own width is left as it was


def test_the_same_table_through_plain_print_is_cut_so_the_test_can_fail() -> None:
    sink = io.StringIO()
    Console(file=sink, width=80).print(wide_table())
    assert "rejections" not in sink.getvalue().split()


def test_output_to_log_sends_child_process_output_to_the_log_and_keeps_the_terminal(tmp_path: Path) -> None:
    """A spawned child (as vLLM's EngineCore is) writes to the descriptors it inherits: they must point at
    the log file, while the stream handed to the progress bars still reaches the real stdout."""
    log = tmp_path / "_logs" / "run.log"
    script = textwrap.dedent(
        f"""
        import subprocess, sys, warnings
        from pathlib import Path
        from prm_factory.progress import output_to_log
        with output_to_log(Path({str(log)!r})) as terminal:
            terminal.write("progress-bar\\n")
            print("python-print")
            warnings.warn("library-warning")
            subprocess.run(["sh", "-c", "echo child-out; echo child-err >&2"], check=True)
        print("after-the-run")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["progress-bar", "after-the-run"]
    assert done.stderr == ""
    logged = log.read_text()
    for text in ("python-print", "library-warning", "child-out", "child-err"):
        assert text in logged


def test_logged_events_picks_the_run_event_lines_out_of_prefect_log_lines(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text(
        "08:00:01.000 | INFO    | Flow run 'x' - prm-run run_id=ab stage=sample event=done seconds=1.00 "
        "cached=true\n(EngineCore pid=1) WARNING libtcmalloc is not found in LD_PRELOAD\n"
        "08:00:02.000 | ERROR   | Flow run 'x' - prm-run run_id=ab stage=model event=failed error=boom\n"
    )
    assert logged_events(log, ("failed",)) == ["prm-run run_id=ab stage=model event=failed error=boom"]
    assert [line.split()[3] for line in logged_events(log, ("done", "failed"))] == [
        "event=done",
        "event=failed",
    ]
    assert logged_events(tmp_path / "missing.log", ("failed",)) == []


def test_run_log_path_is_under_the_dataset_root_in_an_underscore_folder(tmp_path: Path) -> None:
    path = run_log_path(tmp_path / "ds")
    assert path.parent == tmp_path / "ds" / "_logs" and path.suffix == ".log"


def test_fail_is_one_error_line_on_stderr_and_the_exit_code(capsys) -> None:
    with pytest.raises(typer.Exit) as usage:
        fail("input not found: x.jsonl")
    with pytest.raises(typer.Exit) as storage:
        fail("no dataset at /d", 1)
    assert (usage.value.exit_code, storage.value.exit_code) == (2, 1)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == ["error: input not found: x.jsonl", "error: no dataset at /d"]
