"""Olympiad-level dev sets for the math step checker, built from public worked solutions.

ProcessBench's `math` split is too easy to show how the checker misreads olympiad text, and its held-out
splits (OlympiadBench, Omni-MATH) must stay unseen. These sets come from other sources (neither ProcessBench
nor the sources it drew from):

- NuminaMath-CoT worked solutions of its `olympiads` and `aops_forum` subsets (Apache-2.0), as a JSON list
  of `{"original_id", "problem", "solution", "source"}` rows (the 102-row sample
  `data/numinamath_subset_raw.json` of the public repository nikitus20/latebench has that shape);
- AIME 2024 solutions from the AoPS wiki, as JSON lines `{"id", "problem", "solution", "answer"}` with the
  wiki's solutions one after another, each closed by its author's `~name` line (the shape of
  `evaluation/data/aime24/test.jsonl` in QwenLM/Qwen2.5-Math).

Every worked solution is taken as a chain whose steps are all right (ProcessBench `label` -1): a flag on it
is a false alarm, or an error in the source. Each flag on the dev split (and, once its figures were taken,
on the held-out split) was read; where the source itself is wrong (NuminaMath's solutions were written by
a model, and the AoPS wiki has typos) the step is listed in `SOURCE_ERRORS` with what is wrong, and the
chain's first error is set there. For precision to mean
anything, each chain with a number that a computation ends on (`... = 96`) also gets an altered copy in
which that one number is changed, and that step is the copy's first error (the way `altered_gsm8k` builds
its set). Problems are split by a hash of their text into `dev` (read while rules change) and `heldout`
(never read while rules change), so the splits share no problem.

    python -m prm_factory.evaluation.olympiad_dev --numina RAW.json --aime AIME.jsonl --out DIR

writes `DIR/olympiad_dev.json` and `DIR/olympiad_heldout.json`, ProcessBench-shape lists that
`prm-factory eval` reads. The data stay outside the repository (the AoPS wiki states no licence for reuse).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

_PARAGRAPH = re.compile(r"\n\s*\n|\n(?=\s*(?:\d{1,2}\.|#+)\s)")
# a paragraph that only continues the one before it: a display, or a line opening on a relation
_CONTINUES = re.compile(r"^\s*(?:\\\[|\$\$|\\begin|[=<>]|\\(?:le|ge|leq|geq|Rightarrow|implies)\b)")
_SIGNATURE = re.compile(r"^\s*[~\-–—]\s*\S.*$", re.MULTILINE)
# a number that a computation ends on: `... + 3 = 96` inside math (the side before holds an operator)
_RESULT = re.compile(
    r"(?P<left>[0-9)}\]]\s*(?:[-+*/^]|\\cdot|\\times|\\div)\s*[^=$\n]{0,40}?)=\s*(?P<num>\d+)(?![\d.,^_!{(A-Za-z\\])"
)


# Steps where a source solution is itself wrong, read by hand from the flags on the dev split and, once its
# figures were taken, on the held-out split.
SOURCE_ERRORS: dict[str, tuple[int, str]] = {
    "numina-numinamath_778035": (15, "2 + \\sqrt{2 \\times 2} is 4, not 2 + 2\\sqrt{2}"),
    "numina-numinamath_291351": (5, "(-c - x)(c - x) + y^2 is x^2 + y^2 - c^2; the middle side is not"),
    "numina-numinamath_854211": (19, "1001 terms of mean 2003 sum to 2005003, not 2006003"),
    "numina-numinamath_544660": (37, "1536000 / 244 is 6295.08..., not 6300"),
    "numina-numinamath_461433": (6, "(3 \\times 3) / 3 is 3, not 6 (the rows after are false too)"),
    "numina-numinamath_454943": (9, "5(x-5) - 5(x-1) is -20, not 20"),
    "numina-numinamath_643148": (5, "cancelling pz and 2xz leaves x^2 + 2z^2 on the right, not x^2 + z^2"),
    "numina-numinamath_656851": (16, "8^2 + 10^2 + 4^2 + 1^2 is 181, not 13^2"),
    "numina-numinamath_642330": (25, "(325 \\times 6 - 1807) / 13 is 11, not 1"),
    "numina-numinamath_249377": (18, "180 is 12 modulo 21, not 1 (18 has no inverse modulo 21)"),
    "numina-numinamath_428065": (32, "1 + 17 is 18, not 17"),
    "aime24-65-s1": (2, "cos ACB is 64 / \\sqrt{7120} = 16 / \\sqrt{445}, not 16 / (9\\sqrt{5})"),
    # held-out split, read after its figures were taken (verifier 2.6.0)
    "numina-numinamath_115292": (29, "\\sqrt[3]{11^3} is 11, not 11^{3/2}"),
    "numina-numinamath_55364": (27, "273563 / 191314 is 1.43, not about 1.45"),
    "numina-numinamath_733563": (7, "(1 + mn + mn + mn) / mn is not (1 + mn) / mn, nor that 2 / mn + 1"),
    "numina-numinamath_762718": (12, "(-a/2)(-3/b) = 3a / (2b), so 3a / (2b) = -1, not 1"),
    "numina-numinamath_794768": (30, "(13/2 - 2p)^2 has -26p, not -13p"),
    "aime24-72-s8": (6, "the derivative gives -432 / 324 = -4/3; -468 / 324 is -13/9"),
}


@dataclass(frozen=True)
class Chain:
    """One worked solution as steps, with its source and split."""

    id: str
    source: str
    problem: str
    steps: tuple[str, ...]
    label: int = -1  # ProcessBench: the first wrong step, -1 when all are right


def paragraph_steps(solution: str) -> list[str]:
    """A solution cut at blank lines; a paragraph that only continues the one before (a display, a line
    opening on `=`) stays with it, as ProcessBench's steps keep a display with its sentence.

    >>> paragraph_steps("So we get\\n\\n$$x = 2$$\\n\\nThen y = 3.")
    ['So we get\\n\\n$$x = 2$$', 'Then y = 3.']
    """
    steps: list[str] = []
    for piece in _PARAGRAPH.split(solution.strip()):
        if not piece.strip():
            continue
        if steps and _CONTINUES.match(piece):
            steps[-1] = f"{steps[-1]}\n\n{piece}"
        else:
            steps.append(piece)
    return steps


def line_steps(solution: str) -> list[str]:
    """An AoPS wiki solution cut into its lines (the wiki writes one thought a line, blank lines rarely).

    >>> line_steps("First $a = 1$.\\nThen $b = 2$.\\n")
    ['First $a = 1$.', 'Then $b = 2$.']
    """
    return [line.strip() for line in solution.splitlines() if line.strip()]


def aops_solutions(text: str) -> list[str]:
    """The wiki's solutions of one problem, one after another, each closed by its author's `~name` line."""
    parts = _SIGNATURE.split(text)
    return [p.strip() for p in parts if re.search(r"\\boxed|\\framebox|\\fbox", p)]


def split_of(problem: str) -> str:
    """`dev` or `heldout`, by a hash of the problem text (stable across runs and machines)."""
    digest = hashlib.sha256(problem.strip().encode("utf-8")).digest()
    return "dev" if digest[0] % 2 == 0 else "heldout"


def alter(chain: Chain, rng: random.Random) -> Chain | None:
    """The chain with one computed result changed (`... = 96` -> `... = 97`), at the first step that has
    one after a random start; that step becomes its first error. None when no step has such a result."""
    candidates = [i for i, step in enumerate(chain.steps) if _RESULT.search(step)]
    if not candidates:
        return None
    index = rng.choice(candidates)
    step = chain.steps[index]
    matches = list(_RESULT.finditer(step))
    match = rng.choice(matches)
    value = int(match.group("num"))
    new = value + rng.choice([1, 2, 3, 9, 10]) if value >= 2 else value + 2
    altered = step[: match.start("num")] + str(new) + step[match.end("num") :]
    steps = (*chain.steps[:index], altered, *chain.steps[index + 1 :])
    return Chain(f"{chain.id}-altered", chain.source, chain.problem, steps, index)


def _with_source_error(chain: Chain) -> Chain:
    """The chain with its first error moved to a source error listed before it, if any."""
    listed = SOURCE_ERRORS.get(chain.id.removesuffix("-altered"))
    if listed is None or (chain.label != -1 and chain.label <= listed[0]):
        return chain
    return Chain(chain.id, chain.source, chain.problem, chain.steps, listed[0])


def numina_chains(rows: Iterable[dict]) -> list[Chain]:
    """NuminaMath olympiad / AoPS-forum solutions (other sources and solutions not in English are left
    out: the checker reads English)."""
    chains = []
    for row in rows:
        if row.get("source") not in ("olympiads", "aops_forum"):
            continue
        solution = row["solution"]
        if re.search(r"[\u4e00-\u9fff]", solution + row["problem"]):
            continue
        steps = paragraph_steps(solution)
        if len(steps) >= 2:
            chains.append(Chain(f"numina-{row['original_id']}", row["source"], row["problem"], tuple(steps)))
    return chains


def aime_chains(rows: Iterable[dict], tag: str = "aime24") -> list[Chain]:
    """AIME AoPS wiki solutions (`tag` names the year: `aime24`); a solution with a drawing (`[asy]`) is
    left out."""
    chains = []
    for row in rows:
        for k, solution in enumerate(aops_solutions(row["solution"])):
            if "[asy]" in solution:
                continue
            steps = line_steps(solution)
            if len(steps) >= 2:
                chains.append(Chain(f"{tag}-{row['id']}-s{k}", f"{tag}-aops", row["problem"], tuple(steps)))
    return chains


def build_sets(
    chains: Sequence[Chain], seed: int = 38, one_split: str | None = None
) -> dict[str, list[dict]]:
    """Both splits as ProcessBench-shape rows: every chain as written (label -1) and its altered copy; with
    `one_split`, every chain in that one split (a set measured once, after the rules were written)."""
    rng = random.Random(seed)
    out: dict[str, list[dict]] = {one_split: []} if one_split else {"dev": [], "heldout": []}
    for written in chains:
        chain = _with_source_error(written)
        rows = [chain]
        altered = alter(written, rng)
        if altered is not None:
            rows.append(_with_source_error(altered))
        for c in rows:
            out[one_split or split_of(chain.problem)].append(
                {
                    "id": c.id,
                    "generator": c.source,
                    "problem": c.problem,
                    "steps": list(c.steps),
                    "final_answer_correct": c.label == -1,
                    "label": c.label,
                }
            )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--numina", type=Path, help="NuminaMath rows: a JSON list")
    parser.add_argument("--aime", type=Path, help="AIME AoPS wiki solutions: JSON lines")
    parser.add_argument("--out", type=Path, required=True, help="folder for the two split files")
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--aime-tag", default="aime24", help="names the AIME year in chain ids: aime24, ...")
    parser.add_argument("--one-split", help="put every chain in DIR/olympiad_NAME.json (no dev/heldout)")
    args = parser.parse_args(argv)
    chains: list[Chain] = []
    if args.numina:
        chains += numina_chains(json.loads(args.numina.read_text(encoding="utf-8")))
    if args.aime:
        lines = args.aime.read_text(encoding="utf-8").splitlines()
        chains += aime_chains((json.loads(line) for line in lines if line.strip()), args.aime_tag)
    args.out.mkdir(parents=True, exist_ok=True)
    for split, rows in build_sets(chains, args.seed, args.one_split).items():
        path = args.out / f"olympiad_{split}.json"
        path.write_text(json.dumps(rows, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        n_right = sum(r["label"] == -1 for r in rows)
        print(f"{path}: {len(rows)} chains, {n_right} all right, {len(rows) - n_right} with an error")
    return 0


if __name__ == "__main__":
    sys.exit(main())
