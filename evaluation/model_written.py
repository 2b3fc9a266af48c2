"""Dev sets of model-written competition chains (issue 46): what users label is model output, so the step
checker's precision is measured on chains models wrote, not on worked solutions people wrote.

Sources (none is ProcessBench nor one of its sources; problems that ProcessBench's `math` split holds are
dropped by exact question text):

- PRMBench (ssmisya/PRMBench, Apache-2.0), `mr_eval/tasks/prmtest_classified/data/prm800k_*_4o_<class>.jsonl`:
  PRM800K's GPT-4 solutions of MATH problems (`original_process`, taken as chains whose steps are all
  right) and GPT-4o's copies of them with errors put in and located (`modified_process`, `error_steps`
  1-based; the first is the chain's first error). `redundency` and `circular` copies are left out: their
  marked steps restate or assume, they assert nothing false, so a claim checker has nothing to find there.
  `prm_test_p12_multi_solutions.jsonl`: QwQ's solutions of the same problems, with a `ground_truth`.
- Qwen2.5-Math (QwenLM/Qwen2.5-Math, `evaluation/` MIT), `evaluation/data/eval_rm_maj_example/
  math_cot_100.jsonl`: 8 sampled chain-of-thought answers of a Qwen2.5-Math-Instruct model to each of 100
  MATH test problems, with the harness's grade (`score`).
- DeepScaleR-1.5B-Preview's answers to AIME 2024 (bkubwimana/tegra_monitor, MIT), an AIME-Preview-style
  harness output with a token budget of 8192 (`eval_output_chains`).
- ReasonEval's MR-MATH (GAIR-NLP/ReasonEval, no licence: a set kept outside the repository):
  Abel / WizardMath answers to MATH test problems with a hand-marked first error, and PRM800K chains with
  their ratings (`mrmath_chains`).
- BIG-Bench Mistake (WHGTyen/BIG-Bench-Mistake, Apache-2.0), `multistep_arithmetic.jsonl`: PaLM 2-L's
  traces on BIG-Bench's nested arithmetic, with the first logical mistake located by annotators
  (`bbm_chains`; built as its own set, `--name bbm_arithmetic`: arithmetic, not competition mathematics).
- TheoremQA (TIGER-AI-Lab/TheoremQA, MIT), `outputs/*.jsonl`: four open models' 5-shot answers to its 800
  STEM questions, with no grade of their own (`theoremqa_chains`; built as the third set, `--suffix 3`).
  Harness output files are listed in a manifest (`--manifest`, `manifest_chains`: repository, commit, path,
  model, problem set and format of each), so a new source of a known format needs no new option.
- Mr-Ben (dvlab-research/Mr-Ben, MIT), `data/math.json`: Claude 2, GPT-3.5 and mistral-medium solutions
  of MMLU's high-school and college mathematics questions, with the first wrong step located by
  annotators (`mrben_chains`), and ZeroEval (yuchenlin/ZeroEval, Apache-2.0), `result_dirs/math-l5/*.json`:
  open and closed models' greedy answers to MATH level-5 test problems, no grade (`zeroeval_chains`); both
  read from a manifest, built as the fourth set (`--suffix 4`).
- MMLU-Pro (TIGER-AI-Lab/MMLU-Pro, Apache-2.0), `eval_results/{gpt4o,deepseek,merged}/math_result.json`:
  GPT-4o, deepseek-chat and gemini-3.1-pro-preview answering its multiple-choice mathematics questions
  (MMLU's, SciBench's, TheoremQA's), graded by the harness's letter (`mmlupro_chains`); built as the fifth
  set (`--suffix 5`) with `--exclude-sets`, which drops questions an earlier set's problems hold.
- Abel (GAIR-NLP/abel, no licence file), `outputs/mathgpt/70b.jsonl`: GAIRMath-Abel-70B's greedy answers to
  2,000 multiple-choice questions (TAL-SCQ5K-EN's test part, per the README), steps its numbered steps,
  graded by the harness's letter (`abel_chains`); built as the sixth set (`--suffix 6`).
- Faithful CoT (veronica320/Faithful-COT, MIT), `output_dir/AQUA/test/MODEL_LtM/predictions.jsonl`: six OpenAI
  models' greedy least-to-most answers to AQuA's 254 multiple-choice test questions (`data/AQUA/test.jsonl`,
  a second file named in the manifest's `questions` column), steps the sub-question / answer pairs, graded
  by the harness's letter (`faithful_cot_chains`); built as the seventh set (`--suffix 7`). The same six
  models' least-to-most answers to ASDiv, SVAMP and MultiArith (`data/DATASET/test.jsonl`), graded by the
  harness's number (`faithful_cot_numeric_chains`), 250 problems a split (`--max-problems`); built as the
  eighth set (`--suffix 8`).
- PromptPG (lupantech/PromptPG, MIT), `results/gpt3/exp4_test_TQ-SA_2_seed_2.json`: text-davinci-002's
  greedy 2-shot chain-of-thought answers to TabMWP's test problems (tables and word problems), with the
  1,000 problems of `data/tabmwp/problems_test1k.json` (the full test file is not in the snapshot), graded
  by the harness's own rule (`promptpg_chains`); built as the ninth set (`--suffix 9`).
- JEEBench (dair-iitd/jeebench, MIT; its `data.zip` is read from a fork that unzipped it,
  somethingdevs/cs678-jeebench), `data/responses/MODEL_MODE_responses/responses.json`: gpt-4-0314 (zero-shot,
  chain-of-thought and one-shot prompts), gpt-3.5-turbo-0301 and text-davinci-003 answering the 236
  mathematics questions of JEE Advanced 2016-2023, graded by the harness's rule on the authors' extracted
  answer (`jeebench_chains`); built as the tenth set (`--suffix 10`).
- MathOdyssey (mengf1/mathodyssey, MIT; its README puts the data set under CC BY-SA 4.0), `jsonl/*.jsonl`:
  gpt-4-1106-preview, gpt-4-0125-preview, gpt-4-0613 and gpt-3.5-turbo-0125 answering its 387 olympiad,
  high-school and university problems as JSON (`reasoning`, `answer`), graded by the harness's gpt-4-turbo
  judge (`jsonl/eval/result-*.jsonl`, a third manifest column `grades`) where the judged answer is in the
  text (`mathodyssey_chains`); built as the eleventh set (`--suffix 11`).
- CHAMP (the `champ-dataset` package on PyPI, 1.0.0, MIT; its GitHub repository YilunZhou/champ-dataset
  lists the file, but the snapshot lacks it), `champ_dataset/dataset_files/v0.json`: GPT-3.5, GPT-4, GPT-4
  Turbo and PaLM 2 Medium solutions of its 270 competition problems under two prompts, with the authors'
  first-wrong-step annotations (`champ_chains`); built as the twelfth set (`--suffix 12`). The same file's
  unannotated solutions under those two prompts, graded by the project's checker alone
  (`champ_conversation_chains`); built as the thirteenth set (`--suffix 13`).
- MATH (hendrycks/math, MIT): the reference answers (the last `\\boxed{}` of each worked solution),
  matched by question text, as a JSON-lines table `{"problem", "solution", "file"}` (`math_table`).

Every chain's final answer is graded against the reference with the project's own answer checker
(`MathVerifier.grade`); `final_answer_correct` is that grade (None where the checker could not read an
answer; for a multiple-choice key, the chosen letter against it). The gold first error (`label`) is the
located error where the source has one (PRMBench, MR-MATH, Mr-Ben); -1 for a chain the source gives as
right whose final answer grades correct; absent (unknown) otherwise, so `prm-factory eval` scores a
wrong-answer chain without a located error on nothing. Problems are split by a hash of their text into
`dev` (read while rules change) and `untuned` (scored once, at the end), so the splits share no problem.
Every row names its source repository, commit, file and model.

    python -m prm_factory.evaluation.model_written build --prmbench PRMBENCH_CHECKOUT --prmbench-commit SHA \\
        --qwen math_cot_100.jsonl --qwen-commit SHA --deepscaler FILE --deepscaler-commit SHA \\
        --math math_all.jsonl --processbench processbench/math.json --out DIR
    python -m prm_factory.evaluation.model_written flags DIR/model_written_dev.jsonl --out FLAGS.jsonl
    python -m prm_factory.evaluation.model_written summary --set DIR/model_written_dev.jsonl \\
        --figures EVAL.json --flags FLAGS.jsonl --adjudication DIR/model_written_dev_adjudication.jsonl

`build` writes `DIR/model_written_dev.jsonl` and `DIR/model_written_untuned.jsonl` (ProcessBench-shape rows
that `prm-factory eval` reads); `flags` lists the verifier's `incorrect` steps where the gold says right,
the flags read by hand into the adjudication file beside the set; `summary` gives the precision of
`incorrect` per reading kind from `prm-factory eval SET --json EVAL.json`, raw and adjudicated.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

from prm_factory.evaluation.olympiad_dev import paragraph_steps
from prm_factory.labels.calibration import wilson
from prm_factory.schemas.external_chains import boxed_content
from prm_factory.schemas.reference_solutions import question_key

PRMBENCH_REPO = "ssmisya/PRMBench"
QWEN_REPO = "QwenLM/Qwen2.5-Math"
REASONEVAL_REPO = "GAIR-NLP/ReasonEval"
DEEPSCALER_REPO = "bkubwimana/tegra_monitor"
DEEPSCALER_FILE = (
    "eval/sweep_results/sweep_tokens_8192/agentica-org/DeepScaleR-1.5B-Preview/aime/"
    "8192t_test2024_qwen-instruct_t0.6_k1_s0_e30.jsonl"
)
DEEPSCALER_MODEL = "DeepScaleR-1.5B-Preview, T=0.6, 8192 tokens"
BBM_REPO = "WHGTyen/BIG-Bench-Mistake"
BBM_FILE = "multistep_arithmetic.jsonl"
BBM_MODEL = "PaLM 2-L (Unicorn)"
QWEN_FILE = "evaluation/data/eval_rm_maj_example/math_cot_100.jsonl"
PRIME_REPO = "PRIME-RL/PRIME"
_PRIME_OUTPUTS = "eval/scripts/eval/Qwen25-Math/evaluation/outputs/home/test/test05/whb"
_PRIME_RESULTS = f"{_PRIME_OUTPUTS}/project/eval-cgq-new/o1_results_1205"
_HARNESS_FILE = "test_qwen25-math-cot_-1_seed0_t0.0_s0_e-1.jsonl"
# the models whose greedy outputs PRIME's repository committed (later removed): folder -> (model, id tag)
_PRIME_MODELS = {
    f"{_PRIME_OUTPUTS}/models/Qwen2.5-Math-7B-Instruct/math_eval": (
        "Qwen2.5-Math-7B-Instruct",
        "qwen25math7b",
    ),
    f"{_PRIME_RESULTS}/Meta-Llama-3.1-8B-Instruct/qwen_math": ("Meta-Llama-3.1-8B-Instruct", "llama31-8b"),
    f"{_PRIME_RESULTS}/all_abla_numina_oly_orca/qwen_math": (
        "PRIME's SFT ablation checkpoint all_abla_numina_oly_orca (base not stated)",
        "sft-ablation",
    ),
}
# Gaokao 2023 (English): high-school exam problems; Minerva's MATH-style college STEM problems (with units)
_PRIME_SETS = {"gaokao2023en": "gaokao", "minerva_math": "minerva"}
PRIME_FILES = {
    f"{folder}/{name}/{_HARNESS_FILE}": (f"{model}, greedy", f"prime-{tag}-{model_tag}")
    for name, tag in _PRIME_SETS.items()
    for folder, (model, model_tag) in _PRIME_MODELS.items()
}
SKYTHOUGHT_REPO = "NovaSky-AI/SkyThought"
_SKY_OUTPUTS = "skythought/Qwen2.5-Math/evaluation/outputs"
# the Qwen2.5-Math harness outputs SkyThought's repository committed (later removed), greedy: model ->
# id tag (Llama-3.1-8B's are left out: the base model echoed the prompt, no answer graded right)
_SKY_MODELS = {
    "Qwen/Qwen2.5-14B-Instruct": "qwen25-14b",
    "Qwen/Qwen2.5-Math-7B": "qwen25math7b-base",
    "google/gemma-2-27b-it": "gemma2-27b",
}
SKYTHOUGHT_FILES = {
    f"{_SKY_OUTPUTS}/{model}/{name}_eval/{name}/{_HARNESS_FILE}": (
        f"{model.split('/')[1]}, greedy",
        f"sky-{name}-{tag}",
    )
    for name in ("aime24", "amc23", "math500")
    for model, tag in _SKY_MODELS.items()
}
PRMBENCH_DATA = "mr_eval/tasks/prmtest_classified/data"
# PRMBench classes whose marked steps assert something false (the others restate or assume)
FALSE_CLAIM_CLASSES = (
    "confidence",
    "counterfactual",
    "deception",
    "domain_inconsistency",
    "missing_condition",
    "step_contradiction",
)
_NUMBERED = re.compile(r"^\s*(?:Step\s+)?(\d{1,3})[.:]\s+")


@dataclass(frozen=True)
class Provenance:
    """Where a chain was read: the public repository, its commit, the file and the model that wrote it."""

    repo: str
    commit: str
    file: str
    model: str


@dataclass(frozen=True)
class ModelChain:
    """One model-written chain with its gold: the first error where the source locates one."""

    id: str
    problem: str
    steps: tuple[str, ...]
    provenance: Provenance
    label: int | None = None  # ProcessBench: first wrong step, -1 all right, None unknown
    source_says_right: bool = False  # the source gives every step as right (PRM800K originals, QwQ)
    source_correct: bool | None = None  # the source's own grade of the final answer, where it has one
    error_class: str | None = None  # PRMBench's class of the inserted error
    final_answer_correct: bool | None = None  # the project's grade against the reference
    reference_answer: str | None = None
    grade_alone: bool = False  # the source grades nothing: the project's `correct` alone makes it right
    # the reference is an option's letter (Mr-Ben), or a key the source's harness grades by its own rule
    # (Faithful CoT's numbers): the source's grade is the final answer's grade,
    # the project's checker (which grades values) is not asked
    choice_key: bool = False
    # the question without the options the problem lists (MMLU-Pro): matched against ProcessBench and earlier
    # sets' problems as well as the whole problem
    question: str | None = None


def unnumbered(steps: Sequence[str]) -> tuple[str, ...]:
    """Steps without the `1. ` / `Step 1.` prefixes a source numbered them with (only when every step
    carries its own number in order: a step that opens on a number is otherwise left as written).

    >>> unnumbered(["1. Let $x = 2$.", "2. So $x + 1 = 3$."])
    ('Let $x = 2$.', 'So $x + 1 = 3$.')
    >>> unnumbered(["3 apples.", "2. pears"])
    ('3 apples.', '2. pears')
    """
    matches = [_NUMBERED.match(step) for step in steps]
    if all(m is not None and int(m.group(1)) == k + 1 for k, m in enumerate(matches)):
        return tuple(step[m.end() :].strip() for step, m in zip(steps, matches, strict=True) if m)
    return tuple(step.strip() for step in steps)


def _listed(value: object) -> list[str]:
    """A list of steps, whether the source stored it as a list or as its Python repr."""
    if isinstance(value, str):
        value = ast.literal_eval(value)
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise ValueError("steps must be a list of strings")
    return value


def prmbench_chains(rows: Iterable[dict], file: str, commit: str) -> list[ModelChain]:
    """One PRMBench class file: each row's GPT-4o copy with its located error (for the classes in
    `FALSE_CLAIM_CLASSES`) and PRM800K's GPT-4 original (all steps right); originals repeat across the
    class files, `build_chains` keeps one per problem."""
    chains: list[ModelChain] = []
    for row in rows:
        problem = row.get("question") or row["original_question"]
        original = unnumbered(_listed(row["original_process"]))
        source = Provenance(PRMBENCH_REPO, commit, file, "GPT-4 (PRM800K generator)")
        if len(original) >= 2:
            chains.append(
                ModelChain(
                    f"prmbench-{row['idx']}-original", problem, original, source, source_says_right=True
                )
            )
        kind = row.get("classification")
        errors = sorted(int(e) for e in row.get("error_steps") or [])
        modified = unnumbered(_listed(row["modified_process"]))
        if kind not in FALSE_CLAIM_CLASSES or not errors or not 1 <= errors[0] <= len(modified):
            continue
        asked = row.get("modified_question") or problem
        if question_key(asked) != question_key(row.get("original_question") or asked):
            continue  # a changed question: the reference answer is no longer its answer
        chains.append(
            ModelChain(
                f"prmbench-{row['idx']}-{kind}",
                problem,
                modified,
                replace(source, model="GPT-4o (errors put into a PRM800K GPT-4 solution)"),
                label=errors[0] - 1,
                error_class=kind,
            )
        )
    return chains


def qwq_chains(rows: Iterable[dict], file: str, commit: str) -> list[ModelChain]:
    """PRMBench's QwQ solutions (`classification` multi_solutions), each given as right, with its answer."""
    chains = []
    for row in rows:
        steps = unnumbered(_listed(row["modified_process"]))
        if len(steps) < 2:
            continue
        chains.append(
            ModelChain(
                f"prmbench-{row['idx']}-qwq",
                row.get("question") or row["original_question"],
                steps,
                Provenance(PRMBENCH_REPO, commit, file, "QwQ (PRMBench multi_solutions)"),
                source_says_right=True,
                reference_answer=str(row["ground_truth"]) if row.get("ground_truth") is not None else None,
            )
        )
    return chains


def qwen_chains(rows: Iterable[dict], file: str, commit: str) -> list[ModelChain]:
    """Qwen2.5-Math's example outputs: every sampled response of a row, its steps the response's
    paragraphs (ProcessBench's split), with the harness's own grade."""
    return harness_chains(
        rows, file, commit, QWEN_REPO, "Qwen2.5-Math-Instruct (size not stated), T=0.7", "qwen25math"
    )


def _response_chain(
    chain_id: str, problem: str, response: str, provenance: Provenance, **gold: object
) -> ModelChain | None:
    """One model response as a chain of its paragraphs (ProcessBench's split), with what the source says
    of it (`gold`: its grade, the reference); None for a response of fewer than two paragraphs."""
    steps = tuple(paragraph_steps(response))
    if len(steps) < 2:
        return None
    return ModelChain(chain_id, problem, steps, provenance, **gold)  # type: ignore[arg-type]


def _graded_responses(
    rows: Iterable[dict],
    provenance: Provenance,
    tag: str,
    *,
    id_field: str,
    responses_field: str,
    grades: Callable[[dict], list | str],
    answer_field: str,
) -> list[ModelChain]:
    """Every sampled response of every row a chain of its paragraphs, graded by the harness's own list
    (`grades(row)`: one grade a response, as a list or its repr; a response past its end has none), with
    the row's reference answer. Ids are `TAG-ID-sK`. A row's id and answer are read only where it has a
    response: a row without one needs neither."""
    chains = []
    for row in rows:
        responses = _listed(row[responses_field])
        given = grades(row)
        row_grades = ast.literal_eval(given) if isinstance(given, str) else given
        for k, response in enumerate(responses):
            chain = _response_chain(
                f"{tag}-{row[id_field]}-s{k}",
                row["question"],
                response,
                provenance,
                source_correct=bool(row_grades[k]) if k < len(row_grades) else None,
                reference_answer=str(row[answer_field]),
            )
            if chain is not None:
                chains.append(chain)
    return chains


def harness_chains(
    rows: Iterable[dict], file: str, commit: str, repo: str, model: str, tag: str
) -> list[ModelChain]:
    """Outputs of Qwen2.5-Math's evaluation harness (`idx`, `question`, `gt`, `code`: the sampled
    responses, `score`: the harness's grade of each, required): every response a chain of its paragraphs
    (ProcessBench's split). Ids are `TAG-IDX-sK`."""
    return _graded_responses(
        rows,
        Provenance(repo, commit, file, model),
        tag,
        id_field="idx",
        responses_field="code",
        grades=lambda row: row["score"],
        answer_field="gt",
    )


def eval_output_chains(
    rows: Iterable[dict], file: str, commit: str, repo: str, model: str, tag: str
) -> list[ModelChain]:
    """An eval harness's outputs (`question`, `generated_responses`, `gold_answer`, `answers_correctness`,
    as GAIR-NLP's AIME-Preview writes them): every response a chain of its paragraphs, with the harness's
    grade where the row has one. A response cut by the token budget has no answer and is graded so. Ids
    are `TAG-ID-sK`."""
    return _graded_responses(
        rows,
        Provenance(repo, commit, file, model),
        tag,
        id_field="id",
        responses_field="generated_responses",
        grades=lambda row: row.get("answers_correctness") or [],
        answer_field="gold_answer",
    )


def theoremqa_chains(
    rows: Iterable[dict], file: str, commit: str, repo: str, model: str, tag: str
) -> list[ModelChain]:
    """TheoremQA's committed outputs (`question`, `correct`: the reference as a string and a value,
    `solution`: the model's response, `pred`: the answer the harness extracted, no grade): one chain a
    row, of its paragraphs. With no grade of the source's own, the project's answer checker alone makes a
    chain right (`grade_alone`). Ids are `TAG-N`, N the row's line (the file has no id)."""
    chains = []
    for n, row in enumerate(rows):
        reference = row["correct"][0] if isinstance(row["correct"], list) else row["correct"]
        chain = _response_chain(
            f"{tag}-{n}",
            row["question"],
            str(row["solution"]),
            Provenance(repo, commit, file, model),
            reference_answer=str(reference),
            grade_alone=True,
        )
        if chain is not None:
            chains.append(chain)
    return chains


_MRBEN_STEP = re.compile(r"^\s*Step\s*(\d+)\s*[:.]\s*", re.IGNORECASE)
# `Choice_B`, `Choice B`, `Choice\_B`, `Choice__C__`, `ChoiceD`
_MRBEN_CHOICE = re.compile(r"Choice\s*\\?_*\s*\(?([A-D])(?![A-Za-z])")


def mrben_chains(
    rows: Iterable[dict], file: str, commit: str, repo: str, model: str, tag: str
) -> list[ModelChain]:
    """Mr-Ben's solutions (dvlab-research/Mr-Ben, `data/math.json`: MMLU high-school and college
    mathematics, multiple choice, each question answered by several models, `Sampled_Model`), with the
    annotators' verdict: `Model_Solution_Correctness` and the first wrong step
    (`Model_Solution_First_Error_Step`, the number of its `Step N:` prefix, `N/A` when every step is right).
    The prefixes are dropped step by step (a solution's last lines, `Solution: Choice_B`, carry none), so
    the first error is the index of the step numbered so; the annotators' reasons and corrections are not
    read. `source_correct`, and the final answer's grade (`choice_key`), is whether the last letter chosen
    is the key (None where none is chosen). Ids are `TAG-UUID-MODEL`.

    >>> row = {"Question_UUID": "q1", "Question": "2+2?", "Options": "A: 3", "Ground_Truth_Answer": "B",
    ...        "Sampled_Model": "GPT3.5", "Model_Solution_Steps": ["Step 1: 2+2=5.", "Solution: Choice_A"],
    ...        "Model_Solution_Correctness": "incorrect", "Model_Solution_First_Error_Step": "1"}
    >>> [(c.id, c.steps, c.label, c.source_correct) for c in mrben_chains([row], "f", "c", "r", "m", "t")]
    [('t-q1-gpt3-5', ('2+2=5.', 'Solution: Choice_A'), 0, False)]
    """
    chains = []
    for row in rows:
        written = row["Model_Solution_Steps"]
        numbers = [int(m.group(1)) if (m := _MRBEN_STEP.match(step)) else None for step in written]
        steps = tuple(_MRBEN_STEP.sub("", step, count=1).strip() for step in written)
        first = str(row["Model_Solution_First_Error_Step"]).strip()
        if row["Model_Solution_Correctness"] == "correct" and first in ("N/A", "None", ""):
            label = -1
        elif first.isdigit() and int(first) in numbers:
            label = numbers.index(int(first))
        else:
            continue  # a verdict that names no step of the solution: no gold to measure against
        if len(steps) < 2:
            continue
        # the last choice named: a solution may end in a note after its `Solution: Choice_B` line
        chosen = next((m[-1] for step in reversed(steps) if (m := _MRBEN_CHOICE.findall(step))), None)
        key = str(row["Ground_Truth_Answer"]).strip()
        chains.append(
            ModelChain(
                f"{tag}-{row['Question_UUID']}-{_slug(str(row['Sampled_Model']))}",
                f"{row['Question'].strip()}\n{row['Options'].strip()}",
                steps,
                Provenance(repo, commit, file, str(row["Sampled_Model"])),
                label=label,
                source_correct=chosen == key if chosen else None,
                reference_answer=key,
                choice_key=True,
            )
        )
    return chains


# LaTeX commands that open with `n`: after a backslash, a JSON decoder takes their first letter for a newline
_N_TAILS = r"(?:eq|e|ot|u|abla|i|mid|geq|leq|ewline|less|gtr|subseteq|atural|exists|olimits)\b"
_LATEX_N = re.compile(rf"\\(?=n{_N_TAILS})")
_NEWLINE_READ_FROM_LATEX = re.compile(rf"\n{_N_TAILS}")
_ZEROEVAL_RAW = re.compile(
    r'"reasoning"\s*:\s*"(?P<reasoning>.*?)"\s*,\s*"answer"\s*:\s*'
    r'(?:"(?P<quoted>(?:\\.|[^"\\])*)"|(?P<bare>[^,}\s]+))',
    re.DOTALL,
)
_JSON_ESCAPES = {"n": "\n", '"': '"', "\\": "\\", "/": "/"}


def zeroeval_reasoning(output: str) -> tuple[str, str] | None:
    """The `reasoning` and `answer` of a ZeroEval output (a JSON object in a code block, as its prompt
    asks). Models often write LaTeX unescaped inside the JSON string (`\\frac`, `\\neq`), which a JSON
    decoder rejects or, worse, reads as control characters (`\\f` a form feed, `\\n` in `\\neq` a newline).
    A string the decoder cannot read cleanly is read from the text: where the model doubled its
    backslashes, its escapes are decoded; where it did not, the LaTeX is kept as written and only `\\"`
    and the `\\n` that start no LaTeX command are decoded. None where no reasoning is found.
    """
    start, end = output.find("{"), output.rfind("}")
    if start >= 0 and end > start:
        try:
            parsed = json.loads(output[start : end + 1], strict=False)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("reasoning"), str):
            reasoning = parsed["reasoning"]
            # no LaTeX read as control characters (`\frac` as a form feed, `\neq` as a newline)
            misread = re.search(r"[\x08\x0b\x0c\r\t]", reasoning) or _NEWLINE_READ_FROM_LATEX.search(
                reasoning
            )
            if not misread:
                return reasoning, str(parsed.get("answer") or "").strip()
    found = _ZEROEVAL_RAW.search(output)
    if found is None:
        return None
    raw, answer = found.group("reasoning"), found.group("quoted") or found.group("bare") or ""
    if re.search(r"\\\\[A-Za-z]", raw):  # backslashes doubled as JSON asks: decode the escapes
        reasoning = re.sub(
            r"\\(.)", lambda m: _JSON_ESCAPES.get(m.group(1), m.group(0)), raw, flags=re.DOTALL
        )
    else:  # LaTeX written as is: keep it, decode the quotes and the newlines written as `\n`
        kept = _LATEX_N.sub("\x00", raw).replace("\\n", "\n")
        reasoning = kept.replace("\x00", "\\").replace('\\"', '"')
    return reasoning, answer.replace('\\"', '"').strip()


def zeroeval_chains(
    rows: Iterable[dict], file: str, commit: str, repo: str, model: str, tag: str
) -> list[ModelChain]:
    """ZeroEval's committed outputs (yuchenlin/ZeroEval `result_dirs/math-l5/MODEL.json`: `id`, `problem`,
    `answer` the reference, `output` a list holding the model's JSON `{"reasoning", "answer"}`, no grade):
    one greedy response a problem, its steps the reasoning's paragraphs and then `Answer: ANSWER`, the
    answer the model gave in its own field (the reasoning alone often ends without one). With no grade of
    the source's own, the project's checker alone makes a chain right (`grade_alone`). Ids are `TAG-ID`."""
    chains = []
    for row in rows:
        output = row["output"][0] if isinstance(row["output"], list) and row["output"] else ""
        parsed = zeroeval_reasoning(str(output))
        if parsed is None:
            continue
        reasoning, answer = parsed
        chain = _response_chain(
            f"{tag}-{row['id']}",
            row["problem"],
            reasoning + (f"\n\nAnswer: {answer}" if answer else ""),
            Provenance(repo, commit, file, model),
            reference_answer=str(row["answer"]),
            grade_alone=True,
        )
        if chain is not None:
            chains.append(chain)
    return chains


def mmlupro_chains(
    rows: Iterable[dict], file: str, commit: str, repo: str, model: str, tag: str
) -> list[ModelChain]:
    """MMLU-Pro's committed chain-of-thought outputs (TIGER-AI-Lab/MMLU-Pro `eval_results/MODEL/
    math_result.json`: `question_id`, `question`, `options` (up to ten), `answer` the key's letter, `pred` the
    letter the harness read from the response, null where it read none, and `response`, `model_outputs` in
    later files): one response a question, its steps the response's paragraphs. The key is a letter, so
    `pred` against it is the final answer's grade (`choice_key`: the checker grades values, not letters;
    None where no letter was read, as for a response cut by the token limit) and a right letter makes the
    chain right. The problem is the question with its options lettered as the harness's prompt lists them;
    the question alone is kept (`question`) so a question an earlier set holds is found. Ids are `TAG-ID`.

    >>> row = {"question_id": 7, "question": "2+2?", "options": ["3", "4"], "answer": "B", "pred": "B",
    ...        "response": "2+2 = 4.\\n\\nThe answer is (B)."}
    >>> [(c.id, c.problem, c.steps, c.source_correct) for c in mmlupro_chains([row], "f", "c", "r", "m", "t")]
    [('t-7', '2+2?\\nOptions:\\nA. 3\\nB. 4', ('2+2 = 4.', 'The answer is (B).'), True)]
    """
    chains = []
    for row in rows:
        response = row["response"] if "response" in row else row["model_outputs"]
        options = "\n".join(f"{chr(ord('A') + k)}. {option}" for k, option in enumerate(row["options"]))
        pred, key = row.get("pred"), str(row["answer"]).strip()
        chain = _response_chain(
            f"{tag}-{row['question_id']}",
            f"{row['question'].strip()}\nOptions:\n{options}",
            str(response or ""),
            Provenance(repo, commit, file, model),
            source_correct=str(pred).strip() == key if pred else None,
            reference_answer=key,
            choice_key=True,
            question=row["question"],
        )
        if chain is not None:
            chains.append(chain)
    return chains


def _text_lines(text: str) -> list[str]:
    """A response's non-blank lines, trailing spaces cut (the readers that split at numbered lines)."""
    return [line.rstrip() for line in text.split("\n") if line.strip()]


def _blocks(lines: list[str], starts: list[int], end: int, label: re.Pattern[str]) -> tuple[str, list[str]]:
    """The text before the first of `starts` (a preamble, maybe empty) and each block of `lines` from one
    start up to the next (the last up to `end`), its `label` (`1. `, `Q2. `) dropped."""
    bounds = [*starts, end]
    blocks = [
        label.sub("", "\n".join(lines[a:b]), count=1).strip()
        for a, b in zip(bounds, bounds[1:], strict=False)
    ]
    return "\n".join(lines[: starts[0]]).strip(), blocks


_ABEL_OPTIONS = "\nYou are provided with the following options for your answer:\n"
_ABEL_ANSWER = "Answer:\nLet's think step by step.\n"
_ABEL_STEP = re.compile(r"^\d{1,3}\. ")
# the lines Abel's prompt format closes a response with, after its last numbered step: the value, its letter
_ABEL_CLOSING = re.compile(
    r"^\s*(?:Therefore, the final result|Hence, the final result|By problem, |So our selection|####)"
)


def abel_steps(response: str) -> tuple[str, ...]:
    """The steps of an Abel response: each numbered line (`1. `, `2. `, ..., number dropped) with the lines
    that follow it up to the next (indented sub-bullets, a formula on its own line), and then, as one last
    step, the unnumbered closing lines after the last numbered step ("Therefore, the final result is ...",
    "By problem, the option corresponding to ... is B.", "So our selection is option B. #### B"). Blank lines
    are dropped; text before the first numbered line is a step of its own, except the heading
    `Reformatted Answer:` some responses open with.

    >>> steps = abel_steps("1. Let x = 2.\\n   - so x + 1 = 3.\\n2. [Final solution] Thus 3.\\n\\n"
    ...                    "Therefore, the final result is 3.\\nSo our selection is option B. #### B ")
    >>> steps[:2]
    ('Let x = 2.\\n   - so x + 1 = 3.', '[Final solution] Thus 3.')
    >>> steps[2:]
    ('Therefore, the final result is 3.\\nSo our selection is option B. #### B',)
    """
    lines = _text_lines(response)
    starts = [k for k, line in enumerate(lines) if _ABEL_STEP.match(line)]
    if not starts:
        return ("\n".join(lines),) if lines else ()
    last = starts[-1]
    closing = next((k for k in range(last + 1, len(lines)) if _ABEL_CLOSING.match(lines[k])), len(lines))
    preamble, steps = _blocks(lines, starts, closing, _ABEL_STEP)
    if preamble and preamble != "Reformatted Answer:":
        steps.insert(0, preamble)
    if closing < len(lines):
        steps.append("\n".join(line.strip() for line in lines[closing:]))
    return tuple(steps)


def abel_chains(
    rows: Iterable[dict], file: str, commit: str, repo: str, model: str, tag: str
) -> list[ModelChain]:
    """Abel's committed outputs (GAIR-NLP/abel `outputs/mathgpt/70b.jsonl`: `id`, `prompt`, the question
    and its lettered options in Abel's prompt, `response`, `pred` the letter the harness read after the
    response's `####`, empty where it read none, `gold` the key's letter, `result`): one greedy response a
    question, its steps the numbered steps and the closing lines (`abel_steps`). The key is a letter, so, as
    for MMLU-Pro, `pred` against `gold` is the final answer's grade (`choice_key`: the checker grades
    values, not letters; None where no letter was read, as for a response cut while it repeats itself) and a
    right letter makes the chain right. `pred` is compared as written, not the harness's `result` (which
    passes `A,B` for the key `A`). The problem is the question with its options; the question alone is kept
    (`question`) so a question an earlier set holds is found. A question asked twice with the same response
    is one chain (the first row's). Ids are `TAG-ID`.

    >>> prompt = ("Question:\\n2+2?\\nYou are provided with the following options for your answer:\\n"
    ...           "A. 3 \\nB. 4 \\nAnswer:\\nLet's think step by step.\\n")
    >>> response = "1. 2+2 = 4.\\nTherefore, the final result is 4.\\nSo our selection is option B. #### B "
    >>> row = {"id": 7, "prompt": prompt, "response": response, "pred": "B", "gold": "B", "result": True}
    >>> [chain] = abel_chains([row], "f", "c", "r", "m", "t")
    >>> chain.id, chain.problem, chain.question, chain.source_correct
    ('t-7', '2+2?\\nOptions:\\nA. 3\\nB. 4', '2+2?', True)
    >>> chain.steps
    ('2+2 = 4.', 'Therefore, the final result is 4.\\nSo our selection is option B. #### B')
    """
    chains = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    for row in rows:
        asked, listed = str(row["prompt"]).removeprefix("Question:\n").split(_ABEL_OPTIONS, 1)
        options = "\n".join(
            line.strip() for line in listed.removesuffix(_ABEL_ANSWER).splitlines() if line.strip()
        )
        problem = f"{asked.strip()}\nOptions:\n{options}"
        steps = abel_steps(str(row["response"] or ""))
        if len(steps) < 2 or (problem, steps) in seen:
            continue
        seen.add((problem, steps))
        pred, key = str(row.get("pred") or "").strip(), str(row["gold"]).strip()
        chains.append(
            ModelChain(
                f"{tag}-{row['id']}",
                problem,
                steps,
                Provenance(repo, commit, file, model),
                source_correct=pred == key if pred else None,
                reference_answer=key,
                choice_key=True,
                question=asked.strip(),
            )
        )
    return chains


# a least-to-most sub-question line (`Q1. What is b in terms of a?`) and the closing `Final Answer:` line
_LTM_SUBQUESTION = re.compile(r"^Q(\d{1,2})\.\s+")
_LTM_FINAL = re.compile(r"^Final Answer:")
_AQUA_OPTIONS = "\n# Answer option: "
_AQUA_OPTION = re.compile(r"^([A-E])\)\s*")


def ltm_steps(completion: str) -> tuple[str, ...]:
    """The steps of a least-to-most completion (Faithful CoT's `LtM` prompt: the model writes sub-questions
    `Q1. `, `Q2. `, ..., each followed by its answer on the lines after it, then `Final Answer: QUESTION`
    and the answer that names the option): each sub-question with the lines that answer it, up to the next
    sub-question, is one step, its `Qn. ` label dropped (a question without its answer means nothing to
    check; the answer without it is often a bare number); the `Final Answer:` block, tag kept, is the last
    step. A `Qn. ` line starts a step only where n is the next number (a later `Q1.` inside an answer stays
    in it). Blank lines are dropped; text before `Q1.` would be a step of its own (none occurs).

    >>> steps = ltm_steps("Q1. What is 2p?\\n2p = 1.82 - 1.24 = 0.58.\\n\\nQ2. What is p?\\np = 0.29.\\n"
    ...                   "Final Answer: What does a pencil cost?\\n29 cents. So the answer is (a).")
    >>> steps[:2]
    ('What is 2p?\\n2p = 1.82 - 1.24 = 0.58.', 'What is p?\\np = 0.29.')
    >>> steps[2:]
    ('Final Answer: What does a pencil cost?\\n29 cents. So the answer is (a).',)
    """
    lines = _text_lines(completion)
    starts: list[int] = []
    for k, line in enumerate(lines):
        numbered = _LTM_SUBQUESTION.match(line)
        if numbered and int(numbered.group(1)) == len(starts) + 1:
            starts.append(k)
        elif _LTM_FINAL.match(line) and (not starts or not _LTM_FINAL.match(lines[starts[-1]])):
            starts.append(k)
    if not starts:
        return ("\n".join(lines),) if lines else ()
    preamble, steps = _blocks(lines, starts, len(lines), _LTM_SUBQUESTION)
    return (preamble, *steps) if preamble else tuple(steps)


def faithful_cot_chains(
    rows: Iterable[dict],
    file: str,
    commit: str,
    repo: str,
    model: str,
    tag: str,
    questions: Iterable[dict] = (),
) -> list[ModelChain]:
    """Faithful CoT's committed least-to-most outputs on AQuA (veronica320/Faithful-COT
    `output_dir/AQUA/test/MODEL_LtM/predictions.jsonl`: `id`, `completion` the greedy response, `completions`,
    `answer` the letter the harness read after the response's last "answer is ", `[invalid]` where it found
    none), with the questions of `data/AQUA/test.jsonl` (`questions`: `id`, `question` with its options
    appended as `# Answer option: [...]`, `options` `A)...` to `E)...`, `answer` the key's letter), matched
    by `id`. One response a question, its steps the sub-question / answer pairs (`ltm_steps`). The key is a
    letter, so, as for MMLU-Pro, the harness's rule is the grade (`choice_key`): its `answer` as written
    against the key (a non-letter such as `N`, read from "none of these", is wrong, as the harness counts
    it), None where it read none. The problem is the question with its options (`Options:\\nA. ...`), the
    question alone kept (`question`). Ids are `TAG-ID`.

    >>> question = {"id": 7, "question": "2+2?\\n# Answer option: ['A)3', 'B)4']", "options": ["A)3", "B)4"],
    ...             "answer": "B"}
    >>> row = {"id": 7, "answer": "B", "completion": "Q1. What is 2+2?\\n2+2 = 4.\\n"
    ...        "Final Answer: What is the sum?\\n4. So the answer is (b)."}
    >>> [chain] = faithful_cot_chains([row], "f", "c", "r", "m", "t", questions=[question])
    >>> chain.id, chain.problem, chain.question, chain.source_correct
    ('t-7', '2+2?\\nOptions:\\nA. 3\\nB. 4', '2+2?', True)
    >>> chain.steps
    ('What is 2+2?\\n2+2 = 4.', 'Final Answer: What is the sum?\\n4. So the answer is (b).')
    """
    asked = {row["id"]: row for row in questions}
    chains = []
    for row in rows:
        source = asked[row["id"]]
        question = str(source["question"]).split(_AQUA_OPTIONS, 1)[0].strip()
        options = "\n".join(
            _AQUA_OPTION.sub(lambda m: f"{m.group(1)}. ", str(option).strip(), count=1)
            for option in source["options"]
        )
        steps = ltm_steps(str(row.get("completion") or ""))
        if len(steps) < 2:
            continue
        pred, key = str(row.get("answer") or "").strip(), str(source["answer"]).strip()
        chains.append(
            ModelChain(
                f"{tag}-{row['id']}",
                f"{question}\nOptions:\n{options}",
                steps,
                Provenance(repo, commit, file, model),
                source_correct=pred == key if pred and pred != "[invalid]" else None,
                reference_answer=key,
                choice_key=True,
                question=question,
            )
        )
    return chains


# Faithful CoT's harness (`source/dataset/utils.py`): the gold number after `#### ` (SVAMP, MultiArith), the
# first run of digits, points and commas in the answer read (SVAMP, MultiArith)
_FC_GOLD = re.compile(r"#### (\-?[0-9\.\,]+)")
_FC_NUMBER = re.compile(r"(\-?[0-9\.\,]+)")
_FC_INVALID = "[invalid]"
FAITHFUL_COT_NUMERIC = ("ASDiv", "SVAMP", "MultiArith")


def _fc_number(text: str) -> int:
    """Faithful CoT's `str2num` as its evaluation calls it (rounding `int`, absolute value): a fraction
    `a/b` (or `n a/b`) summed, then `abs(int(float(...)))`, so 7.8 reads 7 and -3 reads 3.

    >>> _fc_number("7.8"), _fc_number("-3"), _fc_number("1 1/2")
    (7, 3, 1)
    """
    value = float(sum(Fraction(s) for s in text.split())) if "/" in text else float(text)
    return abs(int(value))


def faithful_cot_key(dataset: str, answer: object) -> int | dict[int, int]:
    """The key as Faithful CoT's `extract_gold_answer` reads it: the integer after `#### ` (SVAMP,
    MultiArith; commas dropped); ASDiv's integer, or for a question with several values (a list) their
    multiset, `{value: count}`.

    >>> faithful_cot_key("SVAMP", "#### 1,250"), faithful_cot_key("ASDiv", ["5", "10"])
    (1250, {5: 1, 10: 1})
    """
    if dataset == "ASDiv":
        if isinstance(answer, list | tuple):
            return dict(Counter(int(value) for value in answer))
        return int(str(answer))
    match = _FC_GOLD.search(str(answer))
    if match is None:
        raise ValueError(f"{dataset} key {answer!r}: no `#### NUMBER`")
    return int(match.group(1).strip().replace(",", ""))


def faithful_cot_read(dataset: str, answer: str) -> int | dict[int, int] | None:
    """The harness's number from its `answer` field (`extract_pred_answer`, rounding `int`, absolute
    value), None where it has none (`[invalid]`: the field says so, or no number is read from it).
    SVAMP, MultiArith: the first run of digits, points and commas, commas dropped (`$1,250` reads 1250,
    `3 and 4` reads 3). ASDiv: the field without its outer brackets, split at commas, each part's text
    after its last `:` read whole (`$12` and `12 cm` read nothing); several numbers are a multiset.

    >>> faithful_cot_read("SVAMP", "$1,250"), faithful_cot_read("MultiArith", "-4.5 days")
    (1250, 4)
    >>> [faithful_cot_read("ASDiv", answer) for answer in ("(5, 10)", "$12", "7", "[invalid]")]
    [{5: 1, 10: 1}, None, 7, None]
    """
    if _FC_INVALID in answer:
        return None
    if dataset != "ASDiv":
        match = _FC_NUMBER.search(answer)
        try:
            return _fc_number(match.group(1).strip().replace(",", "")) if match else None
        except (ValueError, ZeroDivisionError, OverflowError):
            return None
    numbers = []
    for part in answer.lstrip("{([").rstrip("]})").split(","):
        try:
            numbers.append(_fc_number(part.strip().split(":")[-1].strip("'\"")))
        except (ValueError, ZeroDivisionError, OverflowError):
            continue
    if len(numbers) > 1:
        return dict(Counter(numbers))
    return numbers[0] if numbers else None


def _key_text(key: int | dict[int, int]) -> str:
    if isinstance(key, int):
        return str(key)
    return ", ".join(str(value) for value, count in key.items() for _ in range(count))


def faithful_cot_numeric_chains(
    rows: Iterable[dict],
    file: str,
    commit: str,
    repo: str,
    model: str,
    tag: str,
    questions: Iterable[dict] = (),
) -> list[ModelChain]:
    """Faithful CoT's committed least-to-most outputs on ASDiv, SVAMP and MultiArith (veronica320/Faithful-COT
    `output_dir/DATASET/test/MODEL_LtM/predictions.jsonl`, the data set read from the path: `id`,
    `completion`, `answer` what the harness read after the response's last "answer is", `[invalid]` where
    it found none), with the questions of `data/DATASET/test.jsonl` (`questions`: `id`, `question`,
    `answer` the key: `#### N`, or ASDiv's number or list of numbers), matched by `id`. Steps as AQuA's
    (`ltm_steps`). The harness's rule is the grade (`faithful_cot_read` against `faithful_cot_key`:
    integers, fractional parts dropped, signs dropped, equal), None where the harness reads no number
    (its `valid_only` leaves these out); no other checker is asked (`choice_key`). The problem is the
    question. Ids are `TAG-ID`.

    >>> question = {"id": 3, "question": "Tom has 2 apples and buys 3. How many?", "answer": "#### 5"}
    >>> text = "Q1. How many?\\n2 + 3 = 5.\\nFinal Answer: How many?\\nSo the answer is 5."
    >>> rows = [{"id": 3, "answer": "5", "completion": text}]
    >>> path = "output_dir/SVAMP/test/gpt4_LtM/predictions.jsonl"
    >>> [chain] = faithful_cot_numeric_chains(rows, path, "c", "r", "m", "t", questions=[question])
    >>> chain.id, chain.problem, chain.source_correct, chain.reference_answer, len(chain.steps)
    ('t-3', 'Tom has 2 apples and buys 3. How many?', True, '5', 2)
    """
    dataset = Path(file).parts[1] if len(Path(file).parts) > 1 else ""
    if dataset not in FAITHFUL_COT_NUMERIC:
        raise ValueError(f"{file}: not output_dir/{{{','.join(FAITHFUL_COT_NUMERIC)}}}/...")
    asked = {row["id"]: row for row in questions}
    chains = []
    for row in rows:
        source = asked[row["id"]]
        steps = ltm_steps(str(row.get("completion") or ""))
        if len(steps) < 2:
            continue
        key = faithful_cot_key(dataset, source["answer"])
        read = faithful_cot_read(dataset, str(row.get("answer") or _FC_INVALID))
        chains.append(
            ModelChain(
                f"{tag}-{row['id']}",
                str(source["question"]).strip(),
                steps,
                Provenance(repo, commit, file, model),
                source_correct=None if read is None else read == key,
                reference_answer=_key_text(key),
                choice_key=True,
            )
        )
    return chains


def first_problems(chains: Iterable[ModelChain], limit: int) -> list[ModelChain]:
    """At most `limit` problems a split, the first by the split's hash (`split_of`'s SHA-256 of the question
    key, as hex), and one chain a problem and model (the first read: a question two files hold, as
    MultiArith and ASDiv share some, is one problem). Order kept.

    >>> prov = [Provenance("r", "c", "f", m) for m in ("m", "n")]
    >>> chains = [ModelChain(f"{k}{p.model}", f"Problem {k}?", ("a",), p) for k in range(20) for p in prov]
    >>> kept = first_problems(chains + [ModelChain("dup", "Problem 0?", ("a",), prov[0])], 3)
    >>> len(kept), len({c.problem for c in kept}), "dup" in {c.id for c in kept}
    (12, 6, False)
    """
    seen: set[tuple[str, str]] = set()
    firsts: list[ModelChain] = []
    for chain in chains:
        pair = (question_key(chain.problem), chain.provenance.model)
        if pair not in seen:
            seen.add(pair)
            firsts.append(chain)
    splits = {question_key(c.problem): split_of(c.problem) for c in firsts}
    kept: dict[str, set[str]] = {"dev": set(), "untuned": set()}
    for key in sorted(splits, key=_problem_hash):
        if len(kept[splits[key]]) < limit:
            kept[splits[key]].add(key)
    return [c for c in firsts if question_key(c.problem) in kept[splits[question_key(c.problem)]]]


# PromptPG's harness (`run_gpt3/utilities.py`, `extract_prediction`; `run_gpt3/run_gpt3.py`,
# `normalize_answer`), ported as written
_PP_OPTION_INDS = ("A", "B", "C", "D", "E", "F")
_PP_CHOICE_PATTERNS = (
    r"^\(([A-Za-z])\)$",
    r"^([A-Za-z])$",
    r"^([A-Za-z]). ",
    r"[Th]he answer is ([A-Z])",
    r"^\(([A-Za-z])\) [\s\S]+$",
    r"[Th]he answer is \(([A-Za-z])\) [\s\S]+$",
)
_PP_FREE_PATTERNS = (
    r"[Th]he answer is ([\s\S]+)$",
    r"[Th]he table shows that ([\d\$\.\,\/\:]+) ",
    r" = ([\d\$\.\,\/\:]+)",
    r"(?<= be| is) ([\-\d\$\.\,\/\:]{0,}[\d]+)",
    r"(?<= are| was) ([\-\d\$\.\,\/\:]{0,}[\d]+)",
    r"(?<= were) ([\-\d\$\.\,\/\:]{0,}[\d]+)",
    r" ([\d\$\.\,\/\:]+ [AP]\.M\.)",
    r"([\-\d\$\.\,\/\:]{0,}[\d]+)",
)


def _pp_similarity(a: str, b: str) -> float:
    """PromptPG's `score_string_similarity`: 2 for equal strings, else the share of shared words."""
    if a == b:
        return 2.0
    if " " in a or " " in b:
        x, y = a.split(" "), b.split(" ")
        return len(set(x) & set(y)) / max(len(x), len(y))
    return 0.0


def promptpg_read(output: str, options: Sequence[str]) -> str | None:
    """The answer PromptPG's `extract_prediction` reads from an output, None where it reads nothing: a
    multiple-choice output with no option letter it takes and no word shared with an option (the harness
    then takes the first option), a letter past the options (it then picks one at random), a free-text
    output with no pattern's match (it then takes the whole output).

    >>> promptpg_read("So 4 + 5 = 9.\\\\nThe answer is 9.", [])
    '9'
    >>> promptpg_read("Greg has more. The answer is Greg.", ["Ann", "Greg"])
    'Greg'
    >>> promptpg_read("By the table, the answer is Ann.", ["Ann", "Greg"]), promptpg_read("Hm", ["yes"])
    ('Greg', None)
    """
    output = re.sub(r"\$?\\frac\{([\d\.\,\-]+)\}\{([\d\.\,]+)\}\$?", r"\1/\2", output)
    output = re.sub(r"(?<![AP]\.M)\.$", "", output)
    output = re.sub(r"(?<=\d)[\=](?=[\-\$\d])", " = ", output)
    output = re.sub("\u2212", "-", output)
    if options:
        for pattern in _PP_CHOICE_PATTERNS:
            found = re.findall(pattern, output)
            if found:
                letter = found[0].upper()
                if letter in _PP_OPTION_INDS:
                    index = _PP_OPTION_INDS.index(letter)
                    return options[index] if index < len(options) else None
        scores = [_pp_similarity(option, output) for option in options]
        return options[scores.index(max(scores))] if max(scores) > 0 else None
    for pattern in _PP_FREE_PATTERNS:
        found = re.findall(pattern, output)
        if found:
            prediction = found[-1].strip()
            if prediction.endswith(".") and ".M." not in prediction:
                prediction = prediction[:-1]
            return prediction
    return None


def promptpg_normal(text: str, unit: str | None) -> str:
    """PromptPG's `normalize_answer`: a number (`$`, one trailing `,`, `.` or `/`, commas dropped; a fraction
    divided, rounded to 3 places, a `.0` dropped) as a string, else the text without the unit.

    >>> promptpg_normal("$1,250.", None), promptpg_normal("3/4", None), promptpg_normal("7 cm", "cm")
    ('1250', '0.75', '7')
    """
    text = re.sub(r"^[\$]", "", text)
    text = re.sub(r"[\,\.\,\/]$", "", text)
    if re.match(r"^[-+]?[\d,./]+$", text) is None:
        return text.replace(unit, "").strip() if unit else text
    text = text.replace(",", "")
    if re.match(r"[-+]?\d+$", text) is not None:
        number: float | int = int(text)
    elif "/" in text:
        numerator, denominator = text.split("/")[:2]
        number = round(float(numerator) / float(denominator), 3)
    else:
        number = round(float(text), 3)
    return re.sub(r"\.[0]+$", "", str(number))


def promptpg_problem(problem: dict) -> str:
    """A TabMWP problem as PromptPG's prompt shows it (`get_table_text`, `get_question_text`): the table
    title (`[TITLE]: `) and the table as the file writes it, then the question with its unit and options.

    >>> promptpg_problem({"table": "x | y\\n1 | 2", "table_title": "T", "question": "What is y?", "unit": "",
    ...                   "choices": ["1", "2"]})
    '[TITLE]: T\\nx | y\\n1 | 2\\n\\nWhat is y?\\nOptions: (A) 1 (B) 2'
    """
    table = str(problem["table"])
    if problem.get("table_title"):
        table = f"[TITLE]: {problem['table_title']}\n{table}"
    question = str(problem["question"])
    if problem.get("unit"):
        question = f"{question} (Unit: {problem['unit']})"
    if problem.get("choices"):
        options = " ".join(f"({_PP_OPTION_INDS[k]}) {c}" for k, c in enumerate(problem["choices"]))
        question = f"{question}\nOptions: {options}"
    return f"{table}\n\n{question}"


def promptpg_chains(
    rows: Iterable[dict],
    file: str,
    commit: str,
    repo: str,
    model: str,
    tag: str,
    questions: Iterable[dict] = (),
) -> list[ModelChain]:
    """PromptPG's committed GPT-3 chain-of-thought answers on TabMWP (lupantech/PromptPG
    `results/gpt3/exp4_test_TQ-SA_2_seed_2.json`: `results` by problem id, each `output` the greedy
    one-line completion, `answer`, `prediction`, `true_false`) with the problems of
    `data/tabmwp/problems_test1k.json` (`questions`: by id, `table`, `table_title`, `question`, `unit`,
    `choices`, `answer`); outputs of problems that file lacks are skipped (the full test file is not in the
    snapshot). The model copied the prompt's solutions, whose line breaks are written as a literal `\\n`
    (the API stops at a real newline), so a step is a piece between literal `\\n`s, blank pieces dropped
    (the last holds "The answer is ..."). The grade is the harness's rule (`promptpg_read`, then
    `promptpg_normal` of the read answer and of the key, compared lower-cased), None where it reads nothing;
    no other checker is asked (`choice_key`). The problem is `promptpg_problem`, the question alone kept
    (`question`). Ids are `TAG-PID`.

    >>> problem = {"pid": "9", "table": "x | y\\n1 | 2", "table_title": "", "question": "What is x + y?",
    ...            "unit": "", "choices": None, "answer": "3"}
    >>> row = {"pid": "9", "output": "Add x and y.\\\\n\\\\n1 + 2 = 3\\\\n\\\\nThe answer is 3."}
    >>> [chain] = promptpg_chains([row], "f", "c", "r", "m", "t", questions=[problem])
    >>> chain.id, chain.steps, chain.source_correct
    ('t-9', ('Add x and y.', '1 + 2 = 3', 'The answer is 3.'), True)
    """
    asked = {str(row["pid"]): row for row in questions}
    chains = []
    for row in rows:
        source = asked.get(str(row["pid"]))
        if source is None:
            continue
        output = str(row.get("output") or "")
        steps = tuple(piece.strip() for piece in output.split("\\n") if piece.strip())
        if len(steps) < 2:
            continue
        options = list(source.get("choices") or [])
        unit = source.get("unit")
        read = promptpg_read(output, options)
        key = str(source["answer"])
        graded = (
            None
            if read is None
            else promptpg_normal(read, unit).lower() == promptpg_normal(key, unit).lower()
        )
        chains.append(
            ModelChain(
                f"{tag}-{row['pid']}",
                promptpg_problem(source),
                steps,
                Provenance(repo, commit, file, model),
                source_correct=graded,
                reference_answer=key,
                choice_key=True,
                question=str(source["question"]).strip(),
            )
        )
    return chains


# JEEBench's harness (dair-iitd/jeebench `compute_metrics.py`, `compute_score`), ported as written
_JEE_LETTERS = ("A", "B", "C", "D")


def jeebench_score(gold: str, extract: str, kind: str) -> float:
    """JEEBench's `compute_score`: the marks an extracted answer earns against the key, by question type.
    Letters are compared as sets of A-D (a multiple-correct answer that names only right options earns 0.25
    an option, one wrong option 0); an integer or numeric answer earns 1 within 0.01 of the key, 0 for
    `None` (no answer extracted).

    >>> jeebench_score("BD", "DB", "MCQ(multiple)"), jeebench_score("BD", "B", "MCQ(multiple)")
    (1.0, 0.25)
    >>> jeebench_score("C", "AC", "MCQ"), jeebench_score("0.5", "0.505", "Numeric")
    (0, 1)
    """
    if kind not in ("MCQ", "MCQ(multiple)", "Integer", "Numeric"):
        raise ValueError(f"question type {kind!r} is not one of JEEBench's")
    if kind in ("MCQ", "MCQ(multiple)"):
        keys = {c for c in _JEE_LETTERS if c in gold}
        read = {c for c in _JEE_LETTERS if c in extract}
        if kind == "MCQ":
            return int(keys == read)
        if read == keys:
            return 1.0
        return 0.25 * len(read) if not read - keys else 0.0
    if extract == "None":
        return 0.0
    return int(abs(float(gold) - float(extract)) <= 0.01)


def jeebench_grade(gold: str, extract: object, kind: str) -> bool | None:
    """Whether the answer JEEBench's authors extracted earns full marks (`jeebench_score` 1): a
    multiple-correct answer with only some of the right options (partial marks) is wrong; None where no
    answer was extracted (`None`), which the harness scores 0, so the chain has no grade, as in the sets
    whose harness read no letter.

    >>> jeebench_grade("ABD", "ABD", "MCQ(multiple)"), jeebench_grade("ABD", "AB", "MCQ(multiple)")
    (True, False)
    >>> jeebench_grade("3", "None", "Integer"), jeebench_grade("A", None, "MCQ")
    (None, None)
    """
    if not isinstance(extract, str) or extract.strip() in ("", "None"):
        return None
    return jeebench_score(str(gold), extract.strip(), kind) == 1


def _jeebench_response(row: dict) -> str:
    """The text of a JEEBench response row's one `MODEL_MODE_response` (an OpenAI API response as returned:
    a chat model's `message.content`, a completion model's `text`; one choice a row at T = 0)."""
    fields = [key for key in row if key.endswith("_response")]
    if len(fields) != 1:
        raise ValueError(f"a JEEBench row holds one model response, not {fields}")
    choice = row[fields[0]]["choices"][0]
    return str(choice["message"]["content"] if "message" in choice else choice["text"])


def jeebench_chains(
    rows: Iterable[dict], file: str, commit: str, repo: str, model: str, tag: str
) -> list[ModelChain]:
    """JEEBench's committed responses (dair-iitd/jeebench's `data.zip`, `data/responses/MODEL_MODE_responses/
    responses.json`: the 515 questions of `data/dataset.json`, each row `description` (the paper, e.g.
    `JEE Adv 2016 Paper 1`), `index`, `subject`, `type` (`MCQ`, `MCQ(multiple)`, `Integer`, `Numeric`),
    `question` (options written in it), `gold`, `prompt`, the API response and `extract`, the answer the
    authors extracted from it): the mathematics rows, one greedy response a question, its steps the
    response's paragraphs (ProcessBench's split). The grade is the harness's rule on `extract`
    (`jeebench_grade`: full marks), None where nothing was extracted; the checker is not asked
    (`choice_key`). The problem is the question as the prompt gives it (blank lines folded). Ids are
    `TAG-PAPER-INDEX`.

    >>> row = {"description": "JEE Adv 2016 Paper 1", "index": 37, "subject": "math", "type": "Integer",
    ...        "question": "Find $x$ if $x + 1 = 4$.", "gold": "3", "extract": "3",
    ...        "GPT4_CoT_response": {"choices": [{"message": {"content": "So $x = 4 - 1$.\\n\\nx = 3"}}]}}
    >>> [(c.id, c.steps, c.source_correct) for c in jeebench_chains([row], "f", "c", "r", "m", "t")]
    [('t-jee-adv-2016-paper-1-37', ('So $x = 4 - 1$.', 'x = 3'), True)]
    """
    chains = []
    for row in rows:
        if row["subject"] != "math":
            continue
        gold = str(row["gold"]).strip()
        chain = _response_chain(
            f"{tag}-{_slug(str(row['description']))}-{row['index']}",
            str(row["question"]).replace("\n\n", "\n").strip(),
            _jeebench_response(row),
            Provenance(repo, commit, file, model),
            source_correct=jeebench_grade(gold, row.get("extract"), str(row["type"])),
            reference_answer=gold,
            choice_key=True,
        )
        if chain is not None:
            chains.append(chain)
    return chains


# MathOdyssey's harness (mengf1/mathodyssey): `agents/solve.py` asks for a JSON object with `reasoning` and
# `answer`; `evaluate_response.py` has gpt-4-turbo grade the answer extracted from it (`jsonl/clean/`) and
# stores the judge's reply as `is_correct` (`jsonl/eval/result-*.jsonl`); `visualize.ipynb` counts it.
# LaTeX commands a model wrote with one backslash inside a JSON string, whose first letter JSON would
# read as an escape (`\frac` as a form feed and `rac`)
_ODYSSEY_LATEX = (
    "frac|dfrac|tfrac|theta|times|text|textbf|tan|tanh|to|tau|top|triangle|binom|beta|bar|boxed|big|bigg|"
    "bmod|right|rho|rangle|rfloor|rceil|neq|ne|nabla|nu|newline|forall|flat"
)
_ODYSSEY_ESCAPE = re.compile(
    rf"\\(?:({_ODYSSEY_LATEX})(?![A-Za-z])|(u[0-9a-fA-F]{{4}}|[\"\\/bfnrtu])|(.))", re.S
)


def _odyssey_escape(match: re.Match[str]) -> str:
    command, escape, other = match.groups()
    if escape is not None:
        return match.group(0)
    return "\\\\" + (command if command is not None else other)


def mathodyssey_json(text: str) -> dict | None:
    r"""The JSON object a MathOdyssey solution holds (`{"reasoning": ..., "answer": ...}`, as
    `agents/solve.py` asks; the text between ```` ```json ```` and ```` ``` ```` where the model wrapped it),
    read leniently: the models wrote raw line breaks inside strings and LaTeX with one backslash (`\(`,
    `\sqrt`, `\frac`), which strict JSON rejects or misreads, so such a backslash is kept as written. None
    where it still does not parse.

    >>> mathodyssey_json('{"reasoning": "Since \\frac{1}{2} < 1,\n\nso", "answer": "\\(1\\)"}')
    {'reasoning': 'Since \\frac{1}{2} < 1,\n\nso', 'answer': '\\(1\\)'}
    >>> mathodyssey_json('{"reasoning": "a\\nb", "answer": 2}'), mathodyssey_json("no object")
    ({'reasoning': 'a\nb', 'answer': 2}, None)
    """
    fenced = re.search(r"```json(.*?)```", text, re.S)
    body = (fenced.group(1) if fenced else text).strip()
    try:
        document = json.loads(_ODYSSEY_ESCAPE.sub(_odyssey_escape, body), strict=False)
    except json.JSONDecodeError:
        return None
    return document if isinstance(document, dict) else None


def mathodyssey_score(is_correct: object) -> int:
    """MathOdyssey's reading of the judge's reply (`visualize.ipynb`, `calculate_accuracy`), ported as
    written: an integer; else, where the reply holds whitespace, its first whitespace-separated integer;
    else the number after `Score:`; else 0. A chain is right where this is 1.

    >>> mathodyssey_score("1"), mathodyssey_score("1\\n1"), mathodyssey_score("x Score: 1")
    (1, 1, 1)
    >>> mathodyssey_score("The sum 1 + 2 is wrong.\\n\\n0"), mathodyssey_score("none")
    (1, 0)
    """
    text = str(is_correct)
    try:
        return int(text)
    except ValueError:
        pass
    if "\n" in text or " " in text:
        for part in re.split(r"\s+", text):
            try:
                return int(part)
            except ValueError:
                continue
        return 0  # the notebook keeps the previous row's value here; no reply in the files used is such
    match = re.search(r"Score:\s*(-?\d+)", text)
    return int(match.group(1)) if match else 0


def mathodyssey_grade(is_correct: object, prediction: object, solution: str) -> bool | None:
    """The judge's grade of one solution (`mathodyssey_score` 1: right), where it can be tied to the text:
    None where the judge's reply is not a bare score (digits 0 / 1 alone: a reply with its working in it is
    read by the notebook's first integer, often a number of the working, not the score), and where the answer
    the judge graded (`prediction`, the harness's extraction) is empty or not in the solution's text.

    >>> mathodyssey_grade("1", "42", '{"answer": "42"}'), mathodyssey_grade("1\\n1", 42, "= 42")
    (True, True)
    >>> mathodyssey_grade("0", "7", "= 42"), mathodyssey_grade("The sum 1 + 1.\\n0", "2", "2")
    (None, None)
    >>> mathodyssey_grade("0", "2", "x = 2")
    False
    """
    reply = str(is_correct).strip()
    if not re.fullmatch(r"[01](?:\s+[01])*", reply):
        return None
    if prediction is None or not str(prediction).strip() or str(prediction) not in solution:
        return None
    return mathodyssey_score(reply) == 1


def _mathodyssey_steps(reasoning: object) -> tuple[str, ...]:
    """The steps of a solution's `reasoning`: its paragraphs (ProcessBench's split) where it is text, its
    items where the model wrote a list of steps or an object of them (`step_1`, ...); none where an item is
    not text."""
    if isinstance(reasoning, str):
        return tuple(paragraph_steps(reasoning))
    items = list(reasoning.values()) if isinstance(reasoning, dict) else reasoning
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        return ()
    return tuple(item.strip() for item in items if item.strip())


def mathodyssey_chains(
    rows: Iterable[dict],
    file: str,
    commit: str,
    repo: str,
    model: str,
    tag: str,
    questions: Iterable[dict] = (),
    grades: Iterable[dict] = (),
) -> list[ModelChain]:
    """MathOdyssey's committed solutions (mengf1/mathodyssey `jsonl/*.jsonl`: one object a line,
    `{"Problem_N": TEXT}`, TEXT the JSON the model wrote), with the problems (`questions`:
    `final-odyssey-math-with-levels.jsonl`, `{"Problem_N": {"question", "answer", ...}}`) and the harness's
    result file for that run (`grades`: `jsonl/eval/result-*.jsonl`, `{"Problem_N": {"true", "prediction",
    "is_correct", ...}}`). Steps are the `reasoning` (`_mathodyssey_steps`); the answer field is not a step.
    The grade is the judge's (`mathodyssey_grade`); the checker is not asked (`choice_key`). A solution that
    does not parse, or has fewer than two steps, is left out. Ids are `TAG-problem-N`.

    >>> q = [{"Problem_3": {"question": "Find $x$ if $x + 1 = 4$.", "answer": "3"}}]
    >>> g = [{"Problem_3": {"true": "3", "prediction": "3", "is_correct": "1"}}]
    >>> s = [{"Problem_3": '{"reasoning": "So $x = 4 - 1$.\\n\\nx = 3", "answer": "3"}'}]
    >>> [(c.id, c.steps, c.source_correct) for c in mathodyssey_chains(s, "f", "c", "r", "m", "t", q, g)]
    [('t-problem-3', ('So $x = 4 - 1$.', 'x = 3'), True)]
    """
    problems = {key: value for row in questions for key, value in row.items()}
    results = {key: value for row in grades for key, value in row.items()}
    chains = []
    for row in rows:
        for key, text in row.items():
            document = mathodyssey_json(str(text))
            steps = _mathodyssey_steps(document.get("reasoning")) if document is not None else ()
            if len(steps) < 2:
                continue
            problem, result = problems[key], results[key]
            chains.append(
                ModelChain(
                    f"{tag}-{_slug(key)}",
                    str(problem["question"]).strip(),
                    steps,
                    Provenance(repo, commit, file, model),
                    source_correct=mathodyssey_grade(result["is_correct"], result["prediction"], str(text)),
                    reference_answer=str(problem["answer"]).strip(),
                    choice_key=True,
                )
            )
    return chains


# CHAMP (Mao, Kim and Zhou, ACL Findings 2024; the `champ-dataset` package, `dataset_files/v0.json`): 270
# competition problems, each model's solutions under 18 prompts (`conversations`), and the authors' first
# wrong step (FWS) annotations of 540 of them (`fws_annotations`: the solution's text, the character span of
# its first wrong step, or none where the solution is fully correct)


def _champ_problems(rows: Iterable[dict]) -> Iterable[dict]:
    """The problems of a CHAMP dataset file: `_records` reads its top-level object (`problems`, `concepts`,
    `hints`, each an object by identifier) as rows named by `pid`; a row that is itself a problem (with
    `fws_annotations`) is taken as one."""
    for row in rows:
        if "fws_annotations" in row:
            yield row
        elif row.get("pid") == "problems":
            yield from (value for value in row.values() if isinstance(value, dict))


def _champ_id(tag: str, problem: dict, key: str) -> str:
    """`TAG-PROBLEM-MODEL-PROMPT`, the id of the chain a problem's `MODEL|PROMPT` key names (annotated or not,
    so the same solution would have the same id); prompt names hold slashes (`No C w/o H`), which `_slug`
    takes for a path.

    >>> _champ_id("t", {"identifier": "P_NT_1"}, "GPT-4|No C w/o H")
    't-p-nt-1-gpt-4-no-c-w-o-h'
    """
    parts = (problem["identifier"], *key.split("|"))
    return "-".join((tag, *(_slug(part.replace("/", "-")) for part in parts)))


def champ_first_error(text: str, steps: Sequence[str], start: int) -> int:
    """The index of the step that holds character `start` of `text` (the start of the first wrong step's
    span, as CHAMP's annotation gives it), `steps` being `paragraph_steps(text)`: each step's paragraphs are
    found in the text one after another (a step that joins a display to its sentence joins them with a blank
    line of its own, not the text's), and a span that opens on white space is moved to its first character.

    >>> text = "We have $x = 1$.\\n\\nSo $x + 1 = 3$.\\n\\nThus 3."
    >>> champ_first_error(text, paragraph_steps(text), text.index("So")), champ_first_error(text, ["We"], 0)
    (1, 0)
    >>> champ_first_error(text, paragraph_steps(text), text.index("\\n\\nThus"))
    2
    """
    starts, cursor = [], 0
    for step in steps:
        for n, piece in enumerate(step.split("\n\n")):
            found = text.find(piece, cursor)
            if found < 0:
                raise ValueError("a step is not in the solution's text")
            if n == 0:
                starts.append(found)
            cursor = found + len(piece)
    while start < len(text) and text[start].isspace():
        start += 1
    return max((k for k, first in enumerate(starts) if first <= start), default=0)


def champ_chains(
    rows: Iterable[dict], file: str, commit: str, repo: str, model: str, tag: str
) -> list[ModelChain]:
    """CHAMP's annotated solutions (`v0.json`, `problems`: `identifier`, `_text` the statement, `_answer`
    the key, `fws_annotations` by `MODEL|PROMPT` key): each annotated solution (the annotation's `text`, the
    model's first reply in the conversation of the same key) a chain of its paragraphs (ProcessBench's
    split). The gold is the annotators': `label` -1 where they found no mistake (`start_idx` None: the
    solution, final answer included, is right; `source_correct` True), else the step that holds the start of
    the first wrong step's span (`champ_first_error`; the final answer is not graded by the source, so
    `source_correct` is None). The checker is not asked (`choice_key`). The problem is the statement alone
    (the `Direct C w/ H` prompt also gave the problem's concepts and hints), so both prompts' chains of a
    problem fall in one split. `model` (the manifest's) is not used: each chain's generator is its key's
    model and prompt. Ids are `TAG-PROBLEM-MODEL-PROMPT`.

    >>> text = "Let $n = 2$.\\n\\nThen $n^2 = 5$.\\n\\nSo 5."
    >>> fws = {"text": text, "start_idx": text.index("Then"), "end_idx": 20, "author": "GPT-4"}
    >>> p = {"identifier": "P_NT_1", "_text": "Find n^2 if n = 2.", "_answer": "4",
    ...      "fws_annotations": {"GPT-4|0-Shot": fws}}
    >>> chains = champ_chains([{"pid": "problems", "P_NT_1": p}], "f", "c", "r", "", "t")
    >>> [(c.id, c.steps[1], c.label, c.source_correct, c.provenance.model) for c in chains]
    [('t-p-nt-1-gpt-4-0-shot', 'Then $n^2 = 5$.', 1, None, 'GPT-4 (CHAMP prompt 0-Shot)')]
    """
    chains = []
    for problem in _champ_problems(rows):
        for key, fws in sorted(problem.get("fws_annotations", {}).items()):
            name, prompt = key.split("|")
            text = str(fws["text"])
            steps = tuple(paragraph_steps(text))
            if len(steps) < 2:
                continue
            right = fws["start_idx"] is None
            chains.append(
                ModelChain(
                    _champ_id(tag, problem, key),
                    str(problem["_text"]).strip(),
                    steps,
                    Provenance(repo, commit, file, f"{name} (CHAMP prompt {prompt})"),
                    label=-1 if right else champ_first_error(text, steps, int(fws["start_idx"])),
                    source_correct=True if right else None,
                    reference_answer=str(problem["_answer"]).strip(),
                    choice_key=True,
                )
            )
    return chains


# the two CHAMP prompts that ask for a full solution of the problem alone or with its concepts and hints (the
# package's `prompt.py`: `no_c(with_h=False)` and `direct_c(with_h=True)`), the prompts the authors annotated
CHAMP_FULL_SOLUTION_PROMPTS = ("No C w/o H", "Direct C w/ H")


def champ_conversation_chains(
    rows: Iterable[dict], file: str, commit: str, repo: str, model: str, tag: str
) -> list[ModelChain]:
    """CHAMP's unannotated full solutions (`v0.json`, `problems`: `conversations` by `MODEL|PROMPT` key, each
    `messages` with a `role`, `text` and `error`): for the prompts `CHAMP_FULL_SOLUTION_PROMPTS` only, every
    conversation without an FWS annotation of the same key (those are `champ_chains`'), the model's first
    reply a chain of its paragraphs (ProcessBench's split). A reply cut at the model's length limit (`error`
    `LENGTH_CURRENT`) is left out: it reaches no final answer of its own. CHAMP stores no grade of these, so
    the project's answer checker alone grades the final answer against `_answer` (`grade_alone`); no step is
    located (`label` None, -1 where the checker grades the answer right). The problem is the statement alone,
    as `champ_chains`' (so a problem's chains fall in the split its annotated chains are in). `model` (the
    manifest's) is not used: each chain's generator is its key's model and prompt. Ids are
    `TAG-PROBLEM-MODEL-PROMPT`, as `champ_chains`'.

    >>> def said(text, error=None):
    ...     return {"messages": [{"role": "System", "text": "s"}, {"role": "User", "text": "u"},
    ...                          {"role": "Model.GPT-4", "text": text, "error": error}]}
    >>> cut = said("e\\n\\nf", "LENGTH_CURRENT")
    >>> p = {"identifier": "P_NT_1", "_text": " Find n^2 if n = 2.", "_answer": "4",
    ...      "fws_annotations": {"GPT-4|No C w/o H": {"text": "a\\n\\nb", "start_idx": None}},
    ...      "conversations": {"GPT-4|No C w/o H": said("a\\n\\nb"), "GPT-4|Direct C w/ H": said("c\\n\\nd"),
    ...                        "GPT-4|0-Shot": said("a\\n\\nb"), "GPT-3.5|No C w/o H": cut}}
    >>> chains = champ_conversation_chains([{"pid": "problems", "P_NT_1": p}], "f", "c", "r", "", "t")
    >>> [(c.id, c.problem, c.steps, c.label, c.grade_alone, c.reference_answer) for c in chains]
    [('t-p-nt-1-gpt-4-direct-c-w-h', 'Find n^2 if n = 2.', ('c', 'd'), None, True, '4')]
    """
    chains = []
    for problem in _champ_problems(rows):
        annotated = problem.get("fws_annotations") or {}
        for key, conversation in sorted((problem.get("conversations") or {}).items()):
            name, prompt = key.split("|")
            if prompt not in CHAMP_FULL_SOLUTION_PROMPTS or key in annotated:
                continue
            reply = next(m for m in conversation["messages"] if str(m["role"]).startswith("Model."))
            if reply.get("error") is not None or reply.get("text") is None:
                continue
            chain = _response_chain(
                _champ_id(tag, problem, key),
                str(problem["_text"]).strip(),
                str(reply["text"]),
                Provenance(repo, commit, file, f"{name} (CHAMP prompt {prompt})"),
                reference_answer=str(problem["_answer"]).strip(),
                grade_alone=True,
            )
            if chain is not None:
                chains.append(chain)
    return chains


MANIFEST_FIELDS = ("repo", "commit", "path", "model", "dataset", "format")
_READERS = {
    "harness": harness_chains,
    "aime-preview": eval_output_chains,
    "theoremqa": theoremqa_chains,
    "mrben": mrben_chains,
    "zeroeval": zeroeval_chains,
    "mmlu-pro": mmlupro_chains,
    "abel": abel_chains,
    "faithful-cot-ltm": faithful_cot_chains,
    "faithful-cot-ltm-numeric": faithful_cot_numeric_chains,
    "promptpg-tqsa": promptpg_chains,
    "jeebench": jeebench_chains,
    "mathodyssey": mathodyssey_chains,
    "champ-fws": champ_chains,
    "champ-conv": champ_conversation_chains,
}


def _slug(text: str) -> str:
    """`qwen2-5-math-1-5b` for `Qwen/Qwen2.5-Math-1.5B`: the last path part, lower case, runs of other
    characters as one `-`.

    >>> _slug("Qwen/Qwen2.5-Math-1.5B"), _slug("hkust-nlp/simpleRL-reason")
    ('qwen2-5-math-1-5b', 'simplerl-reason')
    """
    return re.sub(r"[^a-z0-9]+", "-", text.rsplit("/", 1)[-1].lower()).strip("-")


def manifest_chains(manifest: Path) -> list[ModelChain]:
    """Every chain of the harness output files a manifest lists: a tab-separated table with a header
    naming at least `MANIFEST_FIELDS` (one file a row: its repository, commit, path in the repository,
    the model that wrote it, the problem set and the file's format, one of `_READERS`), each
    file read from `<the manifest's folder>/<owner>+<name>/tree/<path>`, as `git show COMMIT:PATH`
    wrote it. Ids are `REPO-DATASET-MODEL-IDX-sK` (slugs), so files of one repository stay apart. An
    optional `questions` column names a second file of the same repository and commit that holds the
    questions (Faithful CoT keeps them apart from the outputs), passed to the reader as `questions`; an
    optional `grades` column, a file of the harness's grades kept apart from the outputs (MathOdyssey's
    `jsonl/eval/`), passed as `grades`."""
    lines = [line.split("\t") for line in manifest.read_text(encoding="utf-8").splitlines() if line.strip()]
    header, rows = lines[0], lines[1:]
    missing = [f for f in MANIFEST_FIELDS if f not in header]
    if missing:
        raise ValueError(f"{manifest}: line 1: the header lacks {', '.join(missing)}")
    chains: list[ModelChain] = []
    for number, values in enumerate(rows, start=2):
        entry = dict(zip(header, values, strict=False))
        reader = _READERS.get(entry.get("format", ""))
        if reader is None:
            raise ValueError(
                f"{manifest}: line {number}: format {entry.get('format')!r} is not one of {sorted(_READERS)}"
            )
        repo, path = entry["repo"], entry["path"]
        file = manifest.parent / repo.replace("/", "+") / "tree" / path
        tag = "-".join(_slug(part) for part in (repo, entry["dataset"], entry["model"]))
        extra = {}
        if entry.get("questions", "").strip():
            tree = manifest.parent / repo.replace("/", "+") / "tree"
            extra["questions"] = _records(tree / entry["questions"].strip())
        if entry.get("grades", "").strip():
            tree = manifest.parent / repo.replace("/", "+") / "tree"
            extra["grades"] = _records(tree / entry["grades"].strip())
        chains += reader(_records(file), path, entry["commit"], repo, entry["model"], tag, **extra)
    return chains


def mrmath_chains(rows: Iterable[dict], file: str, commit: str) -> list[ModelChain]:
    """ReasonEval's MR-MATH rows: MATH test answers with a hand-marked first error (`invalid_errors`:
    `model_output_solution_first_error_step`, 1-based, `N/A` when every step is valid) or PRM800K's
    per-step ratings (`redundant_errors`: a -1 marks a wrong step; 0, a redundant one, is not wrong)."""
    chains = []
    for row in rows:
        steps = unnumbered(["\n".join(parts) for parts in row["model_output_step_format"]])
        if "rating" in row:
            ratings = row["rating"] if isinstance(row["rating"], list) else ast.literal_eval(row["rating"])
            label = next((k for k, r in enumerate(ratings) if r == -1), -1)
        else:
            first = row["model_output_solution_first_error_step"]
            label = -1 if first in ("N/A", None) else int(first) - 1
        if len(steps) < 2 or label >= len(steps):
            continue
        stem = Path(file).stem.removeprefix("mr-math_")
        chains.append(
            ModelChain(
                f"mrmath-{stem}-{row['id']}",
                row["question"],
                steps,
                Provenance(REASONEVAL_REPO, commit, file, str(row["generator"])),
                label=label,
                source_correct=row.get("model_output_answer_correctness", "correct") == "correct",
                reference_answer=str(row["ground_truth_answer"]),
            )
        )
    return chains


def bbm_chains(rows: Iterable[dict], file: str, commit: str) -> list[ModelChain]:
    """BIG-Bench Mistake's multistep arithmetic traces (PaLM 2-L): BIG-Bench's nested arithmetic problems
    worked step by step, with the first logical mistake located by annotators (`mistake_index`, 0-based;
    null: none found). A trace with no mistake found is right only where its answer is the target too
    (a wrong answer with no mistake located has an unknown first error: no label).

    >>> row = {"input": "(1 + 2) =", "steps": ["A = 1 + 2 = 3.", "So the answer is 3"],
    ...        "target": "3", "answer": "3", "mistake_index": None}
    >>> [(c.label, c.source_correct, c.reference_answer) for c in bbm_chains([row], "f", "c")]
    [(-1, True, '3')]
    """
    chains = []
    for number, row in enumerate(rows):
        steps = tuple(step.strip() for step in row["steps"])
        right = str(row["answer"]).strip() == str(row["target"]).strip()
        mistake = row["mistake_index"]
        label = int(mistake) if mistake is not None else (-1 if right else None)
        if len(steps) < 2 or (label is not None and label >= len(steps)):
            continue
        chains.append(
            ModelChain(
                f"bbm-arithmetic-{number}",
                f"Compute {row['input'].strip()}",
                steps,
                Provenance(BBM_REPO, commit, file, BBM_MODEL),
                label=label,
                source_correct=right,
                reference_answer=str(row["target"]).strip(),
            )
        )
    return chains


def math_references(rows: Iterable[dict]) -> dict[str, str]:
    """MATH reference answers (each worked solution's last `\\boxed{}`) by question key."""
    table = {}
    for row in rows:
        answer = boxed_content(row["solution"])
        if answer:
            table[question_key(row["problem"])] = answer
    return table


def earlier_questions(rows: Iterable[dict]) -> set[str]:
    """The question keys of earlier sets' problems, each problem's and each run of its first lines (a
    problem that lists its options after the question, as Mr-Ben's do, is found by its question alone).

    >>> earlier_questions([{"problem": "2+2?\\nA: 4"}]) == {question_key("2+2?"), question_key("2+2?\\nA: 4")}
    True
    """
    keys = set()
    for row in rows:
        lines = row["problem"].splitlines()
        keys.update(question_key("\n".join(lines[:k])) for k in range(1, len(lines) + 1))
    return keys


def split_of(problem: str) -> str:
    """`dev` or `untuned`, by a hash of the problem's question key (stable across runs and machines).

    >>> split_of("Find $x$.") == split_of("  find  $x$.\\n")
    True
    """
    digest = hashlib.sha256(question_key(problem).encode("utf-8")).digest()
    return "dev" if digest[0] % 2 == 0 else "untuned"


def _problem_hash(key: str) -> str:
    """The split's hash of a question key, as hex (`first_problems` ranks problems by it)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _sampled(chain: ModelChain, per_problem: int) -> bool:
    """Whether an erroneous copy is kept: `per_problem` classes a problem, chosen by a stable hash."""
    if chain.error_class is None or per_problem >= len(FALSE_CLAIM_CLASSES):
        return True
    key = question_key(chain.problem)
    ranked = sorted(FALSE_CLAIM_CLASSES, key=lambda c: hashlib.sha256(f"{key}|{c}".encode()).hexdigest())
    return chain.error_class in ranked[:per_problem]


def build_chains(
    chains: Iterable[ModelChain],
    references: dict[str, str],
    excluded: set[str],
    grade: Callable[[ModelChain, str], bool | None],
    per_problem: int = 2,
) -> list[ModelChain]:
    """The chains to keep, graded: one original per PRMBench problem, `per_problem` erroneous copies a
    problem, none of a problem in `excluded` (question keys) or without a reference answer; each chain's
    final answer graded by `grade(chain, reference)` (True, False, or None where no answer was read)."""
    kept: dict[str, ModelChain] = {}
    for chain in chains:
        key = question_key(chain.problem)
        asked = question_key(chain.question) if chain.question is not None else key
        if key in excluded or asked in excluded or chain.id in kept or not _sampled(chain, per_problem):
            continue
        reference = chain.reference_answer or references.get(key)
        if reference is None:
            continue
        graded = chain.source_correct if chain.choice_key else grade(chain, reference)
        label = chain.label
        # right where the source says so and no answer read contradicts it (a PRM800K original that ends in
        # prose has no answer to read); right where the harness and our checker both grade it correct
        if label is None and chain.source_says_right and graded is not False:
            label = -1
        if label is None and chain.source_correct and graded:
            label = -1
        if label is None and chain.grade_alone and graded:
            label = -1
        kept[chain.id] = replace(chain, reference_answer=reference, final_answer_correct=graded, label=label)
    return list(kept.values())


def chain_row(chain: ModelChain) -> dict:
    """The ProcessBench-shape row `prm-factory eval` reads, with the chain's provenance."""
    row: dict = {
        "id": chain.id,
        "generator": chain.provenance.model,
        "problem": chain.problem,
        "steps": list(chain.steps),
        "reference_answer": chain.reference_answer,
        "final_answer_correct": chain.final_answer_correct,
    }
    if chain.label is not None:
        row["label"] = chain.label
    row["source"] = {
        "repo": chain.provenance.repo,
        "commit": chain.provenance.commit,
        "file": chain.provenance.file,
    }
    if chain.error_class is not None:
        row["error_class"] = chain.error_class
    if chain.source_correct is not None:
        row["source_correct"] = chain.source_correct
    return row


def split_rows(chains: Iterable[ModelChain]) -> dict[str, list[dict]]:
    """Rows by split, in a stable order (by chain id)."""
    out: dict[str, list[dict]] = {"dev": [], "untuned": []}
    for chain in sorted(chains, key=lambda c: c.id):
        out[split_of(chain.problem)].append(chain_row(chain))
    return out


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _records(path: Path) -> list[dict]:
    """A harness file's rows: JSON lines, or one JSON document (`.json`) holding a list of rows or, as
    Mr-Ben's files do, an object of lists of rows (one list a question); PromptPG's object of rows by
    problem id (its result files keep them under `results`), each row given its id as `pid`."""
    if path.suffix != ".json":
        return _jsonl(path)
    document = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(document, dict) and isinstance(document.get("results"), dict):
        # PromptPG's result files: run metadata and `results`, an object of rows by problem id
        return [{"pid": pid, **row} for pid, row in document["results"].items()]
    if isinstance(document, dict) and document and all(isinstance(row, dict) for row in document.values()):
        # PromptPG's problem files: an object of problems by problem id
        return [{"pid": pid, **row} for pid, row in document.items()]
    if isinstance(document, dict):
        return [row for rows in document.values() for row in rows]
    return list(document)


def read_sources(args: argparse.Namespace) -> list[ModelChain]:
    """Every chain the given source files hold (before dedup, sampling and grading)."""
    chains: list[ModelChain] = []
    if args.prmbench:
        data = args.prmbench / PRMBENCH_DATA
        for path in sorted(data.glob("prm800k_*_4o_*.jsonl")):
            chains += prmbench_chains(_jsonl(path), f"{PRMBENCH_DATA}/{path.name}", args.prmbench_commit)
        multi = data / "prm_test_p12_multi_solutions.jsonl"
        if multi.exists():
            chains += qwq_chains(_jsonl(multi), f"{PRMBENCH_DATA}/{multi.name}", args.prmbench_commit)
    if args.qwen:
        chains += qwen_chains(_jsonl(args.qwen), QWEN_FILE, args.qwen_commit)
    if args.deepscaler:
        chains += eval_output_chains(
            _jsonl(args.deepscaler),
            DEEPSCALER_FILE,
            args.deepscaler_commit,
            DEEPSCALER_REPO,
            DEEPSCALER_MODEL,
            "deepscaler-aime24",
        )
    if args.prime:
        for file, (model, tag) in PRIME_FILES.items():
            chains += harness_chains(
                _jsonl(args.prime / file), file, args.prime_commit, PRIME_REPO, model, tag
            )
    if args.skythought:
        for file, (model, tag) in SKYTHOUGHT_FILES.items():
            chains += harness_chains(
                _jsonl(args.skythought / file), file, args.skythought_commit, SKYTHOUGHT_REPO, model, tag
            )
    if args.manifest:
        chains += manifest_chains(args.manifest)
    for path in args.mrmath or []:
        chains += mrmath_chains(_jsonl(path), f"dataset/{path.name}", args.mrmath_commit)
    if args.bbm:
        chains += bbm_chains(_jsonl(args.bbm), BBM_FILE, args.bbm_commit)
    return chains


def step_flags(rows: Iterable[dict], check: Callable[[dict], list]) -> list[dict]:
    """Every `incorrect` step verdict `check(row)` gives where the gold calls the step right: any step of a
    chain whose `label` is -1, a step before the located first error otherwise (rows without a label are
    skipped). These are the flags to adjudicate, each with the chain, step, kind, reason and evidence."""
    flags = []
    for row in rows:
        label = row.get("label")
        if label is None:
            continue
        right = len(row["steps"]) if label == -1 else label
        for index, verdict in enumerate(check(row)[:right]):
            if verdict.label == "incorrect":
                flags.append(
                    {
                        "id": row["id"],
                        "label": label,
                        "step": index,
                        "kind": verdict.kind,
                        "reason": verdict.reason,
                        "evidence": verdict.evidence,
                        "text": row["steps"][index],
                    }
                )
    return flags


def adjudicated(flags: Iterable[dict], verdicts: dict[tuple[str, int], str]) -> dict[str, dict[str, int]]:
    """Per reading kind: flags on right chains read as `misreading` or `real slip` (and `unread`).

    >>> adjudicated([{"id": "a", "step": 1, "kind": "k"}], {("a", 1): "real slip"})
    {'k': {'real slip': 1}}
    """
    table: dict[str, dict[str, int]] = {}
    for flag in flags:
        read = verdicts.get((flag["id"], flag["step"]), "unread")
        counts = table.setdefault(flag["kind"] or "unnamed", {})
        counts[read] = counts.get(read, 0) + 1
    return table


def adjudicated_figures(
    kinds: dict[str, dict], flags: Sequence[dict], reads: dict[tuple[str, int], str], right_chains: int
) -> dict[str, dict]:
    """Precision of `incorrect` per reading kind as eval measured it (`kinds`: eval's JSON
    `verifier_kinds`, right and wrong flags) and adjudicated (a wrong flag read as a `real slip` counts as
    right), with the right chains flagged both ways (`right_chains`: chains whose gold is -1).

    >>> kinds = {"closed_arithmetic": {"right": 3, "wrong": 2}}
    >>> flags = [{"id": "a", "step": 1, "kind": "closed_arithmetic", "label": -1},
    ...          {"id": "b", "step": 0, "kind": "closed_arithmetic", "label": -1}]
    >>> got = adjudicated_figures(kinds, flags, {("a", 1): "real slip", ("b", 0): "misreading"}, 10)
    >>> got["closed_arithmetic"], got["right chains flagged"]
    ({'raw': (3, 5), 'adjudicated': (4, 5)}, {'raw': (2, 10), 'adjudicated': (1, 10)})
    """
    out: dict[str, dict] = {}
    for kind, counts in kinds.items():
        flagged = counts["right"] + counts["wrong"]
        slips = sum(
            reads.get((f["id"], f["step"])) == "real slip" for f in flags if (f["kind"] or "unnamed") == kind
        )
        out[kind] = {"raw": (counts["right"], flagged), "adjudicated": (counts["right"] + slips, flagged)}
    on_right = [f for f in flags if f.get("label", -1) == -1]
    raw = {f["id"] for f in on_right}
    misread = {f["id"] for f in on_right if reads.get((f["id"], f["step"])) != "real slip"}
    out["right chains flagged"] = {
        "raw": (len(raw), right_chains),
        "adjudicated": (len(misread), right_chains),
    }
    return out


def _build(args: argparse.Namespace) -> int:
    from prm_factory.schemas.records import Problem
    from prm_factory.verifiers.math import MathVerifier, MathVerifierConfig

    # no last-number fallback: a chain that ends in prose with no answer marked is ungraded, not wrong; a
    # long limit, so a SymPy comparison timed out on a loaded machine does not change a set's rows
    verifier = MathVerifier(MathVerifierConfig(timeout_s=30.0, last_number_fallback=False))

    def grade(chain: ModelChain, reference: str) -> bool | None:
        problem = Problem(chain.id, "external", "math", chain.problem, reference)
        label = verifier.grade(problem, "\n\n".join(chain.steps)).label
        return {"correct": True, "incorrect": False}.get(label)

    excluded: set[str] = set()
    if args.processbench:
        excluded = {question_key(r["problem"]) for r in json.loads(args.processbench.read_text("utf-8"))}
    for path in args.exclude_sets or []:
        excluded |= earlier_questions(_jsonl(path))
    try:
        chains = build_chains(
            read_sources(args),
            math_references(_jsonl(args.math)) if args.math else {},
            excluded,
            grade,
            args.per_problem,
        )
    finally:
        verifier.close()
    if args.max_problems:
        chains = first_problems(chains, args.max_problems)
    args.out.mkdir(parents=True, exist_ok=True)
    for split, rows in split_rows(chains).items():
        path = args.out / f"{args.name}_{split}{args.suffix}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        located = sum(r.get("label", -1) >= 0 for r in rows)
        right = sum(r.get("label") == -1 for r in rows)
        known = sum(r["final_answer_correct"] is not None for r in rows)
        print(f"{path}: {len(rows)} chains, {known} graded answers, {right} right, {located} located")
    return 0


def _flags(args: argparse.Namespace) -> int:
    from prm_factory.schemas.records import Problem
    from prm_factory.verifiers.math import MathVerifier

    verifier = MathVerifier()

    def check(row: dict) -> list:
        problem = Problem(row["id"], "external", "math", row["problem"], row.get("reference_answer"))
        return verifier.check_steps(problem, row["steps"])

    try:
        flags = step_flags(_jsonl(args.set), check)
    finally:
        verifier.close()
    args.out.write_text("".join(json.dumps(f, ensure_ascii=False) + "\n" for f in flags), encoding="utf-8")
    print(f"{args.out}: {len(flags)} flags where the gold says right (verifier {verifier.version})")
    return 0


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "n/a"


def _summary(args: argparse.Namespace) -> int:
    rows = {row["id"]: row for row in _jsonl(args.set)}
    flags = [{**f, "label": rows[f["id"]].get("label")} for f in _jsonl(args.flags)]
    reads = {(r["id"], r["step"]): r["read"] for r in _jsonl(args.adjudication)}
    unread = [f for f in flags if (f["id"], f["step"]) not in reads]
    [split] = json.loads(args.figures.read_text(encoding="utf-8"))["splits"]
    right_chains = sum(row.get("label") == -1 for row in rows.values())
    figures = adjudicated_figures(split["verifier_kinds"], flags, reads, right_chains)
    for name, got in figures.items():
        (r, n), (a, _) = got["raw"], got["adjudicated"]
        low, high = wilson(a, n)
        print(
            f"{name:28} raw {r} / {n} ({_percent(r, n)})   adjudicated {a} / {n} ({_percent(a, n)}; "
            f"Wilson 95 % {100 * low:.1f}-{100 * high:.1f})"
        )
    print(f"{len(flags)} flags where the gold says right, {len(unread)} not read")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    build = commands.add_parser("build", help="the two split files from the raw source files")
    build.add_argument("--prmbench", type=Path, help="a checkout (or copy) of ssmisya/PRMBench")
    build.add_argument("--prmbench-commit", default="", help="the commit of that checkout")
    build.add_argument("--qwen", type=Path, help=f"{QWEN_REPO}'s {QWEN_FILE}")
    build.add_argument("--qwen-commit", default="")
    build.add_argument(
        "--deepscaler", type=Path, help=f"{DEEPSCALER_REPO}'s AIME 2024 outputs, {DEEPSCALER_FILE}"
    )
    build.add_argument("--deepscaler-commit", default="")
    build.add_argument(
        "--prime",
        type=Path,
        help=f"a tree of {PRIME_REPO} at --prime-commit (its Gaokao 2023 and Minerva outputs)",
    )
    build.add_argument("--prime-commit", default="")
    build.add_argument(
        "--skythought",
        type=Path,
        help=f"a tree of {SKYTHOUGHT_REPO} at --skythought-commit (AIME/AMC/MATH500)",
    )
    build.add_argument("--skythought-commit", default="")
    build.add_argument(
        "--manifest",
        type=Path,
        help="a TSV of harness output files (repo, commit, path, model, dataset, format), each under "
        "OWNER+NAME/tree/PATH beside it",
    )
    build.add_argument("--mrmath", type=Path, nargs="*", help="ReasonEval's dataset/mr-math_*.json files")
    build.add_argument("--mrmath-commit", default="")
    build.add_argument("--bbm", type=Path, help=f"{BBM_REPO}'s {BBM_FILE}")
    build.add_argument("--bbm-commit", default="")
    build.add_argument("--name", default="model_written", help="the split files are NAME_dev / NAME_untuned")
    build.add_argument(
        "--suffix", default="", help="after the split's name: NAME_devSUFFIX.jsonl (a second set)"
    )
    build.add_argument(
        "--math", type=Path, help="MATH as JSON lines {problem, solution} (the references of MATH chains)"
    )
    build.add_argument("--processbench", type=Path, help="ProcessBench's math.json: its problems are dropped")
    build.add_argument(
        "--exclude-sets",
        type=Path,
        nargs="*",
        help="earlier model-written split files: their problems are dropped (by the question alone too)",
    )
    build.add_argument("--per-problem", type=int, default=2, help="PRMBench erroneous copies a problem")
    build.add_argument(
        "--max-problems",
        type=int,
        help="keep at most this many problems a split, the first by the split's hash, one chain a problem "
        "and model (`first_problems`)",
    )
    build.add_argument("--out", type=Path, required=True, help="folder for the two split files")
    flags = commands.add_parser(
        "flags", help="the verifier's `incorrect` flags on steps the gold calls right"
    )
    flags.add_argument("set", type=Path, help="a split file this module wrote")
    flags.add_argument("--out", type=Path, required=True, help="JSON lines, one flag a line")
    summary = commands.add_parser("summary", help="precision per reading kind, raw and adjudicated")
    summary.add_argument("--set", type=Path, required=True, help="the split file measured")
    summary.add_argument("--figures", type=Path, required=True, help="`prm-factory eval SET --json` output")
    summary.add_argument("--flags", type=Path, required=True, help="`flags SET` output")
    summary.add_argument("--adjudication", type=Path, required=True, help="JSON lines {id, step, read, ...}")
    args = parser.parse_args(argv)
    return {"build": _build, "flags": _flags, "summary": _summary}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
