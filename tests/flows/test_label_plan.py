"""What a `label` run decides before its first chunk (flows/label_plan.py): the input as chunks in file order
with rejected rows collected on the way, and a chunk key that changes with anything its rows depend on."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from prm_factory.flows.label_plan import chain_chunks, chains_digest
from prm_factory.schemas.rejected import RejectedRow


def _rows(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "chains.jsonl"
    lines = [
        json.dumps({"id": f"r{i}", "problem": f"{i}+1?", "steps": [f"{i} + 1 = {i + 1}"]}) for i in range(n)
    ]
    lines.insert(2, "{broken")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_input_comes_in_chunks_in_file_order_with_its_rejected_rows(tmp_path: Path) -> None:
    rejected: list[RejectedRow] = []
    parts = list(chain_chunks(str(_rows(tmp_path, 5)), 2, None, rejected))
    assert [[c.id for c in part] for part in parts] == [["r0", "r1"], ["r2", "r3"], ["r4"]]
    assert [(r.line, r.field) for r in rejected] == [(3, "<line>")]


def test_a_chunks_digest_follows_its_content_and_where_it_was_read(tmp_path: Path) -> None:
    part = next(chain_chunks(str(_rows(tmp_path, 2)), 2, None, []))
    same = next(chain_chunks(str(_rows(tmp_path, 2)), 2, None, []))
    assert chains_digest(part) == chains_digest(same)
    moved = [dataclasses.replace(part[0], line=part[0].line + 1), part[1]]
    edited = [dataclasses.replace(part[0], steps=("0 + 1 = 2",)), part[1]]
    assert len({chains_digest(part), chains_digest(moved), chains_digest(edited)}) == 3
