"""Remember what a pure reading of a text gave, in a SymPy worker: the same side, equation or run comes back
across the steps and checks of a response (a third to a half of the parses of a competition response were
repeats), and a worker serves many responses.

Only what gives the same answer again is kept: an immutable SymPy result holding no `Dummy` (two readings
give two distinct dummies, one kept object would make them equal), or the exception the reading raised
(raised again, without the frames of the first time); never a `MemoryError` or `RecursionError`, which
depend on the moment (the worker's memory, the stack's depth), not on the text.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import sympy

DEFAULT_SIZE = 4096
"""Entries kept per function (a 30-step competition response reads about 40 sides; a worker serves many)."""

_NOT_KEPT = (MemoryError, RecursionError)
_F = TypeVar("_F", bound=Callable[..., Any])


def keepable(result: Any) -> bool:
    """Whether a result can be handed out again: immutable SymPy, no `Dummy` in it."""
    return isinstance(result, sympy.Basic) and not result.has(sympy.Dummy)


class Memo:
    """A bounded, thread-safe map from a call's arguments to what it returned or raised (least recently used
    first out)."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self.size = size
        self._entries: OrderedDict[Hashable, tuple[bool, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def call(self, function: Callable[..., Any], key: Hashable, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            kept = self._entries.get(key)
            if kept is not None:
                self._entries.move_to_end(key)
        if kept is not None:
            ok, value = kept
            if ok:
                return value
            raise value.with_traceback(None)
        try:
            result = function(*args, **kwargs)
        except _NOT_KEPT:
            raise
        except Exception as exc:
            exc.__context__ = exc.__cause__ = None  # nothing of the failed reading's frames is kept
            self._keep(key, (False, exc))
            raise exc.with_traceback(None) from None
        if keepable(result):
            self._keep(key, (True, result))
        return result

    def _keep(self, key: Hashable, entry: tuple[bool, Any]) -> None:
        with self._lock:
            self._entries[key] = entry
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._entries

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def remembered(function: _F) -> _F:
    """`function` (of hashable arguments) through a `Memo` of its own, reachable as `.memo`.

    >>> @remembered
    ... def half(text: str) -> sympy.Expr:
    ...     return sympy.Rational(len(text), 2)
    >>> half("abc"), half("abc"), ("abc",) in half.memo
    (3/2, 3/2, True)
    """
    memo = Memo()

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        key = (args, tuple(sorted(kwargs.items())))
        return memo.call(function, key if kwargs else args, *args, **kwargs)

    wrapper.memo = memo  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]
