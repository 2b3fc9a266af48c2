"""Which relation does a step rewrite? Pairs of relations a chain links, for the solution-set check.

A competition chain solves equations over several sentences and steps: `\\( x^2 = 3x + 1 \\)` ...
"Subtracting \\( 3x \\) from both sides, we have \\( x^2 - 3x = 1 \\)". The later relation is a claim about
the earlier one: it has the same solution set, or one implied by it (`solution_sets` decides, in the bounded
worker). A pair is read only where the text says the one comes from the other, and nothing else could
have fed it:

- inside one math segment, joined by `\\Rightarrow`, `\\implies`, `\\iff` (`4a = -10 \\Rightarrow a = -5/2`);
- a segment that opens on such a connector (`\\[ \\Rightarrow w^2 = 4 \\]`) goes on from the relation right
  above it in the same step (nothing but spacing or a comma between), unless the block above is a list
  a noun names ("the system:"): the connector then derives from all of it;
- in consecutive segments, the words between them say it ("we get", "simplifying", "so", "subtracting
  ... from both sides"), within one short stretch of text, with no other relation between and no word of
  another source: a substitution, another equation or system, a case, a trial, a second root;
- in consecutive displayed equations of one step with nothing but spacing or a comma between them
  (`\\[ 16 + x = 27, \\] \\[ x = 8. \\]`): a worked derivation, each line rewriting the one above. Such a
  link never says "rewrite", so it is judged in one unknown only (a displayed system stays unjudged),
  and never from a solved value (`x = 1` above `x = 2` is a list, not a step).

With several unknowns a pair needs a rewriting cue (rearranging, both sides, `\\Rightarrow`, ...), since
"so" may join two equations of a system. Solution sets given with "or" or `\\pm` are one statement.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from prm_factory.verifiers.math.bounded import BoundedPool, run_items
from prm_factory.verifiers.math.claim_result import ClaimResult
from prm_factory.verifiers.math.plain_algebra import names, plain_algebra
from prm_factory.verifiers.math.sympy_limits import too_costly
from prm_factory.verifiers.math.systems import check_system_results_bounded

_SEGMENT = re.compile(
    r"\\\[(?P<a>.*?)\\\]|\\\((?P<b>.*?)\\\)|\$\$(?P<c>.*?)\$\$|\$(?P<d>[^$]*?)\$"
    r"|\\begin\{(?P<env>align\*?|aligned|equation\*?|gather\*?)\}(?P<e>.*?)\\end\{(?P=env)\}",
    re.DOTALL,
)
_CONNECTOR = re.compile(
    r"\\(?:Rightarrow|implies|Longrightarrow|iff|Leftrightarrow|Longleftrightarrow|therefore)(?![A-Za-z])"
)
# statements side by side in one segment: a list, not a derivation
_PARALLEL = re.compile(r"\\\\|\\q?quad(?![A-Za-z])|\\text\{\s*and\s*\}|;|,\s*(?=[A-Za-z]\s*=)")
_RELATION = re.compile(r"(?<![<>!\\])=|<|>|\\(?:leq?|geq?|lt|gt)(?![A-Za-z])")
# spacing right after a connector (`\\Rightarrow \\qquad r = 10`) opens no statement of its own
_LEADING_SPACE = re.compile(r"^\s*(?:\\q?quad(?![A-Za-z])\s*)+")
_TAG = re.compile(r"\\(?:boxed|displaystyle|tag\{[^}]*\}|nonumber|notag)|&|\\[,;!:]|\\(?:q?quad)\s*$")

# words that say the next relation comes from the last one
_LINK = re.compile(
    r"\b(?:so|thus|hence|therefore|then|gives?|giving|get|gets|obtain|yields?|becomes?|reduces?|leads?"
    r"|results?|means|implies|i\.e|equivalent\w*|simplif\w*|rewrit\w*|written|rearrang\w*|expand\w*|factor\w*"
    r"|collect\w*|combin\w*"
    r"|moving|move|bring\w*|subtract\w*|add\w*|divid\w*|multipl\w*|solv\w*|isolat\w*|sides?)\b",
    re.IGNORECASE,
)
# words that make it a rewrite of one equation (needed with several unknowns)
REWRITE = re.compile(
    r"\b(?:simplif\w*|equivalent\w*|rewrit\w*|rearrang\w*|expand\w*|factor\w*|collect\w*|like terms|moving"
    r"|move|bring\w*|both sides|cancel\w*)\b",
    re.IGNORECASE,
)
# words of another source, a case, a trial, a second value, a correction ("No, we subtract ...")
_OTHER_SOURCE = re.compile(
    r"\b(?:substitut\w*|plug\w*|equations|system|eliminat\w*|other|another|second|next|also|case|cases"
    r"|if|when|whenever|suppose|assum\w*|check\w*|verif\w*|test\w*|try\w*|trial|example|instance|for"
    r"|first|similarly|likewise|let|given|recall|original|previous|earlier|above|where|but|however|not"
    r"|approximately|about|either|or|possible|could|might|would|domain|extraneous|valid|reject\w*"
    r"|discard\w*|positive|negative|integer|since|because|conditions?|constraints?|intersect\w*|union"
    r"|together|both(?! sides)|combin\w*(?! like)|should|wrong|mistake|error|incorrect|recheck\w*|instead"
    r"|correct\w*|actually|wait|oops|hmm|redo|no(?=\s*[,.!]))\b"
    r"|\(\d\)|\\[lg]eq?(?![A-Za-z])|[<>?]",
    re.IGNORECASE,
)
_MAX_BETWEEN = 160


@dataclass(frozen=True)
class Statement:
    """One relation of a step: where, its LaTeX, and how it is tied to the statement before it."""

    step: int
    start: int
    end: int
    text: str
    link: str  # "strong" (a connector in one segment), "cue" (words between), "" (none)
    rewrite: bool  # the link says it is a rewrite of one equation


@dataclass(frozen=True)
class EquationPair:
    """A relation (`after`, in step `step`) the chain derives from the relation before it."""

    step: int
    before: str
    after: str
    rewrite: bool


def _clean(text: str) -> str:
    text = re.sub(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}", r"\1", text)
    text = _TAG.sub(" ", text)
    return " ".join(text.split()).strip(" ,.")


def _segments(step: str) -> list[tuple[int, int, str]]:
    out = []
    for match in _SEGMENT.finditer(step):
        body = next(g for g in (match.group(k) for k in "abcde") if g is not None)
        out.append((match.start(), match.end(), body))
    return out


def _is_relation(text: str) -> bool:
    return bool(_RELATION.search(text))


_OR_BETWEEN = re.compile(r"\s*,?\s*or\s*")


def _alternatives_joined(step: str, segments: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """`\\( x = 3 \\) or \\( x = -3 \\)`: segments joined by a bare "or" are one solution set."""
    out: list[tuple[int, int, str]] = []
    for start, end, body in segments:
        if out and _OR_BETWEEN.fullmatch(step[out[-1][1] : start]):
            first_start, _, first_body = out[-1]
            out[-1] = (first_start, end, f"{first_body} \\text{{ or }} {body}")
        else:
            out.append((start, end, body))
    return out


_ALTERNATIVE = re.compile(
    r"\\text\{\s*or\s*\}|\\lor(?![A-Za-z])|(?<![A-Za-z])or(?![A-Za-z])|\\(?:pm|mp)(?![A-Za-z])"
)


def _reduced(relation: str) -> str:
    """`2x = 7 - 3 = 4` -> `2x = 4`: a chain whose later sides are all values states its first side equal
    to its last (the arithmetic between is checked as claims of its own). So does a value set equal to a
    chain of rewrites of one expression: `6531.2 = \\frac{r}{2} \\cdot 160\\pi = 80\\pi r` ->
    `6531.2 = 80\\pi r` (each `=` between the rewrites is a claim of its own)."""
    sides = re.split(r"(?<![<>!\\])=", relation)
    if len(sides) < 3 or _RELATION.search(relation.replace("=", " ")):
        return relation
    later = [names(side) for side in sides[1:]]
    values_after = not any(later) and names(sides[0])
    # (`0 = 2x + 5 \\text{ or } -5 = 2x` is two alternatives, not one chain of rewrites)
    rewrites_after = (
        not names(sides[0]) and sides[0].strip() and all(later) and not _ALTERNATIVE.search(relation)
    )
    if not (values_after or rewrites_after):
        return relation
    return f"{sides[0].strip()} = {sides[-1].strip()}"


def statements(chain: Sequence[str]) -> list[Statement | None]:
    """Every relation of the chain in order; `None` marks math that breaks a link (a chain of `=`, a list
    of relations side by side)."""
    out: list[Statement | None] = []
    last_end: tuple[int, int] | None = None  # (step, offset) where the last relation's segment ended
    last_displayed = ""  # the last segment's relation when it was one displayed equation, else ""
    named_list = False  # the display block is what a noun of several relations before it names
    run_start = 0
    for index, step in enumerate(chain):
        for start, end, body in _alternatives_joined(step, _segments(step)):
            displayed, last_displayed = last_displayed, ""
            parts = _CONNECTOR.split(body)
            relations = [_reduced(_clean(_LEADING_SPACE.sub("", p))) for p in parts]
            if not any(_is_relation(r) for r in relations):
                continue  # an expression named in the text (`\( 3x \)`): part of the words between
            adjacent = _right_after(step, last_end, index, start)
            run_start = run_start if adjacent else start  # where this run of adjacent segments began
            # a connector opening a segment goes on from the relation right above it, unless the run is a
            # list a noun names ("the system of equations:"): then it derives from all of it
            continues = (
                _opens_on_connector(relations)
                and adjacent
                and bool(out)
                and out[-1] is not None
                and not _names_a_list(step[max(0, run_start - 160) : run_start])
            )
            if len(parts) == 1 and len(_PARALLEL.split(body.strip().rstrip("\\").strip())) > 1:
                out.append(None)  # a list or an aligned chain: no single relation to rewrite
                last_end = (index, end)
                continue
            for k, relation in enumerate(relations):
                if not _is_relation(relation):
                    if not (k == 0 and continues):  # a display opening on `\Rightarrow` goes on from
                        out.append(None)  # the relation right above it
                    continue
                if k > 0:
                    link, rewrite = "strong", True
                else:
                    link, rewrite = _words_link(chain, last_end, index, start)
                    if not link and _display_continues(chain, last_end, index, start, displayed, relation):
                        # the next line of a displayed derivation, unless the block's lines are what a noun
                        # of several relations names ("solve the system of equations:"): items of a list
                        link, rewrite = ("", False) if named_list else ("display", False)
                    elif _DISPLAY_OPEN.match(step, start):
                        named_list = _names_a_list(step[max(0, start - 160) : start])
                    if not _statement_alone(step, start, end, up_to_math=link == "display"):
                        link = ""
                out.append(Statement(index, start, end, relation, link, rewrite))
            if len(parts) == 1 and _DISPLAY_OPEN.match(step, start) and _equation_only(relations[0]):
                last_displayed = relations[0]
            last_end = (index, end)
    return out


_DISPLAY_OPEN = re.compile(r"\\\[|\$\$|\\begin\{")


def _opens_on_connector(relations: Sequence[str]) -> bool:
    """Does the segment open on a connector (`\\[ \\Rightarrow w^2 = 4 \\]`): nothing before its first?"""
    return len(relations) > 1 and not relations[0].strip()


def _right_after(step: str, last_end: tuple[int, int] | None, index: int, start: int) -> bool:
    """Is this segment right after the last relation's segment, in the same step, with nothing but spacing
    or a comma between?"""
    if last_end is None or last_end[0] != index:
        return False
    return bool(_NOTHING_BETWEEN.fullmatch(step[last_end[1] : start]))


_NOTHING_BETWEEN = re.compile(r"[\s,.]*")
_SOLVED_FORM = re.compile(r"\s*[A-Za-z]\s*=\s*[-+]?[\d.\s]*(?:\\[dt]?frac\{\d+\}\{\d+\})?\s*")


# a noun of several relations right before a colon, which the displays after it spell out (an apposition:
# "the system of equations:", "the two equations:", "the following conditions:"); a lexicon of nouns, the
# noun last before the colon ("Subtracting these two equations, we get:" derives, and is not one)
_NAMES_A_LIST = re.compile(
    r"\b(?:systems?(?:\s+of\s+(?:equations|inequalities|congruences))?|equations|inequalities|congruences"
    r"|conditions|constraints)\s*:\s*$",
    re.IGNORECASE,
)


# verbs that work on the relations named ("Adding all three equations:", "Subtracting the two equations:"):
# the displays after them are derived, not the list itself
_OPERATES_ON = re.compile(
    r"\b(?:add\w*|subtract\w*|multipl\w*|divid\w*|combin\w*|summ?\w*|squar\w*|substitut\w*|plug\w*"
    r"|eliminat\w*|expand\w*|simplif\w*|rearrang\w*|equating|mov\w*|rewrit\w*|cancel\w*)\b",
    re.IGNORECASE,
)


def _names_a_list(before: str) -> bool:
    """Do the words right before a display name it as one of several given relations (`_NAMES_A_LIST`),
    with no verb in their sentence that works on them (`_OPERATES_ON`)?"""
    if not _NAMES_A_LIST.search(before):
        return False
    sentence = re.split(r"[.!?](?:\s|$)|\n\s*\n", _SEGMENT.sub(" X ", before).rstrip())[-1]
    return not _OPERATES_ON.search(sentence)


def _equation_only(relation: str) -> bool:
    """One equation: an `=` and no inequality, no alternative."""
    return "=" in relation and not re.search(
        r"[<>]|\\(?:[lg]eq?|[lg]t|neq?|pm|mp|approx)(?![A-Za-z])|\\text\{\s*or", relation
    )


def _display_continues(
    chain: Sequence[str],
    last_end: tuple[int, int] | None,
    index: int,
    start: int,
    displayed: str,
    relation: str,
) -> bool:
    """Is this displayed equation the next line of a derivation: right after a displayed equation of the
    same step, nothing but spacing or a comma between, neither a solved value (a list of values)?"""
    if not displayed or not _right_after(chain[index], last_end, index, start):
        return False
    if not _DISPLAY_OPEN.match(chain[index], start) or not _equation_only(relation):
        return False
    return not _SOLVED_FORM.fullmatch(displayed)


def _between(chain: Sequence[str], last_end: tuple[int, int], index: int, start: int) -> str:
    step, offset = last_end
    if step == index:
        return chain[index][offset:start]
    if step == index - 1:
        return chain[step][offset:] + "\n" + chain[index][:start]
    return "\n" * 3  # more than one step apart: no link


def _words_link(
    chain: Sequence[str], last_end: tuple[int, int] | None, index: int, start: int
) -> tuple[str, bool]:
    if last_end is None:
        return "", False
    between = _between(chain, last_end, index, start)
    words = _SEGMENT.sub(" X ", between)
    if len(words) > _MAX_BETWEEN or words.count("\n") > 2 or not _LINK.search(words):
        return "", False
    if _OTHER_SOURCE.search(_SOLVING_FOR.sub(" ", words)):
        return "", False
    return "cue", bool(REWRITE.search(words))


# "Solving for \\( x \\) yields": the unknown solved for, not a trial value ("for x = 1")
_SOLVING_FOR = re.compile(r"\b(?:solv|isolat)\w*\s+for\s+(?:X|[A-Za-z])\b(?!\s*=)", re.IGNORECASE)


_SENTENCE_END = re.compile(r"[.!?;:](?:\s|$)|\n")


def _statement_alone(step: str, start: int, end: int, *, up_to_math: bool = False) -> bool:
    """Nothing right after the segment, in its sentence, makes it a case, a trial or a second value; for a
    line of a displayed derivation (`up_to_math`), only the words before the next line count (a remark
    after the last line, "(not an integer)", is about that line)."""
    after = step[end : end + 80]
    cut = _SENTENCE_END.search(after)
    after = after[: cut.start()] if cut else after
    if up_to_math:
        after = after[: next((m.start() for m in _SEGMENT.finditer(after)), len(after))]
    return not _OTHER_SOURCE.search(_SEGMENT.sub(" ", after))


# a decimal with two places or more: possibly rounded (`92y = -1732` -> `y = -18.83`), not an exact value
_ROUNDED = re.compile(r"\d\.\d\d")


# "or" between alternatives (`x = 3 or x = -3`, `\\lor`): a word, not the names `o` and `r` (a radius `r`
# is one)
_OR_WORD = re.compile(r"\\lor(?![A-Za-z])|(?<![A-Za-z])or(?![A-Za-z])")


def _unknowns(text: str) -> frozenset[str]:
    return names(_OR_WORD.sub(" ", text))


def _worth_judging(before: str, after: str) -> bool:
    if _ROUNDED.search(after) and not _ROUNDED.search(before):
        return False
    old, new = _unknowns(before), _unknowns(after)
    if not old or not new or not new <= old or (len(old) > 1 and new != old):
        return False
    return plain_algebra(before, pi=True) and plain_algebra(after, pi=True)


def _listed(chain: Sequence[str], first: Statement | None, second: Statement | None) -> bool:
    """Are two statements items of one list: in one step, nothing but spacing, commas or "and" between
    them, no connector joining them (`\\( x + y = 5 \\), \\( x - y = 1 \\)`, or two displays in a row)?"""
    if first is None or second is None or first.step != second.step or second.link == "strong":
        return first is None or second is None  # a list of relations side by side in one segment
    return bool(_LIST_BETWEEN.fullmatch(chain[first.step][first.end : second.start]))


_LIST_BETWEEN = re.compile(r"(?:[\s,;.]|\band\b)*", re.IGNORECASE)
# an enumerator label between two relations: `(A)`, `(2)`, `b)` (labels of options and of listed items; a
# bullet or `3.` may number the lines of one derivation, so they are no label here)
_LABEL = r"(?:\(\s*[A-Za-z0-9]{1,2}\s*\)|(?<![^\s])[A-Za-z0-9]{1,2}\)(?=\s))"
_LABELLED_BETWEEN = re.compile(rf"(?:[\s,;]|\band\b)*{_LABEL}(?:[\s,;:]|{_LABEL})*", re.IGNORECASE)


def _labelled(chain: Sequence[str], first: Statement | None, second: Statement | None) -> bool:
    """Are two statements labelled items of one list (options `(A)` ... `(D)`): in one step, only an
    enumerator label and list punctuation between them?"""
    if first is None or second is None or first.step != second.step:
        return False
    return bool(_LABELLED_BETWEEN.fullmatch(chain[first.step][first.end : second.start]))


# words after a relation that name another relation it goes into ("substitute $xy = -5$ into the expanded
# equation to get ..."), or, after a relation stated as known or used, that work on "this" ("We know that
# $ab + ac + bc = 0$, so we can simplify this to ..."): the relation is put into another, not rewritten
_INTO_ANOTHER = re.compile(
    r"\b(?:into|in)\s+(?:the|our|that)\s+(?:\w+\s+)?(?:expression|equation|formula)\b", re.I
)
_KNOWN_BEFORE = re.compile(r"\b(?:know|knowing|using|use|given|recall|recalling)\b[^.!?\n]*$", re.IGNORECASE)
_THIS = re.compile(r"\b(?:this|it)\b", re.IGNORECASE)


def _auxiliary(chain: Sequence[str], before: Statement, after: Statement) -> bool:
    """Is `before` put into another relation to give `after`, rather than rewritten into it: words between
    them that name the relation it goes into, or "this" after a relation stated as known or used?

    >>> chain = ["Substitute $xy = -5$ into the expanded equation to get $4x^2 - 60 + 9y^2 = 4$."]
    >>> first, second = statements(chain)
    >>> _auxiliary(chain, first, second)
    True
    >>> chain = ["We know that $c^2 + d^2 = 8$. We can rewrite this as: $$c^2 = 8 - d^2$$"]
    >>> first, second = statements(chain)
    >>> _auxiliary(chain, first, second)
    False
    """
    between = _between(chain, (before.step, before.end), after.step, after.start)
    if _INTO_ANOTHER.search(between):
        return True
    # ("this" in the same sentence: "We know that A. We can rewrite this as: B" rewrites A itself)
    sentence_before = chain[before.step][max(0, before.start - 60) : before.start]
    this = _THIS.search(between)
    return bool(
        this and not _SENTENCE_END.search(between[: this.start()]) and _KNOWN_BEFORE.search(sentence_before)
    )


def equation_pairs(chain: Sequence[str]) -> list[EquationPair]:
    """The linked (before, after) relations of a chain, each at the step of its `after`, in plain algebra
    with the unknowns the worker may compare (the same, or fewer of one). A pair linked by words only is
    never read from the last item of one list to the first of the next, and in several unknowns never out
    of a list at all (the system as given, then the system simplified: the words link the lists, not one
    item to one item)."""
    found = statements(chain)
    pairs = []
    for k, (before, after) in enumerate(zip(found, found[1:], strict=False)):
        if before is None or after is None or not after.link:
            continue
        earlier = found[k - 1] if k > 0 else None
        later = found[k + 2] if k + 2 < len(found) else None
        if after.link == "cue":
            ends_list = k > 0 and _listed(chain, earlier, before)
            starts_list = later is not None and _listed(chain, after, later)
            # words between two lists link the lists, never the last item of one to the first of the other
            # (`x - 3 = 0 and x + 2 = 0 ... we find x = 3 and x = -2`), in any number of unknowns; in
            # several, an item of one list is never read with a relation outside it
            if (ends_list and starts_list) or (
                (ends_list or starts_list) and len(_unknowns(before.text) | _unknowns(after.text)) > 1
            ):
                continue
        if after.link == "cue" and _auxiliary(chain, before, after):
            continue  # "substitute $xy = -5$ into the expanded equation to get ...": `before` is put in
        if after.link != "strong" and (
            _labelled(chain, earlier, before) or (later is not None and _labelled(chain, after, later))
        ):
            # an item of a labelled list (options `(A)`-`(D)`) paired with a relation outside it, in any
            # number of unknowns; a connector inside one item (`(1) a^2 = 0 \implies a = 0`) stays
            continue
        if _worth_judging(before.text, after.text):
            pairs.append(EquationPair(after.step, before.text, after.text, after.rewrite))
    return pairs


def _two_sides_alike(text: str) -> bool:
    """Two adjacent sides in plain algebra with the same names (`identity_chain` may judge them)."""
    sides = [side for side in re.split(r"(?<![<>!])=", text)]
    keys = [names(side) if plain_algebra(side) else frozenset() for side in sides]
    return any(a and a == b for a, b in zip(keys, keys[1:], strict=False))


def identity_segments(chain: Sequence[str]) -> list[tuple[int, str]]:
    """Math segments (or aligned lines) that chain three sides or more with `=` and nothing else: each
    `=` between two expressions in the same names claims an identity (`symbolic.identity_chain`)."""
    out = []
    for index, step in enumerate(chain):
        for _, _, body in _segments(step):
            lines = re.split(r"\\\\", body)
            merged: list[str] = []
            for line in lines:  # `&= ...` continues the line before
                if merged and re.match(r"\s*&?\s*=", line):
                    merged[-1] += " " + line
                else:
                    merged.append(line)
            for line in merged:
                text = _clean(line)
                if (
                    text.count("=") >= 2
                    and _two_sides_alike(text)
                    and not re.search(r"[<>]|\\(?:[lg]eq?|approx|ne)(?![A-Za-z])", text)
                ):
                    if not _CONNECTOR.search(text) and not _PARALLEL.search(text):
                        out.append((index, text))
    return out


def check_equation_pairs_bounded(
    chain: Sequence[str], *, timeout_s: float = 3.0, pool: BoundedPool | None = None
) -> dict[int, list[ClaimResult]]:
    """The chain's equation steps (and system results, `systems`) judged in the bounded worker: claim
    results per step index (a time-out leaves that pair unjudged, and so does an expression known to blow
    up, `sympy_limits`, which is never sent)."""
    by_step: dict[int, list[ClaimResult]] = {}
    segments = [(index, text) for index, text in identity_segments(chain) if too_costly(text) is None]
    if segments:
        texts = [text for _, text in segments]
        found = run_items("prm_factory.verifiers.math.solution_sets:identity_chains", texts, timeout_s, pool)
        for (index, _), outcome in zip(segments, found, strict=True):
            if not isinstance(outcome, str):
                for claim, reason in outcome:
                    by_step.setdefault(index, []).append(ClaimResult(claim, False, None, reason, rule=""))
    for index, results in check_system_results_bounded(chain, timeout_s=timeout_s, pool=pool).items():
        by_step.setdefault(index, []).extend(results)
    pairs = []
    for pair in equation_pairs(chain):
        why = too_costly(pair.before) or too_costly(pair.after)
        if why is None:
            pairs.append(pair)
        else:
            claim = f"{pair.before} => {pair.after}"
            by_step.setdefault(pair.step, []).append(
                ClaimResult(claim, None, reason=f"not sent to SymPy: {why}")
            )
    if not pairs:
        return by_step
    payload = [(p.before, p.after, p.rewrite) for p in pairs]
    outcomes = run_items("prm_factory.verifiers.math.solution_sets:equation_steps", payload, timeout_s, pool)
    for pair, outcome in zip(pairs, outcomes, strict=True):
        claim = f"{pair.before} => {pair.after}"
        if isinstance(outcome, str):
            result = ClaimResult(claim, None, reason="equation step: timed out or worker failed")
        else:
            holds, reason = outcome
            result = ClaimResult(claim, holds, None, reason, rule="equation step" if holds else "")
        by_step.setdefault(pair.step, []).append(result)
    return by_step
