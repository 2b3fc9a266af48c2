"""An audit sample out to Label Studio and Argilla, and their exports back in as answers (`human` labels).

For teams that already review in one of those tools. The step under review is its own field, the steps before
and after it are fields beside it, and the questions are the page's: `verdict` (correct / incorrect / can't
tell), `first_error` (this / earlier, for an incorrect step) and `note`. Each record carries the audit item's
id, chain id and step index, so an export read back lands on the same steps (a record whose chain or step
does not match the audit is refused, never guessed at).

- Label Studio: `tasks.json` (its JSON import: a list of `{"data": {...}}`) and `labeling-config.xml` (the
  labeling interface); read back: its JSON export (tasks with `annotations`, each `result` a list of
  `{"from_name", "value": {"choices" | "text"}}`, `completed_by` the annotator) or JSON-MIN (flat rows).
  Cancelled annotations are skipped.
- Argilla 2: the folder `rg.Dataset.from_disk(path)` loads (`.argilla/settings.json`, `.argilla/dataset.json`,
  `records.json`, the layout of `Dataset.to_disk`); read back: `records.json` of `Dataset.to_disk` or
  `dataset.records.to_json` (responses per question with `user_id`), or the flat list of
  `records.to_list(flatten=True)` (`verdict.responses`, `verdict.responses.users`, `...status`). Draft and
  discarded responses are skipped.

An annotator becomes a reviewer named by the tool's user (email, username or id; Argilla's user id).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from prm_factory.audit.store import ANSWERS, FIRST_ERROR_ANSWERS, AuditError, AuditStore, Item, now_iso

FIELDS = ("problem", "solution", "before", "step", "after", "program")
VERDICT_LABELS = {"correct": "correct", "incorrect": "incorrect", "cant_tell": "can't tell"}
FIRST_ERROR_LABELS = {"this": "the first wrong step", "earlier": "an earlier step is wrong"}
GUIDELINES = (
    "Judge the step under review: is it correct, given the problem and the steps before it? A step is "
    "incorrect when what it states or does is wrong (a false calculation, a wrong value carried on, a "
    "wrong plan). For an incorrect step, say whether it is the chain's first wrong step. Can't tell: the "
    "step cannot be judged from what is shown."
)


class InteropError(AuditError):
    """A file that is not the tool's export, or records that do not belong to this audit."""


@dataclass(frozen=True)
class ImportedAnswer:
    item_id: int
    chain_id: str
    step_index: int
    reviewer: str
    answer: str
    first_error: str | None
    note: str
    answered_at: str | None


def reviewer_name(raw: Any) -> str:
    """A tool's user (email, username, id) as a reviewer name the page accepts.

    >>> reviewer_name("ana.lopez@example.org"), reviewer_name(17), reviewer_name(" x y ")
    ('ana.lopez@example.org', 'user-17', 'x_y')
    """
    text = str(raw).strip()
    if isinstance(raw, int) or text.isdigit():
        text = f"user-{text}"
    text = re.sub(r"[^A-Za-z0-9_.@-]", "_", text)[:64] or "unknown"
    return text if text[0].isalnum() else f"r{text[:63]}"


def _numbered(steps: Iterable[dict[str, Any]]) -> str:
    return "\n\n".join(f"[{step['index']}] {step['text']}" for step in steps)


def item_fields(store: AuditStore, item: Item) -> dict[str, str]:
    """What a reviewer in another tool sees of one item: problem, worked solution, steps before, under review
    and after (numbered), and for code the program with its per-test results."""
    chain = store.chain(item.chain_id)
    steps = chain["steps"]
    program = chain.get("program") or ""
    if program and chain.get("tests"):
        results = "\n".join(f"{t['name']}: {t['status']} ({t['reason']})" for t in chain["tests"])
        program = f"{program}\n\n# per-test results\n{results}"
    solution = chain.get("reference_solution") or chain.get("reference_answer") or ""
    return {
        "problem": chain.get("problem") or "",
        "solution": str(solution),
        "before": _numbered(s for s in steps if s["index"] < item.step_index),
        "step": next((s["text"] for s in steps if s["index"] == item.step_index), ""),
        "after": _numbered(s for s in steps if s["index"] > item.step_index),
        "program": program,
    }


# ---------------------------------------------------------------------------------------------- Label Studio


def label_studio_config() -> str:
    """The labeling interface: the texts, then the three questions (values as the audit stores them)."""
    texts = "\n".join(
        f'  <Header value={quoteattr(title)}/>\n  <Text name="{name}" value="${name}"/>'
        for name, title in (
            ("problem", "Problem"),
            ("solution", "Worked solution"),
            ("before", "Steps before"),
            ("step", "Step under review"),
            ("after", "Steps after"),
            ("program", "Program and per-test results (code chains)"),
        )
    )
    # the choices' texts are what Label Studio stores; reading back maps them to the audit's values
    verdicts = "\n".join(f"    <Choice value={quoteattr(label)}/>" for label in VERDICT_LABELS.values())
    firsts = "\n".join(f"    <Choice value={quoteattr(label)}/>" for label in FIRST_ERROR_LABELS.values())
    return f"""<View>
  <Header value={quoteattr(GUIDELINES)} size="6"/>
{texts}
  <Header value="Is the step under review correct?"/>
  <Choices name="verdict" toName="step" choice="single" required="true" showInline="true">
{verdicts}
  </Choices>
  <Choices name="first_error" toName="step" choice="single" showInline="true"
           visibleWhen="choice-selected" whenTagName="verdict" whenChoiceValue="incorrect">
{firsts}
  </Choices>
  <TextArea name="note" toName="step" placeholder="Note (optional)" maxSubmissions="1"/>
</View>
"""


def label_studio_tasks(store: AuditStore) -> list[dict[str, Any]]:
    return [
        {
            "data": {
                "item_id": i.item_id,
                "chain_id": i.chain_id,
                "step_index": i.step_index,
                **item_fields(store, i),
            }
        }
        for i in store.items()
    ]


def _ls_value(result: dict[str, Any]) -> str | None:
    value = result.get("value") or {}
    for key in ("choices", "text"):
        if isinstance(value.get(key), list) and value[key]:
            return str(value[key][0])
    return None


def _ls_user(annotation: dict[str, Any]) -> Any:
    user = annotation.get("completed_by")
    if isinstance(user, dict):
        return user.get("email") or user.get("username") or user.get("id")
    return user if user is not None else annotation.get("annotator", "unknown")


def read_label_studio(path: Path) -> list[ImportedAnswer]:
    """Answers from a Label Studio JSON or JSON-MIN export."""
    rows = _json_list(path, "Label Studio export")
    _check_shape(rows, "label-studio", path)
    answers = []
    for number, row in enumerate(rows, start=1):
        if "annotations" in row:  # JSON: a task with its annotations
            data = row.get("data") or {}
            for annotation in row.get("annotations") or []:
                if annotation.get("was_cancelled"):
                    continue
                given = {r.get("from_name"): _ls_value(r) for r in annotation.get("result") or []}
                answers.append(
                    _imported(
                        data,
                        given,
                        _ls_user(annotation),
                        annotation.get("updated_at") or annotation.get("created_at"),
                        path,
                        number,
                    )
                )
        else:  # JSON-MIN: one flat row per annotation
            given = {key: row.get(key) for key in ("verdict", "first_error", "note")}
            answers.append(
                _imported(
                    row,
                    given,
                    row.get("annotator", "unknown"),
                    row.get("updated_at") or row.get("created_at"),
                    path,
                    number,
                )
            )
    return [a for a in answers if a is not None]


# ---------------------------------------------------------------------------------------------- Argilla


def argilla_settings() -> dict[str, Any]:
    """`rg.Settings(...).to_json` of the audit's fields and questions (as argilla 2.8 writes it)."""

    def field(name: str, title: str, required: bool) -> dict[str, Any]:
        return {
            "id": None,
            "inserted_at": None,
            "updated_at": None,
            "name": name,
            "title": title,
            "settings": {"type": "text", "use_markdown": False},
            "required": required,
            "description": None,
            "dataset_id": None,
            "type": "text",
        }

    def label_question(name: str, title: str, labels: dict[str, str], required: bool) -> dict[str, Any]:
        options = [{"text": text, "value": value} for value, text in labels.items()]
        return {
            "id": None,
            "inserted_at": None,
            "updated_at": None,
            "name": name,
            "title": title,
            # argilla refuses visible_options below 3; None shows every option
            "settings": {
                "type": "label_selection",
                "options": options,
                "visible_options": len(options) if len(options) >= 3 else None,
            },
            "description": None,
            "required": required,
            "dataset_id": None,
            "type": "label_selection",
        }

    def metadata(name: str, kind: str) -> dict[str, Any]:
        settings: dict[str, Any] = {"visible_for_annotators": False, "type": kind}
        settings.update({"min": None, "max": None} if kind == "integer" else {"values": None})
        return {
            "id": None,
            "inserted_at": None,
            "updated_at": None,
            "name": name,
            "title": name,
            "settings": settings,
            "visible_for_annotators": False,
            "dataset_id": None,
        }

    return {
        "guidelines": GUIDELINES,
        "questions": [
            label_question("verdict", "Is the step under review correct?", VERDICT_LABELS, True),
            label_question(
                "first_error", "If incorrect: is it the chain's first wrong step?", FIRST_ERROR_LABELS, False
            ),
            {
                "id": None,
                "inserted_at": None,
                "updated_at": None,
                "name": "note",
                "title": "Note",
                "settings": {"type": "text", "use_markdown": False},
                "description": None,
                "required": False,
                "dataset_id": None,
                "type": "text",
            },
        ],
        "fields": [
            field("problem", "Problem", True),
            field("solution", "Worked solution", False),
            field("before", "Steps before", False),
            field("step", "Step under review", True),
            field("after", "Steps after", False),
            field("program", "Program and per-test results (code chains)", False),
        ],
        "vectors": [],
        "metadata": [
            metadata("item_id", "integer"),
            metadata("chain_id", "terms"),
            metadata("step_index", "integer"),
        ],
        "allow_extra_metadata": False,
        "distribution": {"strategy": "overlap", "min_submitted": 1},
        "mapping": None,
    }


def argilla_records(store: AuditStore) -> list[dict[str, Any]]:
    """Records as `Record.to_dict` writes them (argilla 2.8), one per audit item, without responses."""
    records = []
    for item in store.items():
        fields = {name: value for name, value in item_fields(store, item).items() if value}
        fields.setdefault("problem", "(no problem text)")
        fields.setdefault("step", "(empty step)")
        records.append(
            {
                "id": f"audit-item-{item.item_id}",
                "fields": fields,
                "metadata": {
                    "item_id": item.item_id,
                    "chain_id": item.chain_id,
                    "step_index": item.step_index,
                },
                "suggestions": {},
                "responses": {},
                "vectors": {},
                "status": "pending",
                "_server_id": None,
            }
        )
    return records


def _argilla_responses(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per user: {question: value}, from a nested or a flattened record; drafts and discards left out."""
    per_user: dict[str, dict[str, Any]] = {}
    nested = record.get("responses")
    if isinstance(nested, dict):
        for question, given in nested.items():
            for response in given or []:
                if response.get("status") not in (None, "submitted"):
                    continue
                per_user.setdefault(str(response.get("user_id")), {})[question] = response.get("value")
        return per_user
    for question in ("verdict", "first_error", "note"):
        values = record.get(f"{question}.responses") or []
        users = record.get(f"{question}.responses.users") or []
        statuses = record.get(f"{question}.responses.status") or [None] * len(values)
        for value, user, status in zip(values, users, statuses, strict=False):
            if status in (None, "submitted"):
                per_user.setdefault(str(user), {})[question] = value
    return per_user


def read_argilla(path: Path) -> list[ImportedAnswer]:
    """Answers from an Argilla `records.json` (nested) or a flat `to_list(flatten=True)` dump; a folder is
    read as `Dataset.to_disk` wrote it (its `records.json`)."""
    if path.is_dir():
        path = path / "records.json"
    answers = []
    records = _json_list(path, "Argilla records file")
    _check_shape(records, "argilla", path)
    for number, record in enumerate(records, start=1):
        meta = record.get("metadata") if isinstance(record.get("metadata"), dict) else record
        for user, given in _argilla_responses(record).items():
            answers.append(_imported(meta, given, user, None, path, number))
    return [a for a in answers if a is not None]


# ---------------------------------------------------------------------------------------------- shared


def _json_list(path: Path, what: str) -> list[dict[str, Any]]:
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise InteropError(f"{path}: not a readable {what} ({error})") from error
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise InteropError(f"{path}: a {what} is a JSON list of objects")
    return rows


def shape_of(row: dict[str, Any]) -> str | None:
    """Which tool wrote a record: `label-studio` (a task with annotations, or a JSON-MIN row), `argilla`
    (nested or flattened responses), or None.

    >>> shape_of({"annotations": []}), shape_of({"verdict.responses": []}), shape_of({"x": 1})
    ('label-studio', 'argilla', None)
    """
    if "annotations" in row:
        return "label-studio"
    if "responses" in row or "metadata" in row or any(str(key).endswith(".responses") for key in row):
        return "argilla"
    if "data" in row:  # a task not annotated yet
        return "label-studio"
    if "verdict" in row or "annotator" in row:
        return "label-studio"
    return None


def _check_shape(rows: Sequence[dict[str, Any]], tool: str, path: Path) -> None:
    """Refuse a file none of whose records is `tool`'s: it would add 0 answers and say nothing."""
    shapes = {shape_of(row) for row in rows}
    if not rows or tool in shapes:
        return
    other = next((shape for shape in shapes if shape is not None), None)
    hint = f"; they look like a {other} export: use --tool {other}" if other else ""
    raise InteropError(f"{path}: none of its {len(rows)} records is a {tool} record{hint}")


def _imported(
    data: dict[str, Any], given: dict[str, Any], user: Any, at: str | None, path: Path, number: int
) -> ImportedAnswer | None:
    """One answer, or None when the annotator gave no verdict (a skipped record)."""
    verdict = given.get("verdict")
    if verdict is None:
        return None
    verdict = {label: value for value, label in VERDICT_LABELS.items()}.get(verdict, verdict)
    if verdict not in ANSWERS:
        raise InteropError(f"{path} record {number}: verdict {verdict!r} is none of {ANSWERS}")
    first = given.get("first_error")
    first = {label: value for value, label in FIRST_ERROR_LABELS.items()}.get(first, first)
    if first is not None and first not in FIRST_ERROR_ANSWERS:
        raise InteropError(f"{path} record {number}: first_error {first!r} is none of {FIRST_ERROR_ANSWERS}")
    try:
        item_id, chain_id, step_index = int(data["item_id"]), str(data["chain_id"]), int(data["step_index"])
    except (KeyError, TypeError, ValueError) as error:
        raise InteropError(f"{path} record {number}: no item_id, chain_id and step_index") from error
    return ImportedAnswer(
        item_id,
        chain_id,
        step_index,
        reviewer_name(user),
        verdict,
        # an incorrect first step is the chain's first error, whatever the tool was told (as the page records)
        ("this" if step_index == 0 else first) if verdict == "incorrect" else None,
        str(given.get("note") or ""),
        at,
    )


def import_answers(store: AuditStore, answers: Sequence[ImportedAnswer], origin: str) -> tuple[int, int]:
    """Append the answers to the audit (origin: the tool); (added, already there). A record whose chain or
    step differs from the audit's item is refused before anything is written."""
    for answer in answers:
        try:
            item = store.item(answer.item_id)
        except AuditError as error:
            raise InteropError(f"item {answer.item_id} is not in this audit") from error
        if (item.chain_id, item.step_index) != (answer.chain_id, answer.step_index):
            raise InteropError(
                f"item {answer.item_id}: the file says chain {answer.chain_id} step {answer.step_index}, "
                f"the audit {item.chain_id} step {item.step_index} (an export of another audit?)"
            )
    present = {
        (a.item_id, a.reviewer, a.answer, a.first_error, a.note)
        for a in store.answers()
        if a.origin == origin
    }
    added = 0
    for answer in answers:
        key = (answer.item_id, answer.reviewer, answer.answer, answer.first_error, answer.note)
        if key in present:
            continue
        store.record_answer(
            answer.item_id,
            answer.reviewer,
            answer.answer,
            note=answer.note,
            origin=origin,
            answered_at=answer.answered_at or now_iso(),
            first_error=answer.first_error,
        )
        present.add(key)
        added += 1
    return added, len(answers) - added


def export(store: AuditStore, tool: str, folder: Path) -> list[Path]:
    """Write the audit for `tool` (label-studio | argilla) into `folder`; the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    if tool == "label-studio":
        tasks, config = folder / "tasks.json", folder / "labeling-config.xml"
        tasks.write_text(
            json.dumps(label_studio_tasks(store), ensure_ascii=False, indent=1), encoding="utf-8"
        )
        config.write_text(label_studio_config(), encoding="utf-8")
        return [tasks, config]
    if tool == "argilla":
        settings_folder = folder / ".argilla"
        settings_folder.mkdir(exist_ok=True)
        written = [
            settings_folder / "settings.json",
            settings_folder / "dataset.json",
            folder / "records.json",
        ]
        meta = store.meta()
        dataset = {
            "id": None,
            "inserted_at": None,
            "updated_at": None,
            "name": f"prm-audit-v{meta.get('dataset_version', '')}",
            "status": "draft",
            "guidelines": GUIDELINES,
            "allow_extra_metadata": False,
            "distribution": None,
            "workspace_id": None,
            "last_activity_at": None,
        }
        for path, content in zip(written, (argilla_settings(), dataset, argilla_records(store)), strict=True):
            path.write_text(json.dumps(content, ensure_ascii=False), encoding="utf-8")
        return written
    raise InteropError(f"unknown tool {tool!r}: label-studio or argilla")


def read(tool: str, path: Path) -> list[ImportedAnswer]:
    if tool == "label-studio":
        return read_label_studio(path)
    if tool == "argilla":
        return read_argilla(path)
    raise InteropError(f"unknown tool {tool!r}: label-studio or argilla")
