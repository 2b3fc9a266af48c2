"""The step checker's LaTeX parse (`latex2sympy`'s reading) made cheaper; runs inside a bounded worker.

Five savings, none of which changes what a text parses to:

- **No ANTLR for the common subset.** `latex_fast` reads polynomials, fractions, roots, powers and the
  usual functions with the converter's own rules, or refuses; about 60 % of a competition response's sides
  never reach the ANTLR parser (every `x^2` among them, which SLL cannot read and LL reads slowly).
- **No parse of what cannot be lexed.** The grammar's start rule ends at EOF, so every parse lexes the
  whole text: a character the lexer refuses (`\\dots`, `\\Rightarrow`) fails every parse in every mode.
  It raises at once (the same exception type), where both modes used to simulate the grammar up to it.
- **SLL first, then LL over the same DFA.** latex2sympy2_extended's ANTLR parser predicts in ANTLR's LL
  mode, whose full-context fallback is most of a parse's time in the pure-Python runtime. ANTLR documents
  that a parse in SLL mode either gives the tree LL mode gives or reports a syntax error
  (`PredictionMode.SLL`); the converter's error listener raises on any syntax error, so an SLL parse that
  returns is LL's tree, and one that raises is parsed again in LL mode: ANTLR's two-stage parse, whose two
  stages share one DFA (a state SLL found ambiguous is marked for full-context prediction, which LL mode
  makes). That DFA is this module's own, so the library's parsers (math-verify's) never see its states.
- **A warm start.** The SLL DFA begins as the one saved from the model-written dev chains' math
  (`latex_dfa.py`, `data/latex_sll_dfa.json.gz`) instead of empty: each worker and each reward-server
  replica no longer builds the same states again (a DFA is a memo of the grammar's prediction).
- **A process-wide cache** by text (`memo`): the same side is parsed once however many runs and steps
  repeat it (a third of a competition response's parses were repeats).
"""

from __future__ import annotations

import argparse
import json
import threading
from pathlib import Path
from typing import Any

import sympy
from antlr4.atn.ParserATNSimulator import ParserATNSimulator
from antlr4.atn.PredictionMode import PredictionMode
from antlr4.dfa.DFA import DFA
from antlr4.PredictionContext import PredictionContextCache
from latex2sympy2_extended.latex2sympy2 import ConversionConfig, _Latex2Sympy

from prm_factory.verifiers.math import latex_dfa
from prm_factory.verifiers.math.latex_fast import fast_read, mixed_number, side_by_side
from prm_factory.verifiers.math.memo import DEFAULT_SIZE, Memo

CACHE_SIZE = DEFAULT_SIZE
"""Texts kept."""

_SLL_CONTEXTS = PredictionContextCache()
_SLL_DFA: list[DFA] | None = None  # loaded on the first parse: a process that parses nothing pays nothing
_SLL_LOCK = threading.Lock()


def sll_dfas() -> list[DFA]:
    """The SLL parser's DFA cache, one per decision: the saved one (latex_dfa.py) where it is this
    grammar's, else empty."""
    global _SLL_DFA
    loaded = _SLL_DFA
    if loaded is not None:  # every parse asks: no lock once loaded
        return loaded
    with _SLL_LOCK:
        if _SLL_DFA is None:
            _SLL_DFA = latex_dfa.load(latex_dfa.SHIPPED, _SLL_CONTEXTS) or latex_dfa.fresh_dfas()
        return _SLL_DFA


def start_cold() -> None:
    """Forget every SLL DFA state, the loaded ones too (building the saved DFA; tests)."""
    global _SLL_DFA, _SLL_CONTEXTS
    with _SLL_LOCK:
        _SLL_CONTEXTS = PredictionContextCache()
        _SLL_DFA = latex_dfa.fresh_dfas()


class SideBySide(_Latex2Sympy):
    """latex2sympy's converter reading factors side by side as `latex_fast.side_by_side` says (a mixed
    number only as written), its one change to the library's reading; the parsers below are built on it."""

    def convert_postfix_list(self, arr: Any, i: int = 0) -> Any:
        if i >= len(arr) - 1:
            return super().convert_postfix_list(arr, i)
        res = self.convert_postfix(arr[i])
        if not isinstance(res, sympy.Expr):  # a matrix or a derivative: the library's reading
            return super().convert_postfix_list(arr, i)
        rh = self.convert_postfix_list(arr, i + 1)
        if isinstance(rh, sympy.MatrixBase):
            return self.mat_mul_flat(res, rh)
        left_text, right_text = arr[i].getText(), arr[i + 1].getText()
        reading = side_by_side(res, rh, left_text, right_text, i + 1 == len(arr) - 1)
        if reading == "refused":  # the exception type the converter raises on what it cannot read
            raise Exception(f"side by side, not read: {left_text} {right_text}")
        return mixed_number(res, rh) if reading == "mixed" else self.mul_flat(res, rh)


class _SLLConverter(SideBySide):
    """The converter whose parser predicts in SLL mode, over its own DFA cache."""

    def create_parser(self, latex_str: str) -> Any:
        parser = super().create_parser(latex_str)
        parser._interp = ParserATNSimulator(parser, parser.atn, sll_dfas(), _SLL_CONTEXTS)
        parser._interp.predictionMode = PredictionMode.SLL
        return parser


class _LLConverter(_SLLConverter):
    """The same parser predicting in LL mode over the same DFA: ANTLR's two-stage parse (SLL, then LL on
    a syntax error) shares one DFA between the stages, as a state SLL found ambiguous is marked for a
    full-context prediction, which LL mode then makes; so LL starts warm instead of from the library's
    empty cache."""

    def create_parser(self, latex_str: str) -> Any:
        parser = super().create_parser(latex_str)
        parser._interp.predictionMode = PredictionMode.LL
        return parser


def parse_uncached(text: str) -> Any:
    """`latex2sympy(text)` with its defaults: `latex_fast`'s exact reading of the common subset, else the
    SLL parse where it succeeds, else the LL parse (the library's mode); a text the grammar's lexer
    refuses raises at once (the parse must lex every character to reach its end: no mode reads it)."""
    reading = fast_read(text)
    if reading.value is not None:
        return reading.value
    normalized, column = reading.normalized, reading.unlexable_at
    if column is not None:  # the message latex2sympy's error listener gives a lexer error
        raise Exception(f"I don't understand this\n{normalized}\n{'~' * column}^")
    return parse_antlr(normalized)


def parse_antlr(normalized: str) -> Any:
    """The ANTLR parse alone of a normalized text: the SLL parse where it succeeds, else the LL parse."""
    try:
        return _SLLConverter(None, None, False, config=ConversionConfig()).parse(normalized)
    except Exception:  # a syntax error in SLL mode (or a conversion error): LL mode decides
        return _LLConverter(None, None, False, config=ConversionConfig()).parse(normalized)


_memo = Memo(CACHE_SIZE)


def parse_latex(text: str) -> Any:
    """What `latex2sympy(text)` returns or raises (but for factors side by side: `latex_fast.side_by_side`),
    from the cache where this text was parsed before.

    >>> parse_latex("\\\\frac{1}{2} + x")
    x + 1/2
    """
    return _memo.call(parse_uncached, text, text)


def clear_cache() -> None:
    """Forget every kept parse (tests)."""
    _memo.clear()


def main(argv: list[str] | None = None) -> None:
    """`build-dfa CHAINS...`: parse the math of JSONL chain files cold, then save the SLL DFA it built
    (latex_dfa.py; the shipped file's command is in its docstring)."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("command", choices=["build-dfa"])
    parser.add_argument("chains", nargs="+", type=Path, help="JSONL chain files (rows with `steps`)")
    parser.add_argument("--out", type=Path, default=latex_dfa.SHIPPED)
    args = parser.parse_args(argv)
    start_cold()
    texts = [t for path in args.chains for t in latex_dfa.math_texts(path.read_text("utf-8").splitlines())]
    for text in texts:
        try:
            parse_uncached(text)
        except Exception:  # a text the parser refuses still taught the DFA its prefix
            pass
    latex_dfa.save(sll_dfas(), args.out)
    states = sum(len(dfa._states) for dfa in sll_dfas())
    print(json.dumps({"texts": len(texts), "dfa_states": states, "out": str(args.out)}))


if __name__ == "__main__":
    main()
