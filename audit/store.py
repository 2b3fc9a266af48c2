"""An audit's own file: the drawn sample, the chains the page shows, and the reviewers' answers, in SQLite.

Why SQLite: every answer must be durable the moment the page says it was recorded (a SIGKILL of the server
loses none), several reviewers answer at once, and "what is this reviewer's next step" is a query. Each
answer is one INSERT committed before the reply, in WAL mode with `synchronous=FULL` (the commit is on disk,
not only in the operating system's cache, when the reply leaves). The file holds no absolute path of the
machine that drew it; the dataset root is recorded as given.

The answer log is append-only. A reviewer's answer to an item is their latest one given before they asked
to see the sources' verdicts (a blind answer); an answer given after seeing them is kept, flagged
`after_reveal`, and used only where no blind answer exists. The queue gives a reviewer the first item (in
the sample's random order) they have not answered that still needs a review: one reviewer for most items,
two for the double-reviewed share. An item shown to a reviewer is claimed for `CLAIM_SECONDS` so two
reviewers working at once are not sent the same single-review step.

>>> store = AuditStore.create(Path("audit/audit.sqlite"), sample, contexts, meta)   # doctest: +SKIP
>>> item = store.next_item("ana"); store.record_answer(item.item_id, "ana", "incorrect")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from prm_factory.audit.sample import DrawnSample

Answer = Literal["correct", "incorrect", "cant_tell"]
ANSWERS: tuple[Answer, ...] = ("correct", "incorrect", "cant_tell")
FirstErrorAnswer = Literal["this", "earlier"]
FIRST_ERROR_ANSWERS: tuple[FirstErrorAnswer, ...] = ("this", "earlier")

CLAIM_SECONDS = 1800.0
"""How long an item shown to a reviewer stays theirs before another reviewer may be sent it."""

SCHEMA_VERSION = "1"
SQLITE_HEADER = b"SQLite format 3\x00"
FILE_NAME = "audit.sqlite"

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE strata (
    stratum TEXT PRIMARY KEY, population INTEGER NOT NULL, drawn INTEGER NOT NULL, uncertain INTEGER NOT NULL
);
CREATE TABLE items (
    item_id INTEGER PRIMARY KEY,  -- the place in the review queue, from 1
    chain_id TEXT NOT NULL, step_index INTEGER NOT NULL, problem_id TEXT, run_id TEXT, problem_set TEXT,
    domain TEXT, stratum TEXT NOT NULL REFERENCES strata, votes TEXT NOT NULL, first_error_of TEXT NOT NULL,
    prm_score REAL, reviews_needed INTEGER NOT NULL,
    UNIQUE (chain_id, step_index)
);
CREATE TABLE chains (chain_id TEXT PRIMARY KEY, payload TEXT NOT NULL);
CREATE TABLE answers (
    answer_id INTEGER PRIMARY KEY AUTOINCREMENT,
    item_id INTEGER NOT NULL REFERENCES items,
    reviewer TEXT NOT NULL,
    answer TEXT NOT NULL CHECK (answer IN ('correct', 'incorrect', 'cant_tell')),
    first_error TEXT CHECK (first_error IN ('this', 'earlier')),
    note TEXT NOT NULL DEFAULT '',
    answered_at TEXT NOT NULL,
    seconds REAL,
    after_reveal INTEGER NOT NULL DEFAULT 0,
    origin TEXT NOT NULL DEFAULT 'page'
);
CREATE INDEX answers_by_reviewer ON answers (reviewer, item_id);
CREATE INDEX answers_by_item ON answers (item_id);
CREATE TABLE reveals (
    item_id INTEGER NOT NULL, reviewer TEXT NOT NULL, revealed_at TEXT NOT NULL,
    PRIMARY KEY (item_id, reviewer)
);
CREATE TABLE claims (
    item_id INTEGER NOT NULL, reviewer TEXT NOT NULL, claimed_at REAL NOT NULL,
    PRIMARY KEY (item_id, reviewer)
);
"""

OPEN_ITEMS_SQL = """
WITH given AS (
    SELECT item_id, count(DISTINCT reviewer) AS n, max(reviewer = :reviewer) AS mine
    FROM answers GROUP BY item_id
),
held AS (  -- live claims of other reviewers who have not answered yet
    SELECT c.item_id, count(*) AS n FROM claims AS c
    WHERE c.reviewer != :reviewer AND c.claimed_at > :cutoff
      AND NOT EXISTS (SELECT 1 FROM answers AS a WHERE a.item_id = c.item_id AND a.reviewer = c.reviewer)
    GROUP BY c.item_id
)
SELECT {columns} FROM items AS i
LEFT JOIN given AS g ON g.item_id = i.item_id
LEFT JOIN held AS h ON h.item_id = i.item_id
WHERE coalesce(g.mine, 0) = 0 AND coalesce(g.n, 0) + coalesce(h.n, 0) < i.reviews_needed
{tail}
"""
"""Items still open to a reviewer: not answered by them, and fewer reviews given or claimed by others than
the item asks for. The answers and claims are grouped once (hash joins), so a call costs the same at the
first answer as at the thousandth."""

NEXT_ITEM_SQL = OPEN_ITEMS_SQL.format(columns="i.item_id", tail="ORDER BY i.item_id LIMIT 1")
IS_OPEN_SQL = OPEN_ITEMS_SQL.format(columns="i.item_id", tail="AND i.item_id = :item_id")
COUNT_OPEN_SQL = OPEN_ITEMS_SQL.format(columns="count(*)", tail="")

SLOTS_SQL = """
SELECT coalesce(sum(min(given, reviews_needed)), 0), coalesce(sum(reviews_needed), 0)
FROM (
    SELECT i.reviews_needed, count(DISTINCT a.reviewer) AS given
    FROM items AS i LEFT JOIN answers AS a USING (item_id)
    GROUP BY i.item_id
)
"""


class AuditError(ValueError):
    """A wrong call on an audit: no such item, an unknown answer, an audit that already exists, ..."""


@dataclass(frozen=True)
class Item:
    item_id: int
    chain_id: str
    step_index: int
    problem_id: str | None
    run_id: str | None
    problem_set: str | None
    domain: str | None
    stratum: str
    votes: dict[str, str | None]
    first_error_of: tuple[str, ...]
    prm_score: float | None
    reviews_needed: int


@dataclass(frozen=True)
class RecordedAnswer:
    answer_id: int
    item_id: int
    reviewer: str
    answer: Answer
    first_error: FirstErrorAnswer | None
    note: str
    answered_at: str
    seconds: float | None
    after_reveal: bool
    origin: str


@dataclass(frozen=True)
class StratumRow:
    stratum: str
    population: int
    drawn: int
    uncertain: bool


@dataclass(frozen=True)
class Progress:
    reviewer_answered: int  # items this reviewer answered
    reviewer_queue: int  # items this reviewer answered plus those still open to them
    answered_slots: int  # reviews given, counting at most `reviews_needed` per item
    needed_slots: int  # reviews the whole sample asks for


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _item(row: sqlite3.Row) -> Item:
    return Item(
        item_id=row["item_id"],
        chain_id=row["chain_id"],
        step_index=row["step_index"],
        problem_id=row["problem_id"],
        run_id=row["run_id"],
        problem_set=row["problem_set"],
        domain=row["domain"],
        stratum=row["stratum"],
        votes=json.loads(row["votes"]),
        first_error_of=tuple(json.loads(row["first_error_of"])),
        prm_score=row["prm_score"],
        reviews_needed=row["reviews_needed"],
    )


def _answer(row: sqlite3.Row) -> RecordedAnswer:
    return RecordedAnswer(
        answer_id=row["answer_id"],
        item_id=row["item_id"],
        reviewer=row["reviewer"],
        answer=row["answer"],
        first_error=row["first_error"],
        note=row["note"],
        answered_at=row["answered_at"],
        seconds=row["seconds"],
        after_reveal=bool(row["after_reveal"]),
        origin=row["origin"],
    )


class AuditStore:
    """One audit file. Thread-safe: one connection, one lock (each call is a few index lookups)."""

    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise AuditError(f"no audit at {path}")
        with path.open("rb") as head:
            if head.read(16) != SQLITE_HEADER:  # empty, truncated to nothing, or no SQLite file at all
                raise AuditError(f"{path} is no audit file (not SQLite); `audit sample` writes one")
        self.path = path
        self._lock = threading.Lock()
        try:  # read-only first: another program's SQLite file is left as it is (no switch to WAL)
            probe = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
            try:
                version = dict(probe.execute("SELECT key, value FROM meta").fetchall()).get("schema_version")
                damaged = probe.execute("PRAGMA quick_check").fetchone()[0]
            finally:
                probe.close()
            if version == SCHEMA_VERSION and damaged == "ok":
                self._connection = self._connect(path)
        except sqlite3.DatabaseError as error:  # no meta table (another SQLite file), or a damaged one
            raise AuditError(f"{path} is no readable audit file ({error})") from error
        if version != SCHEMA_VERSION:
            raise AuditError(f"{path}: audit schema {version!r}, this release reads {SCHEMA_VERSION!r}")
        if damaged != "ok":
            raise AuditError(f"{path} is damaged ({damaged}); restore it from a copy")

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        connection.row_factory = sqlite3.Row
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=FULL")  # a committed answer is on disk before the reply
        connection.execute("PRAGMA foreign_keys=ON")
        connection.execute("PRAGMA busy_timeout=10000")  # an import beside a running server waits its turn
        return connection

    @classmethod
    def open(cls, folder_or_file: Path) -> AuditStore:
        """The audit in a folder (its `audit.sqlite`) or at a file path."""
        path = folder_or_file / FILE_NAME if folder_or_file.is_dir() else folder_or_file
        return cls(path)

    @classmethod
    def create(
        cls,
        path: Path,
        sample: DrawnSample,
        contexts: dict[str, dict[str, Any]],
        meta: dict[str, Any],
    ) -> AuditStore:
        """Write a new audit file (refusing to replace one: it may hold answers)."""
        if path.exists():
            raise AuditError(f"{path} exists already: an audit is never overwritten (it may hold answers)")
        missing = {item.chain_id for item in sample.items} - set(contexts)
        if missing:
            raise AuditError(f"no page content for {len(missing)} drawn chains, e.g. {sorted(missing)[0]}")
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.unlink(missing_ok=True)
        connection = sqlite3.connect(partial)
        try:
            connection.executescript(SCHEMA)
            design = sample.design
            rows = {
                **{k: json.dumps(v) if not isinstance(v, str) else v for k, v in meta.items()},
                "schema_version": SCHEMA_VERSION,
                "created_at": now_iso(),
                "design": json.dumps(asdict(design)),
                "sources": json.dumps(list(sample.sources)),
            }
            connection.executemany("INSERT INTO meta VALUES (?, ?)", sorted(rows.items()))
            connection.executemany(
                "INSERT INTO strata VALUES (?, ?, ?, ?)",
                [(s.key, s.population, s.drawn, int(s.uncertain)) for s in sample.strata],
            )
            connection.executemany(
                "INSERT INTO items VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        item.position,
                        item.chain_id,
                        item.step_index,
                        item.problem_id,
                        item.run_id,
                        item.problem_set,
                        item.domain,
                        item.stratum,
                        json.dumps(item.votes),
                        json.dumps(list(item.first_error_of)),
                        item.prm_score,
                        item.reviews_needed,
                    )
                    for item in sample.items
                ],
            )
            connection.executemany(
                "INSERT INTO chains VALUES (?, ?)",
                [(chain_id, json.dumps(payload)) for chain_id, payload in sorted(contexts.items())],
            )
            connection.commit()
        finally:
            connection.close()
        partial.rename(path)  # a killed draw leaves a .partial, never a half-written audit
        return cls(path)

    @contextmanager
    def _locked(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._connection

    def close(self) -> None:
        with self._locked() as connection:
            connection.close()

    # ------------------------------------------------------------------ reading

    def meta(self) -> dict[str, str]:
        with self._locked() as connection:
            return {row["key"]: row["value"] for row in connection.execute("SELECT key, value FROM meta")}

    def sources(self) -> list[str]:
        return json.loads(self.meta()["sources"])

    def strata(self) -> list[StratumRow]:
        with self._locked() as connection:
            rows = connection.execute("SELECT * FROM strata ORDER BY stratum").fetchall()
        return [StratumRow(r["stratum"], r["population"], r["drawn"], bool(r["uncertain"])) for r in rows]

    def items(self) -> list[Item]:
        with self._locked() as connection:
            return [_item(row) for row in connection.execute("SELECT * FROM items ORDER BY item_id")]

    def item(self, item_id: int) -> Item:
        with self._locked() as connection:
            row = connection.execute("SELECT * FROM items WHERE item_id = ?", (item_id,)).fetchone()
        if row is None:
            raise AuditError(f"no item {item_id} in this audit")
        return _item(row)

    def chain(self, chain_id: str) -> dict[str, Any]:
        with self._locked() as connection:
            row = connection.execute("SELECT payload FROM chains WHERE chain_id = ?", (chain_id,)).fetchone()
        if row is None:
            raise AuditError(f"no chain {chain_id} in this audit")
        return json.loads(row["payload"])

    def answers(self, item_id: int | None = None, reviewer: str | None = None) -> list[RecordedAnswer]:
        """Every recorded answer (oldest first), optionally of one item and/or one reviewer."""
        where, params = [], []
        if item_id is not None:
            where.append("item_id = ?")
            params.append(item_id)
        if reviewer is not None:
            where.append("reviewer = ?")
            params.append(reviewer)
        sql = (
            "SELECT * FROM answers"
            + (" WHERE " + " AND ".join(where) if where else "")
            + " ORDER BY answer_id"
        )
        with self._locked() as connection:
            return [_answer(row) for row in connection.execute(sql, params)]

    def reviewers(self) -> list[str]:
        with self._locked() as connection:
            rows = connection.execute("SELECT DISTINCT reviewer FROM answers ORDER BY reviewer").fetchall()
        return [row["reviewer"] for row in rows]

    def has_answered(self, item_id: int, reviewer: str) -> bool:
        with self._locked() as connection:
            row = connection.execute(
                "SELECT 1 FROM answers WHERE item_id = ? AND reviewer = ? LIMIT 1", (item_id, reviewer)
            ).fetchone()
        return row is not None

    def next_item(self, reviewer: str, claim: bool = True) -> Item | None:
        """The reviewer's next item (claimed for them), or None when their queue is done."""
        with self._locked() as connection:
            cutoff = time.time() - CLAIM_SECONDS
            row = connection.execute(NEXT_ITEM_SQL, {"reviewer": reviewer, "cutoff": cutoff}).fetchone()
            if row is None:
                return None
            if claim:
                connection.execute(
                    "INSERT OR REPLACE INTO claims VALUES (?, ?, ?)", (row["item_id"], reviewer, time.time())
                )
            item = connection.execute("SELECT * FROM items WHERE item_id = ?", (row["item_id"],)).fetchone()
        return _item(item)

    def claim(self, item_id: int, reviewer: str) -> bool:
        """Reserve an item for the reviewer for `CLAIM_SECONDS` (the page does it by POST once shown). False
        when others answered or claimed every review it needs; True too when this reviewer answered it."""
        with self._locked() as connection:
            if connection.execute(
                "SELECT 1 FROM answers WHERE item_id = ? AND reviewer = ? LIMIT 1", (item_id, reviewer)
            ).fetchone():
                return True
            cutoff = time.time() - CLAIM_SECONDS
            params = {"reviewer": reviewer, "cutoff": cutoff, "item_id": item_id}
            if connection.execute(IS_OPEN_SQL, params).fetchone() is None:
                return False
            connection.execute(
                "INSERT OR REPLACE INTO claims VALUES (?, ?, ?)", (item_id, reviewer, time.time())
            )
        return True

    def progress(self, reviewer: str) -> Progress:
        with self._locked() as connection:
            answered = connection.execute(
                "SELECT count(DISTINCT item_id) FROM answers WHERE reviewer = ?", (reviewer,)
            ).fetchone()[0]
            open_to = connection.execute(
                COUNT_OPEN_SQL, {"reviewer": reviewer, "cutoff": time.time() - CLAIM_SECONDS}
            ).fetchone()[0]
            slots = connection.execute(SLOTS_SQL).fetchone()
        return Progress(answered, answered + open_to, int(slots[0]), int(slots[1]))

    # ------------------------------------------------------------------ writing

    def record_answer(
        self,
        item_id: int,
        reviewer: str,
        answer: str,
        note: str = "",
        seconds: float | None = None,
        origin: str = "page",
        answered_at: str | None = None,
        first_error: str | None = None,
    ) -> RecordedAnswer:
        """Append one answer and commit it before returning (durable once this returns)."""
        if answer not in ANSWERS:
            raise AuditError(f"answer must be one of {ANSWERS}, got {answer!r}")
        if first_error is not None and (first_error not in FIRST_ERROR_ANSWERS or answer != "incorrect"):
            raise AuditError(f"first_error must be one of {FIRST_ERROR_ANSWERS}, and only with `incorrect`")
        if self.item(item_id).step_index == 0 and answer == "incorrect":
            first_error = "this"  # nothing comes before the first step
        with self._locked() as connection:
            revealed = connection.execute(
                "SELECT 1 FROM reveals WHERE item_id = ? AND reviewer = ?", (item_id, reviewer)
            ).fetchone()
            cursor = connection.execute(
                "INSERT INTO answers (item_id, reviewer, answer, first_error, note, answered_at, seconds, "
                "after_reveal, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    item_id,
                    reviewer,
                    answer,
                    first_error,
                    note,
                    answered_at or now_iso(),
                    seconds,
                    int(revealed is not None),
                    origin,
                ),
            )
            row = connection.execute(
                "SELECT * FROM answers WHERE answer_id = ?", (cursor.lastrowid,)
            ).fetchone()
        return _answer(row)

    def record_first_error(self, answer_id: int, reviewer: str, first_error: str) -> RecordedAnswer:
        """Say whether an `incorrect` answer's step is the chain's first wrong one (`this`) or an earlier step
        is wrong already (`earlier`); a later call replaces it."""
        if first_error not in FIRST_ERROR_ANSWERS:
            raise AuditError(f"first_error must be one of {FIRST_ERROR_ANSWERS}, got {first_error!r}")
        with self._locked() as connection:
            row = connection.execute(
                "SELECT * FROM answers WHERE answer_id = ? AND reviewer = ?", (answer_id, reviewer)
            ).fetchone()
            if row is None or row["answer"] != "incorrect":
                raise AuditError(f"answer {answer_id} of {reviewer} is no `incorrect` answer")
            connection.execute(
                "UPDATE answers SET first_error = ? WHERE answer_id = ?", (first_error, answer_id)
            )
            row = connection.execute("SELECT * FROM answers WHERE answer_id = ?", (answer_id,)).fetchone()
        return _answer(row)

    def record_reveal(self, item_id: int, reviewer: str) -> None:
        """Note that the reviewer asked for the sources' verdicts (only allowed once they answered)."""
        if not self.has_answered(item_id, reviewer):
            raise AuditError(f"{reviewer} has not answered item {item_id}: the verdicts stay hidden")
        with self._locked() as connection:
            connection.execute(
                "INSERT OR IGNORE INTO reveals VALUES (?, ?, ?)", (item_id, reviewer, now_iso())
            )

    def item_by_step(self, chain_id: str, step_index: int) -> Item | None:
        with self._locked() as connection:
            row = connection.execute(
                "SELECT * FROM items WHERE chain_id = ? AND step_index = ?", (chain_id, step_index)
            ).fetchone()
        return None if row is None else _item(row)


def effective_answers(answers: Sequence[RecordedAnswer]) -> dict[tuple[int, str], RecordedAnswer]:
    """Each (item, reviewer)'s answer that counts: the latest blind one, else the latest after the reveal.

    >>> a = RecordedAnswer(1, 7, "ana", "correct", None, "", "t1", None, False, "page")
    >>> b = RecordedAnswer(2, 7, "ana", "incorrect", None, "", "t2", None, True, "page")
    >>> effective_answers([a, b])[(7, "ana")].answer
    'correct'
    """
    chosen: dict[tuple[int, str], RecordedAnswer] = {}
    for answer in sorted(answers, key=lambda a: a.answer_id):
        key = (answer.item_id, answer.reviewer)
        current = chosen.get(key)
        if current is None or not answer.after_reveal or current.after_reveal:
            chosen[key] = answer
    return chosen
