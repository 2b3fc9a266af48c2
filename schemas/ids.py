"""Stable content hashes: the keys that make writes idempotent across reruns."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def content_id(*parts: Any) -> str:
    """Hash JSON-serialisable parts into a 32-hex-char id.

    The same parts always give the same id, so a rerun of the same config produces the same keys
    and a keyed write adds nothing twice.

    >>> content_id("gsm8k", "What is 1+1?") == content_id("gsm8k", "What is 1+1?")
    True
    """
    payload = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]
