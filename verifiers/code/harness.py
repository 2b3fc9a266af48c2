"""The test harness that runs inside the sandbox, and the value codec shared with the host.

Pass/fail is never decided here. The harness runs in one of two modes, each in its own process:

- `calls` (untrusted: the submission is loaded): it execs the program, evaluates each test's call
  expressions (e.g. `candidate(3, 4)`) and writes one record per call holding the *value*, serialised by
  `encode` into tagged JSON of plain types (exact type checks, so an `int` subclass or any object with an
  `__eq__` override is refused, not trusted). Expected values never enter this process, so the submission
  cannot copy them into a forged record.
- `judge` (clean: no submission): it evaluates the assert predicates (`__v[0] == 7`,
  `abs(__v[0] - 2.0) < 1e-6`) over the decoded values, for predicates the host cannot compare itself.

Records are JSON lines tagged with a per-run random nonce, written to a private dup of the original
stdout; the submission's own prints go to stderr. The job file holding the nonce is deleted before the
submission is loaded. A record that is missing (the program exited, crashed or timed out first) is a
failed test on the host.

Standard library only; `encode`/`decode` are imported by the host too.
"""

import json
import math
import os
import sys

MAX_DEPTH = 64
MAX_ITEMS = 100_000


class EncodeError(ValueError):
    pass


def encode(value, depth=0, budget=None):
    """Tagged JSON of a plain value; anything else (subclasses, custom objects) raises EncodeError.

    >>> encode((1, "a", None))
    ['tuple', [['int', '0x1'], ['str', 'a'], ['none']]]
    """
    if budget is None:
        budget = [MAX_ITEMS]
    budget[0] -= 1
    if depth > MAX_DEPTH or budget[0] < 0:
        raise EncodeError("value too deep or too large")
    kind = type(value)
    if value is None:
        return ["none"]
    if kind is bool:
        return ["bool", value]
    if kind is int:
        return ["int", hex(value)]  # hex: no str-digits limit, exact for huge ints
    if kind is float:
        return ["float", repr(value)]
    if kind is complex:
        return ["complex", repr(value.real), repr(value.imag)]
    if kind is str:
        return ["str", value]
    if kind is bytes:
        return ["bytes", value.hex()]
    if kind in (list, tuple, set, frozenset):
        items = [encode(item, depth + 1, budget) for item in value]
        if kind in (set, frozenset):
            items.sort(key=json.dumps)
        return [kind.__name__, items]
    if kind is dict:
        return [
            "dict",
            [[encode(k, depth + 1, budget), encode(v, depth + 1, budget)] for k, v in value.items()],
        ]
    raise EncodeError(f"unsupported result type {kind.__module__}.{kind.__qualname__}")


def decode(tagged, depth=0):
    """Inverse of `encode`; raises ValueError on anything malformed (the input is untrusted)."""
    if depth > MAX_DEPTH + 1 or not isinstance(tagged, list) or not tagged or not isinstance(tagged[0], str):
        raise ValueError("malformed value record")
    tag, args = tagged[0], tagged[1:]
    if tag == "none" and not args:
        return None
    if tag == "bool" and len(args) == 1 and isinstance(args[0], bool):
        return args[0]
    if tag == "int" and len(args) == 1 and isinstance(args[0], str):
        return int(args[0], 16)
    if tag == "float" and len(args) == 1 and isinstance(args[0], str):
        return float(args[0])
    if tag == "complex" and len(args) == 2 and all(isinstance(a, str) for a in args):
        return complex(float(args[0]), float(args[1]))
    if tag == "str" and len(args) == 1 and isinstance(args[0], str):
        return args[0]
    if tag == "bytes" and len(args) == 1 and isinstance(args[0], str):
        return bytes.fromhex(args[0])
    if tag in ("list", "tuple", "set", "frozenset") and len(args) == 1 and isinstance(args[0], list):
        items = [decode(item, depth + 1) for item in args[0]]
        return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
    if tag == "dict" and len(args) == 1 and isinstance(args[0], list):
        pairs = []
        for pair in args[0]:
            if not isinstance(pair, list) or len(pair) != 2:
                raise ValueError("malformed dict record")
            pairs.append((decode(pair[0], depth + 1), decode(pair[1], depth + 1)))
        return dict(pairs)
    raise ValueError(f"unknown value tag {tag!r}")


def describe(exc):
    text = f"{type(exc).__name__}: {exc}"
    return text[:500]


class Records:
    """The private record channel: a dup of the original stdout, taken before the submission loads."""

    def __init__(self, nonce):
        self.nonce = nonce
        self.fd = os.dup(1)
        os.dup2(2, 1)  # the submission's prints go to stderr, never into the record stream
        sys.stdout = sys.stderr

    def write(self, **fields):
        fields["nonce"] = self.nonce
        data = (json.dumps(fields) + "\n").encode("utf-8")
        while data:
            data = data[os.write(self.fd, data) :]


def guarded(function):
    """In-process cases only: refuse return values that are not plain data (e.g. `__eq__` overrides)."""

    def call(*args, **kwargs):
        result = function(*args, **kwargs)
        encode(result)
        return result

    return call


def run_calls(job, records):
    namespace = {"__name__": "solution", "__builtins__": __builtins__}
    try:
        exec(compile(job["program"], "solution.py", "exec"), namespace)
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: the report must say the program died
        records.write(kind="program_error", error=describe(exc))
        return
    entry = job["entry_point"]
    if entry not in namespace or not callable(namespace[entry]):
        records.write(kind="program_error", error=f"entry point {entry!r} is not defined")
        return
    tests_ns = dict(namespace)
    tests_ns["__name__"] = "tests"
    try:
        exec(compile(job["setup"], "tests_setup.py", "exec"), tests_ns)
    except BaseException as exc:  # noqa: BLE001
        records.write(kind="setup_error", error=describe(exc))
        return
    candidate = namespace[entry]
    for case in job["cases"]:
        in_process = case["in_process"]
        tests_ns["candidate"] = guarded(candidate) if in_process else candidate
        tests_ns[entry] = tests_ns["candidate"]
        if in_process:
            try:
                ok = eval(case["predicate"], tests_ns)
                records.write(kind="verdict", case=case["id"], ok=ok is True)
            except BaseException as exc:  # noqa: BLE001
                records.write(kind="value", case=case["id"], index=0, error=describe(exc))
            continue
        for index, expression in enumerate(case["calls"]):
            try:
                value = encode(eval(expression, tests_ns))
            except BaseException as exc:  # noqa: BLE001 - a raising call is a failed test, not a crash
                records.write(kind="value", case=case["id"], index=index, error=describe(exc))
                continue
            records.write(kind="value", case=case["id"], index=index, value=value)
    records.write(kind="done")


def run_judge(job, records):
    namespace = {"__name__": "tests", "__builtins__": __builtins__, "math": math}
    exec(compile(job["setup"], "tests_setup.py", "exec"), namespace)
    for check in job["checks"]:
        scope = dict(namespace)
        try:
            scope["__v"] = [decode(v) for v in check["values"]]
            ok = bool(eval(check["predicate"], scope))
            records.write(kind="verdict", case=check["id"], ok=ok)
        except Exception as exc:  # noqa: BLE001 - a raising predicate is a failed assert
            records.write(kind="verdict", case=check["id"], ok=False, error=describe(exc))
    records.write(kind="done")


def main():
    with open("job.json", encoding="utf-8") as handle:
        job = json.load(handle)
    os.unlink("job.json")
    records = Records(job["nonce"])
    if job["mode"] == "calls":
        run_calls(job, records)
    else:
        run_judge(job, records)


if __name__ == "__main__":
    main()
