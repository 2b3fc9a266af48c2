"""Hand-labelled answers: does the final-answer checker agree with a careful human?

Four sets, all scored as precision / recall of the checker's `correct` against `equivalent` (anything but
`correct` counts as "not correct": it costs recall, never precision):
- `data/answer_pairs.jsonl`: extracted answers, `{"id", "predicted", "reference", "equivalent", "form"}`
  (`form` names what the pair exercises: thousands, percent, latex-frac, interval, ...);
- `data/answer_pairs_math_style.jsonl`: the same shape, both sides raw MATH-style strings (`$\\boxed{2}$,
  $\\boxed{5}$`, `Final Answer: The largest $n$ is 34.`, `1,\\!000`, `3{,}5`), hand-written per class
  (`data/answer_pairs_math_style.md`);
- `data/math_outputs_dev.jsonl`: whole MATH-style model outputs, `{"id", "completion", "reference",
  "equivalent", "form", "source", ...}`, graded end to end (extraction + equivalence); where each row comes
  from is in `data/math_outputs_dev.md`;
- `data/math_outputs_heldout.jsonl`: a second set of whole outputs in the same shape, kept apart from
  development (`data/math_outputs_heldout.md`).

    .venv/bin/python -m prm_factory.evaluation.answer_pairs [FILE ...]     # every set when no FILE is given
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from prm_factory.labels.metrics import PrecisionRecall, answer_correct_scores
from prm_factory.verifiers.protocol import Verdict

ANSWER_PAIRS = Path(__file__).parent / "data" / "answer_pairs.jsonl"
ANSWER_PAIRS_MATH_STYLE = Path(__file__).parent / "data" / "answer_pairs_math_style.jsonl"
MATH_OUTPUTS = Path(__file__).parent / "data" / "math_outputs_dev.jsonl"
MATH_OUTPUTS_HELDOUT = Path(__file__).parent / "data" / "math_outputs_heldout.jsonl"


@dataclass(frozen=True)
class AnswerPair:
    id: str
    predicted: str
    reference: str
    equivalent: bool
    form: str = ""


@dataclass(frozen=True)
class AnswerPairReport:
    scores: PrecisionRecall
    labels: tuple[str, ...]
    disagreements: tuple[tuple[AnswerPair, Verdict], ...]


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_answer_pairs(path: Path = ANSWER_PAIRS) -> list[AnswerPair]:
    rows = _rows(path)
    return [
        AnswerPair(r["id"], r["predicted"], r["reference"], bool(r["equivalent"]), r.get("form", ""))
        for r in rows
    ]


def evaluate_answer_pairs(
    pairs: Sequence[AnswerPair],
    judge: Callable[[Sequence[tuple[str, str]]], list[Verdict]] | None = None,
) -> AnswerPairReport:
    """Score a batch judge (default: `answers_equivalent_many`) on the pairs; list where it disagrees."""
    if judge is None:
        from prm_factory.verifiers.math.answers import answers_equivalent_many

        judge = answers_equivalent_many
    verdicts = judge([(p.predicted, p.reference) for p in pairs])
    labels = tuple(v.label for v in verdicts)
    scores = answer_correct_scores([p.equivalent for p in pairs], labels)
    disagreements = tuple(
        (pair, verdict)
        for pair, verdict in zip(pairs, verdicts, strict=True)
        if (verdict.label == "correct") != pair.equivalent
    )
    return AnswerPairReport(scores, labels, disagreements)


@dataclass(frozen=True)
class MathOutput:
    """A whole model output and its reference; `equivalent` is the hand label of its final answer."""

    id: str
    completion: str
    reference: str
    equivalent: bool
    form: str = ""
    source: str = ""


def load_math_outputs(path: Path = MATH_OUTPUTS) -> list[MathOutput]:
    return [
        MathOutput(
            r["id"],
            r["completion"],
            r["reference"],
            bool(r["equivalent"]),
            r.get("form", ""),
            r.get("source", ""),
        )
        for r in _rows(path)
    ]


def evaluate_math_outputs(
    outputs: Sequence[MathOutput],
    grade: Callable[[str, str], Verdict] | None = None,
) -> tuple[PrecisionRecall, tuple[str, ...], tuple[tuple[MathOutput, Verdict], ...]]:
    """Grade every output end to end (default: `grade_answer`); scores, labels and disagreements."""
    if grade is None:
        from prm_factory.verifiers.math.answers import grade_answer

        grade = grade_answer
    verdicts = [grade(o.completion, o.reference) for o in outputs]
    labels = tuple(v.label for v in verdicts)
    scores = answer_correct_scores([o.equivalent for o in outputs], labels)
    disagreements = tuple(
        (output, verdict)
        for output, verdict in zip(outputs, verdicts, strict=True)
        if (verdict.label == "correct") != output.equivalent
    )
    return scores, labels, disagreements


_WORK = "We work through the problem step by step and check the result against its conditions.\n\n"
# endings models write, with `{a}` the answer; the `$`-wrapped ones are used only for answers without `$`
_ENDINGS = (
    "# Answer\n\n{a}",
    "The answer is: {a}",
    "Final Answer: The final answer is ${a}$. I hope it is correct.",
    "Final Answer: The final answer is {a}. I hope it is correct.",
    "Putting it together, the result is $\\boxed{{{a}}}$.",
    "**Final Answer**\n\\[\n\\boxed{{{a}}}\n\\]",
)


def reformulated_outputs(pairs: Sequence[AnswerPair], seed: int = 6) -> list[MathOutput]:
    """Each answer pair as a whole output ending in one of the usual endings (chosen by seed), labelled
    as the pair: checks that extraction carries every answer form through unchanged."""
    import random

    rng = random.Random(seed)
    outputs = []
    for pair in pairs:
        endings = [e for e in _ENDINGS if "$" not in pair.predicted or "$" not in e]
        ending = rng.choice(endings).format(a=pair.predicted)
        outputs.append(
            MathOutput(
                f"re-{pair.id}",
                _WORK + ending,
                pair.reference,
                pair.equivalent,
                f"reformulated/{pair.form}",
                "answer_pairs.jsonl reformulated",
            )
        )
    return outputs


def cross_paired_negatives(outputs: Sequence[MathOutput], seed: int = 12) -> list[MathOutput]:
    """Each equivalent output against the reference of another output whose answer is of the same kind
    (the part of `form` after `/`) and reads differently: negatives with realistic answers on both sides.
    Which pairs happen to be equal in value anyway must be checked by hand (the caller's labels say)."""
    import random

    rng = random.Random(seed)
    by_kind: dict[str, list[MathOutput]] = {}
    for output in outputs:
        by_kind.setdefault(output.form.rsplit("/", 1)[-1], []).append(output)
    pairs = []
    for output in outputs:
        if not output.equivalent:
            continue
        own = "".join(output.reference.split())
        others = [o for o in by_kind[output.form.rsplit("/", 1)[-1]] if "".join(o.reference.split()) != own]
        if others:
            other = rng.choice(others)
            pairs.append(
                MathOutput(
                    f"{output.id}-x",
                    output.completion,
                    other.reference,
                    False,
                    f"cross-paired/{output.form.rsplit('/', 1)[-1]}",
                    "cross-paired negatives",
                )
            )
    return pairs


def _print_scores(name: str, scores: PrecisionRecall, labels: Sequence[str]) -> None:
    counts = {label: labels.count(label) for label in sorted(set(labels))}
    print(
        f"{name}: {len(labels)} rows, precision {100 * scores.precision:.2f} %, recall "
        f"{100 * scores.recall:.2f} % (tp {scores.true_positive}, fp {scores.false_positive}, "
        f"fn {scores.false_negative}); labels {counts}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Print precision / recall of `correct` on each set and every disagreement (`-q` hides them)."""
    import argparse

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("-q", "--quiet", action="store_true", help="scores only")
    args = parser.parse_args(argv)
    for path in args.files or [ANSWER_PAIRS, ANSWER_PAIRS_MATH_STYLE, MATH_OUTPUTS, MATH_OUTPUTS_HELDOUT]:
        if "completion" in _rows(path)[0]:
            outputs = load_math_outputs(path)
            scores, labels, wrong = evaluate_math_outputs(outputs)
            for form in sorted({o.source.split(" (")[0].split(";")[0] for o in outputs}):
                subset = [i for i, o in enumerate(outputs) if o.source.split(" (")[0].split(";")[0] == form]
                sub_labels = tuple(labels[i] for i in subset)
                _print_scores(
                    f"  {path.name} [{form}]",
                    answer_correct_scores([outputs[i].equivalent for i in subset], sub_labels),
                    sub_labels,
                )
            shown = [(o.id, o.reference, o.equivalent, v) for o, v in wrong]
        else:
            pairs = load_answer_pairs(path)
            report = evaluate_answer_pairs(pairs)
            scores, labels = report.scores, report.labels
            shown = [(p.id, p.reference, p.equivalent, v) for p, v in report.disagreements]
        _print_scores(path.name, scores, labels)
        if not args.quiet:
            for row_id, reference, equivalent, verdict in shown:
                answer = verdict.evidence.get("answer", verdict.evidence.get("predicted", ""))
                print(
                    f"  {row_id}: gold {'equivalent' if equivalent else 'different'}, got {verdict.label} "
                    f"({verdict.reason}); answer {answer!r} vs {reference!r}"
                )


if __name__ == "__main__":
    main()
