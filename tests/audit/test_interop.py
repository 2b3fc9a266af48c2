"""audit.interop: Label Studio and Argilla files out, their exports back in as answers.

The Argilla files in tests/audit/data were written by argilla 2.8.0's own code (`Record.to_dict` through
`GenericIO.to_list`, nested and flattened) for the audit `build_audit(size=6, seed=2)` makes, after its export
loaded with `rg.Settings.from_json`, `DatasetModel(**dataset.json)` and `rg.Record.from_dict` (checked in a
scratch environment; argilla is no dependency of the factory). The Label Studio exports follow its documented
JSON and JSON-MIN formats (labelstud.io/guide/export), for the same audit.
"""

import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from prm_factory.audit.human import human_labels
from prm_factory.audit.interop import (
    InteropError,
    export,
    import_answers,
    read_argilla,
    read_label_studio,
    reviewer_name,
)
from tests.audit.conftest import build_audit

DATA = Path(__file__).parent / "data"
ANA = "0b1f7e2a-0000-4000-8000-00000000000a"
BEN = "0b1f7e2a-0000-4000-8000-00000000000b"


@pytest.fixture
def store(tmp_path):
    return build_audit(tmp_path, size=6, seed=2)


def test_label_studio_files_hold_every_item_and_a_config_naming_their_fields(store, tmp_path):
    tasks_path, config_path = export(store, "label-studio", tmp_path / "ls")
    tasks = json.loads(tasks_path.read_text())
    assert [t["data"]["item_id"] for t in tasks] == [i.item_id for i in store.items()]
    config = ElementTree.fromstring(config_path.read_text())
    referenced = {tag.get("value")[1:] for tag in config.iter("Text")}
    assert referenced <= set(tasks[0]["data"])
    choices = {c.get("name"): [x.get("value") for x in c.iter("Choice")] for c in config.iter("Choices")}
    assert choices["verdict"] == ["correct", "incorrect", "can't tell"]
    hostile = next(t for t in tasks if "<img" in t["data"]["problem"])
    assert hostile["data"]["problem"].startswith("<b>What</b>")  # Label Studio's Text tag shows text as text


def test_label_studio_exports_read_back(store):
    answers = read_label_studio(DATA / "label-studio-export.json")
    got = [(a.item_id, a.reviewer, a.answer, a.first_error, a.note) for a in answers]
    assert got == [
        (1, "user-3", "correct", None, ""),
        (1, "ben@example.org", "incorrect", None, ""),  # the cancelled annotation is left out
        (2, "user-3", "incorrect", "this", "carries 3 on <wrongly>"),  # step 0: "earlier" cannot be
        (3, "user-3", "cant_tell", None, ""),
    ]
    assert answers[0].answered_at == "2026-11-20T10:01:30.000000Z"
    minimal = read_label_studio(DATA / "label-studio-export-min.json")
    assert [(a.item_id, a.reviewer, a.answer, a.first_error) for a in minimal] == [
        (4, "ana@example.org", "incorrect", "this")
    ]
    added, again = import_answers(store, answers + minimal, "label-studio")
    assert (added, again) == (5, 0)
    assert import_answers(store, answers, "label-studio") == (0, 4)  # importing twice adds nothing
    steps = {i.item_id: (i.chain_id, i.step_index) for i in store.items()}
    labels = {(lab.chain_id, lab.step_index): lab for lab in human_labels(steps, store.answers())}
    first = labels[steps[1]]
    assert (
        first.labeler == "human:ben@example.org+user-3" and first.verdict == "unverifiable"
    )  # they disagree


def test_argilla_folder_and_exports_read_back(store, tmp_path):
    written = export(store, "argilla", tmp_path / "rg")
    assert {p.name for p in written} == {"settings.json", "dataset.json", "records.json"}
    records = json.loads((tmp_path / "rg" / "records.json").read_text())
    assert [r["metadata"]["item_id"] for r in records] == [i.item_id for i in store.items()]
    settings = json.loads((tmp_path / "rg" / ".argilla" / "settings.json").read_text())
    assert [q["name"] for q in settings["questions"]] == ["verdict", "first_error", "note"]
    nested = read_argilla(DATA / "argilla-records.json")
    flat = read_argilla(DATA / "argilla-flat.json")
    key = sorted((a.item_id, a.reviewer, a.answer, a.first_error, a.note) for a in flat)
    assert (1, ANA, "correct", None, "") in key and (2, ANA, "incorrect", "this", "wrong sum <b>") in key
    assert (1, BEN, "incorrect", None, "") in key
    # ben's draft on item 3 is left out where Argilla says it is a draft (the flat form carries the status)
    assert not any(a.item_id == 3 and a.reviewer == BEN for a in flat)
    assert any(a.item_id == 3 and a.reviewer == BEN for a in nested)  # to_dict drops the status
    assert import_answers(store, flat, "argilla") == (len(flat), 0)


def test_records_of_another_audit_are_refused(store, tmp_path):
    other = tmp_path / "other.json"
    rows = json.loads((DATA / "label-studio-export.json").read_text())
    rows[0]["data"]["chain_id"] = "somewhere-else"
    other.write_text(json.dumps(rows))
    with pytest.raises(InteropError, match="another audit"):
        import_answers(store, read_label_studio(other), "label-studio")
    assert store.answers() == []  # nothing written
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}')
    with pytest.raises(InteropError):
        read_argilla(bad)
    with pytest.raises(InteropError):
        export(store, "prodigy", tmp_path / "x")


def test_reviewer_names():
    assert reviewer_name("-odd name!") == "r-odd_name_"
    assert reviewer_name({"a": 1}).startswith("r")


def test_a_file_of_the_other_tool_is_refused_with_the_right_tool_named():
    for reader, other, tool in (
        (read_argilla, "label-studio-export.json", "label-studio"),
        (read_argilla, "label-studio-export-min.json", "label-studio"),
        (read_label_studio, "argilla-records.json", "argilla"),
        (read_label_studio, "argilla-flat.json", "argilla"),
    ):
        with pytest.raises(InteropError, match=f"use --tool {tool}"):
            reader(DATA / other)
