"""How many steps an audit draws from each stratum: a floor spread evenly, the rest in proportion to size.

Why both: a precision of `incorrect` is only as good as the number of a source's `incorrect` steps reviewed,
and those are rare; proportional allocation alone would give a rare stratum (the verifier's `incorrect`, the
steps where sources disagree) one step or none, and no interval. An even split alone wastes the budget on
tiny strata while the big ones (everything agrees `correct`), where most missed errors hide, get few. So
`equal_share` of the budget goes evenly (every stratum up to its size, the rest passed on), and the remainder
in proportion to what is left of each stratum. Every stratum of two or more steps gets at least two when the
budget allows: the bootstrap needs two draws in a stratum to see its spread.

>>> allocate({"a": 1000, "b": 10, "c": 1}, budget=40, equal_share=0.5)
{'a': 30, 'b': 9, 'c': 1}
"""

from __future__ import annotations

import math
from collections.abc import Mapping


def _even(sizes: Mapping[str, int], budget: int) -> dict[str, int]:
    """Water-filling: the largest equal number per stratum (capped at its size) that fits, then one more to
    the first strata (in key order) while budget remains."""
    taken = dict.fromkeys(sizes, 0)
    left = budget
    open_ = sorted(key for key, size in sizes.items() if size > 0)
    while left > 0 and open_:
        share = left // len(open_)
        if share == 0:
            for key in open_[:left]:
                taken[key] += 1
            return taken
        for key in list(open_):
            add = min(share, sizes[key] - taken[key])
            taken[key] += add
            left -= add
            if taken[key] >= sizes[key]:
                open_.remove(key)
    return taken


def _proportional(sizes: Mapping[str, int], taken: dict[str, int], budget: int) -> dict[str, int]:
    """Add `budget` in proportion to each stratum's size, capped at what is left of it (largest remainders
    first, ties by key), passing a capped stratum's excess on to the others."""
    result = dict(taken)
    left = budget
    while left > 0:
        room = {key: sizes[key] - result[key] for key in sorted(sizes) if sizes[key] - result[key] > 0}
        if not room:
            break
        total = sum(sizes[key] for key in room)
        exact = {key: left * sizes[key] / total for key in room}
        whole = {key: min(math.floor(exact[key]), room[key]) for key in room}
        handed = sum(whole.values())
        by_remainder = sorted(room, key=lambda key: (-(exact[key] - whole[key]), key))
        for key in by_remainder:
            if handed >= left:
                break
            if whole[key] < room[key]:
                whole[key] += 1
                handed += 1
        for key, add in whole.items():
            result[key] += add
        if handed == 0:
            break
        left -= handed
    return result


def allocate(sizes: Mapping[str, int], budget: int, equal_share: float = 0.5) -> dict[str, int]:
    """Steps to draw per stratum for a total of `budget` (or every step, when there are fewer).

    >>> allocate({"x": 5, "y": 5}, budget=100)
    {'x': 5, 'y': 5}
    """
    if budget < 0 or not 0 <= equal_share <= 1:
        raise ValueError(f"need budget >= 0 and 0 <= equal_share <= 1, got {budget}, {equal_share}")
    total = sum(sizes.values())
    if budget >= total:
        return {key: sizes[key] for key in sorted(sizes)}
    non_empty = [key for key, size in sizes.items() if size > 0]
    floor = min(budget, 2 * len(non_empty), sum(min(2, sizes[key]) for key in non_empty))
    even_budget = max(floor, math.floor(budget * equal_share))
    taken = _even(sizes, even_budget)
    taken = _proportional(sizes, taken, budget - sum(taken.values()))
    return {key: taken[key] for key in sorted(sizes)}
