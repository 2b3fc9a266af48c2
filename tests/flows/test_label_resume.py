"""A `label` or `relabel` killed with SIGKILL in the middle of chunk N, then the same command again: one new
version, every step once, and the chunks before N not labelled again (issue 48). The kill lands at a known
point: a plug-in source logs each batch call it gets and, on the call the test names, waits to be killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from prm_factory.storage.dataset import Dataset
from prm_factory.storage.sql import query

SLOW_SOURCE = '''
"""A plug-in source that logs each batch call (how many chains, the first one's row id) to $PRM_CALLS and
hangs on call number $PRM_HANG_AT, so a test can kill the run inside a known chunk."""
import os
import time
from pathlib import Path

from prm_factory.labels.source import BaseSource, Strength
from prm_factory.schemas.step_labels import StepLabel


class CallLog(BaseSource):
    name = "calls"
    version = "1.0"
    positive = Strength.WEAK
    negative = Strength.WEAK

    def label(self, chains, prior, setup):
        log = Path(os.environ["PRM_CALLS"])
        with log.open("a") as handle:
            handle.write(f"{len(chains)} {chains[0].source_row_id}\\n")
        calls = len(log.read_text().splitlines())
        if str(calls) == os.environ.get("PRM_HANG_AT"):
            time.sleep(600)
        tag = self.labeler(setup)
        return [
            tuple(StepLabel("calls", "unverifiable", None, "", "{}", tag) for _ in chain.steps)
            for chain in chains
        ]


SOURCE = CallLog()
'''

CHAINS = [
    {
        "id": f"row{i}",
        "problem": f"What is {i} + 2 + 3?",
        "steps": [f"{i} + 2 = {i + 2}", f"{i + 2} + 3 = {i + 5}"],
        "answer": str(i + 5),
    }
    for i in range(8)
]
CHUNK = 2  # four chunks of two chains


def _command(
    tmp_path: Path, *args: str, hang_at: int | None = None, source: str = SLOW_SOURCE
) -> subprocess.Popen:
    from prefect.settings import PREFECT_API_URL

    site = tmp_path / "site"
    (site / "prm_calls").mkdir(parents=True, exist_ok=True)
    (site / "prm_calls" / "__init__.py").write_text(source)
    config = tmp_path / "config.toml"
    config.write_text(
        f'[labels]\nsources = ["reference", "prm_calls:SOURCE"]\n[resume]\nchunk_chains = {CHUNK}\n'
    )
    env = {
        **os.environ,
        "PREFECT_API_URL": str(PREFECT_API_URL.value()),  # the session's server, no temporary one per call
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
        "PRM_CALLS": str(tmp_path / "calls.log"),
        "PRM_HANG_AT": str(hang_at or ""),
    }
    exe = Path(sys.executable).with_name("prm-factory")
    return subprocess.Popen(
        [str(exe), *args, "--config", str(config), "--dataset", str(tmp_path / "ds")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )


def _calls(tmp_path: Path) -> list[str]:
    log = tmp_path / "calls.log"
    return log.read_text().splitlines() if log.is_file() else []


def _kill_on_call(tmp_path: Path, process: subprocess.Popen, call: int) -> None:
    """Wait until the source has been called `call` times (it hangs in that call), then SIGKILL the run."""
    deadline = time.monotonic() + 300
    while len(_calls(tmp_path)) < call:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the run never reached the chunk to kill it in"
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _finish(process: subprocess.Popen) -> str:
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    return " ".join(out.split())


def _runs(root: Path) -> list[str]:
    return query(Dataset(str(root)), "SELECT run_id FROM runs")["run_id"].to_pylist()


def test_a_killed_label_resumes_from_its_last_staged_chunk(prefect_server: None, tmp_path: Path) -> None:
    chains = tmp_path / "chains.jsonl"
    chains.write_text("".join(json.dumps(row) + "\n" for row in CHAINS))
    _kill_on_call(tmp_path, _command(tmp_path, "label", str(chains), hang_at=3), call=3)
    assert Dataset(str(tmp_path / "ds")).latest_version() is None  # nothing committed by the killed run
    killed = _calls(tmp_path)
    assert [line.split()[1] for line in killed] == ["row0", "row2", "row4"]

    out = _finish(_command(tmp_path, "label", str(chains)))
    assert "2 chunks reused" in out, out
    again = _calls(tmp_path)[len(killed) :]
    assert [line.split()[1] for line in again] == ["row4", "row6"]  # chunks 1 and 2 not labelled again
    dataset = Dataset(str(tmp_path / "ds"))
    assert len(_runs(tmp_path / "ds")) == 1
    steps = query(dataset, "SELECT step_id, calls_verdict, run_id FROM steps")
    assert steps.num_rows == 2 * len(CHAINS) == len(set(steps["step_id"].to_pylist()))
    assert set(steps["calls_verdict"].to_pylist()) == {"unverifiable"}
    assert set(steps["run_id"].to_pylist()) == set(_runs(tmp_path / "ds"))  # the committing run's rows
    assert not any((tmp_path / "ds" / "_staging").glob("label-rows-*"))  # committed chunks removed


def test_a_killed_relabel_resumes_and_commits_one_new_version(prefect_server: None, tmp_path: Path) -> None:
    chains = tmp_path / "chains.jsonl"
    chains.write_text("".join(json.dumps(row) + "\n" for row in CHAINS))
    _finish(_command(tmp_path, "label", str(chains)))
    first = Dataset(str(tmp_path / "ds")).latest_version()
    labelled = len(_calls(tmp_path))
    newer = SLOW_SOURCE.replace('version = "1.0"', 'version = "1.1"')  # a new version relabels every chain

    def relabel(hang_at: int | None = None) -> subprocess.Popen:
        return _command(tmp_path, "relabel", "--source", "prm_calls:SOURCE", hang_at=hang_at, source=newer)

    _kill_on_call(tmp_path, relabel(hang_at=labelled + 2), call=labelled + 2)
    assert Dataset(str(tmp_path / "ds")).latest_version() == first  # nothing committed by the killed run
    killed = _calls(tmp_path)[labelled:]
    out = _finish(relabel())
    again = _calls(tmp_path)[labelled + len(killed) :]
    assert len(killed) == 2 and len(again) == 3, (killed, again)
    assert again[0] == killed[1]  # the chunk it was killed in is relabelled, the one before it is not
    # its totals count the reused chunk too (the CLI prints them, it reads no row back)
    assert f"{len(CHAINS)} chains and {2 * len(CHAINS)} steps relabelled" in " ".join(out.split()), out
    dataset = Dataset(str(tmp_path / "ds"))
    assert dataset.latest_version() == first + 1 and len(_runs(tmp_path / "ds")) == 2
    steps = query(dataset, "SELECT step_id, calls_labeler FROM steps")
    assert steps.num_rows == 2 * len(CHAINS) == len(set(steps["step_id"].to_pylist()))
    assert all("1.1" in labeler for labeler in steps["calls_labeler"].to_pylist())
