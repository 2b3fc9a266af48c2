"""The step checker's LaTeX parse (`latex2sympy`'s reading) made cheaper; runs inside a bounded worker.

Two savings, neither of which changes what a text parses to:

- **SLL first.** latex2sympy2_extended's ANTLR parser predicts in ANTLR's LL mode, whose full-context
  fallback is most of a parse's time in the pure-Python runtime (a 30-step competition response spent about
  70 % of its SymPy time parsing). ANTLR documents that a parse in SLL mode either gives the tree LL mode
  gives or reports a syntax error (`PredictionMode.SLL`); the converter's error listener raises on any
  syntax error, so an SLL parse that returns is LL's tree, and one that raises is parsed again by plain
  `latex2sympy`, as before. The SLL parser keeps its own DFA cache, so the library's LL parsers (here and
  in math-verify) never see states built in SLL mode.
- **A process-wide cache** by text: the same side is parsed once however many runs and steps repeat it
  (a third of a competition response's parses were repeats). Only immutable SymPy results are kept, never
  one holding a `Dummy` (two parses give two distinct dummies; one cached object would make them equal),
  and a parse that ran out of memory or stack is never kept (it depends on the moment, not the text).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import sympy
from antlr4.atn.ParserATNSimulator import ParserATNSimulator
from antlr4.atn.PredictionMode import PredictionMode
from antlr4.dfa.DFA import DFA
from antlr4.PredictionContext import PredictionContextCache
from latex2sympy2_extended import latex2sympy
from latex2sympy2_extended.antlr_parser import PSParser
from latex2sympy2_extended.latex2sympy2 import ConversionConfig, NormalizationConfig, _Latex2Sympy
from latex2sympy2_extended.math_normalization import normalize_latex

CACHE_SIZE = 4096
"""Texts kept (a 30-step competition response parses about 40 sides; a worker serves many)."""

_SLL_DFA = [DFA(state, decision) for decision, state in enumerate(PSParser.atn.decisionToState)]
_SLL_CONTEXTS = PredictionContextCache()
_NOT_KEPT = (MemoryError, RecursionError)


class _SLLConverter(_Latex2Sympy):
    """latex2sympy's converter whose parser predicts in SLL mode, over its own DFA cache."""

    def create_parser(self, latex_str: str) -> Any:
        parser = super().create_parser(latex_str)
        parser._interp = ParserATNSimulator(parser, parser.atn, _SLL_DFA, _SLL_CONTEXTS)
        parser._interp.predictionMode = PredictionMode.SLL
        return parser


def parse_uncached(text: str) -> Any:
    """`latex2sympy(text)` with its defaults: the SLL parse where it succeeds, else the library's own."""
    try:
        converter = _SLLConverter(None, None, False, config=ConversionConfig())
        return converter.parse(normalize_latex(text, NormalizationConfig()))
    except Exception:  # a syntax error in SLL mode (or a conversion error): the plain parse decides
        return latex2sympy(text)


_cache: OrderedDict[str, tuple[bool, Any]] = OrderedDict()
_lock = threading.Lock()


def _keepable(result: Any) -> bool:
    return isinstance(result, sympy.Basic) and not result.has(sympy.Dummy)


def parse_latex(text: str) -> Any:
    """What `latex2sympy(text)` returns or raises, from the cache where this text was parsed before.

    >>> parse_latex("\\\\frac{1}{2} + x")
    x + 1/2
    """
    with _lock:
        kept = _cache.get(text)
        if kept is not None:
            _cache.move_to_end(text)
    if kept is not None:
        ok, value = kept
        if ok:
            return value
        raise value.with_traceback(None)
    try:
        result = parse_uncached(text)
    except _NOT_KEPT:
        raise
    except Exception as exc:
        exc.__context__ = exc.__cause__ = None  # nothing of the failed parse's frames is kept
        _keep(text, (False, exc))
        raise exc.with_traceback(None) from None
    if _keepable(result):
        _keep(text, (True, result))
    return result


def _keep(text: str, entry: tuple[bool, Any]) -> None:
    with _lock:
        _cache[text] = entry
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)


def clear_cache() -> None:
    """Forget every kept parse (tests)."""
    with _lock:
        _cache.clear()
