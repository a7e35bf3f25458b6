"""The typed Result: what one stored result is, checked field by field.

Every nested field a reader relies on has a type and a range here: the
throughput and latency statistics, each telemetry sample, the contract fields
of ``extra`` (nan, processes, world_size, accum_steps, inner_params,
origin_run_id, share_of_ceiling, scaling_efficiency, ...), and the flags
(warnings with a kind).  Sizes and nesting are bounded, and the strings that
name things (workload, variant, GPU, unit) carry no control characters, so a
value that passed import cannot break `results`, the report or `whatif`
later, nor reach a terminal as an escape code.

One validation on the way in and on the way out (`stored_form`): the store
refuses to write a row that it would not read back (Store.add_result), import
refuses the whole bundle on the first failure, and a row read back that fails
(written before these rules existed, or edited by hand) is skipped with a
warning.  The bounds come from what a figure means: a rate no GPU reaches in
these item units, a power no card draws.  A confidence interval is not a rate:
from 2 noisy repeats it is legitimately enormous, so it is only required to be
finite and ordered; such a result is kept and marked low-confidence (fewer
than MIN_SAMPLES repeats), never dropped.
"""

from __future__ import annotations

import math
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SerializeAsAny, field_validator, model_validator

from gpuarena.numbers import MIN_SAMPLES  # an interval from fewer repeats is low-confidence
from gpuarena.store.checks import (MAX_DEPTH_EXTRA, MAX_EXTRA_CHARS, MAX_PARAMS_CHARS, MAX_SAMPLES, MAX_THROUGHPUT,
                                   STATUSES, WORKLOAD_NAME, valid_bounded, valid_name, valid_no_nul, valid_number,
                                   valid_text)
from gpuarena.store.derived import Derived
from gpuarena.store.extra import Extra
from gpuarena.store.figures import Figures, model_for
from gpuarena.store.figures import valid_params
from gpuarena.store.flags import Flag, flags_of


class Summary(BaseModel):
    """Statistics of repeats (measure/stats.py): items/s or seconds per step; a newer key must be a number."""

    model_config = ConfigDict(extra="allow", strict=True)
    n: int = Field(ge=1, le=MAX_SAMPLES)
    median: float
    mean: float
    stdev: Optional[float] = None
    cv: Optional[float] = None
    min: Optional[float] = None
    max: Optional[float] = None
    ci95_low: Optional[float] = None
    ci95_high: Optional[float] = None
    unit: Optional[str] = Field(None, max_length=50)

    @field_validator("median", "mean", "stdev", "min", "max")
    @classmethod
    def _values(cls, v, info):
        return valid_number(v, info.field_name, 0.0, MAX_THROUGHPUT)

    @field_validator("ci95_low", "ci95_high")
    @classmethod
    def _interval(cls, v, info):  # from 2 noisy repeats t=12.7 makes it huge; an old linear one went below 0
        return valid_number(v, info.field_name, -math.inf, math.inf)

    @field_validator("cv")
    @classmethod
    def _cv(cls, v):
        return valid_number(v, "cv", 0.0, 1e6)

    _unit = field_validator("unit")(valid_name)

    @model_validator(mode="after")
    def _more(self):
        for k, v in (self.model_extra or {}).items():
            valid_number(v, f"summary {k}", -1e30, 1e30)
        if self.ci95_low is not None and self.ci95_high is not None and self.ci95_low > self.ci95_high:
            raise ValueError(f"ci95_low {self.ci95_low:g} is above ci95_high {self.ci95_high:g}")
        return self

    @property
    def low_confidence(self) -> bool:
        """Fewer repeats than MIN_SAMPLES: the interval is shown, and marked as wide."""
        return self.n < MIN_SAMPLES


class Sample(BaseModel):
    """One telemetry sample (measure/telemetry.py); a newer key must still be a number."""

    model_config = ConfigDict(extra="allow", strict=True)
    t: float = Field(ge=0, le=1e7)
    power_w: Optional[float] = Field(None, ge=0, le=10_000)
    temp_c: Optional[float] = Field(None, ge=-50, le=200)
    sm_clock_mhz: Optional[float] = Field(None, ge=0, le=100_000)
    mem_clock_mhz: Optional[float] = Field(None, ge=0, le=100_000)
    util_pct: Optional[float] = Field(None, ge=0, le=100)
    reasons: Optional[int] = Field(None, ge=0, le=2**63)

    @model_validator(mode="after")
    def _numbers(self):
        for k, v in (self.model_extra or {}).items():
            valid_number(v, f"telemetry {k}", -1e30, 1e30)
        return self


class Result(BaseModel):
    """One stored result, as `gpuarena results --format json` shows it and a bundle carries it."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)
    id: int = Field(ge=0)
    uid: Optional[str] = Field(None, min_length=1, max_length=2200)
    run_id: Optional[str] = Field(None, max_length=100)
    case_key: str = Field(min_length=1, max_length=MAX_PARAMS_CHARS + 500)
    source: Literal["measured", "imported", "published"]
    workload: str = Field(min_length=1, max_length=100, pattern=WORKLOAD_NAME)
    workload_version: Optional[int] = Field(None, ge=0, le=1_000_000)
    code_hash: Optional[str] = Field(None, max_length=64, pattern=r"^[0-9a-f]*$")
    variant: str = Field(min_length=1, max_length=200)
    params: dict[str, Any]
    size: str = Field("full", max_length=20)
    gpus: int = Field(1, ge=1, le=100_000)
    device: Optional[str] = Field(None, max_length=50)
    device_name: Optional[str] = Field(None, max_length=200)
    env_id: Optional[int] = None
    status: Literal[STATUSES]  # type: ignore[valid-type]
    error: Optional[str] = Field(None, max_length=5000)
    unit: Optional[str] = Field(None, max_length=50)
    precision: Optional[str] = Field(None, max_length=200)
    throughput_median: Optional[float] = None
    throughput: Optional[Summary] = None
    latency: Optional[Summary] = None
    samples: Optional[list[float]] = Field(None, max_length=MAX_SAMPLES)
    items_per_step: Optional[float] = None
    flops_per_item: Optional[float] = None
    tflops: Optional[float] = None
    peak_memory_bytes: Optional[int] = Field(None, ge=0, le=1 << 50)
    compile_s: Optional[float] = None
    power_w_mean: Optional[float] = None      # mean and max of NVML's power samples over the timed repeats
    power_w_max: Optional[float] = None
    # joules over the timed repeats (all of them, one telemetry window) / the items they served; the joules
    # are energy_source's (measure/energy.py): "nvml_energy_counter", the counter's difference, or
    # "mean_power_x_time", the sampled power integrated over the window; extra.energy says which and why.
    # Since session 13 the counter is taken only over 11+ of its measured steps and within the sampled
    # power's range; older bundles took it whenever it advanced (analysis/verbs/cost.py checks those)
    energy_j_per_item: Optional[float] = None
    energy_source: Optional[str] = Field(None, max_length=50)
    temp_c_max: Optional[float] = Field(None, ge=-50, le=200)
    sm_clock_mhz_mean: Optional[float] = Field(None, ge=0, le=100_000)
    throttled: Optional[bool] = None
    warnings: list[str] = Field(default_factory=list, max_length=200)
    telemetry: Optional[list[Sample]] = Field(None, max_length=1_000_000)
    # read with its own workload's figures model (store/figures.py model_for), a subclass of Extra
    extra: SerializeAsAny[Extra] = Field(default_factory=Extra)
    origin: Optional[str] = Field(None, max_length=2000)
    created_at: Optional[str] = Field(None, max_length=40)
    derived: Derived = Field(default_factory=Derived, exclude=True)   # computed when read, never stored
    _raw: Optional[dict] = PrivateAttr(None)    # the stored dict this was read from (Store.results)

    _names = field_validator("run_id", "variant", "size", "device", "device_name", "unit", "precision",
                             "energy_source", "created_at")(valid_name)
    _texts = field_validator("error", "origin")(valid_text)
    _keys = field_validator("uid", "case_key")(valid_no_nul)

    @model_validator(mode="before")
    @classmethod
    def _zero_energy_unmeasured(cls, data):
        """0 J while the card drew power is a window shorter than NVML's energy counter's step
        (stored so before session 8's telemetry fix): not measured, not free."""
        if isinstance(data, dict) and data.get("energy_j_per_item") == 0 and (data.get("power_w_mean") or 0) > 0:
            data = {**data, "energy_j_per_item": None}
        return data

    @field_validator("throughput_median")
    @classmethod
    def _thr(cls, v):
        return valid_number(v, "throughput_median", 0.0, MAX_THROUGHPUT)

    @field_validator("items_per_step", "flops_per_item", "tflops", "compile_s", "power_w_mean",
                     "power_w_max", "energy_j_per_item")
    @classmethod
    def _nonneg(cls, v, info):
        caps = {"power_w_mean": 10_000, "power_w_max": 10_000, "tflops": 1e6}
        return valid_number(v, info.field_name, 0.0, caps.get(info.field_name, 1e30))

    @field_validator("params")
    @classmethod
    def _params(cls, v):
        return valid_params(v)

    @field_validator("samples")
    @classmethod
    def _samples(cls, v):
        for s in v or []:
            if not math.isfinite(s) or s <= 0 or s > 1e6:
                raise ValueError(f"sample {s!r} s/step is not a finite positive time")
        return v

    @field_validator("warnings")
    @classmethod
    def _warn_len(cls, v):
        for w in v:
            if len(w) > 2000:
                raise ValueError("a warning is longer than 2000 characters")
            valid_text(w)
        return v

    @field_validator("extra", mode="before")
    @classmethod
    def _extra_size(cls, v, info):
        """Bounded, then read with the model of the result's own workload (its figures, typed)."""
        if isinstance(v, Figures):
            return v
        v = valid_bounded(v or {}, "extra", MAX_EXTRA_CHARS, MAX_DEPTH_EXTRA)
        return model_for(info.data.get("workload"), info.data.get("source"), info.data.get("params")).model_validate(v)

    @model_validator(mode="after")
    def _ok_has_throughput(self):
        if self.status == "ok" and self.throughput_median is None:
            raise ValueError("status ok without throughput_median")
        return self

    @classmethod
    def read(cls, stored: dict) -> "Result":
        """A row as the store read it back (stored_form already applied)."""
        r = cls.model_validate(stored)
        r._raw = stored
        return r

    def replaced(self, **fields) -> "Result":
        """This result with other stored fields (a copy; e.g. env ids made unique across bundles)."""
        r = self.model_copy(update=fields)
        r._raw = None
        return r

    def with_derived(self, **figures) -> "Result":
        """This result with more derived figures (warnings are added to the derived ones)."""
        if "warnings" in figures:
            figures["warnings"] = (*self.derived.warnings, *figures["warnings"])
        return self.model_copy(update={"derived": Derived.model_validate({**dict(self.derived), **figures})})

    @property
    def flags(self) -> list[Flag]:
        return flags_of(self)

    @property
    def undeclared(self) -> list[str]:
        """Keys of extra that its workload's figures do not declare (an older version's, a plugin's not
        installed here): kept."""
        return list(self.extra.model_extra or {})

    @property
    def all_warnings(self) -> list[str]:
        """The stored warnings, then the derived ones (below-expected)."""
        return [*self.warnings, *self.derived.warnings]

    def row(self) -> dict:
        """The plain dict the store writes (the shape a bundle carries); derived figures left out."""
        if self._raw is not None:
            return self._raw
        d = self.model_dump(exclude_none=False)
        d["extra"] = self.extra.model_dump(exclude_unset=True)
        return d

    def extra_dict(self) -> dict:
        """extra as stored (its key order kept) with the derived figures after it: the JSON shape
        `results --format json` documents.  For serializers; readers use the attributes."""
        extra = self.row().get("extra") or {}
        return {**extra, **self.derived.as_extra()} if self.derived != _NONE else extra


_NONE = Derived()
