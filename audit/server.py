"""The review page (`prm-factory audit serve`): a Starlette app over one audit file.

What it guarantees, and how:

- **Blind answers.** The page of a step shows the problem, the whole chain with the step marked, the worked
  solution and, for code, the program and its per-test results; no source's verdict, reason or evidence is in
  it. `POST /api/reveal` returns them only once this reviewer has answered the step (409 before), and an
  answer given after that is flagged `after_reveal` (audit/store.py). `/item/N` shows an item with every
  answer and verdict, for the report's links: the review page never links there, but a reviewer who opens it
  on purpose sees what the page hides (the answer log cannot tell).
- **Durable answers.** `POST /api/answer` replies after the answer is committed to the audit file (WAL,
  `synchronous=FULL`): a SIGKILL of the server loses no answer the page showed as recorded.
- **Untrusted text stays text.** Chains are model output: every text reaches the page through Jinja2 with
  autoescape, the script sets text with `textContent` only, and a Content-Security-Policy allows no inline
  script or handler, so a chain holding `<script>` or `<img onerror>` shows as characters and runs nothing.
- **Who may answer.** It listens on 127.0.0.1 unless told otherwise, and then only with a token (`?token=`
  once, kept in an HttpOnly SameSite=Strict cookie, or `Authorization: Bearer`); a request without it gets
  401. An empty token is refused (it would equal an empty cookie). On loopback without a token the Host
  header must name loopback (no DNS rebinding), and every `POST` must be JSON from the page's own origin (no
  cross-site form posts). The token's redirect goes to a path of this page only (`//host` is no path here).
- **A GET changes nothing.** `GET /review/NAME` shows the next open step without reserving it; the page
  claims it by `POST /api/claim` (JSON, same origin), so made-up names cannot reserve a queue by links.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
import secrets
import sqlite3
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

import jinja2
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from prm_factory.audit.store import ANSWERS, FIRST_ERROR_ANSWERS, AuditError, AuditStore, Item

HERE = Path(__file__).parent
REVIEWER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}")  # fullmatch: `$` would let "ana\n" in
MAX_ITEM_ID = 2**63 - 1  # SQLite's INTEGER
MAX_NOTE_CHARS = 4000
TOKEN_COOKIE = "prm_audit_token"

SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",  # the token may be in the first URL
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}

PAGES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(HERE / "templates"),
    autoescape=True,  # chains are untrusted model output: every text is escaped where it lands
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and `localhost`.

    >>> is_loopback("127.0.0.1"), is_loopback("0.0.0.0"), is_loopback("localhost")
    (True, False, True)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The name in a Host header, without its port.

    >>> host_name("127.0.0.2:8765"), host_name("[::1]:8765"), host_name("localhost")
    ('127.0.0.2', '::1', 'localhost')
    """
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class LoopbackHost:
    """Refuses (400) a request whose Host header names anything but loopback: a page served without a token
    answers no DNS-rebound name. Any loopback address counts (`--host 127.0.0.2` serves its own)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not is_loopback(host_name(Request(scope).headers.get("host", ""))):
            await PlainTextResponse("400: this page answers only a loopback Host", 400)(scope, receive, send)
            return
        await self.app(scope, receive, send)


class SecurityHeaders:
    """Adds SECURITY_HEADERS to every response, and a `Server-Timing: app;dur=MS` header (the time from the
    request to the response's start, which bench/bench_audit.py reads beside the time the client sees)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()

        async def with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                spent = 1000 * (time.perf_counter() - started)
                headers.append((b"server-timing", f"app;dur={spent:.2f}".encode()))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


class TokenGate:
    """Refuses (401) every request without the token; `?token=` sets the cookie and redirects it away."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise AuditError("an empty token protects nothing (it equals an empty cookie): give a real one")
        self.app = app
        self.token = token

    def _valid(self, candidate: str | None) -> bool:
        return bool(candidate) and hmac.compare_digest(str(candidate).encode(), self.token.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        query = dict(parse_qsl(scope.get("query_string", b"").decode()))
        if self._valid(query.get("token")):
            rest = urlencode({k: v for k, v in query.items() if k != "token"})
            # "//evil.example/" is a path to Starlette and a host to a browser: keep one leading slash
            path = "/" + scope["path"].lstrip("/\\")
            response: Response = RedirectResponse(path + (f"?{rest}" if rest else ""), 303)
            response.set_cookie(TOKEN_COOKIE, self.token, httponly=True, samesite="strict")
            await response(scope, receive, send)
            return
        bearer = request.headers.get("authorization", "")
        if self._valid(request.cookies.get(TOKEN_COOKIE)) or (
            bearer.startswith("Bearer ") and self._valid(bearer[7:])
        ):
            await self.app(scope, receive, send)
            return
        refusal = PlainTextResponse(
            "401: this audit page needs its token (the URL `audit serve` printed)", 401
        )
        await refusal(scope, receive, send)


def _checked_reviewer(name: str) -> str:
    if not REVIEWER_NAME.fullmatch(name):
        raise AuditError("a reviewer name is 1-64 letters, digits, `_.@-`, starting with a letter or digit")
    return name


def _checked_item_id(value: Any) -> int:
    """An item or answer id from a JSON body: a whole number SQLite can hold (`1e400`, 20 digits: refused).

    >>> _checked_item_id(3), _checked_item_id("3")
    (3, 3)
    """
    if isinstance(value, str) and value.strip().isdecimal():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_ITEM_ID:
        raise AuditError(f"an id is a whole number from 1 to {MAX_ITEM_ID}, got {str(value)[:40]!r}")
    return value


def _same_origin_json(request: Request) -> str | None:
    """Why a POST is refused (None: it is the page's own JSON request)."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return "expected application/json"
    origin = request.headers.get("origin")
    if origin is not None and origin.split("://", 1)[-1] != request.headers.get("host"):
        return "cross-origin request refused"
    return None


def _verdicts(store: AuditStore, item: Item) -> dict[str, Any]:
    chain = store.chain(item.chain_id)
    detail = chain["verdicts"].get(str(item.step_index), {})
    return {
        "item_id": item.item_id,
        "votes": item.votes,
        "first_error_of": list(item.first_error_of),
        "prm_score": item.prm_score,
        "detail": detail,
        "outcome": chain["outcome"],
    }


def create_app(store: AuditStore, token: str | None = None, loopback: bool = True) -> Starlette:
    """The app over `store`. `token` None is allowed only on loopback (`serve` enforces it)."""
    if token is not None and not token.strip():
        raise AuditError("an empty token protects nothing (it equals an empty cookie): give a real one")
    meta = store.meta()

    def page(template: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = PAGES.get_template(template).render(meta=meta, **context)
        return HTMLResponse(html, status)

    def item_page(reviewer: str, item: Item, claim: bool = False) -> HTMLResponse:
        progress = store.progress(reviewer)
        answered = store.answers(item_id=item.item_id, reviewer=reviewer)
        return page(
            "review.html.j2",
            reviewer=reviewer,
            item=item,
            chain=store.chain(item.chain_id),
            progress=progress,
            previous=answered[-1] if answered else None,
            claim=claim,
        )

    async def index(request: Request) -> Response:
        name = request.query_params.get("reviewer")
        if name:
            try:
                return RedirectResponse(f"/review/{_checked_reviewer(name)}", 303)
            except AuditError as error:
                return page("index.html.j2", 400, reviewers=store.reviewers(), error=str(error))
        return page("index.html.j2", reviewers=store.reviewers(), error=None)

    async def review(request: Request) -> Response:  # a few index lookups: no thread hop needed
        try:
            reviewer = _checked_reviewer(request.path_params["reviewer"])
        except AuditError as error:
            return PlainTextResponse(str(error), 400)
        if "item_id" in request.path_params:
            try:
                item: Item | None = store.item(_checked_item_id(request.path_params["item_id"]))
            except AuditError as error:
                return PlainTextResponse(str(error), 404)
        else:
            item = store.next_item(reviewer, claim=False)  # a GET reserves nothing: the page claims by POST
        if item is None:
            return page("done.html.j2", reviewer=reviewer, progress=store.progress(reviewer))
        return item_page(reviewer, item, claim="item_id" not in request.path_params)

    async def view(request: Request) -> Response:
        try:
            item = store.item(_checked_item_id(request.path_params["item_id"]))
        except AuditError as error:
            return PlainTextResponse(str(error), 404)
        return page(
            "view.html.j2",
            item=item,
            chain=store.chain(item.chain_id),
            answers=store.answers(item_id=item.item_id),
            verdicts=_verdicts(store, item),
        )

    async def api(request: Request, handle: Callable[[dict[str, Any]], Any]) -> Response:
        refused = _same_origin_json(request)
        if refused:
            return JSONResponse({"error": refused}, 403)
        try:
            body = await request.json()
            if not isinstance(body, dict):
                raise AuditError("expected a JSON object")
            return JSONResponse(handle(body))
        except PermissionError as error:
            return JSONResponse({"error": str(error)}, 409)
        except KeyError as error:
            return JSONResponse({"error": f"missing field {error}"}, 400)
        except (AuditError, ValueError, TypeError, OverflowError) as error:
            return JSONResponse({"error": str(error)}, 400)

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        reviewer = _checked_reviewer(str(body["reviewer"]))
        if body.get("answer") not in ANSWERS:
            raise AuditError(f"answer must be one of {ANSWERS}")
        note = str(body.get("note") or "")[:MAX_NOTE_CHARS]
        seconds = body.get("seconds")
        recorded = store.record_answer(
            _checked_item_id(body["item_id"]),
            reviewer,
            body["answer"],
            note=note,
            seconds=float(seconds) if isinstance(seconds, int | float) else None,
        )
        progress = store.progress(reviewer)
        return {
            "answer_id": recorded.answer_id,
            "answer": recorded.answer,
            "after_reveal": recorded.after_reveal,
            "next": f"/review/{reviewer}",
            "progress": progress.__dict__,
        }

    def claim(body: dict[str, Any]) -> dict[str, Any]:
        reviewer = _checked_reviewer(str(body["reviewer"]))
        item_id = _checked_item_id(body["item_id"])
        store.item(item_id)
        if not store.claim(item_id, reviewer):
            raise PermissionError("other reviewers took this step meanwhile: load the next one")
        return {"item_id": item_id, "claimed": True}

    def first_error(body: dict[str, Any]) -> dict[str, Any]:
        reviewer = _checked_reviewer(str(body["reviewer"]))
        if body.get("first_error") not in FIRST_ERROR_ANSWERS:
            raise AuditError(f"first_error must be one of {FIRST_ERROR_ANSWERS}")
        recorded = store.record_first_error(
            _checked_item_id(body["answer_id"]), reviewer, body["first_error"]
        )
        return {"answer_id": recorded.answer_id, "first_error": recorded.first_error}

    def reveal(body: dict[str, Any]) -> dict[str, Any]:
        reviewer = _checked_reviewer(str(body["reviewer"]))
        item = store.item(_checked_item_id(body["item_id"]))
        if not store.has_answered(item.item_id, reviewer):
            raise PermissionError("answer first: the sources' verdicts are shown only after your answer")
        store.record_reveal(item.item_id, reviewer)
        return _verdicts(store, item)

    def endpoint(handle: Callable[[dict[str, Any]], Any]) -> Callable[[Request], Awaitable[Response]]:
        async def run(request: Request) -> Response:
            return await api(request, handle)

        return run

    routes = [
        Route("/", index),
        Route("/review/{reviewer}", review),
        Route("/review/{reviewer}/{item_id:int}", review),
        Route("/item/{item_id:int}", view),
        Route("/api/answer", endpoint(answer), methods=["POST"]),
        Route("/api/claim", endpoint(claim), methods=["POST"]),
        Route("/api/first-error", endpoint(first_error), methods=["POST"]),
        Route("/api/reveal", endpoint(reveal), methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    middleware = [Middleware(SecurityHeaders)]
    if token is not None:
        middleware.append(Middleware(TokenGate, token=token))
    elif loopback:
        middleware.append(Middleware(LoopbackHost))
    else:
        raise AuditError("a page listening beyond loopback needs a token")

    async def unreadable(request: Request, error: Exception) -> Response:
        # the file went bad under the server: say so in one line and keep serving (no traceback, no 500 page)
        return PlainTextResponse(f"503: the audit file cannot be read now ({error})", 503)

    return Starlette(
        routes=routes, middleware=middleware, exception_handlers={sqlite3.DatabaseError: unreadable}
    )


def serve_token(host: str, token: str | None) -> str | None:
    """The token the page will require: the one given, a fresh one beyond loopback, else none. An empty or
    blank token is refused: it would equal an empty cookie."""
    if token is not None:
        if not token.strip():
            raise AuditError("--token is empty: give a real token, or none for a fresh one")
        return token
    return None if is_loopback(host) else secrets.token_urlsafe(24)


def run(store_path: Path, host: str = "127.0.0.1", port: int = 8765, token: str | None = None) -> None:
    """Serve the page until interrupted (uvicorn; one process: the audit file has one writer)."""
    import uvicorn

    store = AuditStore.open(store_path)
    app = create_app(store, token, loopback=is_loopback(host))
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
