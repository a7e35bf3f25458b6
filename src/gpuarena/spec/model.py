"""The validated description of what to run.

A *suite* is a list of *entries* (a workload, variants, a grid of parameters);
expanding it gives *cases*, each one measured result.  Everything is validated
here, before any process starts or any row is written.
"""

from __future__ import annotations

import itertools
import json
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gpuarena.errors import UserError
from gpuarena.workloads import registry

# Keys of --set that set the method rather than a workload parameter.
METHOD_KEYS = ("repeats", "warmup", "steps", "timeout_s", "size", "processes")


class Method(BaseModel):
    """How each case is measured."""

    model_config = ConfigDict(extra="forbid")

    repeats: int | None = Field(None, ge=1, le=1000, description="timed repeats per case (default 10, as the article)")
    warmup: int | None = Field(None, ge=0, le=10000, description="untimed steps first (default: the workload's)")
    steps: int | None = Field(None, ge=1, le=100000, description="steps in each timed repeat (default: the workload's)")
    timeout_s: float | None = Field(None, gt=0, le=86400,
                                    description="a case running longer is killed and stored as timeout")
    size: str | None = Field(None, description="'full' (the article's sizes) or 'tiny' (CPU tests)")
    processes: int | None = Field(None, ge=1, le=100, description="fresh processes per case (default 1), each "
                                  "with its own warm-up and repeats; the interval is then over process means")

    @field_validator("size")
    @classmethod
    def _size(cls, v):
        if v is not None and v not in ("full", "tiny"):
            raise ValueError("size must be 'full' or 'tiny'")
        return v

    def merged(self, over: "Method") -> "Method":
        data = self.model_dump()
        data.update({k: v for k, v in over.model_dump().items() if v is not None})
        return Method(**data)


class Case(BaseModel):
    """One measured result: a workload, a composed variant, parameters and method."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # The bounds of Method: a plan edited by hand is refused on --resume as a suite file would be.
    workload: str
    variant: str
    params: dict[str, Any]
    repeats: int = Field(ge=1, le=1000)
    warmup: int = Field(ge=0, le=10000)
    steps: int = Field(ge=1, le=100000)
    timeout_s: float = Field(gt=0, le=86400)
    size: Literal["full", "tiny"] = "full"
    device: str = "cpu"
    gpus: int = Field(1, ge=1, le=100_000)          # ranks for torchrun workloads
    processes: int = Field(1, ge=1, le=100)  # fresh processes, each measuring the case (runner/pool.py)
    sweep: str | None = None  # the parameter a "max" sweep grows; the runner ends it at the first OOM

    @property
    def key(self) -> str:
        """Stable identity for resume: same workload, variant, params and size."""
        return json.dumps([self.workload, self.variant, self.params, self.size, self.gpus],
                          sort_keys=True, separators=(",", ":"))

    def label(self) -> str:
        shown = ("batch_size", "seq_len", "size_mb", "dtype", "shape", "mode", "instances", "rate", "concurrency")
        ps = " ".join(f"{k}={v}" for k, v in self.params.items() if k in shown)
        n = f" x{self.gpus}" if self.gpus > 1 else ""
        return f"{self.workload} [{self.variant}] {ps}{n}".strip()


class Entry(BaseModel):
    """A line of a suite file."""

    model_config = ConfigDict(extra="forbid")

    workload: str
    variants: list[str] = Field(default_factory=lambda: ["seed"])
    params: dict[str, Any] = Field(default_factory=dict)
    grid: dict[str, list[Any]] = Field(default_factory=dict)
    gpus: list[int] = Field(default_factory=lambda: [1])
    method: Method = Field(default_factory=Method)


class Suite(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=100, pattern=r"^[^\x00-\x1f\x7f-\x9f]+$")
    description: str = Field("", max_length=10_000, pattern=r"^[^\x00-\x08\x0b-\x1f\x7f-\x9f]*$")
    method: Method = Field(default_factory=Method)
    entries: list[Entry] = Field(min_length=1, max_length=10000)


DEFAULT_REPEATS = 10
DEFAULT_TIMEOUT_S = 1800.0
MAX_CASES = 100000


def expand(suite: Suite, device: str, override: Method | None = None,
           set_params: dict[str, Any] | None = None) -> list[Case]:
    """The case grid of a suite, every parameter validated against its workload."""
    override = override or Method()
    set_params = set_params or {}
    cases: list[Case] = []
    for entry in suite.entries:
        wl = registry.get(entry.workload)
        method = suite.method.merged(entry.method).merged(override)
        size = method.size or "full"
        variants = [wl.canonical_variant(v) for v in entry.variants]
        pm = wl.param_map()
        for k in set_params:
            if k not in pm:
                from gpuarena.errors import did_you_mean
                raise UserError(f"--set {k}: {wl.name} has no parameter {k!r}{did_you_mean(k, pm)}")
        # --set KEY=V replaces the suite's value or axis for KEY; --set KEY=A,B is an axis of its own
        grid = {k: v for k, v in entry.grid.items() if k not in set_params}
        grid.update({k: v for k, v in set_params.items() if isinstance(v, list)})
        fixed = {k: v for k, v in set_params.items() if not isinstance(v, list)}
        keys = list(grid)
        # Count before building: a hostile grid of a few long lists is 10^12 combinations.
        planned = math.prod(len(grid[k]) for k in keys) * len(variants) * len(entry.gpus)
        if len(cases) + planned > MAX_CASES:
            raise UserError(f"suite {suite.name!r} expands to more than {MAX_CASES} cases")
        combos = list(itertools.product(*(grid[k] for k in keys))) or [()]
        tiny = size == "tiny"
        for gpus in entry.gpus:
            if gpus < 1 or gpus > 1024:
                raise UserError(f"gpus={gpus}: must be between 1 and 1024")
            if gpus > 1 and wl.launcher != "torchrun":
                raise UserError(f"{wl.name} runs on one device; gpus={gpus} needs a multi-GPU workload")
            for combo in combos:
                given = dict(entry.params)
                given.update(fixed)
                given.update(dict(zip(keys, combo)))
                for point, sweep in max_sweep(wl, given, size):
                    params = wl.resolve_params(point, size=size)
                    wl.check_params(params)        # e.g. a path parameter: checked before any run exists
                    wl.check_layout(params, gpus)  # a parallel layout that cannot fit this rank count
                    for variant in variants:
                        wl.check_variant(wl.parse_variant(variant), params)
                        cases.append(Case(
                            workload=wl.name, variant=variant, params=params,
                            repeats=method.repeats or wl.default_repeats or DEFAULT_REPEATS,
                            warmup=(method.warmup if method.warmup is not None
                                    else (wl.tiny_warmup if tiny else wl.default_warmup)),
                            steps=method.steps or (wl.tiny_steps if tiny else wl.default_steps),
                            timeout_s=method.timeout_s or DEFAULT_TIMEOUT_S,
                            size=size, device=device, gpus=gpus, processes=method.processes or 1, sweep=sweep,
                        ))
                        if len(cases) > MAX_CASES:
                            raise UserError(f"suite {suite.name!r} expands to more than {MAX_CASES} cases")
    _no_duplicates(cases)
    return cases


def _no_duplicates(cases: list[Case]) -> None:
    """Two cases with one key would be one result to --resume: refuse (064 and 64 are one value)."""
    seen: set[str] = set()
    for c in cases:
        if c.key in seen:
            ps = ", ".join(f"{k}={v}" for k, v in c.params.items())
            raise UserError(f"{c.workload} [{c.variant}] {ps} x{c.gpus} appears twice in the plan "
                            "(values that are equal once read, such as 64 and 064, name one case)")
        seen.add(c.key)


SWEEP_CAP = 4096


def max_sweep(wl, given: dict[str, Any], size: str):
    """``batch_size=max``: batch 1, 2, 4 ... up to the workload's search_max (else its largest
    batch, at most SWEEP_CAP), each its own case; the runner stops the sweep at the first batch
    that runs out of memory (runner/executor.py), so the last ok case is the largest that fits."""
    if str(given.get("batch_size", "")).strip().lower() != "max":
        yield given, None
        return
    pm = wl.param_map()
    if "batch_size" not in pm:
        raise UserError(f"batch_size=max: {wl.name} has no batch_size")
    if "search_max" in pm:
        cap = wl.resolve_params({"search_max": given["search_max"]} if "search_max" in given else {},
                                size=size)["search_max"]
    else:
        cap = int(min(pm["batch_size"].max or SWEEP_CAP, SWEEP_CAP))
    b = 1
    while True:
        yield {**given, "batch_size": min(b, cap)}, "batch_size"
        if b >= cap:
            return
        b *= 2
