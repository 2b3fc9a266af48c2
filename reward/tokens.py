"""Where each step ends in the response's tokens: a per-step reward sits on a step's last token.

A fast (Rust) Hugging Face tokenizer gives each token its character span (`return_offsets_mapping`); the
step's last token is the last one starting before the step's end. A tokenizer without offsets is asked for
the token count of each prefix instead (slower, same answer for tokenizers that do not merge across the
cut). Tokens are the response's own, without special tokens: a trainer that prepends a prompt adds its
length.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any


def token_ends(tokenizer: Any, response: str, char_ends: Sequence[int]) -> list[int | None]:
    """The index of the token holding each step's last character (None: the response has no tokens)."""
    if not char_ends:
        return []
    try:
        encoded = tokenizer(response, add_special_tokens=False, return_offsets_mapping=True)
        offsets = encoded["offset_mapping"]
    except (NotImplementedError, KeyError, TypeError, ValueError):
        return [_prefix_length(tokenizer, response[:end]) for end in char_ends]
    starts = [start for start, _ in offsets]
    return [bisect.bisect_left(starts, end) - 1 if starts else None for end in char_ends]


def _prefix_length(tokenizer: Any, prefix: str) -> int | None:
    ids = tokenizer.encode(prefix, add_special_tokens=False)
    return len(ids) - 1 if ids else None
