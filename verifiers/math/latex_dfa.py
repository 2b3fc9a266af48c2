"""A warm start for the LaTeX parser's SLL prediction: its DFA cache, saved to a file and read back.

ANTLR predicts each parse decision by simulating the grammar's ATN and memoises what it found as DFA
states; a parse whose lookahead the DFA already holds is a few dict lookups, a new one simulates the ATN
(`computeTargetState`), which in the pure-Python runtime was about 70 % of a cold competition response's
parse time. A fresh process starts with an empty DFA, so every worker (and every reward-server replica)
paid that again. The DFA is a memo of a deterministic function of the grammar: loading states built by
another process changes what is predicted no more than building them here would, only how soon.

The file (`latex_parse.py` reads `SHIPPED`) holds each decision's DFA states with their ATN configurations
as plain data (ATN state numbers, prediction contexts as a table, precedence predicates), keyed by the
ANTLR runtime's and latex2sympy2_extended's versions and a digest of the grammar's serialized ATN: under any
other key the file is ignored and the parser starts cold, as before. A state this format cannot hold
(predicates other than precedence ones) is left out, with the edges that lead to it: a missing edge is a
cache miss, never a different prediction.

The shipped file is built from the math in the model-written dev chains (never the sets it is timed on):

    python -m prm_factory.verifiers.math.latex_parse build-dfa \
        evaluation/data/model_written_dev.jsonl evaluation/data/math_outputs_dev.jsonl
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from antlr4.atn.ATN import ATN
from antlr4.atn.ATNConfig import ATNConfig
from antlr4.atn.ATNConfigSet import ATNConfigSet
from antlr4.atn.SemanticContext import PrecedencePredicate, SemanticContext
from antlr4.dfa.DFA import DFA
from antlr4.dfa.DFAState import DFAState
from antlr4.PredictionContext import (
    ArrayPredictionContext,
    PredictionContext,
    PredictionContextCache,
    SingletonPredictionContext,
)
from latex2sympy2_extended.antlr_parser import PSParser

FORMAT = 1
SHIPPED = Path(__file__).parent / "data" / "latex_sll_dfa.json.gz"


def grammar_key() -> dict[str, Any]:
    """What a saved DFA is valid for: this format, the runtime, the converter and the grammar's ATN."""
    from latex2sympy2_extended.gen.antlr4_13_2 import PSParser as generated

    atn = hashlib.sha256(json.dumps(generated.serializedATN()).encode()).hexdigest()
    return {
        "format": FORMAT,
        "antlr4-python3-runtime": version("antlr4-python3-runtime"),
        "latex2sympy2_extended": version("latex2sympy2_extended"),
        "atn_sha256": atn,
    }


def fresh_dfas(atn: ATN = PSParser.atn) -> list[DFA]:
    """An empty DFA per decision, as a generated parser builds them."""
    return [DFA(atn.getDecisionState(d), d) for d in range(len(atn.decisionToState))]


# ------------------------------------------------------------------ saving


class _Tables:
    """Prediction contexts numbered in the order first met, parents first (-1: none, -2: the empty one)."""

    def __init__(self) -> None:
        self.contexts: list[list[Any]] = []
        self._context_ids: dict[int, int] = {}

    def context(self, ctx: PredictionContext | None) -> int:
        if ctx is None:
            return -1
        if ctx is PredictionContext.EMPTY:
            return -2
        known = self._context_ids.get(id(ctx))
        if known is not None:
            return known
        parents = [self.context(ctx.getParent(i)) for i in range(len(ctx))]
        returns = [ctx.getReturnState(i) for i in range(len(ctx))]
        kind = "s" if isinstance(ctx, SingletonPredictionContext) else "a"
        self.contexts.append([kind, parents, returns])
        self._context_ids[id(ctx)] = len(self.contexts) - 1
        return len(self.contexts) - 1


def _semantic(context: SemanticContext) -> int | None:
    """0 for none, precedence p + 1 for a precedence predicate; None for what this format does not hold."""
    if context is SemanticContext.NONE:
        return 0
    if type(context) is PrecedencePredicate:
        return context.precedence + 1
    return None


def _state_data(state: DFAState, tables: _Tables) -> list[Any] | None:
    configs = state.configs
    if state.predicates is not None or state.lexerActionExecutor is not None:
        return None
    numbers: list[int] = []
    for c in configs.configs:
        semantic = _semantic(c.semanticContext)
        if semantic is None:
            return None
        numbers += [
            c.state.stateNumber,
            c.alt,
            tables.context(c.context),
            semantic,
            c.reachesIntoOuterContext,
            int(c.precedenceFilterSuppressed),
        ]
    rows = _ints(numbers)  # one string a state: decoded only when the state is missed from
    conflicting = None if configs.conflictingAlts is None else sorted(configs.conflictingAlts)
    flags = [
        int(configs.fullCtx),
        configs.uniqueAlt,
        conflicting,
        int(configs.hasSemanticContext),
        int(configs.dipsIntoOuterContext),
    ]
    head = [state.stateNumber, int(state.isAcceptState), state.prediction, int(state.requiresFullContext)]
    return [head, flags, rows]


def to_data(dfas: Sequence[DFA]) -> dict[str, Any]:
    """The DFAs as JSON-ready data (see the module docstring)."""
    tables = _Tables()
    decisions = []
    for dfa in dfas:
        states = sorted(dfa._states, key=lambda s: s.stateNumber)
        kept: dict[int, int] = {}
        rows = []
        for state in states:
            row = _state_data(state, tables)
            if row is not None:
                kept[id(state)] = len(rows)
                rows.append(row)

        def edges_of(state: DFAState, kept: dict[int, int] = kept) -> list[Any]:
            if not state.edges:
                return []
            pairs = [[i, kept[id(t)]] for i, t in enumerate(state.edges) if t is not None and id(t) in kept]
            return [len(state.edges), pairs]

        edges = [edges_of(state) for state in states if id(state) in kept]
        if dfa.precedenceDfa:
            start: Any = edges_of(dfa.s0)
        else:
            start = kept.get(id(dfa.s0)) if dfa.s0 is not None else None
        decisions.append({"decision": dfa.decision, "states": rows, "edges": edges, "start": start})
    # one string, split on first use: decoding 80,000 small JSON lists was most of a load's time
    contexts = ";".join(f"{kind}:{_ints(parent)}:{_ints(ret)}" for kind, parent, ret in tables.contexts)
    return {"key": grammar_key(), "contexts": contexts, "decisions": decisions}


def _ints(numbers: Iterable[int]) -> str:
    return ",".join(map(str, numbers))


# ------------------------------------------------------------------ loading


def _context_at(i: int, built: Callable[[int], PredictionContext]) -> PredictionContext | None:
    """A saved context number read back (`_Tables.context`: -1 none, -2 the empty context)."""
    return None if i == -1 else PredictionContext.EMPTY if i == -2 else built(i)


def _row(row: str) -> tuple[str, list[int], list[int]]:
    """A saved context's kind (`s` singleton, `a` array), parent numbers and return states."""
    kind, parent_text, return_text = row.split(":")
    return kind, [int(p) for p in parent_text.split(",")], [int(r) for r in return_text.split(",")]


def _context(
    kind: str, parents: list[int], returns: list[int], built: Callable[[int], PredictionContext]
) -> PredictionContext:
    """One saved context, its parents (saved before it) read through `built`."""
    if kind == "s":
        return SingletonPredictionContext.create(_context_at(parents[0], built), returns[0])
    return ArrayPredictionContext([_context_at(p, built) for p in parents], list(returns))


def _configs(flags: list[Any], rows: str, atn: ATN, ctx: Callable[[int], Any]) -> ATNConfigSet:
    full, unique, conflicting, has_semantic, dips = flags
    configs = ATNConfigSet(bool(full))
    numbers = [int(n) for n in rows.split(",")] if rows else []
    for at in range(0, len(numbers), 6):
        state, alt, context, semantic, reaches, suppressed = numbers[at : at + 6]
        predicate = SemanticContext.NONE if semantic == 0 else PrecedencePredicate(semantic - 1)
        config = ATNConfig(atn.states[state], alt, ctx(context), predicate)
        config.reachesIntoOuterContext = reaches
        config.precedenceFilterSuppressed = bool(suppressed)
        configs.configs.append(config)
    configs.uniqueAlt = unique
    configs.conflictingAlts = None if conflicting is None else set(conflicting)
    configs.hasSemanticContext = bool(has_semantic)
    configs.dipsIntoOuterContext = bool(dips)
    configs.setReadonly(True)
    return configs


class _Contexts:
    """The saved prediction contexts, each built when a configuration first needs it, with the parents it
    reads (a parent is saved before its children). Building the whole table (63,000 contexts) on the
    first miss took 0.5-0.9 s, paid by whichever response missed first; a miss reads a few dozen."""

    def __init__(self, rows: str, cache: PredictionContextCache) -> None:
        self._rows: list[str] | None = None
        self._text, self._cache = rows, cache
        self._built: dict[int, PredictionContext] = {}
        self._lock = threading.Lock()

    def __call__(self, i: int) -> PredictionContext | None:
        if i < 0:
            return _context_at(i, self._built.__getitem__)
        built = self._built.get(i)
        if built is None:
            with self._lock:
                built = self._build(i)
        return built

    def _build(self, i: int) -> PredictionContext:
        if self._rows is None:
            self._rows = self._text.split(";") if self._text else []
        rows, built = self._rows, self._built
        pending = [i]
        while pending:  # parents first, without recursion (a chain of contexts may be long)
            at = pending[-1]
            if at in built:
                pending.pop()
                continue
            kind, parents, returns = _row(rows[at])
            if any(p >= at for p in parents):  # parents are saved first: this file is malformed
                raise ValueError(f"saved prediction context {at} names a later parent")
            missing = [p for p in parents if p >= 0 and p not in built]
            if missing:
                pending.extend(missing)
                continue
            built[at] = self._cache.add(_context(kind, parents, returns, built.__getitem__))
            pending.pop()
        return built[i]


class _SavedState(DFAState):
    """A loaded DFA state whose ATN configurations are built when a prediction first needs them.

    A DFA hit reads only a state's edges, acceptance and prediction; the configurations serve a miss from
    this state (the next state is computed from them). Building all of them at load took seconds."""

    __slots__ = ("_saved",)

    def __init__(self, number: int, saved: tuple[list[Any], str, ATN, _Contexts]) -> None:
        self._saved: tuple[list[Any], str, ATN, _Contexts] | None = saved
        super().__init__(number, None)

    @property  # type: ignore[override]
    def configs(self) -> ATNConfigSet:
        saved = self._saved
        if saved is not None:  # built before the mark is cleared: another thread sees one or the other
            DFAState.configs.__set__(self, _configs(*saved))
            self._saved = None
        return DFAState.configs.__get__(self)

    @configs.setter
    def configs(self, value: ATNConfigSet | None) -> None:
        if value is not None:
            self._saved = None
        DFAState.configs.__set__(self, value)


def from_data(
    data: dict[str, Any], cache: PredictionContextCache, atn: ATN = PSParser.atn
) -> list[DFA] | None:
    """The DFAs `to_data` saved; None where the key is not this grammar's.

    Loaded states are reached by edges only, not entered in each DFA's state table: a state the parser
    builds again is then kept twice (memory), never predicted differently."""
    if data.get("key") != grammar_key():
        return None
    ctx = _Contexts(data["contexts"], cache)
    dfas = fresh_dfas(atn)
    for saved in data["decisions"]:
        dfa = dfas[saved["decision"]]
        states = []
        for (number, accept, prediction, full), flags, rows in saved["states"]:
            state = _SavedState(number, (flags, rows, atn, ctx))
            state.isAcceptState = bool(accept)
            state.prediction = prediction
            state.requiresFullContext = bool(full)
            states.append(state)

        def link(state: DFAState, edges: list[Any], states: list[DFAState] = states) -> None:
            if edges:
                size, pairs = edges
                state.edges = [None] * size
                for i, target in pairs:
                    state.edges[i] = states[target]

        for state, edges in zip(states, saved["edges"], strict=True):
            link(state, edges)
        if dfa.precedenceDfa:
            link(dfa.s0, saved["start"])
        elif saved["start"] is not None:
            dfa.s0 = states[saved["start"]]
    return dfas


def save(dfas: Sequence[DFA], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = json.dumps(to_data(dfas), separators=(",", ":")).encode()
    path.write_bytes(gzip.compress(payload, compresslevel=9, mtime=0))


def load(path: Path, cache: PredictionContextCache) -> list[DFA] | None:
    """The saved DFAs, or None where the file is missing, unreadable, malformed or for another grammar (the
    parser then starts cold). A state whose saved configurations turn out malformed later fails its SLL
    parse, which the library's own parse then reads: slower, never another reading."""
    try:
        data = json.loads(gzip.decompress(path.read_bytes()))
        return from_data(data, cache) if isinstance(data, dict) else None
    except (OSError, ValueError, EOFError, KeyError, IndexError, TypeError):
        return None


_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
_RELATION = re.compile(r"=|\\[lg]eq?(?![A-Za-z])|<|>")


def math_texts(lines: Iterable[str]) -> list[str]:
    """The distinct math spans of JSONL chains (`steps` or `completion`), and each side of their relations:
    the shapes the step checker parses.

    >>> math_texts(['{"steps": ["So $x^2 = 4$ and $y = 2x$."]}'])
    ['x^2 = 4', 'x^2', '4', 'y = 2x', 'y', '2x']
    """
    seen: dict[str, None] = {}
    for line in lines:
        row = json.loads(line)
        text = "\n".join(row.get("steps") or [row.get("completion") or ""])
        for match in _MATH.finditer(text):
            span = next(group for group in match.groups() if group is not None).strip()
            for piece in [span, *(side.strip() for side in _RELATION.split(span))]:
                if piece and len(piece) <= 400:
                    seen.setdefault(piece)
    return list(seen)
