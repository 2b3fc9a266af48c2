"""The altered-GSM8K set: gold solutions with one arithmetic result changed in one step.

Each GSM8K gold line is a step, with its `<<48/2=24>>` calculator annotation removed. For half the samples
one result that the text states as a claim (`48/2 = 24`) is changed (`48/2 = 27`) and the changed step
is the gold first error; the other half stay as written (label -1). The build is deterministic by seed.

Solutions whose own annotations are false (`<<10*1248=11480>>`) are left out: their gold label is not
trustworthy. The filter uses the annotations, not the checker under test.

>>> sample = alter_solution("She sold 48/2 = <<48/2=24>>24 clips.\\n#### 24", random.Random(0))
>>> sample.steps[0] != "She sold 48/2 = 24 clips."
True
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

from prm_factory.config.run_config import SHARED_GSM8K
from prm_factory.verifiers.math.arithmetic import NotEvaluable, evaluate, lex, parse_side
from prm_factory.verifiers.math.numbers import Literal, matches_written
from prm_factory.verifiers.protocol import Verdict

# the default of `evaluation.report --source`: the shared GSM8K train split beside the checkout (../shared)
DEFAULT_SOURCE = SHARED_GSM8K
_VISIBLE_RESULT = re.compile(
    r"=\s*(?P<cur>\$?)<<(?P<expr>[^<>=]*)=(?P<ann>[^<>]*)>>(?P<num>-?\d+(?:,\d{3})*(?:\.\d+)?)(?![\d,]\d)"
)
_ANNOTATION = re.compile(r"<<[^<>]*>>")


@dataclass(frozen=True)
class AlteredSample:
    """One eval sample in ProcessBench shape: `label` is the first error index, -1 when all steps hold."""

    id: str
    problem: str
    steps: tuple[str, ...]
    label: int
    final_answer: str
    original: str | None = None  # the result as written in the gold line, when altered
    altered: str | None = None

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "problem": self.problem,
            "steps": list(self.steps),
            "label": self.label,
            "final_answer": self.final_answer,
            "original": self.original,
            "altered": self.altered,
        }


def split_gold(answer: str) -> tuple[list[str], str]:
    """Gold lines (annotations kept) and the final answer after `####`."""
    body, _, final = answer.partition("####")
    return [line.strip() for line in body.splitlines() if line.strip()], final.strip()


def annotations_hold(answer: str) -> bool:
    """Are all `<<expr=result>>` annotations of a gold solution true? (exact arithmetic)"""
    for match in re.finditer(r"<<([^<>]*)>>", answer):
        expr, _, result = match.group(1).rpartition("=")
        try:
            value = evaluate(parse_side(lex(expr)), {})
            written = Literal.parse(result)
        except (NotEvaluable, ValueError, ZeroDivisionError):
            return False
        if (
            not value.is_number
            or written is None
            or not matches_written(value.const, written, approximate=True, percent_as_number=True)
        ):
            return False
    return True


def wrong_value(original: str, rng: random.Random) -> str:
    """A different number in the same format, never one the tolerance rules would accept."""
    lit = Literal.parse(original)
    assert lit is not None
    decimals = lit.decimals
    step = Fraction(1, 10**decimals)
    for _ in range(50):
        choice = rng.random()
        if choice < 0.5:
            new = lit.value + rng.choice([-1, 1]) * rng.randint(1, 9) * step * rng.choice([1, 1, 10])
        elif choice < 0.75:
            new = lit.value * rng.choice([2, 10, Fraction(1, 2)])
        else:
            new = lit.value + rng.choice([-1, 1]) * max(abs(lit.value) // 10, 1)
        if new < 0 <= lit.value:
            continue
        if (new * 10**decimals).denominator != 1 or new == lit.value:
            continue
        exact = Decimal(new.numerator) / Decimal(new.denominator)
        return f"{exact:,.{decimals}f}" if "," in original else f"{exact:.{decimals}f}"
    return str(lit.value + 1)


def alter_solution(answer: str, rng: random.Random) -> AlteredSample | None:
    """Alter one visible result of a gold solution; None when no line states one as `expr = result`."""
    lines, final = split_gold(answer)
    sites = [
        (i, m)
        for i, line in enumerate(lines)
        for m in _VISIBLE_RESULT.finditer(line)
        if Literal.parse(m.group("num")) is not None
    ]
    if not sites:
        return None
    index, match = rng.choice(sites)
    new = wrong_value(match.group("num"), rng)
    line = lines[index]
    altered_line = line[: match.start("num")] + new + line[match.end("num") :]
    steps = [_ANNOTATION.sub("", s) for s in lines]
    steps[index] = _ANNOTATION.sub("", altered_line)
    return AlteredSample("", "", tuple(steps), index, final, match.group("num"), new)


def build_altered_gsm8k(source: Path, *, n_samples: int = 1000, seed: int = 0) -> list[AlteredSample]:
    """`n_samples` samples, half altered, from the GSM8K jsonl at `source` (`DEFAULT_SOURCE` for the shared
    train split); same seed, same set."""
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    order = list(range(len(rows)))
    rng = random.Random(seed)
    rng.shuffle(order)
    samples: list[AlteredSample] = []
    n_altered = n_samples // 2
    for row_index in order:
        if len(samples) >= n_samples:
            break
        row = rows[row_index]
        if not annotations_hold(row["answer"]):
            continue
        lines, final = split_gold(row["answer"])
        if not lines:
            continue
        want_altered = sum(s.label >= 0 for s in samples) < n_altered and (
            len(samples) % 2 == 0 or sum(s.label < 0 for s in samples) >= n_samples - n_altered
        )
        sample_id = f"gsm8k-train-{row_index}"
        if want_altered:
            altered = alter_solution(row["answer"], rng)
            if altered is None:
                continue
            samples.append(
                AlteredSample(
                    sample_id,
                    row["question"],
                    altered.steps,
                    altered.label,
                    final,
                    altered.original,
                    altered.altered,
                )
            )
        else:
            steps = tuple(_ANNOTATION.sub("", s) for s in lines)
            samples.append(AlteredSample(sample_id, row["question"], steps, -1, final))
    return samples


def write_samples(samples: Iterable[AlteredSample], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for sample in samples:
            out.write(json.dumps(sample.to_json(), ensure_ascii=False) + "\n")


def first_error_index(verdicts: Sequence[Verdict]) -> int:
    """Index of the first `incorrect` verdict, -1 when there is none (ProcessBench convention)."""
    return next((i for i, v in enumerate(verdicts) if v.label == "incorrect"), -1)


def predict_first_errors(
    samples: Sequence[AlteredSample], check: Callable[[Sequence[str]], list[Verdict]] | None = None
) -> list[int]:
    """Run a step checker over every sample; the predicted first-error indices, in order."""
    if check is None:
        from prm_factory.verifiers.math.claims import check_steps

        check = check_steps
    return [first_error_index(check(sample.steps)) for sample in samples]
