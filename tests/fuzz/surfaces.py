"""What the fuzz suite feeds and what it checks (issue 45), shared by the tests beside it (a bounded run) and
bench/bench_fuzz.py (a long one that counts cases and failures).

Surfaces: the input readers (chains files, GSM8K problem files: encodings, sizes, types, missing fields), the
CLI's arguments, the Python API's arguments, a plug-in label source's outputs (wrong lengths, names, types,
exceptions), the audit page's HTTP endpoints (paths, bodies, ids, names, headers, cookies) and the reward
server's (bodies of any JSON, invalid UTF-8, over the size, step and batch limits, missing fields, wrong
types, no token). The property everywhere: no traceback reaches the user; a refusal is the documented error
naming the file / line / field or argument; the exit status is a documented one (0, 1, 2); nothing already
written is lost; the server keeps serving.

Each check calls `failed(surface, what)` for a broken property: in the test suite that raises (Hypothesis then
shrinks the case), in the bench it is counted and the run goes on (`COLLECT = True`).
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections import Counter
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

CASES: Counter[str] = Counter()
FAILURES: list[tuple[str, str]] = []
COLLECT = False  # the bench sets it: count failures instead of raising


def failed(surface: str, what: str) -> None:
    FAILURES.append((surface, what[:500]))
    if not COLLECT:
        raise AssertionError(f"{surface}: {what}")


def tried(surface: str) -> None:
    CASES[surface] += 1


# ------------------------------------------------------------------------------------------- shared values

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
names = st.one_of(
    st.sampled_from(["ana", "ben", "cleo.b@x"]),  # valid names: the request reaches what comes after them
    st.sampled_from(["ana", "ben"]),
    st.text(max_size=20),
    st.sampled_from(["ana", "ana\n", "", " ", "a b", "../x", "ana%0A", "%00", "é", "a" * 65, "\u202eana"]),
)
ids = st.one_of(
    st.integers(min_value=1, max_value=8),  # items of the fuzz audit
    st.sampled_from([2**63, 2**64, 10**20, -(2**63) - 1, float("inf"), float("-inf"), float("nan"), 1.5]),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from(["1", "1e400", "-1", "0", "99999999999999999999", "nan", "", "1.0", "٣"]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.none(),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
)


# ------------------------------------------------------------------------------------------- input readers

CHAIN_ROW = {"id": "a", "problem": "2 + 2?", "steps": ["2 + 2 = 4", "The answer is 4."], "label": -1}


@st.composite
def chain_rows(draw: st.DrawFn) -> Any:
    """A ProcessBench-shaped row with fields dropped, retyped or replaced; or any JSON value at all."""
    if draw(st.booleans()):
        return draw(json_values)
    row: dict[str, Any] = dict(CHAIN_ROW)
    for key in draw(st.lists(st.sampled_from(sorted(CHAIN_ROW)), max_size=3, unique=True)):
        if draw(st.booleans()):
            del row[key]
        else:
            row[key] = draw(json_values)
    if draw(st.booleans()):
        row["steps"] = draw(st.lists(st.one_of(st.text(max_size=40), json_scalars), max_size=6))
    return row


@st.composite
def chain_files(draw: st.DrawFn) -> tuple[str, bytes]:
    """(suffix, bytes) of a chains file: JSON lines, a JSON list, or broken bytes and encodings."""
    rows = draw(st.lists(chain_rows(), max_size=6))
    kind = draw(st.sampled_from(["jsonl", "json", "raw", "latin-1", "bom", "truncated"]))
    if kind == "json":
        return ".json", json.dumps(rows).encode()
    lines = [json.dumps(row, ensure_ascii=draw(st.booleans())) for row in rows]
    text = "\n".join(lines) + ("\n" if draw(st.booleans()) else "")
    if kind == "raw":
        return draw(st.sampled_from([".jsonl", ".json"])), draw(st.binary(max_size=200))
    if kind == "latin-1":
        return ".jsonl", text.encode("utf-8") + '\n{"problem": "é"}'.encode("latin-1")
    if kind == "bom":
        return ".jsonl", b"\xef\xbb\xbf" + text.encode()
    if kind == "truncated":
        data = text.encode()
        return ".jsonl", data[: draw(st.integers(0, len(data)))]
    return ".jsonl", text.encode()


def check_chain_file(suffix: str, data: bytes) -> None:
    """Reading never raises for a bad row; each rejected row names the file, its line and a field."""
    from prm_factory.schemas.external_chains import read_external_chains

    tried("chains file")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"chains{suffix}"
        path.write_bytes(data)
        try:
            chains, rejected = read_external_chains(path)
        except Exception as error:  # noqa: BLE001 (the property: nothing escapes)
            failed("chains file", f"{type(error).__name__}: {error} on {data[:80]!r}")
            return
        lines = max(1, data.count(b"\n") + 1)
        for row in rejected:
            if row.file != str(path) or not 1 <= row.line <= max(lines, len(chains) + len(rejected)):
                failed("chains file", f"rejected row without its place: {row}")
            if not row.field or not row.reason or "Traceback" in row.reason:
                failed("chains file", f"rejected row without field or reason: {row}")


@st.composite
def problem_files(draw: st.DrawFn) -> bytes:
    row = {"question": "What is 2 + 2?", "answer": "2 + 2 = 4\n#### 4"}
    rows = []
    for _ in range(draw(st.integers(0, 5))):
        one: Any = dict(row)
        if draw(st.booleans()):
            one = draw(json_values)
        elif draw(st.booleans()):
            one[draw(st.sampled_from(["question", "answer"]))] = draw(json_values)
        rows.append(json.dumps(one))
    data = "\n".join(rows).encode()
    if draw(st.booleans()):
        data += draw(st.binary(max_size=40))
    return data


def check_problem_file(data: bytes) -> None:
    from prm_factory.schemas.gsm8k import load_gsm8k

    tried("problems file")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "problems.jsonl"
        path.write_bytes(data)
        try:
            loaded = load_gsm8k(path)
        except Exception as error:  # noqa: BLE001
            failed("problems file", f"{type(error).__name__}: {error} on {data[:80]!r}")
            return
        for row in loaded.rejected:
            if row.file != str(path) or row.line < 1 or not row.field or not row.reason:
                failed("problems file", f"rejected row without its place: {row}")


# ------------------------------------------------------------------------------------------- a dataset


@cache
def scratch() -> Path:
    """A folder for the fuzz run's dataset and audit (built once per process)."""
    return Path(tempfile.mkdtemp(prefix="prm-fuzz-"))


@cache
def dataset_root() -> str:
    from tests.audit.conftest import build_dataset

    return build_dataset(scratch() / "ds").root


def dataset_state() -> tuple[tuple[str, int, int], ...]:
    """Every file of the dataset with its size and change time: what a fuzz case must leave as it found."""
    root = Path(dataset_root())
    return tuple(
        (str(path.relative_to(root)), path.stat().st_size, path.stat().st_mtime_ns)
        for path in sorted(root.rglob("*"))
        if path.is_file()
    )


# ------------------------------------------------------------------------------------------- Python API

SQL = st.one_of(
    st.sampled_from(
        [
            "SELECT count(*) FROM steps",
            "SELECT * FROM nosuch",
            "SELEC",
            "",
            ";",
            "DROP TABLE steps",
            "COPY steps TO '/tmp/x.csv'",
            "SELECT 1/0",
            "SELECT * FROM read_csv('/etc/passwd')",
            "ATTACH 'x.db'",
            "SELECT verdict FROM steps; SELECT 1",
        ]
    ),
    st.text(max_size=40),
)
versions = st.one_of(st.none(), ids, st.sampled_from(["latest", "v1", "1", " 1 ", "-0", "first"]))


@st.composite
def api_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    call = draw(st.sampled_from(["query", "export", "versions", "open_dataset", "training_rows", "relabel"]))
    root = draw(st.one_of(st.just("DATASET"), st.sampled_from(["", "/nonexistent/ds", ".", "\x00"])))
    args: dict[str, Any] = {"root": root}
    if call == "query":
        args |= {"sql": draw(SQL), "version": draw(versions)}
    elif call == "export":
        args |= {
            "fmt": draw(st.sampled_from(["trl", "openrlhf", "math-shepherd", "steps", "csv", "", "TRL"])),
            "version": draw(versions),
            "label": draw(st.sampled_from(["hard", "soft", "consensus", "verifier", "nosuch", "", "mc"])),
            "threshold": draw(st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True))),
        }
    elif call == "training_rows":
        args |= {
            "label": draw(st.sampled_from(["consensus", "verifier", "nosuch", ""])),
            "version": draw(versions),
        }
    elif call == "relabel":  # always one unknown source, so no case starts Prefect
        unknown = "nosuch" + draw(st.text(alphabet="abc_", max_size=3))
        given = draw(st.lists(st.sampled_from(["verifier", "human", "mc", "", "a:b"]), max_size=2))
        args |= {"sources": draw(st.sampled_from([unknown, [*given, unknown]])), "version": draw(versions)}
    return call, args


def check_api_call(call: str, args: dict[str, Any]) -> None:
    """Bad arguments end in the API's documented errors (ConfigError, StorageError), or a clear ValueError
    naming the argument, never a bare TypeError or KeyError from deep inside; the dataset is unchanged."""

    tried("python api")
    before = dataset_state()
    args = dict(args)
    root = dataset_root() if args.pop("root") == "DATASET" else args.get("root", "")
    # in the scratch folder: SQL may write files where it runs (`ATTACH 'x.db'`), never into the checkout
    with contextlib.chdir(scratch()):
        _api_call(call, args, root)
    if dataset_state() != before:
        failed("python api", f"{call}({args}) changed the dataset")


def _api_call(call: str, args: dict[str, Any], root: str) -> None:
    import prm_factory as pf
    from prm_factory.config.run_config import ConfigError
    from prm_factory.storage.errors import StorageError

    try:
        if call == "query":
            pf.query(root, args["sql"], version=args["version"])
        elif call == "export":
            pf.export(
                root, args["fmt"], version=args["version"], label=args["label"], threshold=args["threshold"]
            )
        elif call == "versions":
            pf.versions(root)
        elif call == "open_dataset":
            pf.open_dataset(root).latest_version()
        elif call == "training_rows":
            pf.training_rows(root, args["label"], version=args["version"])
        elif call == "relabel":
            pf.relabel(
                pf.load_config(None, {"dataset.root": root}), version=args["version"], sources=args["sources"]
            )
    except (ConfigError, StorageError) as error:
        if not str(error).strip():
            failed("python api", f"{call}: {type(error).__name__} without a message")
    except ValueError as error:  # the API's own refusals of a wrong argument
        if not str(error).strip() or type(error).__name__ in ("JSONDecodeError", "UnicodeDecodeError"):
            failed("python api", f"{call}({args}): {type(error).__name__}: {error}")
    except Exception as error:  # noqa: BLE001
        failed("python api", f"{call}({args}): {type(error).__name__}: {error}")


# ------------------------------------------------------------------------------------------- CLI


@st.composite
def cli_calls(draw: st.DrawFn) -> list[str]:
    dataset = ["--dataset", draw(st.sampled_from(["DATASET", "/nonexistent/ds", ""]))]
    version = draw(st.sampled_from([[], ["--version", "1"], ["--version", "v9"], ["--version", "-1"]]))
    version += draw(st.sampled_from([[], ["--as-of", "yesterday"], ["--as-of", "2020-01-01"]]))
    command = draw(st.sampled_from(["query", "versions", "stats", "export", "audit", "tag", "nosuch"]))
    if command == "query":
        args = [
            "query",
            draw(SQL),
            *dataset,
            *version,
            "--format",
            draw(st.sampled_from(["table", "csv", "x"])),
        ]
    elif command == "versions":
        args = ["versions", *dataset]
    elif command == "stats":
        args = ["stats", *dataset, *version]
    elif command == "export":
        fmt = draw(st.sampled_from(["trl", "steps", "nosuch"]))
        label = draw(st.sampled_from(["hard", "consensus", "nosuch", "a:b"]))
        out = draw(st.sampled_from(["OUT/rows.jsonl", "OUT/rows.csv", "/nonexistent/dir/x.jsonl"]))
        args = ["export", fmt, "-o", out, *dataset, *version, "--label", label]
    elif command == "tag":
        args = ["tag", draw(st.text(max_size=10)), *dataset, *version]
    elif command == "audit":
        sub = draw(st.sampled_from(["status", "report", "labels", "import"]))
        folder = draw(st.sampled_from(["AUDIT", "/nonexistent/audit", "OUT"]))
        args = ["audit", sub, folder]
        if sub == "import":
            args += ["--tool", draw(st.sampled_from(["argilla", "label-studio", "x"])), "OUT/none.json"]
        if sub in ("report", "labels"):
            args += ["-o", "OUT/out.html", *(["--replicates", "100"] if sub == "report" else [])]
    else:
        args = [command, *draw(st.lists(st.text(max_size=6), max_size=3))]
    if draw(st.integers(0, 9)) == 0:
        args.append(draw(st.sampled_from(["--nosuch", "--version", "-o", "--"])))
    return args


@cache
def audit_folder() -> Path:
    from prm_factory.audit.create import create_audit
    from prm_factory.audit.sample import SampleDesign
    from prm_factory.storage.dataset import Dataset

    folder = scratch() / "audit"
    data = Dataset(dataset_root())
    create_audit(data, folder, SampleDesign(size=8, seed=1), data.latest_version(), None, None)
    return folder


def check_cli_call(args: list[str]) -> None:
    """Exit 0, 1 or 2 with no traceback on the terminal; the dataset keeps its versions and rows."""
    from typer.testing import CliRunner

    from prm_factory.cli import app

    tried("cli")
    before = dataset_state()
    with tempfile.TemporaryDirectory() as out:
        real = [
            a.replace("DATASET", dataset_root()).replace("AUDIT", str(audit_folder())).replace("OUT", out)
            for a in args
        ]
        with contextlib.chdir(out):  # what a command writes where it runs stays out of the checkout
            result = CliRunner().invoke(app, real)
    if result.exit_code not in (0, 1, 2):
        failed("cli", f"{args}: exit {result.exit_code}")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        failed("cli", f"{args}: {type(result.exception).__name__}: {result.exception}")
    if "Traceback (most recent call last)" in result.output:
        failed("cli", f"{args}: a traceback on the terminal")
    if args[:1] != ["tag"] and dataset_state() != before:
        failed("cli", f"{args} changed the dataset")


# ------------------------------------------------------------------------------------------- plug-in outputs


@st.composite
def plugin_outputs(draw: st.DrawFn) -> tuple[int, Any]:
    """(number of chains, what a plug-in's `label` does): a list of any shape, or an exception to raise."""
    from prm_factory.schemas.step_labels import StepLabel

    n = draw(st.integers(0, 3))
    label = st.builds(
        StepLabel,
        st.sampled_from(["fuzzy", "fuzzy", "verifier", "other"]),
        st.sampled_from(["correct", "incorrect", "unverifiable"]),
    )
    per_chain = st.one_of(
        st.none(),
        st.lists(st.one_of(label, json_scalars), max_size=4).map(tuple),
        st.lists(label, min_size=2, max_size=2).map(tuple),
        json_scalars,
    )
    if draw(st.integers(0, 5)) == 0:
        return n, draw(
            st.sampled_from([ValueError("bad"), KeyError("x"), RuntimeError(""), ZeroDivisionError()])
        )
    return n, draw(
        st.one_of(st.lists(per_chain, min_size=n, max_size=n), st.lists(per_chain, max_size=4), json_scalars)
    )


def check_plugin_output(n: int, output: Any) -> None:
    """A plug-in's output is used only when it has the right shape; anything else is one LabelSourceFailed
    line naming the source."""
    from types import SimpleNamespace

    from prm_factory.labels.registry import LabelSourceFailed, call_source
    from prm_factory.labels.source import BaseSource

    tried("plug-in output")

    class Fuzzy(BaseSource):
        name = "fuzzy"

        def label(self, chains, prior, setup):
            if isinstance(output, BaseException):
                raise output
            return output

    chains = [SimpleNamespace(chain_id=f"c{i}", source_row_id=None, steps=("s1", "s2")) for i in range(n)]
    try:
        labels = call_source(Fuzzy(), chains, {}, None)
    except LabelSourceFailed as error:
        message = str(error)
        if "\n" in message or "'fuzzy'" not in message or "nothing of this run was committed" not in message:
            failed("plug-in output", f"unclear refusal: {message}")
        return
    except Exception as error:  # noqa: BLE001
        failed("plug-in output", f"{type(error).__name__}: {error} for {output!r}")
        return
    if len(labels) != n or any(
        chain is not None
        and (len(chain) != 2 or any(label is not None and label.source != "fuzzy" for label in chain))
        for chain in labels
    ):
        failed("plug-in output", f"a wrong shape got through: {output!r}")


# ------------------------------------------------------------------------------------------- audit page


@cache
def audit_app() -> Callable[..., Any]:
    """The audit page's app over its own audit (a TestClient that turns a server error into a 500)."""
    from starlette.testclient import TestClient

    from prm_factory.audit.server import create_app
    from prm_factory.audit.store import AuditStore

    store = AuditStore.open(audit_folder())
    return TestClient(
        create_app(store, token="s3cret", loopback=False),
        base_url="http://10.0.0.5:8765",
        raise_server_exceptions=False,
    )


ALLOWED_STATUS = {200, 303, 400, 401, 403, 404, 405, 409}
"""What the page answers (docs/audit.md): never a 500."""


@st.composite
def http_requests(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["get", "answer", "reveal", "first-error", "claim", "junk"]))
    headers = {"authorization": "Bearer s3cret"} if draw(st.integers(0, 5)) else {}
    if draw(st.booleans()):
        headers["origin"] = draw(st.sampled_from(["http://10.0.0.5:8765", "http://evil.example", "null", ""]))
    cookies = (
        {"prm_audit_token": draw(st.sampled_from(["", "s3cret", "wrong", "s3cret\x00"]))}
        if draw(st.booleans())
        else {}
    )
    if kind == "get":
        path = draw(
            st.one_of(
                st.sampled_from(
                    ["/", "/review/ana", "/item/1", "/static/review.js", "//evil.example/", "/review/"]
                ),
                names.map(lambda n: f"/review/{n}"),
                ids.map(lambda i: f"/item/{i}"),
                st.tuples(names, ids).map(lambda p: f"/review/{p[0]}/{p[1]}"),
                names.map(lambda n: f"/?reviewer={n}"),
            )
        )
        query = draw(st.sampled_from(["", "token=s3cret", "token=", "token=wrong&x=1"]))
        return {"method": "GET", "path": path, "query": query, "headers": headers, "cookies": cookies}
    body: Any = {
        "reviewer": draw(names),
        "item_id": draw(ids),
        "answer_id": draw(ids),
        "answer": draw(st.sampled_from(["correct", "incorrect", "cant_tell", "correct", "yes", ""])),
        "first_error": draw(st.sampled_from(["this", "earlier", "x"])),
        "note": draw(st.text(max_size=50)),
        "seconds": draw(json_scalars),
    }
    for key in draw(st.lists(st.sampled_from(sorted(body)), max_size=3, unique=True)):
        del body[key]
    if kind == "junk":
        body = draw(json_values)
    raw = draw(st.sampled_from(["json", "json", "text", "form", "huge"]))
    headers["content-type"] = {"form": "application/x-www-form-urlencoded", "text": "text/plain"}.get(
        raw, "application/json"
    )
    content = json.dumps(body, allow_nan=True).encode()
    if raw == "text":
        content = draw(st.binary(max_size=60))
    if raw == "huge":
        content = b'{"reviewer": "ana", "item_id": ' + b"9" * 5000 + b"}"
    path = {"junk": draw(st.sampled_from(["/api/answer", "/api/nosuch"]))}.get(kind, f"/api/{kind}")
    return {"method": "POST", "path": path, "content": content, "headers": headers, "cookies": cookies}


def check_http_request(request: dict[str, Any]) -> None:
    """A documented status, never a 500; a 200 answer is on disk; the page still serves afterwards."""
    tried("audit page")
    client = audit_app()
    client.cookies.clear()
    for key, value in request["cookies"].items():
        client.cookies.set(key, value)
    try:
        if request["method"] == "GET":
            url = request["path"] + (f"?{request['query']}" if request["query"] else "")
            reply = client.get(url, headers=request["headers"], follow_redirects=False)
        else:
            reply = client.post(request["path"], content=request["content"], headers=request["headers"])
    except Exception as error:  # noqa: BLE001 (the client refusing a URL it cannot send is no server fault)
        if type(error).__name__ in ("InvalidURL", "UnicodeEncodeError", "LocalProtocolError"):
            return
        failed("audit page", f"{request}: {type(error).__name__}: {error}")
        return
    if reply.status_code not in ALLOWED_STATUS:
        failed("audit page", f"{request['method']} {request['path']}: {reply.status_code} {reply.text[:200]}")
    if "Traceback" in reply.text:
        failed("audit page", f"{request['path']}: a traceback in the reply")
    authorized = (
        request["headers"].get("authorization") == "Bearer s3cret"
        or request["cookies"].get("prm_audit_token") == "s3cret"
        or "token=s3cret" in request.get("query", "")
    )
    if not authorized and reply.status_code != 401:
        failed("audit page", f"{request['path']} without the token: {reply.status_code}")
    if reply.status_code == 303 and reply.headers.get("location", "/").startswith(("//", "/\\")):
        failed("audit page", f"a redirect off the page: {reply.headers['location']}")
    if request["path"] == "/api/answer" and reply.status_code == 200:
        import re

        reviewer = json.loads(request["content"]).get("reviewer")
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}", reviewer):
            failed("audit page", f"an answer recorded under the name {reviewer!r}")
        import sqlite3

        answer_id = reply.json()["answer_id"]
        with sqlite3.connect(audit_folder() / "audit.sqlite") as other:  # as a restarted server reads it
            found = other.execute("SELECT 1 FROM answers WHERE answer_id = ?", (answer_id,)).fetchone()
        other.close()
        if found is None:
            failed("audit page", f"answer {answer_id} replied as recorded but not on disk")
    alive = client.get("/review/ana", headers={"authorization": "Bearer s3cret"})
    if alive.status_code != 200:
        failed("audit page", f"the page stopped serving after {request['path']}: {alive.status_code}")


# ------------------------------------------------------------------------------------------- reward server


@cache
def reward_app() -> Any:
    """The reward server's app over one warm scorer (a worker process, closed when the fuzz run exits), with
    a token as beyond loopback, and small limits so that the fuzz reaches them."""
    import atexit

    from starlette.testclient import TestClient

    from prm_factory.reward import RewardScorer
    from prm_factory.reward.server import Limits, create_app

    scorer = RewardScorer(workers=1, deadline_s=10.0)
    atexit.register(scorer.close)
    limits = Limits(max_body_bytes=100_000, max_batch=8, max_response_chars=2_000, max_steps=40)
    app = create_app(scorer, limits, token="s3cret", loopback=False)
    return TestClient(app, base_url="http://10.0.0.5:8000", raise_server_exceptions=False)


REWARD_STATUS = {200, 400, 401, 404, 405, 413, 422, 503}
"""What the reward server answers (docs/rewards.md): never a 500."""

responses = st.one_of(
    st.sampled_from(["2 + 2 = 4.\nThe answer is 4.", "3 * 4 = 13.\nSo 13.", r"\frac{1}{0} = \sqrt{", ""]),
    st.text(max_size=80),
    st.sampled_from(["x = 1\n" * 100, "1 + 1 = 2\n" * 3000]),  # over the step and length limits
)


@st.composite
def reward_requests(draw: st.DrawFn) -> dict[str, Any]:
    path = draw(st.sampled_from(["/get_reward", "/score", "/score", "/get_reward", "/nosuch"]))
    headers = {"authorization": "Bearer s3cret"} if draw(st.integers(0, 6)) else {}
    if path == "/score":
        item = {"prompt": draw(st.text(max_size=20)), "response": draw(responses)}
        for key, values in (("answer", json_scalars), ("steps", st.lists(st.text(max_size=20), max_size=3))):
            if draw(st.booleans()):
                item[key] = draw(values)
        for key in draw(st.lists(st.sampled_from(sorted(item)), max_size=1)):
            del item[key]
        body: Any = {"items": draw(st.lists(st.just(item), max_size=3))}
        if draw(st.booleans()):
            body["aggregate"] = draw(st.sampled_from(["min", "mean", "nosuch", 3]))
    else:
        query = draw(st.lists(responses, max_size=3))
        body = {
            "query": query,
            "labels": draw(st.lists(json_scalars, min_size=len(query), max_size=len(query))),
        }
        if draw(st.booleans()):
            body["prompts"] = draw(st.one_of(st.just([""] * len(query)), st.lists(json_scalars, max_size=2)))
    if draw(st.integers(0, 4)) == 0:
        body = draw(json_values)  # any JSON at all
    content = json.dumps(body, allow_nan=True).encode()
    raw = draw(st.sampled_from(["json", "json", "json", "bytes", "huge"]))
    if raw == "bytes":  # invalid UTF-8 or JSON
        content = draw(st.binary(max_size=60))
    if raw == "huge":
        content = b'{"query": ["' + b"1 + 1 = 2. " * 20_000 + b'"]}'
    return {"path": path, "content": content, "headers": headers}


def check_reward_request(request: dict[str, Any]) -> None:
    """A documented status with a reason, never a 500 or a traceback; the server still answers afterwards."""
    tried("reward server")
    client = reward_app()
    reply = client.post(request["path"], content=request["content"], headers=request["headers"])
    if reply.status_code not in REWARD_STATUS:
        failed("reward server", f"POST {request['path']}: {reply.status_code} {reply.text[:200]}")
    if "Traceback" in reply.text:
        failed("reward server", f"{request['path']}: a traceback in the reply")
    if request["headers"].get("authorization") != "Bearer s3cret" and reply.status_code != 401:
        failed("reward server", f"{request['path']} without the token: {reply.status_code}")
    if 400 <= reply.status_code < 500 and reply.status_code != 404:
        reason = (
            reply.json().get("error")
            if reply.headers.get("content-type", "").startswith("application/json")
            else None
        )
        if not reason:
            failed("reward server", f"{request['path']}: {reply.status_code} without a reason")
    alive = client.get("/health", headers={"authorization": "Bearer s3cret"})
    if alive.status_code != 200:
        failed("reward server", f"the server stopped serving after {request['path']}: {alive.status_code}")
