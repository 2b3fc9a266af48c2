"""The `judge` label source: a generative critic names the earliest wrong step of a chain.

Why a judge: the verifier sees only false arithmetic, the reference alignment only quantities off the
worked solution, and MC only whether a (possibly weak) policy can still finish; a capable model reading
the whole chain catches setup and logic errors none of them can. ProcessBench (Zheng et al., 2024,
"Identifying Process Errors in Mathematical Reasoning") showed that prompting a critic for the index of
the earliest wrong paragraph is a strong, cheap labeller, so the prompt here follows its critique template
(QwenLM/ProcessBench, `code/templates/critique_template.txt`): paragraphs tagged `<paragraph_i>` and
indexed from 0, the answer in `\\boxed{}`, -1 when every paragraph is right. Its wording is kept so that
a judge's ProcessBench score says how far its labels here can be trusted.

What a judgement says, and no more (`judge_step_labels`): the steps before the named error are
`correct`, the named step `incorrect`, and the steps after it `unverifiable` (ProcessBench asks only for
the earliest error). A judgement without a readable index in range is no label at all (fail closed).

Provenance: `judge_labeler(model)` = `<judge model>@<prompt hash>`, the hash being the first 12 hex
digits of the template's sha256 (`prompt_hash`), so a changed prompt is a different labeller.

Cost: the judge reads every chain once, so `needs_judge` is the budget rule that sends only chains whose
other sources disagree.

>>> parse_judgement("Paragraph 2 adds instead of subtracting. \\\\boxed{2}", n_steps=4)
2
>>> [v.label for v in judge_step_labels(2, 4, "critic")]
['correct', 'correct', 'incorrect', 'unverifiable']
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

import jinja2

from prm_factory.rollouts.first_error import first_error_mc
from prm_factory.sampling.protocol import GenerationParams, Sampler
from prm_factory.verifiers.math.public import boxed_answer
from prm_factory.verifiers.protocol import Verdict

JUDGE_PROMPT_VERSION: str = "processbench-critique/1"

# Plain text, rendered with autoescape off: a `<` or `&` in a problem must reach the judge as written.
# `\boxed{}` is literal text to jinja (only `{{`, `{%` and `{#` are syntax).
JUDGE_TEMPLATE: str = (
    "The following is a math problem and a solution (split into paragraphs, enclosed with tags and "
    "indexed from 0):\n"
    "\n"
    "[Math Problem]\n"
    "\n"
    "{{ problem }}\n"
    "\n"
    "[Solution]\n"
    "\n"
    "{% for step in steps %}"
    "<paragraph_{{ loop.index0 }}>\n{{ step }}\n</paragraph_{{ loop.index0 }}>"
    "{% if not loop.last %}\n\n{% endif %}"
    "{% endfor %}\n"
    "\n"
    "Your task is to review and critique the solution paragraph by paragraph. Once you identify an error "
    "in a paragraph, return the index of the paragraph where the earliest error occurs. Otherwise, return "
    'the index of -1 (which typically denotes "not found").\n'
    "\n"
    "Please put your final answer (i.e., the index) in \\boxed{}."
)

# Enough for a critique of a GSM8K/MATH chain by an instruct model; ProcessBench allowed 8192 (32768 for
# reasoning models), raise it for those. Temperature 0: one judgement per chain, reproducible.
DEFAULT_JUDGE_PARAMS = GenerationParams(n=1, temperature=0.0, top_p=1.0, max_tokens=2048)

_ENVIRONMENT = jinja2.Environment(autoescape=False, undefined=jinja2.StrictUndefined)
_TEMPLATE = _ENVIRONMENT.from_string(JUDGE_TEMPLATE)
_INDEX = re.compile(r"^[+-]?\d+$")
_WRAPPERS = re.compile(r"\\(?:text|textbf|mathrm|mathbf|boxed)\s*\{([^{}]*)\}")


def prompt_hash(system: str | None = None) -> str:
    """First 12 hex digits of the sha256 of the template text (and of the system prompt, when one is
    sent: it changes what the judge reads too).

    >>> len(prompt_hash()), prompt_hash() == prompt_hash(None), prompt_hash() == prompt_hash("Be strict.")
    (12, True, False)
    """
    digest = hashlib.sha256(JUDGE_TEMPLATE.encode("utf-8"))
    if system:
        digest.update(b"\x00system\x00" + system.encode("utf-8"))
    return digest.hexdigest()[:12]


def judge_labeler(model: str, system: str | None = None) -> str:
    """The `judge_labeler` column: `<judge model>@<prompt hash>`."""
    return f"{model}@{prompt_hash(system)}"


def render_judge_prompt(problem: str, steps: Sequence[str]) -> str:
    """The critique prompt (the user turn) for one chain: steps stripped and tagged from 0.

    >>> prompt = render_judge_prompt("Is 1 + 1 < 3?", [" 1 + 1 = 2.\\n", "Yes."])
    >>> print(prompt.split("[Solution]\\n\\n")[1].split("\\n\\nYour task")[0])
    <paragraph_0>
    1 + 1 = 2.
    </paragraph_0>
    <BLANKLINE>
    <paragraph_1>
    Yes.
    </paragraph_1>
    """
    return _TEMPLATE.render(problem=problem.strip(), steps=[step.strip() for step in steps])


def read_judgement(text: str, n_steps: int) -> tuple[int | None, str]:
    """The index in the judgement's last `\\boxed{}` and why it was or was not taken.

    The last box is the answer (a critique may box intermediate values first); boxes joined by "and" /
    "," in the last sentence are two answers, hence unreadable. `\\text{2}` and `$-1$` are read as the
    number inside, and so is a box in a box; words, ranges and fractions are not an index.
    """
    if n_steps < 0:
        raise ValueError(f"n_steps must be >= 0, got {n_steps}")
    boxed = boxed_answer(text)
    if boxed is None:
        return None, "no \\boxed{} in the judgement"
    if boxed.method != "boxed":
        return None, f"several boxed answers ({boxed.text!r})"
    content = _WRAPPERS.sub(r"\1", boxed.text).replace("$", "").replace("\u2212", "-").strip()
    if not _INDEX.match(content):
        return None, f"boxed {boxed.text!r} is not a paragraph index"
    index = int(content)
    if not -1 <= index < n_steps:
        return None, f"boxed index {index} is out of range for {n_steps} step(s)"
    return index, "no error found" if index == -1 else f"earliest error at step {index}"


def parse_judgement(text: str, n_steps: int) -> int | None:
    """The earliest wrong step the judge named: an index in [0, n_steps), -1 for "no error", or None when
    the judgement has no readable index in range (no label: fail closed).

    >>> parse_judgement("Step 1 is fine. \\\\boxed{1} ... on reflection none is wrong: \\\\boxed{-1}", 3)
    -1
    >>> [parse_judgement(t, 3) for t in ("\\\\boxed{3}", "\\\\boxed{-2}", "\\\\boxed{two}", "no box")]
    [None, None, None, None]
    """
    return read_judgement(text, n_steps)[0]


def judge_step_labels(
    first_error: int | None, n_steps: int, model: str, *, why: str = "unreadable judgement"
) -> list[Verdict]:
    """One verdict per step from the earliest error the judge named.

    Before it `correct`, at it `incorrect`, after it `unverifiable` (the judge was asked only for the
    earliest error); -1: all `correct`; None (no readable judgement): all `unverifiable`, `why` saying so.

    >>> [v.label for v in judge_step_labels(-1, 2, "critic")]
    ['correct', 'correct']
    >>> judge_step_labels(None, 1, "critic", why="no \\\\boxed{} in the judgement")[0].reason
    'no judgement from critic: no \\\\boxed{} in the judgement'
    """
    if n_steps < 0:
        raise ValueError(f"n_steps must be >= 0, got {n_steps}")
    if first_error is None:
        reason = f"no judgement from {model}: {why}"
        return [Verdict("unverifiable", reason, {"rule": "judge-unread"}) for _ in range(n_steps)]
    if not -1 <= first_error < n_steps:
        raise ValueError(f"first_error {first_error} out of range for {n_steps} step(s)")
    if first_error == -1:
        reason = f"{model} found no error in the chain"
        return [Verdict("correct", reason, {"rule": "judge-no-error"}) for _ in range(n_steps)]
    evidence = {"first_error": first_error}
    verdicts = []
    for i in range(n_steps):
        if i < first_error:
            verdict = Verdict(
                "correct",
                f"before the earliest error {model} named (step {first_error})",
                {"rule": "judge-before-error", **evidence},
            )
        elif i == first_error:
            verdict = Verdict(
                "incorrect",
                f"{model} named this step the earliest error",
                {"rule": "judge-error", **evidence},
            )
        else:
            verdict = Verdict(
                "unverifiable",
                f"after the earliest error {model} named (step {first_error}): not judged",
                {"rule": "judge-after-error", **evidence},
            )
        verdicts.append(verdict)
    return verdicts


@dataclass(frozen=True)
class JudgeResult:
    """One chain's judgement.

    - first_error: the earliest wrong step named, -1 for none, None when unread (see `reason`);
    - raw_output: the judge's text as generated, kept whether or not it was read;
    - verdicts: one per step (`judge_step_labels`);
    - labeler: `<judge model>@<prompt hash>`;
    - reason: how the judgement was read, or why it could not be ("no \\boxed{} in the judgement");
    - n_tokens / finish_reason: the generation's cost and how it ended ("length": cut at max_tokens; its
      last box, if any, is still read, as ProcessBench does).
    """

    first_error: int | None
    raw_output: str
    verdicts: tuple[Verdict, ...]
    labeler: str
    reason: str
    n_tokens: int
    finish_reason: str


class Judge:
    """A generative judge over any `Sampler`: the offline engine or an OpenAI-compatible server.

    Args:
        sampler: renders the chat prompt and generates (`sampling.vllm_sampler` or
            `sampling.openai_sampler`).
        model: the judge model's id for provenance; `sampler.model_id` when None.
        params: generation settings; one generation per chain (`n` must be 1), temperature 0 by default.
        system: an optional system prompt (it enters the prompt hash).
    """

    def __init__(
        self,
        sampler: Sampler,
        model: str | None = None,
        params: GenerationParams = DEFAULT_JUDGE_PARAMS,
        *,
        system: str | None = None,
    ) -> None:
        if params.n != 1:
            raise ValueError(f"the judge reads one judgement per chain; params.n must be 1, got {params.n}")
        self.sampler = sampler
        self.model = model or sampler.model_id
        self.params = params
        self.system = system
        self.labeler = judge_labeler(self.model, system)

    def prompt(self, problem: str, steps: Sequence[str]) -> str:
        """The raw prompt sent for one chain: the critique as a user turn in the model's chat template."""
        return self.sampler.render_chat(self.system, render_judge_prompt(problem, steps))

    def judge_many(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[JudgeResult]:
        """Judge (problem text, steps) pairs, in order, with one `generate` call for all of them.

        A chain without steps has nothing to judge and is not sent.
        """
        to_send = [i for i, (_, steps) in enumerate(items) if steps]
        generations = (
            self.sampler.generate([self.prompt(*items[i]) for i in to_send], self.params) if to_send else []
        )
        if len(generations) != len(to_send):
            raise RuntimeError(f"sampler returned {len(generations)} results for {len(to_send)} prompts")
        by_item = dict(zip(to_send, generations, strict=True))
        results = []
        for i, (_, steps) in enumerate(items):
            if i not in by_item:
                results.append(JudgeResult(None, "", (), self.labeler, "no steps to judge", 0, "none"))
                continue
            gens = by_item[i]
            if len(gens) != 1:
                raise RuntimeError(f"expected one generation per prompt, got {len(gens)}")
            gen = gens[0]
            first_error, reason = read_judgement(gen.text, len(steps))
            verdicts = judge_step_labels(first_error, len(steps), self.model, why=reason)
            results.append(
                JudgeResult(
                    first_error,
                    gen.text,
                    tuple(verdicts),
                    self.labeler,
                    reason,
                    gen.n_tokens,
                    gen.finish_reason,
                )
            )
        return results


def _votes(labels: Sequence[str] | None, n_steps: int, source: str) -> list[bool | None] | None:
    if labels is None:
        return None
    if len(labels) != n_steps:
        raise ValueError(f"{source} has {len(labels)} labels for {n_steps} steps")
    votes: list[bool | None] = []
    for label in labels:
        if label not in ("correct", "incorrect", "unverifiable"):
            raise ValueError(f"unknown {source} label {label!r}")
        votes.append(None if label == "unverifiable" else label == "correct")
    return votes


def needs_judge(
    verifier: Sequence[str], reference: Sequence[str] | None, hard: Sequence[bool | None]
) -> bool:
    """The judge's budget rule: judge a chain only where the sources that spoke disagree.

    Each source votes per step: verifier / reference `correct` yes, `incorrect` no, `unverifiable` nothing;
    MC hard label True yes, False no, None nothing (`reference` None: that source did not run). The chain
    is judged when

    - on some step two sources voted differently (the step's `labels_agree` is False), or
    - two sources name different first errors: the verifier's and the reference's earliest `incorrect`,
      MC's earliest False (unknown when an unestimated step comes first, `first_error_mc`).

    A source naming an error where another is silent is not a disagreement, nor is a chain where at
    most one source spoke: the judge is spent where it settles a dispute.

    >>> needs_judge(["correct", "incorrect"], None, [True, False])      # all agree
    False
    >>> needs_judge(["correct", "correct"], None, [True, False])        # step 1: verifier yes, MC no
    True
    >>> needs_judge(["unverifiable", "incorrect", "unverifiable"],      # no step has two votes, but
    ...             ["incorrect", "unverifiable", "unverifiable"],      # the first error is at 0 or 1
    ...             [None, None, None])
    True
    >>> needs_judge(["correct", "unverifiable"], ["unverifiable", "incorrect"], [None, None])
    False
    """
    n_steps = len(verifier)
    if len(hard) != n_steps:
        raise ValueError(f"MC has {len(hard)} hard labels for {n_steps} steps")
    voted = (_votes(verifier, n_steps, "verifier"), _votes(reference, n_steps, "reference"))
    label_sources = [votes for votes in voted if votes is not None]
    sources = [*label_sources, list(hard)]
    for step in range(n_steps):
        if len({votes[step] for votes in sources} - {None}) > 1:
            return True
    first_errors = [
        next((i for i, vote in enumerate(votes) if vote is False), None) for votes in label_sources
    ]
    first_errors.append(first_error_mc(hard))
    return len({index for index in first_errors if index is not None}) > 1
