"""Hand-judged single steps: does the step-claim checker ever call a false claim `correct`?

`data/claim_steps.jsonl` holds steps written by models (not by us), one per line:
`{"id", "step", "has_false_claim", "claims": [{"text", "holds"}], "source", "note"}`. `has_false_claim` is
a careful human reading of the arithmetic written in the step; `claims` lists the claims that reading
found. Each step is checked alone (`MathVerifier().check_steps(problem, [step])`), so the verdict rests on
the step's own text, as the fail-closed rule of issue 11 asks.

Targets (issue 11): no step with a false claim labelled `correct`; at most 1 in 40 steps whose claims all
hold labelled `incorrect`. `unverifiable` is never counted against either target (it is not a judgement),
but its share is printed, because a checker that says `unverifiable` to everything meets both.

Run: `python -m prm_factory.evaluation.claim_steps [PATH]`; the exit code is non-zero when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from prm_factory.verifiers.protocol import Verdict

CLAIM_STEPS = Path(__file__).parent / "data" / "claim_steps.jsonl"
MAX_FALSE_ACCEPTED = 0
MAX_TRUE_REJECTED_RATE = Fraction(1, 40)
STEP_LABELS = ("correct", "incorrect", "unverifiable")
_FIELDS = {"id": str, "step": str, "has_false_claim": bool, "claims": list, "source": str, "note": str}
_CLAIM_FIELDS = {"text": str, "holds": bool}


class ClaimStepsError(ValueError):
    """A bad row, named by file, line and field so the data file can be fixed by hand."""


@dataclass(frozen=True)
class Claim:
    text: str
    holds: bool


@dataclass(frozen=True)
class ClaimStep:
    id: str
    step: str
    has_false_claim: bool
    claims: tuple[Claim, ...]
    source: str
    note: str = ""


def _row_error(path: Path, line_no: int, field_name: str, problem: str) -> ClaimStepsError:
    return ClaimStepsError(f"{path}:{line_no}: field {field_name!r}: {problem}")


def _parse_row(raw: object, path: Path, line_no: int) -> ClaimStep:
    if not isinstance(raw, dict):
        raise _row_error(path, line_no, "<row>", f"expected a JSON object, got {type(raw).__name__}")
    unknown = sorted(set(raw) - set(_FIELDS))
    if unknown:
        raise _row_error(path, line_no, unknown[0], "unknown field")
    for name, kind in _FIELDS.items():
        if name not in raw:
            raise _row_error(path, line_no, name, "missing")
        if not isinstance(raw[name], kind):
            raise _row_error(path, line_no, name, f"expected {kind.__name__}, got {type(raw[name]).__name__}")
    for name in ("id", "step", "source"):
        if not raw[name].strip():
            raise _row_error(path, line_no, name, "empty")
    claims: list[Claim] = []
    if not raw["claims"]:
        raise _row_error(path, line_no, "claims", "no claims: a step without a claim does not belong here")
    for k, item in enumerate(raw["claims"]):
        where = f"claims[{k}]"
        if not isinstance(item, dict):
            raise _row_error(path, line_no, where, "expected an object {text, holds}")
        extra = sorted(set(item) - set(_CLAIM_FIELDS))
        if extra:
            raise _row_error(path, line_no, f"{where}.{extra[0]}", "unknown field")
        for name, kind in _CLAIM_FIELDS.items():
            if not isinstance(item.get(name), kind):
                raise _row_error(path, line_no, f"{where}.{name}", f"missing or not a {kind.__name__}")
        if not item["text"].strip():
            raise _row_error(path, line_no, f"{where}.text", "empty")
        claims.append(Claim(item["text"], item["holds"]))
    if raw["has_false_claim"] != any(not c.holds for c in claims):
        raise _row_error(
            path, line_no, "has_false_claim", "disagrees with the claims (true iff some claim does not hold)"
        )
    return ClaimStep(
        raw["id"], raw["step"], raw["has_false_claim"], tuple(claims), raw["source"], raw["note"]
    )


def load_claim_steps(path: Path = CLAIM_STEPS) -> list[ClaimStep]:
    """Every row, validated; the first bad row raises `ClaimStepsError` (ids must be unique too)."""
    rows: list[ClaimStep] = []
    seen: dict[str, int] = {}
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _row_error(path, line_no, "<row>", f"not JSON ({exc.msg})") from exc
        row = _parse_row(raw, path, line_no)
        if row.id in seen:
            raise _row_error(path, line_no, "id", f"duplicate of line {seen[row.id]}")
        seen[row.id] = line_no
        rows.append(row)
    if not rows:
        raise ClaimStepsError(f"{path}: no rows")
    return rows


Judge = Callable[[Sequence[str]], list[Verdict]]


@dataclass(frozen=True)
class ClaimStepsReport:
    """Verdicts beside hand labels. `false_accepted`: false-claim steps labelled `correct`;
    `true_rejected`: steps whose claims all hold labelled `incorrect`."""

    rows: tuple[ClaimStep, ...]
    verdicts: tuple[Verdict, ...]
    false_accepted: tuple[tuple[ClaimStep, Verdict], ...]
    true_rejected: tuple[tuple[ClaimStep, Verdict], ...]
    # source -> "false" | "true" -> verdict label -> count
    distribution: dict[str, dict[str, Counter[str]]] = field(default_factory=dict)

    @property
    def n_false(self) -> int:
        return sum(r.has_false_claim for r in self.rows)

    @property
    def n_true(self) -> int:
        return len(self.rows) - self.n_false

    @property
    def true_rejected_rate(self) -> Fraction:
        return Fraction(len(self.true_rejected), self.n_true) if self.n_true else Fraction(0)

    def misses(self) -> list[str]:
        """The targets missed, in words; empty when both are met."""
        out = []
        if len(self.false_accepted) > MAX_FALSE_ACCEPTED:
            out.append(f"{len(self.false_accepted)} false-claim step(s) labelled correct (target 0)")
        if self.true_rejected_rate > MAX_TRUE_REJECTED_RATE:
            out.append(
                f"{len(self.true_rejected)}/{self.n_true} true steps labelled incorrect "
                f"({float(self.true_rejected_rate):.1%} > {float(MAX_TRUE_REJECTED_RATE):.1%})"
            )
        return out


def default_judge() -> tuple[Judge, Callable[[], None]]:
    """`MathVerifier().check_steps` on one step at a time with a dummy problem (steps are judged alone)."""
    from prm_factory.schemas.records import Problem
    from prm_factory.verifiers.math import MathVerifier

    verifier = MathVerifier()
    problem = Problem("claim-steps", "claim-steps", "math", "(single step, judged alone)")

    def judge(steps: Sequence[str]) -> list[Verdict]:
        return [verifier.check_steps(problem, [step])[0] for step in steps]

    return judge, verifier.close


def evaluate_claim_steps(rows: Sequence[ClaimStep], judge: Judge) -> ClaimStepsReport:
    """Run `judge` on every step (alone) and score its labels against the hand judgement."""
    verdicts = judge([r.step for r in rows])
    if len(verdicts) != len(rows):
        raise ValueError(f"{len(rows)} steps but {len(verdicts)} verdicts")
    unknown = sorted({v.label for v in verdicts} - set(STEP_LABELS))
    if unknown:
        raise ValueError(f"verdict labels outside {STEP_LABELS}: {unknown}")
    distribution: dict[str, dict[str, Counter[str]]] = {}
    for row, verdict in zip(rows, verdicts, strict=True):
        cls = "false" if row.has_false_claim else "true"
        for source in (row.source, "ALL"):
            distribution.setdefault(source, {"false": Counter(), "true": Counter()})[cls][verdict.label] += 1
    pairs = list(zip(rows, verdicts, strict=True))
    return ClaimStepsReport(
        rows=tuple(rows),
        verdicts=tuple(verdicts),
        false_accepted=tuple((r, v) for r, v in pairs if r.has_false_claim and v.label == "correct"),
        true_rejected=tuple((r, v) for r, v in pairs if not r.has_false_claim and v.label == "incorrect"),
        distribution=distribution,
    )


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def format_report(report: ClaimStepsReport, *, path: Path | None = None) -> str:
    """The figures issue 11 asks for, in plain text."""
    lines = [
        f"claim steps: {len(report.rows)} ({report.n_false} with a false claim, {report.n_true} without)"
        + (f" from {path}" if path else ""),
        "",
        f"false-claim steps labelled correct: {len(report.false_accepted)}/{report.n_false} (target 0)",
    ]
    for row, verdict in report.false_accepted:
        false_claims = "; ".join(c.text for c in row.claims if not c.holds)
        lines.append(f"  {row.id} [{row.source}] step: {_one_line(row.step)}")
        lines.append(f"      false claim(s): {false_claims} | checker: {_one_line(verdict.reason, 100)}")
        if row.note:
            lines.append(f"      note: {_one_line(row.note, 150)}")
    rate = float(report.true_rejected_rate)
    lines += [
        "",
        f"true steps labelled incorrect: {len(report.true_rejected)}/{report.n_true} = {rate:.1%} "
        f"(target <= {float(MAX_TRUE_REJECTED_RATE):.1%})",
    ]
    for row, verdict in report.true_rejected:
        lines.append(f"  {row.id} [{row.source}] step: {_one_line(row.step)}")
        lines.append(f"      checker: {_one_line(verdict.reason, 140)}")
        if row.note:
            lines.append(f"      note: {_one_line(row.note, 150)}")
    n_true_correct = sum(
        1
        for r, v in zip(report.rows, report.verdicts, strict=True)
        if not r.has_false_claim and v.label == "correct"
    )
    lines += [
        "",
        f"coverage (not a target): true steps labelled correct {n_true_correct}/{report.n_true}",
        "",
        "verdicts per source and class (correct / incorrect / unverifiable):",
    ]
    width = max(len(s) for s in report.distribution)
    for source in sorted(report.distribution, key=lambda s: (s == "ALL", s)):
        for cls in ("false", "true"):
            counts = report.distribution[source][cls]
            n = sum(counts.values())
            if not n:
                continue
            cells = "  ".join(f"{label} {counts[label]:>3}" for label in STEP_LABELS)
            name = "false-claim" if cls == "false" else "all-true"
            lines.append(f"  {source:<{width}}  {name:<11} n={n:>3}  {cells}")
    misses = report.misses()
    lines += ["", "targets met" if not misses else "TARGETS MISSED: " + "; ".join(misses)]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", nargs="?", type=Path, default=CLAIM_STEPS, help="claim-steps jsonl")
    parser.add_argument("--source", action="append", help="only rows of this source (repeatable)")
    args = parser.parse_args(argv)
    try:
        rows = load_claim_steps(args.path)
    except (ClaimStepsError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.source:
        rows = [r for r in rows if r.source in set(args.source)]
        if not rows:
            print(f"error: no rows of source {args.source}", file=sys.stderr)
            return 2
    judge, close = default_judge()
    try:
        report = evaluate_claim_steps(rows, judge)
    finally:
        close()
    print(format_report(report, path=args.path))
    return 1 if report.misses() else 0


if __name__ == "__main__":
    sys.exit(main())
