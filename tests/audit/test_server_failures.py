"""audit.server and audit.store when something is wrong (issue 45): an empty token, a GET that would reserve,
an open redirect, names with a newline, other loopback addresses, ids SQLite cannot hold, and audit files that
are empty, truncated, foreign or damaged. Each ends in a clear answer, never a traceback or a 500."""

import asyncio
import re
import sqlite3

import pytest
from starlette.testclient import TestClient

from prm_factory.audit.server import TokenGate, create_app, serve_token
from prm_factory.audit.store import CLAIM_SECONDS, AuditError, AuditStore


def _item_id(html: str) -> int:
    return int(re.search(r'data-item-id="(\d+)"', html).group(1))


@pytest.fixture
def client(audit_store):
    return TestClient(create_app(audit_store), base_url="http://127.0.0.1:8765")


def test_an_empty_token_is_refused_and_an_empty_cookie_reads_nothing(audit_store):
    for empty in ("", "  "):
        with pytest.raises(AuditError, match="empty"):
            serve_token("0.0.0.0", empty)
    with pytest.raises(AuditError, match="empty"):
        create_app(audit_store, token="", loopback=False)
    app = create_app(audit_store, token="s3cret", loopback=False)
    anonymous = TestClient(app, base_url="http://10.0.0.5:8765", cookies={"prm_audit_token": ""})
    assert anonymous.get("/item/1").status_code == 401
    assert anonymous.get("/review/ana?token=", follow_redirects=False).status_code == 401
    assert anonymous.get("/review/ana", headers={"authorization": "Bearer "}).status_code == 401


def test_a_get_reserves_nothing_and_the_page_claims_by_post(client, audit_store):
    for n in range(40):  # more made-up names than the audit has steps
        page = client.get(f"/review/bot{n}")
        assert page.status_code == 200 and 'data-claim="true"' in page.text
    shown = _item_id(client.get("/review/ana").text)
    assert shown == 1  # the made-up names reserved nothing
    assert client.post("/api/claim", json={"reviewer": "ana", "item_id": shown}).json()["claimed"]
    assert _item_id(client.get("/review/ben").text) == 2  # ana's claim holds for single-review steps
    taken = client.post("/api/claim", json={"reviewer": "ben", "item_id": shown})
    assert taken.status_code == 409 and "took this step" in taken.json()["error"]
    cross = client.post(
        "/api/claim", json={"reviewer": "eve", "item_id": 2}, headers={"origin": "http://evil.example"}
    )
    assert cross.status_code == 403  # a claim is a state change: same origin only


def test_a_claim_lapses_after_its_time(audit_store, monkeypatch):
    assert audit_store.claim(1, "ana") and not audit_store.claim(1, "ben")
    import prm_factory.audit.store as store_module

    later = store_module.time.time() + CLAIM_SECONDS + 1
    monkeypatch.setattr(store_module.time, "time", lambda: later)
    assert audit_store.claim(1, "ben")


@pytest.mark.parametrize("path", ["//evil.example/", "/\\evil.example/", "///evil.example/x"])
def test_the_token_redirect_stays_on_this_page(path):
    # at the ASGI level: an HTTP client would read `//evil.example/` as a host, a server receives it as a path
    async def app(scope, receive, send):
        raise AssertionError("the token's redirect answers itself")

    sent = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request"}

    scope = {"type": "http", "path": path, "query_string": b"token=s3cret", "headers": [], "method": "GET"}
    asyncio.run(TokenGate(app, "s3cret")(scope, receive, send))
    location = dict(sent[0]["headers"])[b"location"].decode()
    assert sent[0]["status"] == 303
    assert location.startswith("/") and not location.startswith(("//", "/\\")), location


def test_a_reviewer_name_with_a_newline_is_refused(client, audit_store):
    assert client.get("/?reviewer=ana%0A", follow_redirects=False).status_code == 400
    assert client.get("/review/ana%0A").status_code == 400
    refused = client.post("/api/answer", json={"reviewer": "ana\n", "item_id": 1, "answer": "correct"})
    assert refused.status_code == 400
    assert audit_store.reviewers() == []


@pytest.mark.parametrize("host", ["127.0.0.2", "127.1.2.3", "[::1]", "localhost"])
def test_every_loopback_address_is_served(audit_store, host):
    page = TestClient(create_app(audit_store), base_url=f"http://{host}:8765").get("/review/ana")
    assert page.status_code == 200


@pytest.mark.parametrize(
    "item_id", ["1e400", "10" + "0" * 19, "-1", "0", "true", '"1e3"', "null", "[1]", "2.5"]
)
def test_ids_sqlite_cannot_hold_are_a_400_not_a_500(client, item_id):
    for path, key in (
        ("/api/answer", "item_id"),
        ("/api/reveal", "item_id"),
        ("/api/first-error", "answer_id"),
    ):
        body = f'{{"reviewer": "ana", "{key}": {item_id}, "answer": "correct", "first_error": "this"}}'
        reply = client.post(path, content=body, headers={"content-type": "application/json"})
        assert reply.status_code == 400 and "error" in reply.json(), (path, item_id, reply.text)


def test_ids_in_the_path_sqlite_cannot_hold_are_a_404(client):
    assert client.get(f"/item/{10**20}").status_code == 404
    assert client.get(f"/review/ana/{10**20}").status_code == 404


def test_a_missing_field_says_which(client):
    reply = client.post("/api/answer", json={"reviewer": "ana", "answer": "correct"})
    assert reply.status_code == 400 and "item_id" in reply.json()["error"]


def _damaged(kind: str, tmp_path, good) -> object:
    target = tmp_path / kind / "audit.sqlite"
    target.parent.mkdir()
    data = good.path.read_bytes()
    if kind == "empty":
        target.write_bytes(b"")
    elif kind == "truncated":
        target.write_bytes(data[: len(data) // 2])
    elif kind == "header-only":
        target.write_bytes(data[:100])
    elif kind == "text":
        target.write_text("not an audit\n")
    elif kind == "foreign":
        with sqlite3.connect(target) as other:
            other.execute("CREATE TABLE t (x)")
        other.close()
    elif kind == "scribbled":
        middle = bytearray(data)
        middle[4096:8192] = b"\xff" * 4096
        target.write_bytes(bytes(middle))
    return target


@pytest.mark.parametrize("kind", ["empty", "truncated", "header-only", "text", "foreign", "scribbled"])
def test_a_bad_audit_file_is_an_audit_error(kind, tmp_path, audit_store):
    audit_store._connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    target = _damaged(kind, tmp_path, audit_store)
    before = target.read_bytes()
    with pytest.raises(AuditError, match=str(target.parent.name)):
        AuditStore.open(target.parent)
    assert target.read_bytes() == before  # refused as it was: nothing written into a file that is not ours
