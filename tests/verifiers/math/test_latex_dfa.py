"""`latex_dfa`: the SLL parser's DFA saved and read back reads every text as a cold parser does (the same
tree, the same error), predicts from the saved states without simulating the grammar again, refuses a file
made for another grammar, and the shipped file is this environment's grammar's (issue 49)."""

from __future__ import annotations

import doctest
import gzip
import json

import pytest
import sympy
from antlr4.atn.ParserATNSimulator import ParserATNSimulator
from antlr4.PredictionContext import (
    ArrayPredictionContext,
    PredictionContext,
    PredictionContextCache,
    SingletonPredictionContext,
)

from prm_factory.verifiers.math import latex_dfa, latex_parse

TAUGHT = [
    "x^2 - 2x - 3",
    "\\frac{a + b}{c} \\cdot 2",
    "\\sqrt{x^2 + 64} - 8",
    "3(\\alpha + 1)^2 = 12",
    "\\sin \\theta \\cdot \\cos \\theta",
    "\\binom{6}{3} + \\log_{2} 8",
    "a, b, c",
    "\\frac{1}{",  # a text the parser refuses still taught the DFA its prefix
]
UNSEEN = [
    "y^3 + 3y - 1",
    "\\frac{p}{q} \\cdot \\sqrt{2} + 7",
    "(\\beta - 2)(\\beta + 2) = \\beta^2 - 4",
    "\\tan \\phi",
    "\\log_{3} 81 - 4",
    "1,000",
    "x +* 2",
]


def _outcome(text: str) -> tuple[str, str]:
    try:
        return "ok", sympy.srepr(latex_parse.parse_uncached(text))
    except Exception as exc:
        return "error", type(exc).__name__


@pytest.fixture
def cold(monkeypatch):
    """latex_parse with an empty SLL DFA of its own (restored afterwards)."""
    monkeypatch.setattr(latex_parse, "_SLL_CONTEXTS", PredictionContextCache())
    monkeypatch.setattr(latex_parse, "_SLL_DFA", latex_dfa.fresh_dfas())


def _sll_reads(text: str) -> bool:
    try:
        latex_parse._SLLConverter(None, None, False).parse(text)
    except Exception:
        return False
    return True


def _saved_from(texts, tmp_path):
    for text in texts:
        _outcome(text)
    path = tmp_path / "dfa.json.gz"
    latex_dfa.save(latex_parse.sll_dfas(), path)
    return path


def test_a_loaded_dfa_reads_every_text_as_a_cold_one(cold, tmp_path, monkeypatch):
    expected = {text: _outcome(text) for text in TAUGHT + UNSEEN}  # cold answers (this DFA then saved)
    path = _saved_from(TAUGHT, tmp_path)
    contexts = PredictionContextCache()
    loaded = latex_dfa.load(path, contexts)
    assert loaded is not None
    monkeypatch.setattr(latex_parse, "_SLL_CONTEXTS", contexts)
    monkeypatch.setattr(latex_parse, "_SLL_DFA", loaded)
    assert {text: _outcome(text) for text in UNSEEN + TAUGHT} == expected


def _reachable(dfa) -> dict[int, object]:
    """A DFA's states reached by edges from its start, by number (loaded ones are not in its table)."""
    starts = list(dfa.s0.edges or []) if dfa.precedenceDfa else [dfa.s0]
    found: dict[int, object] = {}
    todo = [state for state in starts if state is not None]
    while todo:
        state = todo.pop()
        if state.stateNumber not in found:
            found[state.stateNumber] = state
            todo += [edge for edge in state.edges or [] if edge is not None]
    return found


def test_every_saved_state_comes_back_with_its_configurations(cold, tmp_path):
    path = _saved_from(TAUGHT + UNSEEN, tmp_path)
    loaded = latex_dfa.load(path, PredictionContextCache())
    compared = 0
    for original, again in zip(latex_parse.sll_dfas(), loaded, strict=True):
        by_number = {state.stateNumber: state for state in original._states}
        for number, state in _reachable(again).items():
            saved = by_number[number]
            assert (state.isAcceptState, state.prediction) == (saved.isAcceptState, saved.prediction)
            assert state.configs == saved.configs and hash(state.configs) == hash(saved.configs)
            compared += 1
    assert compared > 100


def test_taught_texts_are_predicted_from_the_saved_states(cold, tmp_path, monkeypatch):
    """A text the saved DFA was built on needs no simulation of the grammar: every prediction is a hit."""
    texts = [t for t in TAUGHT if _sll_reads(t)]  # (`x^2` needs the LL parse, whose DFA is the library's)
    assert len(texts) >= 4
    path = _saved_from(texts, tmp_path)
    misses = []
    simulate = ParserATNSimulator.computeTargetState
    monkeypatch.setattr(
        ParserATNSimulator,
        "computeTargetState",
        lambda self, *args: misses.append(args[0].decision) or simulate(self, *args),
    )
    contexts = PredictionContextCache()
    monkeypatch.setattr(latex_parse, "_SLL_CONTEXTS", contexts)
    monkeypatch.setattr(latex_parse, "_SLL_DFA", latex_dfa.load(path, contexts))
    for text in texts:
        latex_parse._SLLConverter(None, None, False).parse(text)  # the SLL parse alone
    assert misses == []
    monkeypatch.setattr(latex_parse, "_SLL_DFA", latex_dfa.fresh_dfas())  # and cold, it simulates
    latex_parse._SLLConverter(None, None, False).parse(texts[1])
    assert misses


def test_a_file_for_another_grammar_or_unreadable_is_not_used(cold, tmp_path):
    path = _saved_from(TAUGHT[:2], tmp_path)
    data = json.loads(gzip.decompress(path.read_bytes()))
    data["key"]["latex2sympy2_extended"] = "0.0.1"
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    assert latex_dfa.load(path, PredictionContextCache()) is None
    data["key"] = latex_dfa.grammar_key()
    data["decisions"][0]["states"] = [["not", "a", "state"]]
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    assert latex_dfa.load(path, PredictionContextCache()) is None
    path.write_bytes(gzip.compress(b"[1, 2]"))
    assert latex_dfa.load(path, PredictionContextCache()) is None
    path.write_bytes(b"not gzip")
    assert latex_dfa.load(path, PredictionContextCache()) is None
    assert latex_dfa.load(tmp_path / "missing.json.gz", PredictionContextCache()) is None


def test_a_saved_context_is_built_with_its_parents_only():
    """A miss reads a few contexts: building the whole table on the first miss took 0.5-0.9 s."""
    contexts = latex_dfa._Contexts("s:-2:5;s:0:7;a:1,-2:9,3;s:-2:4", PredictionContextCache())
    built = contexts(2)
    assert sorted(contexts._built) == [0, 1, 2]  # not 3
    assert built == ArrayPredictionContext(
        [
            SingletonPredictionContext.create(
                SingletonPredictionContext.create(PredictionContext.EMPTY, 5), 7
            ),
            PredictionContext.EMPTY,
        ],
        [9, 3],
    )
    assert contexts(-1) is None and contexts(-2) is PredictionContext.EMPTY


def test_a_context_naming_a_later_parent_is_malformed():
    with pytest.raises(ValueError, match="later parent"):
        latex_dfa._Contexts("s:1:5;s:0:4", PredictionContextCache())(0)


def test_the_shipped_dfa_is_this_grammars():
    """Rebuild it (the command in latex_dfa's docstring) when the runtime, latex2sympy2_extended or its
    grammar changes: with another key the parser still reads every text, only cold."""
    data = json.loads(gzip.decompress(latex_dfa.SHIPPED.read_bytes()))
    assert data["key"] == latex_dfa.grammar_key()
    assert latex_dfa.load(latex_dfa.SHIPPED, PredictionContextCache()) is not None


def test_docstrings():
    assert doctest.testmod(latex_dfa).failed == 0
