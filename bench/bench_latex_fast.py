"""`latex_fast.fast_parse` on corpora of real texts: how many it reads, that it reads them all as
`latex2sympy` does, and its time against the ANTLR parse on the same texts.

Why: `fast_parse` only pays where it accepts most of what the step checker parses, and only is safe where
every accepted text gives `latex2sympy`'s srepr (a different expression could change a verdict). Per JSON
file (a list of texts; repeats counted once) this prints the texts, the share handled, the mismatches
against `latex2sympy` (target 0), the commonest reasons for a refusal (the first token type outside the
subset, else `shape`: a function call, a set, a chained exponent, a syntax error), and on the handled
texts the seconds of the ANTLR path `parse_uncached` takes where `fast_parse` refuses (SLL over the saved
DFA, else `latex2sympy`) and of `fast_parse` over a first pass (the lexer's DFA, which both share, filled
by the handled count) and a second, with the ratio, and the seconds of plain `latex2sympy` (its own LL
parse) after them.

    python -m bench.bench_latex_fast TEXTS.json [TEXTS.json ...]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from antlr4 import InputStream
from latex2sympy2_extended import latex2sympy
from latex2sympy2_extended.antlr_parser import PSLexer, PSParser
from latex2sympy2_extended.latex2sympy2 import NormalizationConfig
from latex2sympy2_extended.math_normalization import normalize_latex
from sympy import srepr

from prm_factory.verifiers.math.latex_fast import fast_parse
from prm_factory.verifiers.math.latex_parse import _SLLConverter

SUBSET_TOKENS = {
    "NUMBER", "LETTER_NO_E", "GREEK_CMD", "CARET", "ADD", "SUB", "MUL", "DIV", "CMD_TIMES", "CMD_CDOT",
    "CMD_DIV", "L_PAREN", "R_PAREN", "L_BRACE", "R_BRACE", "L_BRACKET", "R_BRACKET", "CMD_FRAC", "FUNC_SQRT",
}  # fmt: skip


def same(fast: Any, text: str) -> bool:
    """`fast` is what `latex2sympy(text)` gives (srepr, or the trees where srepr cannot sort a `nan`)."""
    try:
        expected = latex2sympy(text)
    except Exception:
        return False
    try:
        return srepr(fast) == srepr(expected)
    except TypeError:
        return fast == expected and fast.args == expected.args


def refusal_reason(text: str) -> str:
    """The first token type outside the subset, else `shape` (the grammar reads it another way)."""
    lexer = PSLexer(InputStream(normalize_latex(text, NormalizationConfig())))
    lexer.removeErrorListeners()
    try:
        tokens = lexer.getAllTokens()
    except Exception:
        return "lexer error"
    for token in tokens:
        name = PSParser.symbolicNames[token.type]  # the lexer's own list is not indexed by token type
        if name not in SUBSET_TOKENS:
            return name if name != "<INVALID>" else repr(token.text)
    return "shape"


def antlr_parse(text: str) -> Any:
    """`parse_uncached` without `latex_fast`: the SLL parse, else the library's."""
    try:
        return _SLLConverter(None, None, False).parse(normalize_latex(text, NormalizationConfig()))
    except Exception:
        return latex2sympy(text)


def timed(parse: Callable[[str], Any], texts: list[str]) -> float:
    start = time.perf_counter()
    for text in texts:
        parse(text)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help="JSON files, each a list of LaTeX texts")
    args = parser.parse_args()
    for path in args.files:
        texts = list(dict.fromkeys(json.loads(path.read_text())))
        handled = [text for text in texts if fast_parse(text) is not None]
        # timed before the check below, whose LL parses would fill the ANTLR caches of the first pass
        antlr_cold, fast_cold = timed(antlr_parse, handled), timed(fast_parse, handled)
        antlr_warm, fast_warm = timed(antlr_parse, handled), timed(fast_parse, handled)
        library = timed(latex2sympy, handled)  # the library's own LL parse, after the passes above
        mismatches = [text for text in handled if not same(fast_parse(text), text)]
        reasons = Counter(refusal_reason(text) for text in texts if fast_parse(text) is None)
        print(f"{path.name}: {len(texts)} texts, {len(handled)} handled ({len(handled) / len(texts):.1%})")
        print(f"  mismatches against latex2sympy: {len(mismatches)}")
        for text in mismatches[:5]:
            print(f"    {text!r}")
        print(
            "  refused, by reason: " + ", ".join(f"{name} {count}" for name, count in reasons.most_common(12))
        )
        for label, antlr, fast in (("cold", antlr_cold, fast_cold), ("warm", antlr_warm, fast_warm)):
            times = f"ANTLR path {antlr:.2f} s, fast_parse {fast:.3f} s, ratio {antlr / fast:.0f}x"
            print(f"  {label} pass over the handled texts: {times}")
        print(
            f"  latex2sympy itself over the handled texts: {library:.2f} s, ratio {library / fast_warm:.0f}x"
        )


if __name__ == "__main__":
    main()
