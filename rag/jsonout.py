"""JSON as every writer of this project emits it: strict RFC 8259 JSON, which any reader in any language parses.

Python's json module writes float("nan") and float("inf") as the bare words NaN and Infinity by default, which
are not JSON: a browser's JSON.parse, jq and most other readers reject the whole document. A number that is not
finite means "not computed" here (an LLM judge that ran out of time before reaching a candidate, a metric with
no queries to average), so it is written as null, and `allow_nan=False` makes any writer that forgets this
fail loudly instead of writing invalid JSON.
Not handled here: what goes into a document (each command and Trace.to_dict decide).
"""

from __future__ import annotations

import json
import math
from typing import Any


def finite(obj: Any) -> Any:
    """`obj` with every non-finite float (NaN, +-inf), at any depth of dicts, lists and tuples, replaced by None."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item) and getattr(obj, "shape", None) == ():  # a numpy scalar
        return finite(obj.item())
    return obj


def dumps(obj: Any, indent: int | None = None) -> str:
    """Strict JSON text of `obj` (non-finite numbers as null; Chinese as itself, not \\u escapes)."""
    return json.dumps(finite(obj), ensure_ascii=False, indent=indent, allow_nan=False)
