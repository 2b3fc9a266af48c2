"""The judge label source: its prompt, how a judgement is read, the step labels, the budget rule, and the
`Judge` over a stand-in sampler (canned generations, no model: `StandInJudgeSampler`)."""

from __future__ import annotations

import doctest
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import pytest

from prm_factory.labels import judge as judge_module
from prm_factory.labels.judge import (
    DEFAULT_JUDGE_PARAMS,
    JUDGE_TEMPLATE,
    Judge,
    judge_labeler,
    judge_step_labels,
    needs_judge,
    parse_judgement,
    prompt_hash,
    read_judgement,
    render_judge_prompt,
)
from prm_factory.sampling.protocol import Generation, GenerationParams

# ---------------------------------------------------------------------------------------------------------
# Prompt


def test_prompt_tags_steps_from_zero_in_processbench_layout():
    prompt = render_judge_prompt("  What is 2 + 3?\n", ["2 + 3 = 6.  ", "\nThe answer is 6."])
    assert prompt.startswith(
        "The following is a math problem and a solution (split into paragraphs, enclosed with tags and "
        "indexed from 0):\n\n[Math Problem]\n\nWhat is 2 + 3?\n\n[Solution]\n\n"
        "<paragraph_0>\n2 + 3 = 6.\n</paragraph_0>\n\n<paragraph_1>\nThe answer is 6.\n</paragraph_1>\n\n"
        "Your task is to review and critique the solution paragraph by paragraph."
    )
    assert "return the index of -1" in prompt
    assert prompt.endswith("Please put your final answer (i.e., the index) in \\boxed{}.")


def test_prompt_keeps_problem_text_as_written():
    # no HTML escaping, and jinja syntax inside a problem or step is text, not template
    problem = "Is 3 < 5 & 2 > 1? Use {{ x }} and {% raw %} and {# c #}."
    prompt = render_judge_prompt(problem, ["<b>yes</b> {{ y }}"])
    assert problem in prompt
    assert "<paragraph_0>\n<b>yes</b> {{ y }}\n</paragraph_0>" in prompt


def test_prompt_hash_is_the_template_digest_and_follows_the_system_prompt():
    assert prompt_hash() == hashlib.sha256(JUDGE_TEMPLATE.encode()).hexdigest()[:12]
    assert prompt_hash("Be strict.") != prompt_hash()
    assert prompt_hash("Be strict.") != prompt_hash("Be lenient.")
    assert judge_labeler("qwen-judge") == f"qwen-judge@{prompt_hash()}"


# ---------------------------------------------------------------------------------------------------------
# Reading a judgement


@pytest.mark.parametrize(
    ("text", "n_steps", "expected"),
    [
        ("Paragraph 1 is wrong.\n\n\\boxed{1}", 3, 1),
        ("\\boxed{0}", 3, 0),
        ("The last paragraph: $\\boxed{2}$.", 3, 2),
        ("All paragraphs are correct. \\boxed{-1}", 3, -1),
        ("\\boxed{ -1 }", 0, -1),  # a chain without steps can only be error-free
        ("Maybe \\boxed{0}. Wait, paragraph 0 is fine. So the answer is \\boxed{2}.", 3, 2),  # last box
        ("\\boxed{\\text{1}}", 3, 1),
        ("\\boxed{\\boxed{1}}", 3, 1),
        ("\\boxed{1} Please put your final answer in \\boxed{}.", 3, 1),  # an empty box is no answer
        ("\\boxed{\u22121}", 3, -1),  # a typeset minus
        ("\\boxed{3}", 3, None),  # out of range: indices run 0..2
        ("\\boxed{-2}", 3, None),
        ("\\boxed{1} and \\boxed{2}", 3, None),  # two answers at once
        ("\\boxed{paragraph 1}", 3, None),
        ("\\boxed{1.5}", 3, None),
        ("The error is in paragraph 1.", 3, None),  # no box
        ("", 3, None),
        ("\\boxed{1", 3, None),  # unclosed
    ],
)
def test_parse_judgement(text, n_steps, expected):
    assert parse_judgement(text, n_steps) == expected


def test_read_judgement_says_why_it_failed():
    assert read_judgement("no box here", 2) == (None, "no \\boxed{} in the judgement")
    assert read_judgement("\\boxed{5}", 2)[1] == "boxed index 5 is out of range for 2 step(s)"
    assert read_judgement("\\boxed{x}", 2)[1] == "boxed 'x' is not a paragraph index"
    assert read_judgement("\\boxed{1}", 2) == (1, "earliest error at step 1")
    with pytest.raises(ValueError):
        read_judgement("\\boxed{1}", -1)


# ---------------------------------------------------------------------------------------------------------
# Step labels


@pytest.mark.parametrize(
    ("first_error", "n_steps", "expected"),
    [
        (0, 3, ["incorrect", "unverifiable", "unverifiable"]),
        (1, 4, ["correct", "incorrect", "unverifiable", "unverifiable"]),
        (2, 3, ["correct", "correct", "incorrect"]),
        (-1, 3, ["correct", "correct", "correct"]),
        (None, 3, ["unverifiable", "unverifiable", "unverifiable"]),
        (-1, 0, []),
        (None, 0, []),
    ],
)
def test_step_labels_follow_the_named_first_error(first_error, n_steps, expected):
    assert [v.label for v in judge_step_labels(first_error, n_steps, "judge-m")] == expected


def test_step_label_reasons_name_the_judge_and_the_rule():
    before, at, after = judge_step_labels(1, 3, "judge-m")
    assert before.reason == "before the earliest error judge-m named (step 1)"
    assert at.reason == "judge-m named this step the earliest error"
    assert after.reason == "after the earliest error judge-m named (step 1): not judged"
    assert [v.evidence["rule"] for v in (before, at, after)] == [
        "judge-before-error",
        "judge-error",
        "judge-after-error",
    ]
    unread = judge_step_labels(None, 2, "judge-m", why="no \\boxed{} in the judgement")
    assert {v.reason for v in unread} == {"no judgement from judge-m: no \\boxed{} in the judgement"}


@pytest.mark.parametrize(("first_error", "n_steps"), [(3, 3), (-2, 3), (0, 0), (0, -1)])
def test_step_labels_refuse_an_index_out_of_range(first_error, n_steps):
    with pytest.raises(ValueError):
        judge_step_labels(first_error, n_steps, "judge-m")


# ---------------------------------------------------------------------------------------------------------
# The Judge over a stand-in sampler


@dataclass
class StandInJudgeSampler:
    """Not a model: renders chat as `<system>..</system><user>..</user>` and answers the i-th prompt of
    each `generate` call with `canned[i]`, recording every call's prompts and params."""

    canned: Sequence[str]
    model_id: str = "stand-in-judge"
    seed: int = 0
    calls: list[tuple[list[str], GenerationParams]] = field(default_factory=list)

    def render_chat(self, system: str | None, user: str) -> str:
        return (f"<system>{system}</system>" if system else "") + f"<user>{user}</user>"

    def generate(self, prompts: Sequence[str], params: GenerationParams) -> list[list[Generation]]:
        self.calls.append((list(prompts), params))
        return [
            [Generation(self.canned[i], n_tokens=len(self.canned[i].split()), finish_reason="stop")]
            for i in range(len(prompts))
        ]


CHAINS = [
    ("What is 2 + 3?", ["2 + 3 = 6.", "The answer is 6."]),
    ("What is 4 * 5?", []),  # nothing to judge: not sent
    ("What is 9 - 4?", ["9 - 4 = 5.", "So 5.", "The answer is 5."]),
    ("What is 1 + 1?", ["1 + 1 = 2."]),
]
CANNED = [
    "Paragraph 0 adds wrongly: 2 + 3 is 5. \\boxed{0}",
    "Every paragraph is right. \\boxed{-1}",
    "I cannot tell.",
]


def test_judge_many_sends_every_chain_in_one_call_and_reads_each_judgement():
    sampler = StandInJudgeSampler(CANNED)
    judge = Judge(sampler, "judge-m", system="Be strict.")
    results = judge.judge_many(CHAINS)

    assert len(sampler.calls) == 1
    prompts, params = sampler.calls[0]
    assert params == DEFAULT_JUDGE_PARAMS and params.temperature == 0.0 and params.n == 1
    assert prompts == [
        f"<system>Be strict.</system><user>{render_judge_prompt(problem, steps)}</user>"
        for problem, steps in (CHAINS[0], CHAINS[2], CHAINS[3])
    ]

    assert [r.first_error for r in results] == [0, None, -1, None]
    assert [r.raw_output for r in results] == [CANNED[0], "", CANNED[1], CANNED[2]]
    assert [[v.label for v in r.verdicts] for r in results] == [
        ["incorrect", "unverifiable"],
        [],
        ["correct", "correct", "correct"],
        ["unverifiable"],
    ]
    assert results[3].reason == "no \\boxed{} in the judgement"
    assert results[3].verdicts[0].reason == "no judgement from judge-m: no \\boxed{} in the judgement"
    assert results[1].reason == "no steps to judge" and results[1].n_tokens == 0
    assert [r.n_tokens for r in results] == [10, 0, 5, 3]
    assert {r.labeler for r in results} == {f"judge-m@{prompt_hash('Be strict.')}"}
    assert results[0].finish_reason == "stop"


def test_judge_takes_its_params_and_the_samplers_model_id():
    sampler = StandInJudgeSampler(["\\boxed{1}"])
    params = replace(DEFAULT_JUDGE_PARAMS, max_tokens=64)
    judge = Judge(sampler, params=params)
    (result,) = judge.judge_many([("Q?", ["a", "b"])])
    assert sampler.calls[0][1].max_tokens == 64
    assert judge.labeler == f"stand-in-judge@{prompt_hash()}" == result.labeler
    assert sampler.calls[0][0] == [f"<user>{render_judge_prompt('Q?', ['a', 'b'])}</user>"]
    assert result.first_error == 1


def test_judge_sends_nothing_when_no_chain_has_steps():
    sampler = StandInJudgeSampler([])
    assert Judge(sampler, "m").judge_many([]) == []
    assert [r.first_error for r in Judge(sampler, "m").judge_many([("Q?", [])])] == [None]
    assert sampler.calls == []


def test_judge_wants_one_judgement_per_chain():
    with pytest.raises(ValueError, match="params.n must be 1"):
        Judge(StandInJudgeSampler([]), "m", GenerationParams(n=4, temperature=0.0))


# ---------------------------------------------------------------------------------------------------------
# Budget rule

COR, INC, UNV = "correct", "incorrect", "unverifiable"


@pytest.mark.parametrize(
    ("verifier", "reference", "hard", "expected"),
    [
        ([COR, INC, INC], [COR, INC, UNV], [True, False, False], False),  # all agree
        ([COR, COR, COR], None, [True, True, True], False),
        ([UNV, UNV, UNV], None, [None, None, None], False),  # nobody spoke
        ([COR, INC, UNV], None, [None, None, None], False),  # one source only
        ([COR, COR, UNV], [COR, INC, UNV], [None, None, None], True),  # step 1: verifier yes, reference no
        ([COR, UNV, UNV], None, [True, False, False], False),  # MC's error where the verifier is silent
        ([COR, COR, UNV], None, [True, False, False], True),  # step 1: verifier yes, MC no
        # no step with two votes, but the first error is at 1 (verifier) or 0 (reference)
        ([UNV, INC, UNV], [INC, UNV, UNV], [None, None, None], True),
        ([UNV, UNV, INC], None, [True, False, None], True),  # first error 2 (verifier) or 1 (MC)
        # MC's first error is unknown (its step 0 is unestimated): nothing to compare
        ([UNV, UNV, INC], None, [None, False, None], False),
        ([UNV, INC], [UNV, UNV], [None, None], False),  # reference ran, said nothing
        ([], None, [], False),
    ],
)
def test_needs_judge(verifier, reference, hard, expected):
    assert needs_judge(verifier, reference, hard) is expected


def test_needs_judge_refuses_misaligned_or_unknown_labels():
    with pytest.raises(ValueError, match="hard labels"):
        needs_judge([COR, COR], None, [True])
    with pytest.raises(ValueError, match="reference has 1 labels"):
        needs_judge([COR, COR], [COR], [True, True])
    with pytest.raises(ValueError, match="unknown verifier label"):
        needs_judge(["right"], None, [None])


def test_docstring_examples_hold():
    result = doctest.testmod(judge_module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 10 and result.failed == 0
