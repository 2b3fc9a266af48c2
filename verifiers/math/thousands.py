"""Thousands groups written in LaTeX, `100{,}001` and `12,\\!000`, read as one number.

The claim readers split a number at `{,}` or `,\\!` (a list separator elsewhere), so
`100{,}001 = 7 \\times 11 \\times 13 \\times 101` was never judged. Both marks exist only to typeset a
thousands separator: between a digit and exactly three digits they are taken out before the claims are
read. A bare comma (`1,000` or the list `1,000`?) is left as written.
"""

from __future__ import annotations

import re

_GROUP = re.compile(r"(?<=\d)(?:\{,\}|,\\!)(?=\d{3}(?!\d))")


def thousands_joined(step: str) -> str:
    """The step with LaTeX thousands separators taken out.

    >>> thousands_joined(r"$100{,}001 = 7 \\times 14{,}286 - 1$ and $12,\\!000$; the list $1,2$")
    '$100001 = 7 \\\\times 14286 - 1$ and $12000$; the list $1,2$'
    """
    return _GROUP.sub("", step)
