"""results.json stays strict JSON: NaN and infinities become null."""

from __future__ import annotations

import math
from typing import Any


def clean(obj: Any) -> Any:
    """NaN / inf -> None, recursively."""
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else obj
    if isinstance(obj, dict):
        return {k: clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    return obj
