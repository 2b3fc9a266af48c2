"""The review page in a real browser: Debian's headless Chromium driven by Playwright (never a downloaded
browser). Ten steps answered by keyboard; a reload resumes at the eleventh; the server killed with SIGKILL
after the seventh answer has lost none; chain text holding `<script>` and `<img onerror>` runs nothing; the
sources' verdicts appear only after an answer; a page listening beyond localhost refuses a request without
its token. The screenshots of docs/audit.md are taken here (PRM_FACTORY_SCREENSHOTS=docs/img renews them).

Skipped where /usr/bin/chromium or the playwright package is missing (scripts/setup.sh installs both).
"""

from __future__ import annotations

import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from prm_factory.audit.report import write_report
from prm_factory.audit.store import AuditStore
from tests.audit.conftest import HOSTILE_STEP, build_audit

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [  # Chromium's reach for the network hangs it on a closed one (python.md of the machine notes)
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
sync_api = pytest.importorskip("playwright.sync_api")
# a wait, not a speed check: the page's answer can take more than Playwright's 5 s on a loaded 2-core machine
# (the clean-clone run at e9a0655, beside a million-step `label`, waited out 5 s on the fourth answer)
sync_api.expect.set_options(timeout=30_000)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """`prm-factory audit serve` in a process of its own, so the test can SIGKILL it."""

    def __init__(self, audit: Path, host: str = "127.0.0.1", token: str | None = None) -> None:
        self.audit, self.host, self.token = audit, host, token
        self.port = _free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Server:
        command = [
            sys.executable,
            "-m",
            "prm_factory.cli",
            "audit",
            "serve",
            str(self.audit),
            "--host",
            self.host,
            "--port",
            str(self.port),
        ]
        if self.token:
            command += ["--token", self.token]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(self.process.stderr.read().decode()[-2000:])  # type: ignore[union-attr]
            try:
                httpx.get(f"{self.url}/static/review.css", timeout=1)
                return self
            except httpx.TransportError:
                time.sleep(0.2)
        raise RuntimeError("the audit server did not start in 60 s")

    def kill(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


@pytest.fixture
def audit(tmp_path) -> AuditStore:
    return build_audit(tmp_path)


@pytest.fixture
def browser() -> Iterator:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)  # fresh profile
        yield launched
        launched.close()


@pytest.fixture
def screenshots(tmp_path) -> Path:
    folder = Path(os.environ.get("PRM_FACTORY_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _answer_the_rest(audit: AuditStore) -> None:
    """Reviewer "ben" answers steps 1-10 and 21-38 from the consensus, now and then otherwise (seeded): the
    report then has figures and a kappa over the steps ana answered too."""
    rng = random.Random(7)
    for item in audit.items():
        if item.item_id > 20 or item.item_id <= 10:
            said = item.votes.get("consensus") or "correct"
            flipped = {"correct": "incorrect", "incorrect": "correct"}[said] if rng.random() < 0.25 else said
            first = "this" if flipped == "incorrect" else None
            audit.record_answer(item.item_id, "ben", flipped, first_error=first)
    for item in audit.items():
        if 10 < item.item_id <= 20:
            audit.record_answer(item.item_id, "cleo", item.votes.get("consensus") or "cant_tell")


def _shown_item(page) -> int:
    """The step on the page, once its script listens for keys: the `#review` element is in the DOM before
    review.js has run, and a key pressed in between was lost (a loaded suite once waited 30 s for it)."""
    page.locator("#review[data-ready='true']").wait_for()
    return int(page.locator("#review").get_attribute("data-item-id"))


def _answer_by_key(page, key: str, first_error_key: str | None = None) -> None:
    page.keyboard.press(key)
    sync_api.expect(page.locator("#recorded")).to_contain_text("Recorded")
    if first_error_key:
        page.keyboard.press(first_error_key)
        sync_api.expect(page.locator("#recorded")).to_contain_text("Recorded: incorrect,")


def _answers_on_disk(audit: AuditStore) -> list[tuple[int, str, str, str | None]]:
    with sqlite3.connect(audit.path) as connection:  # a fresh reader, as after a restart
        return connection.execute(
            "SELECT item_id, reviewer, answer, first_error FROM answers ORDER BY answer_id"
        ).fetchall()


def _capture(page, path: Path, full_page: bool = True, tries: int = 3) -> None:
    """A screenshot for docs/audit.md, tried again when Chromium cannot capture one: under a loaded suite
    (2 cores, 2 workers) headless Chromium once answered "Protocol error (Page.captureScreenshot): Unable to
    capture screenshot" on a page that had rendered and passed every check. The pictures are documentation;
    the checks around them stay as they are."""
    for attempt in range(tries):
        try:
            page.screenshot(path=str(path), full_page=full_page)
            return
        except sync_api.Error as error:
            if "Unable to capture screenshot" not in str(error) or attempt == tries - 1:
                raise
            page.wait_for_timeout(500)


def test_ten_answers_by_keyboard_survive_a_kill_and_resume_at_the_eleventh(audit, browser, screenshots):
    server = Server(audit.path.parent).start()
    dialogs: list[str] = []
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(f"{server.url}/review/ana")
        keys = ["c", "i", "t", "c", "i", "c", "c", "i", "c", "t"]
        given: list[tuple[int, str, str, str | None]] = []
        for number, key in enumerate(keys, start=1):
            item_id = _shown_item(page)
            assert item_id == number  # one reviewer: the queue in order
            answer = {"c": "correct", "i": "incorrect", "t": "cant_tell"}[key]
            first_error = "this" if key == "i" and number % 2 else ("earlier" if key == "i" else None)
            if key == "i" and audit.item(item_id).step_index == 0:
                first_error = None  # no question: the first step's error is the chain's first
            if number == 1:
                _capture(page, screenshots / "audit-review.png", full_page=False)
            _answer_by_key(page, key, {"this": "f", "earlier": "e", None: None}[first_error])
            step_zero_error = key == "i" and audit.item(item_id).step_index == 0
            given.append((item_id, "ana", answer, "this" if step_zero_error else first_error))
            if number == 2:
                page.keyboard.press("v")  # the sources' verdicts, asked for after answering
                sync_api.expect(page.locator("#verdicts table")).to_be_visible()
                _capture(page, screenshots / "audit-revealed.png")
            if number == 7:
                server.kill()  # the seventh answer was acknowledged: it must be on disk
                assert _answers_on_disk(audit) == given
                server.start()  # same port
            page.keyboard.press("Enter")
            page.wait_for_function(f"document.getElementById('review')?.dataset.itemId !== '{item_id}'")
        assert _answers_on_disk(audit) == given
        page.reload()
        assert _shown_item(page) == 11
        assert page.locator("#review").get_attribute("data-position") == "11"
        sync_api.expect(page.locator("#progress")).to_contain_text("10 of 38")
        assert dialogs == []
        _answer_the_rest(audit)  # a second reviewer, so the report has figures to show
        report_page = screenshots / "audit-report.html"
        report = write_report(audit, report_page, page_url=server.url, replicates=500)
        assert report.answered_items == 38 and report.kappa.n >= 1
        page.goto(report_page.resolve().as_uri())
        _capture(page, screenshots / "audit-report.png")
        report_page.unlink()
    finally:
        server.stop()


def test_hostile_chain_text_runs_nothing_and_verdicts_wait_for_an_answer(audit, browser, screenshots):
    hostile = next(
        i for i in audit.items() if audit.chain(i.chain_id)["steps"][i.step_index]["text"] == HOSTILE_STEP
    )
    code = next(i for i in audit.items() if i.domain == "code")
    server = Server(audit.path.parent).start()
    dialogs: list[str] = []
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(f"{server.url}/review/ben/{hostile.item_id}")
        marked = page.locator("#under-review .text")
        sync_api.expect(marked).to_have_text(HOSTILE_STEP)  # shown as the characters the model wrote
        assert page.evaluate("window.__pwned") is None
        assert page.locator("img").count() == 0 and page.locator("#under-review script").count() == 0
        body = page.locator("body").inner_text()
        assert "verifier says" not in body and "mismatch" not in body  # no source's verdict, no outcome
        page.keyboard.press("v")  # asking before answering shows nothing
        assert page.locator("#verdicts").is_hidden()
        _answer_by_key(page, "c")
        page.keyboard.press("v")
        sync_api.expect(page.locator("#verdicts")).to_contain_text("verifier says <correct>")
        page.goto(f"{server.url}/review/ben/{code.item_id}")
        sync_api.expect(page.locator("section.program pre")).to_contain_text("def add(a, b):")
        sync_api.expect(page.locator("table.tests")).to_contain_text("test_2 <b>")
        _capture(page, screenshots / "audit-code.png")
        page.goto(f"{server.url}/item/{hostile.item_id}")
        sync_api.expect(page.locator("section.verdicts")).to_contain_text("verifier says <correct>")
        assert page.evaluate("window.__pwned") is None and dialogs == []
        assert dialogs == []
    finally:
        server.stop()


def test_beyond_localhost_a_request_without_the_token_is_refused(audit, browser):
    server = Server(audit.path.parent, host="0.0.0.0", token="s3cret-token").start()
    try:
        page = browser.new_page()
        refused = page.goto(f"{server.url}/review/ana")
        assert refused.status == 401 and "token" in page.locator("body").inner_text()
        assert (
            httpx.post(
                f"{server.url}/api/answer", json={"reviewer": "ana", "item_id": 1, "answer": "correct"}
            ).status_code
            == 401
        )
        page.goto(f"{server.url}/review/ana?token=s3cret-token")  # once: the cookie keeps it
        assert page.url == f"{server.url}/review/ana" and _shown_item(page) == 1
        _answer_by_key(page, "c")
        assert _answers_on_disk(audit) == [(1, "ana", "correct", None)]
    finally:
        server.stop()
