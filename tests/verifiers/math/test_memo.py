"""`memo.remembered` (issue 49): a reading of a text is done once and handed out again, its exception raised
again; what would not come out the same (a `Dummy`, a mutable matrix, a MemoryError or RecursionError) is
never kept; the oldest entry leaves first past the size."""

from __future__ import annotations

import doctest

import pytest
import sympy

from prm_factory.verifiers.math import memo
from prm_factory.verifiers.math.memo import Memo, keepable, remembered


def test_results_and_errors_are_kept():
    calls = []

    @remembered
    def read(text: str, *, pi: bool = False) -> sympy.Expr:
        calls.append((text, pi))
        if text == "bad":
            raise ValueError("not read: bad")
        return sympy.Symbol(text) + (sympy.pi if pi else 0)

    assert read("x") is read("x")
    assert read("x", pi=True) == sympy.Symbol("x") + sympy.pi
    for _ in range(2):
        with pytest.raises(ValueError, match="not read: bad") as raised:
            read("bad")
        assert raised.value.__context__ is None
    assert calls == [("x", False), ("x", True), ("bad", False)]


def test_what_is_never_kept():
    assert keepable(sympy.Symbol("x") + 1)
    assert not keepable(sympy.Dummy("k") + 1)  # two readings give two dummies, a kept one only one
    assert not keepable(sympy.Matrix([[1]]))  # mutable
    assert not keepable([sympy.Symbol("x")])
    calls = []

    @remembered
    def read(text: str):
        calls.append(text)
        if text == "deep":
            raise RecursionError
        if text == "big":
            raise MemoryError
        return sympy.Dummy("k") if text == "dummy" else [text]

    for _ in range(2):
        for text in ("deep", "big"):
            with pytest.raises((RecursionError, MemoryError)):
                read(text)
        read("dummy"), read("list")
    assert calls == ["deep", "big", "dummy", "list"] * 2


def test_bounded_oldest_out():
    kept = Memo(size=2)
    calls = []

    def read(text):
        calls.append(text)
        return sympy.Integer(len(text))

    assert [kept.call(read, t, t) for t in ("a", "bb", "a", "ccc", "bb")] == [1, 2, 1, 3, 2]
    assert calls == ["a", "bb", "ccc", "bb"]  # "bb" left when "ccc" came in ("a" was used since)
    assert "a" not in kept and "ccc" in kept
    kept.clear()
    assert "ccc" not in kept


def test_docstrings():
    assert doctest.testmod(memo).failed == 0
