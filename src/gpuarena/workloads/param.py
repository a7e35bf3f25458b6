"""One tunable of a workload: its type, default, tiny (CPU-test) value and range."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gpuarena.errors import UserError, brief


@dataclass(frozen=True)
class Param:
    """One tunable of a workload, documented where it is declared."""

    name: str
    type: type
    default: Any
    doc: str
    tiny: Any = None          # value at size=tiny (CPU tests); None: same as default
    min: float | None = None
    max: float | None = None
    choices: tuple | None = None

    def _bad(self, value: Any, why: str) -> str:
        """'name=value: why' for a value short enough to read, else the reason first: 'name: why, not
        ...' with the value shortened (a 1,000-item list would bury the reason)."""
        shown = brief(value)
        return f"{self.name}={shown}: {why}" if shown == repr(value) else f"{self.name}: {why}, not {shown}"

    def parse(self, raw: Any) -> Any:
        """Coerce and range-check one value; raise UserError with a one-line reason."""
        try:
            if self.type is bool and isinstance(raw, str):
                low = raw.strip().lower()
                if low not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                    raise ValueError(raw)
                value = low in ("1", "true", "yes", "on")
            elif self.type is int and isinstance(raw, float) and not raw.is_integer():
                raise ValueError(raw)
            elif self.type is int and isinstance(raw, bool):
                raise ValueError(raw)
            else:
                value = self.type(raw)
        except (TypeError, ValueError):
            raise UserError(self._bad(raw, f"expected {self.type.__name__}")) from None
        if isinstance(value, float) and not math.isfinite(value):
            raise UserError(self._bad(raw, "must be a finite number"))
        if self.min is not None and value < self.min:
            raise UserError(f"{self.name}={value}: must be >= {self.min:g}")
        if self.max is not None and value > self.max:
            raise UserError(f"{self.name}={value}: must be <= {self.max:g}")
        if self.choices is not None and value not in self.choices:
            raise UserError(self._bad(value, f"must be one of {', '.join(map(str, self.choices))}"))
        return value
