"""audit.server: blind pages, answers, reveals, the token and the same-origin rules (in process; the real
browser, the kill and the keyboard are in test_browser.py)."""

import re

import pytest
from starlette.testclient import TestClient

from prm_factory.audit.server import create_app, is_loopback, serve_token
from prm_factory.audit.store import AuditError


def _item_id(html: str) -> int:
    return int(re.search(r'data-item-id="(\d+)"', html).group(1))


@pytest.fixture
def client(audit_store):
    return TestClient(create_app(audit_store), base_url="http://127.0.0.1:8765")


def test_the_page_shows_the_step_and_no_verdict_until_answered(client, audit_store):
    page = client.get("/review/ana")
    assert page.status_code == 200
    item = audit_store.item(_item_id(page.text))
    chain = audit_store.chain(item.chain_id)
    assert f'id=under-review value="{item.step_index}"' in page.text
    # nothing the sources said is on the page: reasons, votes, MC values, the chain's outcome
    assert "verifier says" not in page.text and "mismatch" not in page.text and "0.75" not in page.text
    assert client.post("/api/reveal", json={"reviewer": "ana", "item_id": item.item_id}).status_code == 409
    answer = client.post(
        "/api/answer", json={"reviewer": "ana", "item_id": item.item_id, "answer": "incorrect"}
    )
    assert answer.status_code == 200 and answer.json()["progress"]["reviewer_answered"] == 1
    shown = client.post("/api/reveal", json={"reviewer": "ana", "item_id": item.item_id}).json()
    assert shown["votes"] == item.votes and "claims" in shown["detail"]["verifier"]["verdict_evidence"]
    assert "claims" not in page.text  # the evidence, like the verdict, only on request after the answer
    assert shown["outcome"]["outcome"] == chain["outcome"]["outcome"]
    assert _item_id(client.get("/review/ana").text) != item.item_id  # on to the next step


def test_chain_text_is_escaped_everywhere(client, audit_store, hostile_texts):
    hostile = next(
        i
        for i in audit_store.items()
        if i.step_index == 0 and "<script>" in audit_store.chain(i.chain_id)["steps"][0]["text"]
    )
    for url in (f"/review/ana/{hostile.item_id}", f"/item/{hostile.item_id}"):
        html = client.get(url).text
        assert "<script>window" not in html and "<img src=x" not in html and "<img src=y" not in html
        assert "&lt;script&gt;window.__pwned" in html and "&lt;b&gt;What&lt;/b&gt;" in html
    headers = client.get("/review/ana").headers
    assert "script-src 'self'" in headers["content-security-policy"] and headers["x-frame-options"] == "DENY"


def test_the_first_error_question_and_the_view_page(client, audit_store):
    item_id = _item_id(client.get("/review/ben").text)
    answer = client.post(
        "/api/answer",
        json={"reviewer": "ben", "item_id": item_id, "answer": "incorrect", "note": "off by <one>"},
    ).json()
    marked = client.post(
        "/api/first-error", json={"reviewer": "ben", "answer_id": answer["answer_id"], "first_error": "this"}
    )
    assert marked.json()["first_error"] == "this"
    view = client.get(f"/item/{item_id}").text
    assert "off by &lt;one&gt;" in view and "What the sources said" in view


def test_bad_requests_are_refused(client):
    assert (
        client.post("/api/answer", json={"reviewer": "ana", "item_id": 1, "answer": "yes"}).status_code == 400
    )
    assert (
        client.post("/api/answer", json={"reviewer": "a b", "item_id": 1, "answer": "correct"}).status_code
        == 400
    )
    assert (
        client.post("/api/answer", json={"reviewer": "ana", "item_id": 999, "answer": "correct"}).status_code
        == 400
    )
    form = client.post("/api/answer", data={"reviewer": "ana", "item_id": "1", "answer": "correct"})
    assert form.status_code == 403  # not JSON: a cross-site form cannot post an answer
    other = client.post(
        "/api/answer",
        json={"reviewer": "ana", "item_id": 1, "answer": "correct"},
        headers={"origin": "http://evil.example"},
    )
    assert other.status_code == 403
    assert client.get("/review/a%20b").status_code == 400
    assert client.get("/item/999").status_code == 404


def test_a_loopback_page_refuses_foreign_host_names(audit_store):
    rebound = TestClient(create_app(audit_store), base_url="http://attacker.example")
    assert rebound.get("/review/ana").status_code == 400


def test_a_token_is_required_beyond_loopback(audit_store):
    with pytest.raises(AuditError, match="token"):
        create_app(audit_store, token=None, loopback=False)
    app = create_app(audit_store, token="s3cret", loopback=False)
    anonymous = TestClient(app, base_url="http://10.0.0.5:8765")
    assert anonymous.get("/review/ana").status_code == 401
    assert (
        anonymous.post("/api/answer", json={"reviewer": "ana", "item_id": 1, "answer": "correct"}).status_code
        == 401
    )
    assert (
        TestClient(app, base_url="http://10.0.0.5:8765")
        .get("/review/ana", headers={"authorization": "Bearer wrong"})
        .status_code
        == 401
    )
    bearer = TestClient(app, base_url="http://10.0.0.5:8765")
    assert bearer.get("/review/ana", headers={"authorization": "Bearer s3cret"}).status_code == 200
    browser = TestClient(app, base_url="http://10.0.0.5:8765")
    first = browser.get("/review/ana?token=s3cret", follow_redirects=False)
    assert first.status_code == 303 and first.headers["location"] == "/review/ana"
    assert (
        "httponly" in first.headers["set-cookie"].lower()
        and "samesite=strict" in first.headers["set-cookie"].lower()
    )
    assert browser.get("/review/ana").status_code == 200  # the cookie carries it from now on


def test_the_token_rules():
    assert serve_token("127.0.0.1", None) is None
    assert len(serve_token("0.0.0.0", None)) >= 30
    assert serve_token("0.0.0.0", "given") == "given"
    assert is_loopback("::1") and not is_loopback("192.168.1.4") and not is_loopback("example.com")
