"""`MathVerifier`: the math domain's implementation of the `Verifier` protocol.

It wires the pure pieces together: `answers` grades a chain's final answer against
`problem.reference_answer`, `claims` judges each step's arithmetic, and both send what the exact fast
path cannot read to one bounded worker pool owned by the verifier (so each verifier's time limit and
memory cap apply to its own workers). Safe to call from any thread.

>>> verifier = MathVerifier()
>>> problem = Problem("p1", "gsm8k", "math", "48/2?", reference_answer="24")
>>> verifier.grade(problem, "48/2 = 24. The answer is 24.").label
'correct'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from prm_factory.schemas.records import Problem
from prm_factory.verifiers.math.answers import grade_answers
from prm_factory.verifiers.math.bounded import BoundedPool, PoolConfig
from prm_factory.verifiers.math.claims import check_steps
from prm_factory.verifiers.math.competition import looks_competition
from prm_factory.verifiers.math.equation_steps import check_equation_pairs_bounded
from prm_factory.verifiers.math.latex_claims import check_hard_runs_bounded
from prm_factory.verifiers.protocol import Verdict


@dataclass(frozen=True)
class MathVerifierConfig:
    """Knobs of the math verifier; all of them go into the run's provenance via `version` + config.

    - timeout_s: hard limit per SymPy / LaTeX item in the worker (the worker is killed past it).
    - last_number_fallback: grade the last number of a text that states no explicit answer.
    - workers: worker processes for the SymPy path (1 is plenty: most checks never leave the process).
    - worker_memory_mb: address-space cap of a worker, so a memory bomb fails fast.
    """

    timeout_s: float = 3.0
    last_number_fallback: bool = True
    workers: int = 1
    worker_memory_mb: int = 2048


class MathVerifier:
    """Grades math chains and judges their steps: exact arithmetic first, SymPy under a hard limit."""

    name = "math-sympy"
    # 1.1: fail-closed step verdicts, lenient readings only in their written form; 1.2: names that are
    # never products (s_A, S(2), M:F), clock times, cents as a count, rates and glosses read as written,
    # an equation rewritten across a connecting sentence
    # 2.0: competition-style problems (LaTeX) get failed claims only where the reading is certain (pure
    # numbers, no cut-off notation, or a false expansion), degree marks read as degrees
    # 2.1: equation steps checked by solution sets (a relation the text derives from the one before:
    # neither set holding the other is an error), a chain of equal expressions in the same names checked as
    # identities, a run cut out of notation at one end judged without that side
    # 2.2: factorials of written numbers inside math, `\pm` on both sides (both branches), quadratic-formula
    # lines of one name joined, degree marks inside fractions and trig powers, bare `\frac12`, consecutive
    # displayed equations of one step read as equation steps, a rounded decimal never an equation step
    # 2.3: trig of a multiple of `\pi` read in radians, double inequalities in one unknown as both relations
    # (an interval given is never solved), a run cut at `\Rightarrow` / `\quad` into its statements; no
    # claim read across an operator the problem defines (`\&`, `\#`, `@`), from a binary minus, or with a
    # degree mark on one side only; an approximation within a unit of its last written digit, a complex
    # value of a real-looking power unjudged; binomials side by side multiply
    # 2.4: logarithms with a base in digits (`\log_5 49`), statements joined by `\ge` / `\le` / `\neq` read
    # alone (a relation between two sides in numbers judged on their values), displayed lines opening on `=`
    # (and aligned `&=` lines) joined to the line above as one chain, `\mod` between whole numbers as a
    # remainder, `i` the imaginary unit only where the step says so
    # 2.4 (systems): a result said to come from solving or combining the equations just before it (`4B = 9`,
    # `a = -6, c = 5/2`) must hold at one of their finitely many solutions
    # 2.5: a display opening on `=` after a few words of prose, or at the head of the next step, goes on with
    # the display before it; equation steps read `\pi` as the constant, `\left( \right)` as brackets, `r` as
    # a name (not the word "or"), a value set equal to a chain of rewrites as equal to the last; a common
    # factor divided out of both sides, or an inequality whose set is kept for every positive (or every
    # negative) value of its unknown, is no certain error; in several unknowns, an equation with constants
    # still to collect followed by the same terms set to another value is wrong
    # 2.6: certainty by construction (`certainty`): in competition chains no failed claim of a step that
    # tries, tests, rejects, asks or heads a case, of a chain working modulo a number, with notation of a
    # second reading or a factor outside what was read; equation steps only between one kind of relation in
    # the same unknowns, never two values of one name; identities only in free names. Every step verdict
    # names its reading kind (`reading_kinds`); final answers read "$y \geq 3$ is the answer", an answer's
    # maths before a remark ("$x > 3$, since ..."), and LaTeX's decimal comma in the symbolic path
    # 2.8.0: one certainty gate for every route (word-problem chains too); a claim is judged only where it is
    # asserted (not the object of a supposition, trial, check or question, not negated in its sentence or the
    # next: `assertion`), where a grammar reads every character of it and it is not cut out of a longer
    # expression (`claim_grammar`), and not where it only gives a name a second written value (`n = 4`)
    # 2.9.0: nor where it holds under another reading of what is written (`other_readings`: an integer
    # quotient beside a remainder, a rounded value, numerals in a named base), is glued to prose notation
    # (`log_5(5^5)=5`), is an equation tested with a value, a name's value stated or worked out again in a
    # check, or an equation step that puts in a relation the chain states
    # 2.9.1: nothing SymPy would blow up on is sent to it (`sympy_limits`: a power of a sum past the 300th or
    # 1,000 terms expanded, a name past the 10,000th, a binomial of a number past 20 beside a name, a
    # factorial or binomial of numbers past 100,000 bits): unverifiable at once; a value past a float's
    # range is never judged equal by its float
    # 2.10.0: a word problem's unit conversion (`3 * 12 inches = 3 feet`: a physical unit on the left, another
    # of the same dimension on the right, as pint reads them) is no arithmetic to judge: unverifiable
    # 2.10.1: the same verdicts for less SymPy time (`latex_parse`: an SLL parse first and a parse cache;
    # `symbolic._varies`: no `simplify` of a difference two exact-enough values show is not constant);
    # patch, as `_varies` leans on `simplify` keeping values and not raising (every eval figure identical)
    # 2.10.2: the same verdicts for less parse time (`latex_fast`: the common LaTeX subset read without
    # ANTLR, srepr-identical to latex2sympy or refused; `latex_dfa`: the SLL parser starts from a saved
    # DFA); patch, as a reading the differential tests missed would move a verdict
    # 2.11.0: an identity proved by a short fixed path before `simplify` (`zero_test`: tangents as ratios,
    # angles expanded, one denominator, the numerator reduced modulo sin^2 + cos^2 - 1) is zero; where it
    # proves nothing `simplify` decides as before. A few identities `simplify` missed (`tan 3θ` as its
    # rational function of `tan θ`) are now `correct`, never `incorrect`
    # 2.12.0: a claim glued to a letter of any script (`(4/3)π(6)^3 = (1/2)π(6)^2(16)` read as
    # `(6)^3 = (1/2)`) is cut out of a longer expression, as one glued to a Latin letter was: unverifiable;
    # but `π` on both ends (`π(6)^2(12) = 216π`) cancels, the claim read without it is judged as before;
    # a claim that holds with a repeating decimal written rounded read as its fraction (`42 \times 1.6667`
    # for `42 \times \frac{5}{3}`) is unverifiable (`other_readings`); a name given a new value is seen where
    # the earlier value stands in inline math (`So \(n = 57\)`, then `So \(n = 47\)`; a range's bounds)
    # 2.12.1: plain arithmetic refuses a value past 14,000 bits (was 20,000), below what CPython prints: a
    # value of 4,300 to 6,000 digits raised while its evidence was written and failed the chain's labelling
    # 2.13.0: a formula whose last side runs on past an operator into words (`A = \frac12 \times
    # \text{base} \times \text{height}`, `A = (1/2) + (1/4) * A` with a prose letter) binds no value from
    # the part read, its claims are unjudged, and it clears the name's earlier value (defined anew);
    # an equation step never pairs an item of a list labelled `(A)`, `(1)`, `b)` with a relation outside it,
    # nor two displays a noun of several relations names ("solve the system of equations:")
    # 2.14.0: a value carried from an earlier step across a marker of a trial, check or refutation is an
    # unknown again; a name given several values in one step (a list of cases) binds none, and a system
    # with two values of one name is cases; a quotient with its rest in a smaller unit is a division with
    # remainder; the chain's written negation of a claim (`1 \neq 7`, lines later) leaves it unjudged, and
    # so does an identity that is the chain's equation with a stated relation put in, and a claim holding a
    # constant's symbol the text names as a quantity ("its parallax angle, $\\pi$")
    # 2.14.1: a negation's comparison that timed out or whose worker failed counts as the negation found
    # (the claim unjudged, as the found-values check already did): fail closed; patch, as only a lost
    # comparison moves a verdict, and only away from `incorrect`
    # 2.15.0: a side said in words (`X is equal to Y`, `X, which is Y`) cut out of a longer phrase where it
    # is written (`31_8`, `11111111 in base 2`, `half of 6 times 4`) is unjudged; a sum restarted term by
    # term in a continued chain (`a + b + c = a + b = s + c`) is ambiguous, as a running total is; a name's
    # earlier value is seen whatever the spacing (`from $n=1$ to $n=5$`); a side that is the other with
    # numbers put in for its names (`3x + y = 3*0 + 1`) shows a substitution, not the names' values; an
    # equation step never pairs across a correction ("No, we subtract ..."); a relation prose derives from
    # an equation ("simplify that equation to get ...") is no identity; a function applied in plain text
    # (`4 / sqrt(4) = 2`, read before as `4 (4)`: a false `incorrect`) leaves its side unread
    # 2.16.0: the object of a condition or a substitution (`If (n+7) = 2, then ...`, "substitute x = 1/2
    # into ...") is supposed, not stated; a name set again by a formula (`F = 50`, then `F = 50 * 1.02`) is
    # not held to its old value; a letter on every term that the chain names as an unknown (`y = -8x`, then
    # `-6x + 8(-8x) = 15(-8x)`) makes an equation in it, not a unit (the misreadings read on untuned3)
    # 2.17.0: one expression put equal to two values in one step (`2x - 9 = 3` or `2x - 9 = -3`) is two
    # alternatives; words between two lists never pair the last item of one with the first of the next; a
    # sign of Unicode's mathematical blocks glued to a claim (`4√2 / 2 = 2√2`) cuts it; a remark in brackets
    # after a number (`520 (7th grade)`) is notation with a second reading; `=` between powers in a chain
    # that works modulo m is tested modulo m; a name given a value before spacing (`l = 21 \quad`) is given
    # a value, and a substitution at the values the text last gave is its own (the misreadings read on
    # untuned2)
    # 2.18.0: decimals of three figures or more read as rounded values (`13 - 2.83^2 = 13 - 8`); a slash
    # before a product side by side (`4/3\\pi`) has two readings; counting multiples said in words ("every
    # 25th number", "zeros at the end") reads quotients as integer parts; two equations of one list
    # (`$x - 3 = 0$ and $x + 2 = 0$`) are no premise of each other (the misreadings read on untuned4)
    # 2.19.0: a side's head that goes on where it is written (`P` of `P(Ben) = 0.72 - 0.42`) cuts the claim;
    # decimals or a ratio's colon right after a claim in math (`= 7.968` read as `= 7`, `a : b = c : d`) cut
    # it; the object of "such that" is a condition (the misreadings read on untuned5)
    # 2.20.0: one factor of a product put equal to zero is one case, not a rewrite; listed options (`A.`,
    # `B.`, other items of the list between) are no premise of each other (two more of untuned5's classes)
    # 2.21.0: a run right after a function's name or glued to one (`cos 4x = 0`, `ln x = 1/2`, `f'(x) = 2`,
    # `C(T) = 0.02`) starts inside its argument: that side is cut, gives no name a value; "is" after a value
    # that is a preposition's object ("corresponding to z = 1.55 is around 0.939") is no `=`; a name given
    # a fraction (`y = 1/2 and y = 1`) has a written value; a modulus the problem names by its ring (`Z_11`,
    # `GF(7)`); "goes into" is whole-number division; a percent in brackets restates (`0.80 (80%)`); an
    # irrational side put equal to a number of three figures or more within half its last digit is rounded;
    # a minus opening lines of a list (`-1 = (-1)^2`) may be a bullet; a hyphen inside a word (`base-6`) is
    # no minus; a value given under a heading ("For the midterm:") is not carried past the next one; a
    # relation put into another ("substitute ... into the expanded equation to get") is no premise of the
    # result (the misreadings read on dev4 and dev5)
    # 2.22.0: a percent's places are hundredths of its value (`(16/81) * 100% ≈ 19.75%` holds; it was read to
    # two places of 0.1975); a relation the problem itself writes (an option of "which is false?") is
    # quoted, not asserted; digits grouped by spaces (`9 132 500`); a run after a short word that follows an
    # operator (`225 / Rs. 450 * 100%`) starts inside a side; a product after a slash may be the denominator
    # (`10*9*8*7*6/5*4*3*2*1 = 252`); a quotient of whole numbers put equal to its integer part and followed
    # by a count of things (`17/7 = 2 croissants`, not "12 cups per chair") is a share; `x` before words
    # (`3 x son's age`) is a product read only in part (the misreadings read on untuned6, untuned7, untuned8)
    # 2.23.0: factors side by side are a mixed number only as written (digits, then a proper fraction in
    # digits): latex2sympy read any integer value before a positive rational one as a mixed number, so a
    # true `3\binom{4}{2} = 18` was `incorrect` (`4 \binom{15}{10}` read as 3,007, `(2) 3` as 5); digits
    # before an improper fraction and two digit runs side by side are refused; a side that runs on into an
    # absolute value (`120 = \frac{1}{2} |3ay_1|`) is not read without it (found reading untuned10)
    # 2.24.0: a side that runs on into a name with a subscript (`49\pi = \pi r_1^2` without delimiters) is
    # not read without it; the lines of a block worked line by line (`(-2)^2 + (-2) - 6 = 0`, `4 - 2 - 6 =
    # 0`, `-4 = 0`) are judged by the words after its last line ("This equation does not hold"), in the step
    # or the next (the misreadings read on dev11)
    # 2.25.0: a display that opens on a connector (`\[ \Rightarrow 2x - 4 = -y + 3 \]`) goes on from the
    # relation right above it (an equation step; seen reading ProcessBench math's missed first errors); "is"
    # after a relation in names set equal to a number ("the number of triples such that a + b + c = 99 is
    # 5050") gives the subject's value, not a second side (the misreading read on untuned12, CHAMP)
    # 2.26.0: "which is equivalent to" (and "equivalently") links two relations as one equation rewritten
    # (seen reading ProcessBench math's missed first errors)
    # 2.27.0: `\pi` before a bracket raised to a power (`\pi (1.5)^2`) is a product, not a function named pi
    # applied to the bracket (such claims were unread; `\pi(10)`, the prime-counting function, stays unread)
    # 2.28.0: a logarithm's digit base before a bracket (`\log_2 (2^8)`) is no number multiplying it
    # 2.29.0: an equation step between relations holding decimals of two places or more is no certain error
    # where the solutions agree to what rounding those decimals can move them (`n^2 = \frac{1}{0.062}` ->
    # `n^2 = 16`); a relation that rewrites an equation before it (linked, or its right side kept) is no
    # identity; an expansion off by a constant (`(x + 1)(x + 2) = x^2 + 3x + 3`) is read, no longer a crash
    # 2.30.0: a relation before an identity claim is read in plain text too (a chain written without math
    # delimiters: "to get 2(r+6)^2 = 8r^2", then "2(r^2 + 12r + 36) = 8r^2" is that equation rewritten); units
    # a problem defines by an equality of amounts (`4 daps = 7 yaps`) make a claim between two of them a
    # conversion (`42 * 20/21 daps = 42 baps`), as physical units do
    # 2.31.0: a number with a scale word in the claim's sentence (`2.4 million`, `0.24 lakh`) is no certain
    # error (the readers take the digits alone); an amount of money whose exact value has no finite decimal
    # form may be written to the whole unit (`$20,000 / 30 = $667`); a lone quotient a count must cover,
    # rounded up (`You would need 462/9 = 52 flash drives`), is no error; a claim whose last number runs on
    # into a ratio (`3/6 = 1:2` read as `3/6 = 1`) is cut from it
    # 2.32.0: a quotient's integer part, or a count that must cover it rounded up, with the things counted
    # after it, is no certain error in the competition reader too (`16/3 = 5 red marbles`, `989 ÷ 4 = 247
    # packages`), as in the word-problem reader since 2.22.0 and 2.31.0
    # 2.33.0: decimals written rounded may reach a right side of one figure (`(0.231 - 0.192) / 0.192 =
    # 0.2`); a percent with no finite decimal form may be written rounded, as money is (`... * 100 = -33%`);
    # a quotient right after a slash may be the denominator (`10 miles/1/4 inch`); a claim holding a word
    # of relation (`multiplied by 4 equals 36 = 9`), a letter the step applies to words (`P(Ben)`), a
    # fraction after "N and" (a mixed number), or a bracket closed and never opened is no certain error
    # 2.34.0: a problem that gives an operator sign another meaning (`If $-$ means $\\times$ ...`) leaves its
    # chains' failed claims unjudged: they are written in either meaning
    # 2.35.0: a name's value solved from a relation holding a decimal carried rounded (three figures or more,
    # not the problem's) is no certain error within what that rounding allows (`0.435 = x/28.75`, `x = 12.5`)
    version = "2.35.0"

    def __init__(
        self, config: MathVerifierConfig = MathVerifierConfig(), pool: BoundedPool | None = None
    ) -> None:
        """`pool`: the SymPy workers to use instead of the config's own (the reward path passes one that
        can also stop at a response's time budget, reward/budget.py; with no budget set it gives the same
        verdicts)."""
        self.config = config
        self._pool = pool or BoundedPool(
            PoolConfig(workers=config.workers, memory_limit_mb=config.worker_memory_mb)
        )
        self._hard_checker = partial(check_hard_runs_bounded, timeout_s=config.timeout_s, pool=self._pool)
        self._equation_checker = partial(
            check_equation_pairs_bounded, timeout_s=config.timeout_s, pool=self._pool
        )

    def grade(self, problem: Problem, completion: str) -> Verdict:
        """correct | incorrect | unparsed; `unparsed` also when the problem has no reference answer."""
        return self.grade_many(problem, [completion])[0]

    def grade_many(self, problem: Problem, completions: Sequence[str]) -> list[Verdict]:
        """`grade` for many completions of one problem (rollouts): one worker round trip for hard answers."""
        if not problem.reference_answer or not problem.reference_answer.strip():
            return [Verdict("unparsed", "problem has no reference answer", {}) for _ in completions]
        return grade_answers(
            completions,
            problem.reference_answer,
            last_number_fallback=self.config.last_number_fallback,
            timeout_s=self.config.timeout_s,
            pool=self._pool,
        )

    def check_steps(self, problem: Problem, steps: Sequence[str]) -> list[Verdict]:
        """One verdict per step: correct | incorrect | unverifiable (see `verifiers.math.claims`); a
        competition-style problem makes the checker stricter about what it calls false (`competition`)."""
        competition = looks_competition(problem.text, steps)
        return check_steps(
            steps,
            hard_checker=self._hard_checker,
            competition=competition,
            equation_checker=self._equation_checker,
            problem_text=problem.text,
        )

    def close(self) -> None:
        """Stop this verifier's worker processes (they also die with the parent)."""
        self._pool.close()
